"""inspect_ai evaluation logs (``.eval`` and ``.json``).

With inspect_ai installed the log is read by its own reader (``inspect_ai.log.read_eval_log``),
so any log version it reads is read here. Without it, the two formats are read directly: a
``.json`` log is one object whose ``samples`` list holds the samples; an ``.eval`` log is a zip
archive with one ``samples/<id>_epoch_<n>.json`` entry per sample, compressed with Zstandard
(:mod:`hopscore.harness.ziplog` reads it without inspect_ai). Either way every entry of an
``.eval`` archive is first decompressed here in bounded memory and checked against a cap on its
size (:func:`hopscore.harness.ziplog.entry_limit`), so a small archive holding a huge entry is a
clear error, not minutes of decompression. A sample gives its ``id``,
``epoch``, ``input`` (the prompt: a string or chat messages), ``metadata`` (hopscore's tasks put
the gold ``id`` and ``question`` there) and ``output`` (the completion is the text of the first
choice's message). A sample that errored has no reply and scores 0. With several epochs the
first epoch of each sample is scored.

A task whose samples have no ids gets them from inspect, numbered 1, 2, ... in dataset order.
Such numbers are not gold ids: when every sample id is a positive integer, no sample carries a
gold id in its metadata and the dataset was not shuffled, each record carries its position
(id - 1) instead, which joins a gold whose ids are positions (:mod:`hopscore.harness.join`).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError
from hopscore.harness.join import HarnessRecord, id_candidates, text_candidates
from hopscore.harness.ziplog import archive_entries, entry_limit, iter_entry

QUESTION_KEYS = ("question", "claim", "input")
#: metadata keys that may hold the gold id
ID_KEYS = ("id", "_id", "qid")


@dataclass(slots=True)
class LogRecords:
    records: list[HarnessRecord]
    #: how the log was read ("inspect_ai" or "json" / "zip")
    reader: str
    epochs: int
    #: the sample ids were inspect's numbers 1, 2, ... (read as positions)
    numbered: bool = False


def read_log(path: Path, *, use_inspect: bool = True) -> LogRecords:
    if not path.is_file():
        raise InputError(path, "no such inspect log file")
    archive = zipfile.is_zipfile(path)
    if use_inspect:
        try:
            from inspect_ai.log import read_eval_log
        except ImportError:
            pass
        else:
            if archive:
                _zip_entries(path, parse=False)  # the size cap, before inspect_ai reads it
            try:
                log = read_eval_log(str(path))
            except Exception as exc:  # pydantic / zip / json errors of many kinds
                raise InputError(path, f"inspect_ai cannot read this log: {exc}") from None
            samples = [_from_object(sample) for sample in log.samples or []]
            return _first_epochs(path, samples, "inspect_ai", bool(log.eval.dataset.shuffled))
    if archive:
        entries = _zip_entries(path)
        samples = [_from_dict(s) for name, s in entries.items() if name.startswith("samples/")]
        header = entries.get("header.json") or entries.get("_journal/start.json") or {}
        return _first_epochs(path, samples, "zip", _shuffled(header))
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not an inspect log (.eval archive or .json): {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise InputError(path, "not an inspect .json log (no samples list)")
    return _first_epochs(path, [_from_dict(s) for s in data["samples"] if isinstance(s, dict)],
                         "json", _shuffled(data))


def _shuffled(header: dict[str, Any]) -> bool:
    spec = header.get("eval")
    dataset = spec.get("dataset") if isinstance(spec, dict) else None
    return bool(dataset.get("shuffled")) if isinstance(dataset, dict) else False


@dataclass(frozen=True, slots=True)
class _Sample:
    id: Any
    epoch: int
    input_text: str | None
    metadata: dict[str, Any]
    completion: str | None


def _from_object(sample: Any) -> _Sample:
    text = sample.input if isinstance(sample.input, str) else _last_user_text(
        [{"role": m.role, "content": m.text} for m in sample.input]
    )
    completion = None if sample.error is not None or not sample.output.choices else \
        sample.output.completion
    return _Sample(sample.id, int(sample.epoch or 1), text, dict(sample.metadata or {}),
                   completion)


def _from_dict(sample: dict[str, Any]) -> _Sample:
    raw_input = sample.get("input")
    text = raw_input if isinstance(raw_input, str) else (
        _last_user_text(raw_input) if isinstance(raw_input, list) else None)
    completion = None
    output = sample.get("output")
    if sample.get("error") is None and isinstance(output, dict):
        choices = output.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict):
                completion = _content_text(message.get("content"))
    metadata = sample.get("metadata")
    return _Sample(sample.get("id"), int(sample.get("epoch") or 1), text,
                   metadata if isinstance(metadata, dict) else {}, completion)


def _content_text(content: Any) -> str | None:
    """A message's text: the string, or its text parts joined (reasoning parts left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, dict) and part.get("type") == "text")
    return None


def _last_user_text(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _content_text(message.get("content"))
    return None


def _zip_entries(path: Path, parse: bool = True) -> dict[str, dict[str, Any]]:
    """The JSON entries of an ``.eval`` archive that a score reads (samples, header), by
    name; every entry is decompressed under the size cap, so one too large is an error before
    any reader holds it (``parse=False``: only that check, nothing is kept)."""
    limit = entry_limit()
    out: dict[str, dict[str, Any]] = {}
    with open(path, "rb") as handle:
        for info in archive_entries(path):
            name = info.filename
            wanted = parse and name.endswith(".json") and (name.startswith("samples/") or name in (
                "header.json", "_journal/start.json"))
            if not wanted:
                for _ in iter_entry(path, handle, info, limit):
                    pass
                continue
            raw = b"".join(iter_entry(path, handle, info, limit))
            try:
                value = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputError(f"{path}!{name}", f"not JSON: {exc}") from None
            if isinstance(value, dict):
                out[name] = value
    return dict(sorted(out.items()))


def _first_epochs(path: Path, samples: list[_Sample], reader: str,
                  shuffled: bool) -> LogRecords:
    if not samples:
        raise HopscoreError(f"{path}: the log holds no samples (did the evaluation run?)")
    epochs = max(sample.epoch for sample in samples)
    first: dict[str, _Sample] = {}
    for sample in sorted(samples, key=lambda s: s.epoch):
        first.setdefault(repr(sample.id), sample)
    numbered = not shuffled and all(_numbered(sample) for sample in first.values())
    records = []
    for sample in sorted(first.values(), key=_order):
        meta = sample.metadata
        ids = id_candidates([*(meta.get(k) for k in ID_KEYS),
                             None if numbered else sample.id])
        questions = text_candidates([*(meta.get(k) for k in QUESTION_KEYS), sample.input_text])
        records.append(HarnessRecord(f"{path} sample {sample.id!r}", ids, questions,
                                     sample.completion,
                                     position=sample.id - 1 if numbered else None))
    return LogRecords(records, reader, epochs, numbered)


def _numbered(sample: _Sample) -> bool:
    """A sample id that may be inspect's own number: a positive integer, and no gold id in
    the metadata."""
    return (isinstance(sample.id, int) and not isinstance(sample.id, bool) and sample.id >= 1
            and not id_candidates(sample.metadata.get(k) for k in ID_KEYS))


def _order(sample: _Sample) -> tuple[int, Any]:
    return (0, sample.id) if isinstance(sample.id, int) else (1, str(sample.id))
