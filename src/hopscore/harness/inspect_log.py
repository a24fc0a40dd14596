"""inspect_ai evaluation logs (``.eval`` and ``.json``).

With inspect_ai installed the log is read by its own reader (``inspect_ai.log.read_eval_log``),
so any log version it reads is read here. Without it, the two formats are read directly: a
``.json`` log is one object whose ``samples`` list holds the samples; an ``.eval`` log is a zip
archive with one ``samples/<id>_epoch_<n>.json`` entry per sample. A sample gives its ``id``,
``epoch``, ``input`` (the prompt: a string or chat messages), ``metadata`` (hopscore's tasks put
the gold ``id`` and ``question`` there) and ``output`` (the completion is the text of the first
choice's message). A sample that errored has no reply and scores 0. With several epochs the
first epoch of each sample is scored.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError
from hopscore.harness.join import HarnessRecord, id_candidates, text_candidates

QUESTION_KEYS = ("question", "claim", "input")


@dataclass(slots=True)
class LogRecords:
    records: list[HarnessRecord]
    #: how the log was read ("inspect_ai" or "json" / "zip")
    reader: str
    epochs: int


def read_log(path: Path, *, use_inspect: bool = True) -> LogRecords:
    if not path.is_file():
        raise InputError(path, "no such inspect log file")
    if use_inspect:
        try:
            from inspect_ai.log import read_eval_log
        except ImportError:
            pass
        else:
            try:
                log = read_eval_log(str(path))
            except Exception as exc:  # pydantic / zip / json errors of many kinds
                raise InputError(path, f"inspect_ai cannot read this log: {exc}") from None
            samples = [_from_object(sample) for sample in log.samples or []]
            return _first_epochs(path, samples, "inspect_ai")
    if zipfile.is_zipfile(path):
        return _first_epochs(path, [_from_dict(s) for s in _zip_samples(path)], "zip")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not an inspect log (.eval archive or .json): {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("samples"), list):
        raise InputError(path, "not an inspect .json log (no samples list)")
    return _first_epochs(path, [_from_dict(s) for s in data["samples"] if isinstance(s, dict)],
                         "json")


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


def _zip_samples(path: Path) -> Iterable[dict[str, Any]]:
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith("samples/") and name.endswith(".json"):
                try:
                    value = json.loads(archive.read(name).decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise InputError(f"{path}!{name}", f"not JSON: {exc}") from None
                if isinstance(value, dict):
                    yield value


def _first_epochs(path: Path, samples: list[_Sample], reader: str) -> LogRecords:
    if not samples:
        raise HopscoreError(f"{path}: the log holds no samples (did the evaluation run?)")
    epochs = max(sample.epoch for sample in samples)
    first: dict[str, _Sample] = {}
    for sample in sorted(samples, key=lambda s: s.epoch):
        first.setdefault(repr(sample.id), sample)
    records = []
    for sample in first.values():
        meta = sample.metadata
        ids = id_candidates([meta.get("id"), meta.get("_id"), meta.get("qid"), sample.id])
        questions = text_candidates([*(meta.get(k) for k in QUESTION_KEYS), sample.input_text])
        records.append(HarnessRecord(f"{path} sample {sample.id!r}", ids, questions,
                                     sample.completion))
    return LogRecords(records, reader, epochs)
