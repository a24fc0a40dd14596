"""The gold digest remembered between runs (files.digest.remembered_sha256): the same digest as
hashing the file, reused only while the file's identity and status are unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

import pytest

from hopscore.files import digest as digests
from hopscore.files.digest import file_sha256, remembered_sha256, remembered_sha256_soon
from hopscore.files.reruns import scored_from_soon
from tests.conftest import FIXTURES


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """The files actually hashed; the cache in a temporary folder; every file settled."""
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HOPSCORE_DIGEST_CACHE", raising=False)
    monkeypatch.setattr(digests, "SETTLE_NS", 0)
    calls: list[Path] = []
    real = digests.file_sha256

    def counting(path: Path, *block: int) -> str:
        calls.append(path)
        return real(path, *block)

    monkeypatch.setattr(digests, "file_sha256", counting)
    return calls


def test_remembered_equals_hashed_and_is_reused(hashed: list[Path], tmp_path: Path) -> None:
    gold = tmp_path / "gold.json"
    gold.write_bytes(b'[{"_id": "a"}]')
    expected = hashlib.sha256(gold.read_bytes()).hexdigest()
    assert remembered_sha256(gold) == expected
    assert remembered_sha256(gold) == expected
    assert hashed == [gold]  # the second run read the cache
    assert len(list((tmp_path / "cache" / "digests").iterdir())) == 1


def test_a_change_is_hashed_again(hashed: list[Path], tmp_path: Path) -> None:
    gold = tmp_path / "gold.json"
    gold.write_bytes(b"[1]")
    first = remembered_sha256(gold)
    status = os.stat(gold)
    time.sleep(0.05)  # past the file system's timestamp tick (the cache's settling, turned off)
    gold.write_bytes(b"[2]")  # same size; the modification time put back as it was
    os.utime(gold, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert remembered_sha256(gold) == hashlib.sha256(b"[2]").hexdigest() != first
    assert len(hashed) == 2


def test_a_file_changed_just_now_is_not_remembered(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digests, "SETTLE_NS", 10**18)  # every file is fresh
    gold = tmp_path / "gold.json"
    gold.write_bytes(b"[]")
    remembered_sha256(gold)
    remembered_sha256(gold)
    assert len(hashed) == 2
    assert not (tmp_path / "cache" / "digests").exists()


def test_off_switch_folder_and_bad_entries(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = tmp_path / "gold.json"
    gold.write_bytes(b"[]")
    remembered_sha256(gold)
    for entry in (tmp_path / "cache" / "digests").iterdir():
        entry.write_text("something else\n" + "0" * 64)  # another file's entry, or damaged
    assert remembered_sha256(gold) == file_sha256(gold)
    assert len(hashed) == 2
    monkeypatch.setenv("HOPSCORE_DIGEST_CACHE", "0")
    remembered_sha256(gold)
    assert len(hashed) == 3
    folder = tmp_path / "gold"
    folder.mkdir()
    (folder / "a.json").write_text("[]")
    monkeypatch.delenv("HOPSCORE_DIGEST_CACHE")
    assert remembered_sha256(folder) == file_sha256(folder)


def test_a_cache_that_cannot_be_written_still_gives_the_digest(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(blocked))
    gold = tmp_path / "gold.json"
    gold.write_bytes(b"[3]")
    assert remembered_sha256(gold) == hashlib.sha256(b"[3]").hexdigest()
    assert remembered_sha256(gold) == hashlib.sha256(b"[3]").hexdigest()
    assert len(hashed) == 2


def hashing_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that hash a file from now on (the hashing itself goes on)."""
    threads: list[str] = []
    counting = digests.file_sha256

    def noting(path: Path, *block: int) -> str:
        threads.append(threading.current_thread().name)
        return counting(path, *block)

    monkeypatch.setattr(digests, "file_sha256", noting)
    return threads


def test_hashed_beside_the_caller_then_remembered_by_it(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = tmp_path / "gold.json"
    gold.write_bytes(b'[{"_id": "b"}]' * 1000)
    threads = hashing_threads(monkeypatch)
    monkeypatch.setenv("HOPSCORE_DIGEST_CACHE", "0")
    assert remembered_sha256_soon(gold, beside=True)() == file_sha256(gold)
    assert threads == ["MainThread"]  # a small file: hashed by the caller
    monkeypatch.delenv("HOPSCORE_DIGEST_CACHE")
    monkeypatch.setattr(digests, "BESIDE_MIN_BYTES", 100)
    threads.clear()
    hashed.clear()
    wait = remembered_sha256_soon(gold, beside=True)
    assert wait() == wait() == hashlib.sha256(gold.read_bytes()).hexdigest()
    assert threads == ["hopscore-gold-sha256"]
    assert len(list((tmp_path / "cache" / "digests").iterdir())) == 1
    assert remembered_sha256_soon(gold, beside=True)() == wait()
    assert len(hashed) == 1  # the second read the cache: no thread, no hashing


def test_a_file_changed_while_hashed_beside_is_not_remembered(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gold = tmp_path / "gold.json"
    gold.write_bytes(b"[1]")
    counting = digests.file_sha256

    def changing(path: Path, *block: int) -> str:
        digest = counting(path, *block)
        time.sleep(0.05)  # past the file system's timestamp tick
        path.write_bytes(b"[22]")
        return digest

    monkeypatch.setattr(digests, "file_sha256", changing)
    monkeypatch.setattr(digests, "BESIDE_MIN_BYTES", 0)
    assert remembered_sha256_soon(gold, beside=True)() == hashlib.sha256(b"[1]").hexdigest()
    assert not (tmp_path / "cache" / "digests").exists()


def test_a_gold_that_cannot_be_hashed_beside_has_no_digest(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unreadable = tmp_path / "unreadable.json"
    unreadable.write_bytes(b"[2]")

    def refused(path: Path, *block: int) -> str:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(digests, "file_sha256", refused)
    monkeypatch.setattr(digests, "BESIDE_MIN_BYTES", 0)
    with pytest.raises(PermissionError):  # the thread's error reaches the caller who waits
        remembered_sha256_soon(unreadable, beside=True)()
    made = scored_from_soon(unreadable, "unreadable.json", beside=True)()
    assert made == {"gold": "unreadable.json", "gold_file": str(unreadable.absolute()),
                    "gold_sha256": None}
    assert not (tmp_path / "cache" / "digests").exists()


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_any_block_size_gives_the_same_digest(tmp_path: Path, block: int) -> None:
    gold = tmp_path / "gold.json"
    gold.write_bytes(bytes(range(256)) * 40 + b"tail")
    assert file_sha256(gold, block) == hashlib.sha256(gold.read_bytes()).hexdigest()
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert file_sha256(empty, block) == hashlib.sha256(b"").hexdigest()


def test_the_folder_keeps_the_digests_used_most_recently(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache" / "digests"
    golds = [tmp_path / f"gold-{i}.json" for i in range(5)]
    for i, gold in enumerate(golds):
        gold.write_bytes(f"[{i}]".encode())

    def entry(gold: Path) -> Path:
        identity = digests.file_identity(gold, os.stat(gold))
        return folder / hashlib.sha256(identity.encode()).hexdigest()

    for gold in golds[:4]:
        remembered_sha256(gold)
    old = time.time() - 1000
    for age, gold in enumerate(golds[:4]):  # used long ago, gold-0 first
        os.utime(entry(gold), (old + age, old + age))
    sizes = [entry(gold).stat().st_size for gold in golds[:4]]
    assert max(sizes) - min(sizes) < 10
    monkeypatch.setattr(digests, "DIGESTS_LIMIT", 3 * max(sizes) + 10)  # room for three
    assert remembered_sha256(golds[0]) == file_sha256(golds[0])  # read: used just now
    assert len(hashed) == 4
    remembered_sha256(golds[4])  # written: the two used least recently make room
    assert sorted(folder.iterdir()) == sorted(entry(g) for g in (golds[0], golds[3], golds[4]))
    hashed.clear()
    for gold in (golds[0], golds[3], golds[4], golds[1]):
        assert remembered_sha256(gold) == hashlib.sha256(gold.read_bytes()).hexdigest()
    assert hashed == [golds[1]]  # the others were remembered
    assert len(list(folder.iterdir())) == 3


def test_score_records_the_digest_hashed_beside_its_reading(
    hashed: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python API's scoring with an output folder, the gold hashed in the thread: the
    scores and the recorded digest are those of the gold hashed inline."""
    import hopscore

    gold = FIXTURES / "hotpotqa" / "dev_small.json"
    records = json.loads(gold.read_text(encoding="utf-8"))
    predictions = tmp_path / "p.json"
    predictions.write_text(json.dumps({"answer": {r["_id"]: r["answer"] for r in records[:3]},
                                       "sp": {}}), encoding="utf-8")
    inline = hopscore.score("hotpotqa", gold, predictions, output_dir=tmp_path / "inline")
    monkeypatch.setattr(digests, "BESIDE_MIN_BYTES", 0)
    monkeypatch.setenv("HOPSCORE_DIGEST_CACHE", "0")
    threads = hashing_threads(monkeypatch)
    beside = hopscore.score("hotpotqa", gold, predictions, output_dir=tmp_path / "beside")
    assert threads == ["hopscore-gold-sha256"]
    written = json.loads((tmp_path / "beside" / "metrics.json").read_text(encoding="utf-8"))
    assert written["scored_from"]["gold_sha256"] == hashlib.sha256(gold.read_bytes()).hexdigest()
    assert beside.metrics == inline.metrics
    assert (tmp_path / "beside" / "scores.jsonl").read_bytes() == \
        (tmp_path / "inline" / "scores.jsonl").read_bytes()
