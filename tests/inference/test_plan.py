"""hopscore plan: sample sizes that reach the requested power, and the CLI."""

from __future__ import annotations

import pytest

from hopscore.inference.power import (
    independent_discordance,
    mde_paired_independent,
    mde_unpaired_binary,
    n_paired_binary,
    n_unpaired_binary,
)
from tests.conftest import run_cli
from tests.inference.test_paired import exact_mcnemar_power


@pytest.mark.parametrize("delta,discordance", [(0.05, 0.2), (0.03, 0.1), (0.1, 0.3)])
def test_paired_n_reaches_the_power_of_the_exact_test(delta, discordance):
    n = n_paired_binary(delta, discordance, alpha=0.05, power=0.8)
    assert 0.76 <= exact_mcnemar_power(n, discordance, delta, 0.05) <= 0.86


def test_unpaired_n_matches_the_two_proportion_formula_and_simulation():
    import numpy as np
    from statsmodels.stats.proportion import proportions_ztest

    n = n_unpaired_binary(0.6, 0.1, alpha=0.05, power=0.8)
    assert 340 <= n <= 370  # the textbook value for 0.6 vs 0.7 is 356
    rng = np.random.default_rng(0)
    hits = sum(proportions_ztest([rng.binomial(n, 0.7), rng.binomial(n, 0.6)], [n, n])[1] < 0.05
               for _ in range(2000))
    assert 0.77 <= hits / 2000 <= 0.83


def test_mdes_invert_the_sample_sizes():
    mde = mde_unpaired_binary(356, 0.6, alpha=0.05, power=0.8)
    assert mde == pytest.approx(0.1, abs=0.002)
    paired = mde_paired_independent(3466, 0.6, alpha=0.05, power=0.8)
    assert n_paired_binary(paired, independent_discordance(0.6, 0.6 + paired), alpha=0.05,
                           power=0.8) == pytest.approx(3466, rel=0.01)


def test_cli_prints_sizes_and_the_mde():
    result = run_cli("plan", "--baseline-acc", "0.6", "--n", "3466", "--discordance", "0.2",
                     "--delta", "0.05")
    assert result.returncode == 0, result.stderr
    assert "626" in result.stdout and "2.13 points paired" in result.stdout
    bad = run_cli("plan", "--baseline-acc", "60")
    assert bad.returncode == 2 and "--baseline-acc must be between 0 and 1" in bad.stderr
