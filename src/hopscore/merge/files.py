"""Merging the shards of ``hopscore judge`` and ``hopscore sql-match``: file outputs.

Each shard file has a ``.shard.json`` record beside it (the input's path and sha256, the
shard, the settings fingerprint). The input is read again, here, to know every row and the
shard it belongs to; the merged file holds the shards' rows byte for byte, one per input row,
in input order, as an unsharded run leaves its file. ``OUT.merge.json`` records the shards.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.files.atomic import write_json_atomic, write_text_atomic
from hopscore.files.digest import file_sha256
from hopscore.files.shard import clear_sidecar, differences, shard_of
from hopscore.merge.common import (
    MergeError,
    ShardOutput,
    check_output,
    check_set,
    collect,
    join_lines,
    merged_from,
    read_rows,
    reading,
    refuse_missing,
)

MERGE_SUFFIX = ".merge.json"


@dataclass(slots=True)
class MergedFile:
    output: Path
    shards: int
    rows: int
    #: the command's summary of the merged file (JudgeSummary or sql-match Summary)
    summary: Any


def _differences(a: ShardOutput, b: ShardOutput) -> list[str]:
    names = differences(a.record.get("settings") or {}, b.record.get("settings") or {})
    if (a.record.get("input") or {}).get("sha256") != (b.record.get("input") or {}).get("sha256"):
        names.append("input (content)")
    return names


def _input(outputs: Sequence[ShardOutput], given: Path | None) -> Path:
    """The input file of the shards (the one they record, or ``given``), checked to be the
    bytes they read."""
    records = [output.record.get("input") or {} for output in outputs]
    digests = {str(record.get("sha256")) for record in records}
    if len(digests) > 1:
        raise MergeError("the shards read different inputs (their sha256 differ): "
                         + ", ".join(f"{o.path}: {r.get('path')}" for o, r in
                                     zip(outputs, records, strict=True)))
    path = given or Path(str(records[0].get("path")))
    if not path.is_file():
        raise MergeError(f"the shards' input {path} is not here; pass --input with a copy of it")
    if file_sha256(path) != digests.pop():
        raise MergeError(f"{path} is not the input the shards read (its sha256 differs)")
    return path


def _write(out: Path, raw: list[bytes], outputs: Sequence[ShardOutput], input_path: Path
           ) -> None:
    write_text_atomic(out, join_lines(raw))
    clear_sidecar(out)
    write_json_atomic(out.with_name(out.name + MERGE_SUFFIX), {
        "command": outputs[0].kind, "fingerprint": outputs[0].fingerprint,
        "input": {"path": str(input_path.resolve()), "sha256": file_sha256(input_path)},
        "rows": len(raw), "merged_from": merged_from(outputs)})


def merge_judge(outputs: Sequence[ShardOutput], out: Path, warn: Callable[[str], None], *,
                input_path: Path | None = None, ready: Callable[[], None] = lambda: None
                ) -> MergedFile:
    from hopscore.engine import BatchOutcome, EngineStats, ResultLog
    from hopscore.judge.judge_config import JudgeConfig
    from hopscore.judge.judge_job import summarize
    from hopscore.judge.rows import is_done, item_key, key_of, load_items, shard_key

    count = check_set(outputs, _differences)
    check_output(out, outputs)
    source = _input(outputs, input_path)
    fingerprint = str(outputs[0].fingerprint)
    items = load_items(source)
    keys = [item_key(item, fingerprint) for item in items]
    owner = {key: shard_of(shard_key(item), count) for key, item in zip(keys, items, strict=True)}
    found = collect(outputs, lambda o: o.path, key_of, owner, warn)
    missing: dict[int, list[str]] = {}
    for key, item in zip(keys, items, strict=True):
        if key not in found.rows:
            missing.setdefault(owner[key], []).append(f"line {item.where.line}")
    refuse_missing(missing, count, outputs, "rows")
    ready()
    _write(out, [found.raw[key] for key in keys], outputs, source)
    settings = outputs[0].record.get("settings") or {}
    log = ResultLog(out, key_of)
    log.load(is_done)
    config = JudgeConfig(model=str(settings.get("model")))
    summary = summarize(log, BatchOutcome(total=len(keys), already_done=len(keys)),
                        EngineStats(), config, keys)
    summary.prompt_sha256 = str(settings.get("prompt_sha256") or "")
    first = (found.rows[keys[0]].get("judge") or {}) if keys else {}
    summary.preset = first.get("preset", "builtin")
    summary.prompt_source = str(first.get("prompt_source") or "")
    return MergedFile(out, count, len(keys), summary)


def merge_sql(outputs: Sequence[ShardOutput], out: Path, warn: Callable[[str], None], *,
              input_path: Path | None = None, ready: Callable[[], None] = lambda: None
              ) -> MergedFile:
    from hopscore.sql.inputs import read_lines
    from hopscore.sql.match_job import key_of, shard_key
    from hopscore.sql.summary import Summary

    count = check_set(outputs, _differences)
    check_output(out, outputs)
    source = _input(outputs, input_path)
    fingerprint = outputs[0].fingerprint
    owner_of_line: dict[int, int] = {}
    seen: dict[str, int] = {}
    for item in read_lines(source):
        number = seen.get(item.digest, 0)
        seen[item.digest] = number + 1
        owner_of_line[item.line] = shard_of(shard_key(item.digest, number), count)
    # sql-match keys hold the database file's identity on the machine that graded; the merge
    # knows each row by its input line instead, and checks the settings of every row
    by_line: dict[int, tuple[bytes, dict[str, Any]]] = {}
    for output in outputs:
        with reading(output):
            rows = read_rows(output.path, key_of)
        if rows.torn:
            warn(f"note: {output.path} ends in a torn line (its shard was killed while "
                 "writing); that row counts as missing")
        for key, row in rows.rows.items():
            line = row.get("line")
            if not isinstance(line, int) or line not in owner_of_line:
                raise MergeError(f"{output.path}: a verdict of line {line!r}, which is not a "
                                 f"line of {source}")
            if row.get("settings") != fingerprint:
                raise MergeError(f"{output.path}: the verdict of line {line} was made with "
                                 "other settings than its shard record says")
            if owner_of_line[line] != output.index:
                raise MergeError(f"{output.label} holds the verdict of line {line}, which "
                                 f"belongs to shard {owner_of_line[line]}/{count}")
            if line in by_line:
                raise MergeError(f"two shards hold the verdict of line {line}: they overlap")
            by_line[line] = (rows.raw[key], row)
    missing: dict[int, list[str]] = {}
    for line, index in owner_of_line.items():
        if line not in by_line:
            missing.setdefault(index, []).append(f"line {line}")
    refuse_missing(missing, count, outputs, "lines")
    ready()
    ordered = sorted(by_line)
    _write(out, [by_line[line][0] for line in ordered], outputs, source)
    extract = str((outputs[0].record.get("settings") or {}).get("extract") or "reference")
    summary = Summary(resumed=0, regraded=0, extract=extract)
    for line in ordered:
        summary.add(json.loads(by_line[line][0]))
    return MergedFile(out, count, len(ordered), summary)

