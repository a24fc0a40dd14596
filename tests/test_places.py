"""A benchmark is a place (issue 24): no module outside ``benchmarks/`` names a benchmark.

The names are the registry's and the spellings people type for them, matched as whole words,
case-insensitively, anywhere in the module (code, strings, comments, docstrings). The modules
still being moved are listed below; the list may only shrink: a listed module that no longer
names a benchmark fails the test too, so whoever cleans it also takes it off the list.
"""

from __future__ import annotations

import re
from pathlib import Path

from hopscore import benchmarks

SRC = Path(__file__).resolve().parents[1] / "src" / "hopscore"

#: spellings of the built-in benchmarks beyond their registry names
SPELLINGS = ("hybrid_deep_research",)

#: the run side (place-run, agent): being cleaned at the same time
RUN_SIDE = {
    "cli/hdr.py", "cli/run.py", "cli/suite.py",
}

#: the scoring, loading and analysis side: not yet moved into the benchmark folders
SCORE_SIDE = {
    "api.py",
}


def _pattern() -> re.Pattern[str]:
    words = [*benchmarks.REGISTRY, *SPELLINGS]
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, words)) + r")(?![\w-])",
                      re.IGNORECASE)


def _naming_modules() -> set[str]:
    pattern = _pattern()
    found = set()
    for path in SRC.rglob("*.py"):
        relative = path.relative_to(SRC).as_posix()
        if relative.startswith("benchmarks/"):
            continue
        if pattern.search(path.read_text(encoding="utf-8")):
            found.add(relative)
    return found


def test_no_module_outside_benchmarks_names_a_benchmark() -> None:
    unexpected = sorted(_naming_modules() - RUN_SIDE - SCORE_SIDE)
    assert not unexpected, f"modules outside benchmarks/ that name a benchmark: {unexpected}"


def test_the_allow_list_only_shrinks() -> None:
    cleaned = sorted((RUN_SIDE | SCORE_SIDE) - _naming_modules())
    assert not cleaned, f"these no longer name a benchmark; take them off the list: {cleaned}"


def test_the_pattern_matches_names_and_spellings_as_words() -> None:
    pattern = _pattern()
    assert pattern.search("score HotpotQA here") and pattern.search("hybrid_deep_research")
    assert pattern.search("run hybrid-deep-research")
    assert not pattern.search("hotpotqa_like") and not pattern.search("quartzite")
