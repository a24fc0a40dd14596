"""inspect logs of tasks that are not hopscore's: samples without ids, ids that are not the
gold's, ``.eval`` archives read without inspect_ai, and archives holding a huge entry.

Every log here is written by the installed inspect_ai (a scripted mockllm, in-process); the
hostile archives are real logs with one entry replaced.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SRC, run_cli, shared_file

pytest.importorskip("inspect_ai")

BAMBOOGLE = "bamboogle/bamboogle_test_questions_and_answers.json"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), **extra}


def _write_log(tmp_path: Path, samples: list[Any], answers: dict[str, str], name: str,
               log_format: str = "eval") -> Path:
    """Run a plain inspect task (``generate()`` over ``samples``) with a mockllm that answers
    each prompt containing a known question with its answer."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        prompt = messages[-1].text
        found = [q for q in answers if q in prompt]
        text = f"Answer: {answers[max(found, key=len)]}" if found else "I do not know."
        output = ModelOutput.from_content(model="mockllm", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    logs = tmp_path / f"logs-{name}"
    (result,) = inspect_eval(Task(dataset=MemoryDataset(samples), solver=generate(), name=name),
                             model=get_model("mockllm/model", custom_outputs=reply),
                             log_dir=str(logs), log_format=log_format, display="none")
    assert result.status == "success", result.error
    (log,) = sorted(logs.iterdir())
    return log


def _bamboogle(tmp_path: Path, n: int = 40) -> tuple[Path, list[dict[str, str]]]:
    """The first ``n`` questions of the Bamboogle test file (ids: positions "0", "1", ...)."""
    records = json.loads(shared_file(BAMBOOGLE).read_text())[:n]
    gold = tmp_path / "bamboogle.json"
    gold.write_text(json.dumps(records))
    return gold, records


def _warnings(metrics: dict[str, Any]) -> str:
    return "\n".join(metrics["warnings"])


def _score(tmp_path: Path, gold: Path, log: Path, out: str, env: dict[str, str] | None = None,
           bench: str = "bamboogle") -> tuple[Any, dict[str, Any]]:
    result = run_cli("score", bench, "--gold", gold, "-p", log, "--from", "inspect",
                     "--resamples", "0", "-o", tmp_path / out, env=env or _env(tmp_path))
    metrics = json.loads((tmp_path / out / "metrics.json").read_text()) \
        if result.returncode == 0 else {}
    return result, metrics


@pytest.mark.parametrize("prompt", [
    lambda q: q,  # the question itself: joins by question text
    lambda q: f"Answer the question in a few words.\n\n{q}\n\nAnswer:",  # joins by position
], ids=["question-input", "templated-input"])
def test_samples_without_ids_join_their_gold_examples(tmp_path: Path,
                                                      prompt: Callable[[str], str]) -> None:
    """inspect numbers id-less samples 1, 2, ...; Bamboogle's ids are positions 0, 1, ...: a
    log whose every answer is right scored EM 0 (sample n joined gold example n)."""
    from inspect_ai.dataset import Sample

    gold, records = _bamboogle(tmp_path)
    answers = {r["question"]: r["answer"] for r in records}
    samples = [Sample(input=prompt(r["question"]), target=r["answer"]) for r in records]
    log = _write_log(tmp_path, samples, answers, "no_ids")
    from inspect_ai.log import read_eval_log

    assert [s.id for s in read_eval_log(str(log)).samples or []][:3] == [1, 2, 3]
    result, metrics = _score(tmp_path, gold, log, "out")
    assert result.returncode == 0, result.stderr
    assert metrics["metrics"]["em"] == 1.0, result.stderr
    assert f"joined {len(records)} of {len(records)} records" in result.stderr
    if "Answer:" in prompt("."):
        assert f"{len(records)} by position" in _warnings(metrics)
        assert "numbered the samples 1, 2, ..." in _warnings(metrics)


def test_ids_that_are_not_the_gold_s_are_reported_and_not_trusted(tmp_path: Path) -> None:
    """Sample ids that are gold ids of other questions: the join says so and follows the
    question text."""
    from inspect_ai.dataset import Sample

    gold, records = _bamboogle(tmp_path)
    answers = {r["question"]: r["answer"] for r in records}
    n = len(records)
    samples = [Sample(id=str((i + 7) % n), input=r["question"], target=r["answer"])
               for i, r in enumerate(records)]
    log = _write_log(tmp_path, samples, answers, "wrong_ids")
    result, metrics = _score(tmp_path, gold, log, "out")
    assert result.returncode == 0, result.stderr
    assert metrics["metrics"]["em"] == 1.0
    assert "the ids are not the gold's" in _warnings(metrics)
    # a few wrong ids among right ones are kept, and named
    samples = [Sample(id=str((i + 1) % 5 if i < 5 else i), input=r["question"],
                      target=r["answer"]) for i, r in enumerate(records)]
    log = _write_log(tmp_path, samples, answers, "few_wrong_ids")
    result, metrics = _score(tmp_path, gold, log, "out2")
    assert result.returncode == 0, result.stderr
    assert "5 joined by id carry the question of another gold example" in _warnings(metrics)
    assert metrics["metrics"]["em"] == pytest.approx((n - 5) / n)


def _without_inspect(tmp_path: Path) -> dict[str, str]:
    """An environment where ``import inspect_ai`` (and its zipfile patch) fails, as when it is
    not installed."""
    blocker = tmp_path / "no-inspect"
    for name in ("inspect_ai", "zipfile_zstd"):
        (blocker / name).mkdir(parents=True, exist_ok=True)
        (blocker / name / "__init__.py").write_text(
            f'raise ImportError("No module named {name} (blocked by the test)")\n')
    return _env(tmp_path, PYTHONPATH=f"{SRC}:{blocker}")


def test_eval_archive_is_read_without_inspect_ai(tmp_path: Path) -> None:
    """inspect 0.3.285 compresses .eval entries with Zstandard, which Python 3.11's zipfile
    cannot read: without inspect_ai the log failed with 'That compression method is not
    supported'."""
    from inspect_ai.dataset import Sample

    gold, records = _bamboogle(tmp_path)
    answers = {r["question"]: r["answer"] for r in records[::2]}
    samples = [Sample(id=str(i), input=r["question"], target=r["answer"])
               for i, r in enumerate(records)]
    log = _write_log(tmp_path, samples, answers, "zstd")
    with zipfile.ZipFile(log) as archive:
        assert {info.compress_type for info in archive.infolist()} == {93}  # Zstandard
    blocked = _without_inspect(tmp_path)
    probe = run_cli("score", "--help", env=blocked)
    assert probe.returncode == 0
    without, plain = _score(tmp_path, gold, log, "without", blocked)
    assert without.returncode == 0, without.stderr
    with_inspect, expected = _score(tmp_path, gold, log, "with")
    assert with_inspect.returncode == 0, with_inspect.stderr
    plain.pop("warnings"), expected.pop("warnings")
    assert plain == expected
    assert 0.4 < plain["metrics"]["em"] < 0.6

    from hopscore.harness.inspect_log import read_log

    assert read_log(log, use_inspect=False).records == read_log(log).records


def _replace_entry(log: Path, target: Path, name: str, write: Callable[[Any], None],
                   compression: int = zipfile.ZIP_DEFLATED) -> None:
    """A copy of the log with entry ``name`` rewritten by ``write(stream)`` (streamed)."""
    with zipfile.ZipFile(log) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            if info.filename == name:
                with out.open(zipfile.ZipInfo(name) if compression == zipfile.ZIP_STORED
                              else _info(name, compression), "w", force_zip64=True) as stream:
                    write(stream)
            else:
                out.writestr(_info(info.filename, zipfile.ZIP_DEFLATED),
                             source.read(info.filename))


def _info(name: str, compression: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.compress_type = compression
    return info


def _huge_sample(stream: Any) -> None:
    """A sample whose completion is 300 MB of text (the hostile campaign's entry)."""
    stream.write(b'{"id": "0", "epoch": 1, "input": "q", "metadata": {}, "output": '
                 b'{"choices": [{"message": {"role": "assistant", "content": "')
    block = b"a" * (1 << 20)
    for _ in range(300):
        stream.write(block)
    stream.write(b'"}}]}}')


@pytest.mark.parametrize("blocked", [False, True], ids=["inspect_ai", "without-inspect_ai"])
def test_a_huge_entry_is_a_clear_error(tmp_path: Path, blocked: bool) -> None:
    """A 300 MB sample deflated into a small archive was decompressed whole (103 s, 907 MB);
    each entry is now streamed and stops at the cap (exit 2, naming the file and entry)."""
    from inspect_ai.dataset import Sample

    gold, records = _bamboogle(tmp_path)
    samples = [Sample(id=str(i), input=r["question"], target=r["answer"])
               for i, r in enumerate(records[:3])]
    log = _write_log(tmp_path, samples, {}, "small")
    hostile = tmp_path / "hostile.eval"
    _replace_entry(log, hostile, "samples/0_epoch_1.json", _huge_sample)
    assert hostile.stat().st_size < 2_000_000
    env = _without_inspect(tmp_path) if blocked else _env(tmp_path)
    result, _ = _score(tmp_path, gold, hostile, "out", env)
    assert result.returncode == 2, result.stderr
    assert f"{hostile}!samples/0_epoch_1.json" in result.stderr
    assert "decompresses to more than 256 MiB" in result.stderr
    assert "Traceback" not in result.stderr
    # the cap can be raised for a log that needs it
    raised = _env(tmp_path, HOPSCORE_MAX_LOG_ENTRY_MB="0.5")
    result, _ = _score(tmp_path, gold, log, "small-cap", raised)
    assert result.returncode == 0, result.stderr


def _unplaced(records: list[Any]) -> list[Any]:
    return [dataclasses.replace(r, where=r.where.rsplit(" sample ", 1)[1]) for r in records]


def test_damaged_and_unknown_entries_are_clear_errors(tmp_path: Path) -> None:
    from inspect_ai.dataset import Sample

    from hopscore.errors import InputError
    from hopscore.harness.inspect_log import read_log

    _, records = _bamboogle(tmp_path)
    samples = [Sample(id=str(i), input=r["question"], target=r["answer"])
               for i, r in enumerate(records[:3])]
    log = _write_log(tmp_path, samples, {}, "small")
    # each method the reader supports gives the same records as inspect's own reader
    for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
                   zipfile.ZIP_LZMA):
        copy = tmp_path / f"m{method}.eval"
        with zipfile.ZipFile(log) as source, zipfile.ZipFile(copy, "w") as out:
            for info in source.infolist():
                out.writestr(_info(info.filename, method), source.read(info.filename))
        assert _unplaced(read_log(copy, use_inspect=False).records) == \
            _unplaced(read_log(log).records), method
    damaged = tmp_path / "damaged.eval"
    data = bytearray(log.read_bytes())
    with zipfile.ZipFile(log) as archive:
        info = archive.getinfo("samples/1_epoch_1.json")
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26:
                                                          info.header_offset + 30])
    start = info.header_offset + 30 + name_length + extra_length + 8
    data[start:start + 16] = bytes(16)
    damaged.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"damaged\.eval!samples/1_epoch_1\.json"):
        read_log(damaged, use_inspect=False)


def _forged_archive(path: Path, name: str, data: bytes, declared: int) -> None:
    """A one-entry deflate archive whose headers declare ``declared`` bytes (not len(data))."""
    import zlib

    engine = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = engine.compress(data) + engine.flush()
    crc = zlib.crc32(data)
    raw = name.encode()
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(packed), declared,
                        len(raw), 0) + raw
    central = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(packed),
                          declared, len(raw), 0, 0, 0, 0, 0, 0) + raw
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central),
                      len(local) + len(packed), 0)
    path.write_bytes(local + packed + central + end)


def test_a_forged_entry_size_does_not_lift_the_cap(tmp_path: Path) -> None:
    """An entry whose header declares 1 KB but holds 40 MB stops at its declared size."""
    from hopscore.errors import InputError
    from hopscore.harness.inspect_log import read_log

    forged = tmp_path / "forged.eval"
    _forged_archive(forged, "samples/1_epoch_1.json", b"a" * (40 << 20), 1000)
    with pytest.raises(InputError, match=r"forged\.eval!samples/1_epoch_1\.json: .*more than "
                                         r"the 1000 bytes its header declares"):
        read_log(forged, use_inspect=False)
