"""Gold examples remembered between runs (files.goldcache): the same scores as reading the gold
file, used only for the same file in the same state, kept only when read whole and exactly."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.errors import InputError
from hopscore.files import cachedir, goldcache
from hopscore.scores.scoring import score_files
from tests.conftest import FIXTURES, run_cli

SMALL = FIXTURES / "hotpotqa" / "dev_small.json"


def with_paragraphs(path: Path) -> Path:
    """The small HotpotQA fixture with paragraphs of a real gold's length (the fixture's own
    are short: its examples are more than a quarter of it, so it is not kept)."""
    records = json.loads(SMALL.read_text())
    for record in records:
        record["context"] = [[title, [*sentences, *(["A sentence of some length. " * 8] * 12)]]
                             for title, sentences in record["context"]]
    path.write_text(json.dumps(records))
    return path


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return with_paragraphs(tmp_path / "gold.json")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """The gold files HotpotQA actually read; the cache in a temporary folder; every file
    settled."""
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HOPSCORE_GOLD_CACHE", raising=False)
    monkeypatch.setattr(goldcache, "SETTLE_NS", 0)
    calls: list[Path] = []
    cls = type(benchmarks.get("hotpotqa"))
    real = cls.iter_gold

    def counting(self: Any, path: Path, *, aliases: Path | None = None) -> Any:
        calls.append(path)
        return real(self, path, aliases=aliases)

    monkeypatch.setattr(cls, "iter_gold", counting)
    return calls


def entries(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "cache" / "examples"
    return sorted(folder.iterdir()) if folder.exists() else []


def predictions(tmp_path: Path, gold: Path, wrong: int = 3) -> Path:
    records = json.loads(gold.read_text())
    path = tmp_path / "predictions.json"
    answers = {r["_id"]: ("wrong" if i < wrong else r["answer"]) for i, r in enumerate(records)}
    path.write_text(json.dumps({"answer": answers,
                                "sp": {r["_id"]: r["supporting_facts"] for r in records}}))
    return path


def score(gold: Path, preds: Path, out: Path | None = None) -> dict[str, Any]:
    report = score_files(benchmarks.get("hotpotqa"), gold, preds, out, resamples=0)
    return report.to_json()


def test_the_second_scoring_reads_the_kept_examples_and_scores_the_same(
    reads: list[Path], tmp_path: Path, gold: Path
) -> None:
    preds = predictions(tmp_path, gold)
    first = score(gold, preds, tmp_path / "one")
    assert len(entries(tmp_path)) == 1
    assert entries(tmp_path)[0].stat().st_size < gold.stat().st_size / 4
    second = score(gold, preds, tmp_path / "two")
    assert reads == [gold]  # the second scoring did not read the gold file
    assert first == second
    assert (tmp_path / "one" / "scores.jsonl").read_bytes() == \
        (tmp_path / "two" / "scores.jsonl").read_bytes()
    records = json.loads(gold.read_text())
    from hopscore.files.goldcache import remembered_examples

    kept = list(remembered_examples("hotpotqa", gold, lambda: pytest.fail("read again")))
    assert kept == list(benchmarks.get("hotpotqa").iter_gold(gold))
    assert [k.id for k in kept] == [r["_id"] for r in records]


def test_a_changed_gold_is_read_again(reads: list[Path], tmp_path: Path, gold: Path) -> None:
    preds = predictions(tmp_path, gold)
    score(gold, preds)
    status = os.stat(gold)
    time.sleep(0.05)  # past the file system's timestamp tick
    records = json.loads(gold.read_text())
    records[0]["answer"] = records[0]["answer"].upper() + "x"
    text = json.dumps(records)
    gold.write_text(text)
    os.utime(gold, ns=(status.st_atime_ns, status.st_mtime_ns))  # the same modification time
    changed = score(gold, preds)
    assert reads == [gold, gold]
    assert changed == score(gold, preds)  # and kept again for the changed file
    assert len(reads) == 2


def test_nothing_is_kept_when_the_reading_fails_or_stops(
    reads: list[Path], tmp_path: Path, gold: Path
) -> None:
    repeated = tmp_path / "repeated.json"
    records = json.loads(gold.read_text())
    repeated.write_text(json.dumps([*records, records[0]]))  # a repeated id, found at the end
    with pytest.raises(InputError, match="duplicate gold id"):
        score(repeated, predictions(tmp_path, gold))
    assert entries(tmp_path) == []
    from hopscore.files.goldcache import remembered_examples

    good = gold
    examples = iter(remembered_examples("hotpotqa", good, lambda: benchmarks.get(
        "hotpotqa").iter_gold(good)))
    next(examples)
    del examples  # the consumer stopped early
    assert entries(tmp_path) == []
    assert not list((tmp_path / "cache" / "examples").glob(".*"))  # no temporary left


def test_a_gold_without_paragraphs_is_not_kept_nor_tried_again(
    reads: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its examples are about as large as the file: a copy would gain little. A mark says so,
    and the next readings do not encode them again to find out."""
    gold = tmp_path / "lean.json"
    records = [{k: v for k, v in r.items() if k != "context"}
               for r in json.loads(with_paragraphs(tmp_path / "long.json").read_text())]
    gold.write_text(json.dumps(records))
    preds = predictions(tmp_path, gold)
    expected = score(gold, preds)
    (mark,) = entries(tmp_path)
    assert json.loads(mark.read_text())["kept"] is False
    monkeypatch.setattr(goldcache._Writer, "start", lambda *a: pytest.fail("tried again"))
    assert score(gold, preds) == expected
    assert reads == [gold, gold]


def test_a_file_written_just_now_and_the_switch_are_respected(
    reads: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gold: Path
) -> None:
    monkeypatch.setattr(goldcache, "SETTLE_NS", 10**18)  # every file is fresh
    score(gold, predictions(tmp_path, gold))
    assert entries(tmp_path) == []
    monkeypatch.setattr(goldcache, "SETTLE_NS", 0)
    monkeypatch.setenv("HOPSCORE_GOLD_CACHE", "0")
    score(gold, predictions(tmp_path, gold))
    assert entries(tmp_path) == []


def test_a_cut_entry_is_not_used_and_a_damaged_one_is_a_clear_error(
    reads: list[Path], tmp_path: Path, gold: Path
) -> None:
    preds = predictions(tmp_path, gold)
    expected = score(gold, preds)
    (entry,) = entries(tmp_path)
    whole = entry.read_bytes()
    entry.write_bytes(whole[:-10])  # cut: the batches do not reach the end
    assert score(gold, preds) == expected
    assert len(reads) == 2 and entry.read_bytes() == whole  # read and kept again
    header_end = whole.index(b"\n") + 1 + 4
    entry.write_bytes(whole[:header_end] + b"\xc1" * (len(whole) - header_end))
    with pytest.raises(InputError, match="damaged and was removed"):
        score(gold, preds)
    assert not entry.exists()
    assert score(gold, preds) == expected


def test_the_cli_scores_the_same_from_the_kept_examples(tmp_path: Path, gold: Path) -> None:
    """Two ``hopscore score`` runs, the second from the cache (once the gold's change time is
    older than the settling time)."""
    preds = predictions(tmp_path, gold)
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")}
    time.sleep(max(0.0, os.stat(gold).st_ctime_ns / 1e9 + goldcache.SETTLE_NS / 1e9
                   - time.time() + 0.1))
    outs = []
    for name in ("a", "b"):
        result = run_cli("score", "hotpotqa", "-g", gold, "-p", preds, "-o", tmp_path / name,
                         env=env)
        assert result.returncode == 0, result.stderr
        outs.append(result.stdout)
    assert outs[0] == outs[1]
    assert len(entries(tmp_path)) == 1
    assert (tmp_path / "a" / "scores.jsonl").read_bytes() == \
        (tmp_path / "b" / "scores.jsonl").read_bytes()


def test_a_benchmark_whose_reading_says_more_keeps_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """2WikiMultihopQA's reading of its gold sets warnings on the benchmark (answer ids without
    ``--aliases``) and its relation names: it does not declare ``gold_examples_kept``, so
    nothing is kept and the second scoring says what the first said."""
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(goldcache, "SETTLE_NS", 0)
    bench = benchmarks.get("2wikimultihopqa")
    assert not bench.gold_examples_kept
    gold = FIXTURES / "2wikimultihopqa" / "dev_small.json"
    preds = FIXTURES / "2wikimultihopqa" / "predictions_targeted.json"
    first = score_files(bench, gold, preds, None, resamples=0).to_json()
    second = score_files(bench, gold, preds, None, resamples=0).to_json()
    assert first == second and entries(tmp_path) == []
    assert benchmarks.get("hotpotqa").gold_examples_kept


def test_a_cache_folder_that_cannot_be_written_only_costs_the_copy(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, gold: Path
) -> None:
    """A cache path that is a file (as a read-only or full disk would): the scores are the
    same, nothing is raised, nothing is kept."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x")
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(blocked))
    monkeypatch.setattr(goldcache, "SETTLE_NS", 0)
    preds = predictions(tmp_path, gold)
    monkeypatch.setenv("HOPSCORE_GOLD_CACHE", "0")
    expected = score(gold, preds)
    monkeypatch.delenv("HOPSCORE_GOLD_CACHE")
    assert score(gold, preds) == expected == score(gold, preds)
    assert blocked.read_text() == "x"


def variant(tmp_path: Path, name: str, answer: str) -> Path:
    """The gold fixture with paragraphs and its first answer changed: another file, another
    entry of about the same size."""
    path = with_paragraphs(tmp_path / f"{name}.json")
    records = json.loads(path.read_text())
    records[0]["answer"] = answer
    path.write_text(json.dumps(records))
    return path


def test_the_folder_stays_under_its_limit_dropping_the_least_recently_used(
    reads: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golds = [variant(tmp_path, name, name) for name in ("one", "two", "three")]
    made: list[Path] = []
    for gold in golds[:2]:
        before = set(entries(tmp_path))
        score(gold, predictions(tmp_path, gold))
        (entry,) = set(entries(tmp_path)) - before
        made.append(entry)
    sizes = [entry.stat().st_size for entry in made]
    for second, entry in enumerate(made, start=1):  # "one" used before "two"
        os.utime(entry, ns=(second * 10**9, second * 10**9))
    score(golds[0], predictions(tmp_path, golds[0]))  # read from its entry: now the latest
    assert reads == golds[:2]
    monkeypatch.setenv("HOPSCORE_GOLD_CACHE_MB", str(2.5 * max(sizes) / 1e6))
    score(golds[2], predictions(tmp_path, golds[2]))
    kept = entries(tmp_path)
    assert made[0] in kept and made[1] not in kept and len(kept) == 2
    assert sum(entry.stat().st_size for entry in kept) <= 2.5 * max(sizes)
    expected = score(golds[1], predictions(tmp_path, golds[1]))  # read again, scored the same
    assert reads == [*golds[:2], golds[2], golds[1]]
    monkeypatch.setenv("HOPSCORE_GOLD_CACHE", "0")
    assert score(golds[1], predictions(tmp_path, golds[1])) == expected


def test_a_limit_below_an_entry_keeps_nothing_and_marks_nothing(
    reads: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gold: Path
) -> None:
    """An entry larger than the folder's limit is not written, and no mark stops a later run
    with a larger limit from keeping it; 0 turns keeping off."""
    preds = predictions(tmp_path, gold)
    monkeypatch.setenv("HOPSCORE_GOLD_CACHE_MB", "0.000001")
    expected = score(gold, preds)
    assert entries(tmp_path) == []
    monkeypatch.setenv("HOPSCORE_GOLD_CACHE_MB", "0")
    assert score(gold, preds) == expected
    assert entries(tmp_path) == []
    monkeypatch.setenv("HOPSCORE_GOLD_CACHE_MB", "50")
    assert score(gold, preds) == expected
    assert len(entries(tmp_path)) == 1
    assert len(reads) == 3


def test_prune_removes_a_killed_readings_temporary_files_once_stale(tmp_path: Path) -> None:
    folder = tmp_path / "examples"
    folder.mkdir()
    stale, fresh, entry = folder / ".gold.stale", folder / ".gold.fresh", folder / ("ab" * 32)
    for path in (stale, fresh, entry):
        path.write_bytes(b"x" * 100)
    old = time.time() - 2 * cachedir.STALE_S
    os.utime(stale, (old, old))
    os.utime(entry, (old, old))  # an old entry under the limit stays
    assert cachedir.prune(folder, 10**6) == [stale]
    assert sorted(folder.iterdir()) == sorted([fresh, entry])
    assert cachedir.prune(folder, 0, keep=entry) == []  # the entry kept, whatever its size
    assert cachedir.prune(tmp_path / "absent", 0) == []


def test_a_wrong_limit_is_a_clear_error_before_reading(tmp_path: Path, gold: Path) -> None:
    preds = predictions(tmp_path, gold)
    for wrong in ("lots", "-5", "nan"):
        result = run_cli("score", "hotpotqa", "-g", gold, "-p", preds,
                         env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"),
                              "HOPSCORE_GOLD_CACHE_MB": wrong})
        assert result.returncode == 2, result.stderr
        assert "HOPSCORE_GOLD_CACHE_MB must be a number of megabytes" in result.stderr
        assert repr(wrong) in result.stderr
        assert "Traceback" not in result.stderr
