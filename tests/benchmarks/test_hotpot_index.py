"""The official HotpotQA predictions' index (hash and offset arrays of the mapped file) must hand
out what the checked reader reads, whatever the order ids are asked in, with colliding hashes,
escapes anywhere, windows of a few bytes or entries; anything unusual goes to the checked
reader, with its error."""

from __future__ import annotations

import json
import mmap
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from hopscore.benchmarks.hotpotqa import HotpotQA
from hopscore.benchmarks.hotpotqa import official_index as hotpot_stream
from hopscore.benchmarks.hotpotqa.example import HotpotPrediction
from hopscore.benchmarks.hotpotqa.official_index import OfficialIndex, read_predictions_quickly
from hopscore.errors import InputError
from hopscore.files import jsonspans
from hopscore.files.jsonspans import Unusual, object_spans

BENCH = HotpotQA()
ODD = ["", "a:b", 'q"uote', "back\\slash", "Ünï", "{[,]}", "\u2028", "x\\\"y", ": ,"]


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scan windows of 64 bytes and take windows of 3 entries: every file is many of each."""
    monkeypatch.setattr(jsonspans, "WINDOW", 64)
    monkeypatch.setattr(hotpot_stream, "_WINDOW", 3)


def content(seed: int, n: int = 40) -> dict[str, Any]:
    rng = random.Random(seed)
    ids = [f"id{i}{rng.choice(ODD)}" for i in range(n)]
    answered = rng.sample(ids, int(n * 0.8))
    with_sp = rng.sample(ids, int(n * 0.7))  # some only in "sp", some only in "answer"
    return {
        "answer": {i: rng.choice(ODD) + rng.choice(["yes", "Paris"]) for i in answered},
        "sp": {i: [[rng.choice(ODD), rng.randrange(4)] for _ in range(rng.randrange(4))]
               for i in with_sp},
    }


def write(path: Path, data: Any, seed: int) -> Path:
    rng = random.Random(seed)
    text = json.dumps(data, ensure_ascii=rng.random() < 0.5,
                      indent=rng.choice([None, 1]), separators=rng.choice([None, (",", ":")]))
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("low", [0xFFFFFFFF, 0x3, 0x0])  # 0: every hash the same
@pytest.mark.parametrize("order", ["file", "reversed", "shuffled"])
@pytest.mark.parametrize("seed", range(4))
def test_the_index_hands_out_what_the_checked_reader_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, low: int, order: str,
        seed: int) -> None:
    monkeypatch.setattr(hotpot_stream, "_LOW", low)
    data = content(seed)
    path = write(tmp_path / "p.json", data, seed)
    checked = BENCH.load_predictions(path)
    quick = read_predictions_quickly(path, HotpotPrediction)
    assert quick is not None and isinstance(quick.stream, OfficialIndex)
    assert quick.warnings == checked.warnings
    index = quick.stream
    assert len(index) == len(checked.by_id)
    every = list(checked.by_id)  # file order, answers first
    asked = [*every[: len(every) * 2 // 3], "absent", "id0"]
    if order == "reversed":
        asked.reverse()
    elif order == "shuffled":
        random.Random(seed).shuffle(asked)
    for example_id in asked:
        got = index.take(example_id)
        want = checked.by_id.get(example_id)
        assert got == want, example_id
        assert index.take(example_id) is None  # once only
    assert index.unmatched() == [i for i in every if i not in asked]


def test_ids_only_in_sp_and_answers_without_sp(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"sp": {"s": [["T", 1]], "b": []}, "answer": {"a": "x", "b": "y"}}',
                    encoding="utf-8")
    quick = read_predictions_quickly(path, HotpotPrediction)
    assert quick is not None and quick.warnings == BENCH.load_predictions(path).warnings
    index = quick.stream
    assert index is not None and len(index) == 3
    assert index.take("s") == HotpotPrediction(id="s", answer=None, sp=(("T", 1),))
    assert index.take("a") == HotpotPrediction(id="a", answer="x", sp=None)
    assert index.unmatched() == ["b"]


def test_no_sp_key_warns_as_the_checked_reader(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"answer": {"a": "x", "b": "y"}}', encoding="utf-8")
    quick = read_predictions_quickly(path, HotpotPrediction)
    checked = BENCH.load_predictions(path)
    assert quick is not None and quick.warnings == checked.warnings and quick.warnings
    assert quick.stream is not None and quick.stream.take("b") == checked.by_id["b"]


@pytest.mark.parametrize("low", [0xFFFFFFFF, 0x0])
@pytest.mark.parametrize("part", ["answer", "sp"])
def test_a_key_repeated_windows_apart_is_the_checked_readers_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, low: int, part: str) -> None:
    monkeypatch.setattr(hotpot_stream, "_LOW", low)
    value = '"v"' if part == "answer" else '[["T", 0]]'
    entries = ", ".join(f'"k{i}": {value}' for i in range(30))
    other = "sp" if part == "answer" else "answer"
    text = (f'{{"{other}": {{}}, "{part}": {{"k\\u0031": {value}, {entries}}}}}'
            if part == "sp" else f'{{"{part}": {{"k\\u0031": {value}, {entries}}}}}')
    path = tmp_path / "p.json"
    path.write_text(text, encoding="utf-8")
    assert read_predictions_quickly(path, HotpotPrediction) is None
    with pytest.raises(InputError, match="duplicate key 'k1'"):
        BENCH.predictions_for_scoring(path)


@pytest.mark.parametrize("text", [
    '{"answer": {"a": "x", "b": "y", "c": "z", "d": "w", "e": 5}}',
    '{"answer": {"a": "x"}, "sp": {"a": [], "b": [], "c": [], "d": [["T", 0]], "e": [[1, 0]]}}',
    '{"answer": {"a": "x"}, "\\u0073p": {"a": []}}',
    '{"answer": {"a": "x"}, "sp": {"a": []}, "other": {}}',
])
def test_unusual_files_go_to_the_checked_reader(tmp_path: Path, text: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text, encoding="utf-8")
    assert read_predictions_quickly(path, HotpotPrediction) is None
    try:
        checked = BENCH.load_predictions(path)
    except InputError as exc:
        with pytest.raises(InputError) as quick:
            BENCH.predictions_for_scoring(path)
        assert str(quick.value) == str(exc)
    else:
        assert BENCH.predictions_for_scoring(path).by_id == checked.by_id


@pytest.mark.parametrize("window", [8, 64, 1 << 20])
def test_spans_are_the_keys_and_values_text(tmp_path: Path, window: int) -> None:
    data = {f"k{i}{odd}": [[odd, i]] for i, odd in enumerate(ODD * 3)}
    text = json.dumps(data, indent=1).encode()
    path = tmp_path / "o.json"
    path.write_bytes(b"  " + text + b"\n")
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        decoder = msgspec.json.Decoder(dict[str, Any])
        got: dict[str, Any] = {}
        for spans in object_spans(m, 2, 2 + len(text), decoder, b"[", b"]", window=window):
            for j, key in enumerate(spans.decoded):
                k0, k1 = int(spans.key_start[j]), int(spans.key_end[j])
                v0, v1 = int(spans.value_start[j]), int(spans.value_end[j])
                assert json.loads(m[k0:k1]) == key
                got[key] = json.loads(m[v0:v1])
        assert got == data
        with pytest.raises(Unusual):  # values of another type than the decoder's
            list(object_spans(m, 2, 2 + len(text), msgspec.json.Decoder(dict[str, str]),
                              b"[", b"]"))


def test_a_key_twice_in_one_window_is_unusual(tmp_path: Path) -> None:
    path = tmp_path / "o.json"
    path.write_bytes(b'{"a": [], "b": [["a", 1]], "a": [["x", 2]]}')
    with (path.open("rb") as handle,
          mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m,
          pytest.raises(Unusual)):
        list(object_spans(m, 0, len(m), msgspec.json.Decoder(dict[str, Any]), b"[", b"]",
                          window=1 << 20))


def test_scoring_reads_a_large_file_through_the_index_and_a_small_one_whole(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``hopscore score``'s reading of official predictions: the index from INDEX_MIN_BYTES
    on, the checked reader below; the same scores either way."""
    import hopscore.benchmarks.hotpotqa as hotpot
    from hopscore import api

    samples = Path(hotpot.__file__).parent / "samples"
    gold, predictions = samples / "gold.json", samples / "predictions.json"
    used: list[str] = []
    real = hotpot_stream.read_predictions_quickly

    def spy(path: Path, make: Any) -> Any:
        used.append(str(path))
        return real(path, make)

    monkeypatch.setattr(hotpot_stream, "read_predictions_quickly", spy)
    whole = api.score("hotpotqa", gold, predictions, output_dir=tmp_path / "whole")
    assert used == []  # a small file: read whole
    monkeypatch.setattr(hotpot, "INDEX_MIN_BYTES", 0)
    indexed = api.score("hotpotqa", gold, predictions, output_dir=tmp_path / "indexed")
    assert used == [str(predictions)]
    assert indexed.to_json()["metrics"] == whole.to_json()["metrics"]
    assert (tmp_path / "indexed" / "scores.jsonl").read_bytes() == \
        (tmp_path / "whole" / "scores.jsonl").read_bytes()
