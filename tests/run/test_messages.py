"""Counts in run and judge messages agree with their nouns ("1 answer was cut", never
"1 answers were cut")."""

from __future__ import annotations

from hopscore.run.finish import truncation_warning


def test_the_truncation_warning_agrees_with_its_count() -> None:
    one = truncation_warning({"truncated": 1}, 128)
    assert one is not None and one.startswith("1 answer was cut at --max-tokens 128 ")
    assert "and is scored as it is" in one and "let it finish" in one
    two = truncation_warning({"truncated": 2, "truncated_unscored": 2}, 8)
    assert two is not None and two.startswith("2 answers were cut at --max-tokens 8 ")
    assert "they score 0" in two and "let them finish" in two
    assert truncation_warning({"truncated": 0}, 8) is None
