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


@pytest.mark.parametrize("delta,discordance,alpha,power", [
    (0.05, 0.2, 0.05, 0.8), (0.03, 0.1, 0.05, 0.8), (0.1, 0.3, 0.05, 0.8),
    (0.1, 0.1, 0.05, 0.8), (0.02, 0.05, 0.05 / 3, 0.9), (0.05, 0.45, 0.01, 0.8),
    (0.3, 0.5, 0.05, 0.8), (0.2, 0.2, 0.05, 0.9)])
def test_paired_n_is_the_smallest_that_reaches_the_power_of_the_exact_test(
        delta, discordance, alpha, power):
    n = n_paired_binary(delta, discordance, alpha=alpha, power=power)
    assert exact_mcnemar_power(n, discordance, delta, alpha) >= power
    assert exact_mcnemar_power(n - 1, discordance, delta, alpha) < power


def test_exact_power_equals_the_oracle_and_a_simulation_of_statsmodels_mcnemar():
    import numpy as np
    from statsmodels.stats.contingency_tables import mcnemar

    from hopscore.inference.exact_power import mcnemar_power

    for n, psi, delta, alpha in [(626, 0.2, 0.05, 0.05), (40, 0.5, 0.3, 0.01),
                                 (2000, 0.1, 0.02, 0.05 / 3), (9, 0.8, 0.16, 0.05)]:
        assert mcnemar_power(n, psi, delta, alpha) == pytest.approx(
            exact_mcnemar_power(n, psi, delta, alpha), abs=1e-9)
    rng = np.random.default_rng(1)
    n, psi, delta = 120, 0.3, 0.15  # cells: B only right, A only right, concordant
    draws = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, 1 - psi], size=2000)
    hits = sum(mcnemar([[0, a], [b, 0]], exact=True).pvalue < 0.05 for b, a, _ in draws)
    assert abs(hits / 2000 - mcnemar_power(n, psi, delta, 0.05)) < 0.03


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


def test_cli_prints_sizes_and_the_mde_of_the_exact_test():
    import re

    result = run_cli("plan", "--baseline-acc", "0.6", "--n", "3466", "--discordance", "0.2",
                     "--delta", "0.05")
    assert result.returncode == 0, result.stderr
    row = re.search(r"5\.0 │\s+([\d,]+) │\s+20\.0%", result.stdout)
    assert row, result.stdout
    n = int(row.group(1).replace(",", ""))
    assert exact_mcnemar_power(n, 0.2, 0.05, 0.05) >= 0.8 > exact_mcnemar_power(
        n - 1, 0.2, 0.05, 0.05)
    mde = float(re.search(r"is ([\d.]+) points paired", result.stdout).group(1)) / 100
    assert exact_mcnemar_power(3466, 0.2, mde + 5e-5, 0.05) >= 0.8 > exact_mcnemar_power(
        3466, 0.2, mde - 1e-4, 0.05)
    bad = run_cli("plan", "--baseline-acc", "60")
    assert bad.returncode == 2 and "--baseline-acc must be between 0 and 1" in bad.stderr
