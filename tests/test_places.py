"""A benchmark is a place (issue 24): no module outside ``benchmarks/`` names a benchmark.

The names are the registry's and the spellings people type for them, matched as whole words,
case-insensitively, anywhere in the module (code, strings, comments, docstrings); and beside
them the other words that name a registered benchmark (plugins too): its title (each part of
one such as "Fermi (realFP / synthFP)"), its other names (``also_called``) and the folder of
its package. The modules still being moved are listed below; the lists may only shrink: a
listed module that no longer names a benchmark fails the test too, so whoever cleans it also
takes it off the list.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from hopscore import benchmarks

SRC = Path(__file__).resolve().parents[1] / "src" / "hopscore"

#: spellings of the built-in benchmarks beyond their registry names
SPELLINGS = ("hybrid_deep_research",)

#: the run side (place-run, agent): none left, and none may come back
RUN_SIDE: set[str] = set()

#: the scoring, loading and analysis side: not yet moved into the benchmark folders
SCORE_SIDE: set[str] = set()

#: modules naming a benchmark only by its title, another name or its package's folder (and on
#: neither list above): none left, and none may come back.
WORDS_SIDE: set[str] = set()


def _whole_words(words: set[str]) -> re.Pattern[str]:
    alternatives = "|".join(map(re.escape, sorted(words, key=len, reverse=True)))
    return re.compile(r"(?<![\w-])(?:" + alternatives + r")(?![\w-])", re.IGNORECASE)


def _pattern() -> re.Pattern[str]:
    return _whole_words({*benchmarks.REGISTRY, *SPELLINGS})


def _folder(module: str) -> str:
    """The folder of a benchmark's package: ``twowiki`` for ``hopscore.benchmarks.twowiki``,
    a plugin's top-level package otherwise."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["hopscore", "benchmarks"] and len(parts) > 2 else parts[0]


@cache
def _words() -> frozenset[str]:
    """Every registered benchmark's names: registry name, title and its parts, other names,
    package folder."""
    words = set(SPELLINGS)
    for name in benchmarks.names():
        bench = benchmarks.get(name)
        words |= {name, bench.title, *bench.also_called, _folder(type(bench).__module__)}
        words |= set(re.split(r"\s*[()/]\s*", bench.title))
    return frozenset(word for word in words if word.strip())


@cache
def _texts() -> dict[str, str]:
    return {path.relative_to(SRC).as_posix(): path.read_text(encoding="utf-8")
            for path in SRC.rglob("*.py")
            if not path.relative_to(SRC).as_posix().startswith("benchmarks/")}


def _naming_modules(pattern: re.Pattern[str] | None = None) -> set[str]:
    pattern = pattern or _pattern()
    return {relative for relative, text in _texts().items() if pattern.search(text)}


def test_no_module_outside_benchmarks_names_a_benchmark() -> None:
    unexpected = sorted(_naming_modules() - RUN_SIDE - SCORE_SIDE)
    assert not unexpected, f"modules outside benchmarks/ that name a benchmark: {unexpected}"


def test_nor_by_its_title_other_names_or_folder() -> None:
    naming = _naming_modules(_whole_words(set(_words())))
    unexpected = sorted(naming - RUN_SIDE - SCORE_SIDE - WORDS_SIDE)
    assert not unexpected, ("modules outside benchmarks/ that name a benchmark by its title, "
                            f"another name or its folder: {unexpected}")


def test_the_allow_list_only_shrinks() -> None:
    cleaned = sorted((RUN_SIDE | SCORE_SIDE) - _naming_modules())
    assert not cleaned, f"these no longer name a benchmark; take them off the list: {cleaned}"
    words_only = _naming_modules(_whole_words(set(_words()))) - _naming_modules()
    cleaned = sorted(WORDS_SIDE - words_only)
    assert not cleaned, ("these no longer name a benchmark by a title, another name or a "
                         f"folder only; take them off WORDS_SIDE: {cleaned}")


def test_the_words_are_the_declared_ones() -> None:
    words = {word.lower() for word in _words()}
    assert {"hybriddeepresearch", "hdr", "twowiki", "hybrid_deep_research", "fermi",
            "realfp", "synthfp", "2wikimultihopqa", "quartz"} <= words


def test_the_pattern_matches_names_and_spellings_as_words() -> None:
    pattern = _pattern()
    assert pattern.search("score HotpotQA here") and pattern.search("hybrid_deep_research")
    assert pattern.search("run hybrid-deep-research")
    assert not pattern.search("hotpotqa_like") and not pattern.search("quartzite")
