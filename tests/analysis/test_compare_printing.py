"""What compare prints about its rows: the correction's family, the intervals' methods, and
bounds that stay on the real interval's side of 0."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from hopscore.scores.display import bounds_text
from tests.analysis.test_compare import runs  # noqa: F401  (fixture)
from tests.conftest import run_cli


def test_every_caption_names_the_family_the_p_values_were_adjusted_over(runs, tmp_path):  # noqa: F811
    out = tmp_path / "cmp.json"
    result = run_cli("compare", runs["base"], runs["new"], runs["third"], "--resamples", "200",
                     "-o", out, env={"COLUMNS": "100"})
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    data = json.loads(out.read_text())
    sizes = [int(n) for n in re.findall(r"Holm over all (\d+) tests", text)]
    assert len(sizes) == 3  # the matrix and each pair's table
    assert set(sizes) == {data["family"]["tests"]}
    assert text.count("not adjusted for multiplicity") == 3
    words = {"exact-conditional": "exact conditional", "bca": "BCa",
             "sign-flip": "inverted exact sign-flip test", "newcombe": "Newcombe"}
    methods = {row["interval"]["method"] for comparison in data["comparisons"]
               for row in comparison["metrics"].values()}
    assert methods and all(words[method] in text for method in methods)
    for metric in data["comparisons"][0]["metrics"]:
        assert re.search(rf"[:;] {metric} (exact conditional|BCa|inverted|Newcombe)", text)


def sides(low: float, high: float) -> tuple[int, int]:
    return int(low > 0) - int(low < 0), int(high > 0) - int(high < 0)


def printed_bounds(value: float, text: str) -> tuple[float, float]:
    if text.startswith("±"):
        shown, half = round(100 * value, 2), float(text[1:])
        return shown - half, shown + half
    low, high = text.strip("[]").split(", ")
    return float(low), float(high)


@pytest.mark.parametrize("value,low,high", [
    (0.01, 0.0001, 0.0204),  # symmetric within 5%; the longer side printed crossed 0
    (-0.01, -0.0204, -0.0001),
    (0.0002, 0.00004, 0.00036),  # a bound below 0.005 points rounded to 0.00
    (0.02, -0.00001, 0.0401),
    (0.05, 0.0, 0.1)])
def test_printed_bounds_keep_the_real_intervals_side_of_zero(value, low, high):
    text = bounds_text(value, low, high, bounded=False, signed=True)
    printed = printed_bounds(value, text)
    assert sides(*printed) == sides(low, high), text
    assert printed[0] <= 100 * low + 0.005 and printed[1] >= 100 * high - 0.005


def test_printed_bounds_of_random_differences_keep_their_sides():
    rng = np.random.default_rng(4)
    for _ in range(3000):
        value = float(rng.normal(0, 0.01))
        below, above = np.abs(rng.normal(0.01, 0.004, 2))
        above = below * float(rng.uniform(0.95, 1.05)) if rng.random() < 0.7 else above
        low, high = value - below, value + above
        printed = printed_bounds(value, bounds_text(value, low, high, bounded=False,
                                                    signed=True))
        assert sides(*printed) == sides(low, high)
