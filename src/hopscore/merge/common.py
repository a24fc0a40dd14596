"""What every merge shares: finding the shard outputs, checking they are one run's shards, reading
their rows without touching them, and the report of rows that are missing.

Shard outputs are only read: a torn last line (a shard killed mid-write) is skipped here, not cut
off, and nothing is written next to them. No shard is being written while it is read: its own lock
(:mod:`hopscore.files.output_locks`) is held for the read (:func:`reading`), one shard at a time, so
that a merge of thousands of shards holds one descriptor for them, not one per shard.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files.io import load_json, parse_json_line
from hopscore.files.shard import Shard, sidecar_path

#: Missing rows listed per shard in an error message.
FIRST_MISSING = 10

#: What a shard output can be: a model run, an agent run (a benchmark whose ``runner`` is
#: ``"agent"``), a suite, a judge or sql-match file.
KINDS = ("run", "agent", "suite", "judge", "sql-match")


class MergeError(HopscoreError):
    """Shard outputs that cannot be joined (exit status 2)."""


@dataclass(slots=True)
class ShardOutput:
    """One shard's output: a run directory (config.json), a suite directory (suite.json) or a
    judge / sql-match file with its ``.shard.json`` record."""

    path: Path
    kind: str
    #: None: an output made without --shard (it is the whole run: shard 0 of 1)
    shard: Shard | None
    fingerprint: str | None
    #: config.json, suite.json or the .shard.json record
    record: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.path} (shard {self.shard or '0/1'})"

    @property
    def index(self) -> int:
        return 0 if self.shard is None else self.shard.index

    @property
    def count(self) -> int:
        return 1 if self.shard is None else self.shard.count


def _json_object(path: Path) -> dict[str, Any]:
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError(path, "expected a JSON object")
    return data


def locate(path: Path) -> ShardOutput:
    """What kind of output ``path`` is, and which shard."""
    if path.is_dir():
        if (path / "suite.json").is_file():
            record = _json_object(path / "suite.json")
            return ShardOutput(path, "suite", Shard.from_json(record.get("shard")), None, record)
        if not (path / "config.json").is_file():
            raise MergeError(f"{path}: neither a run directory (no config.json) nor a suite "
                             "directory (no suite.json)")
        record = _json_object(path / "config.json")
        kind = _run_kind(record.get("benchmark"))
        fingerprint = record.get("fingerprint")
        if not isinstance(fingerprint, str):
            raise MergeError(f"{path}/config.json has no settings fingerprint: it was written by "
                             "a hopscore without shards; run the shards with this version")
        return ShardOutput(path, kind, Shard.from_json(record.get("shard")), fingerprint, record)
    if not path.exists():
        raise MergeError(f"{path}: not found")
    sidecar = sidecar_path(path)
    if not sidecar.is_file():
        raise MergeError(f"{path}: no {sidecar.name} beside it, so it is not the output of a "
                         "judge or sql-match run with --shard")
    record = _json_object(sidecar)
    command = record.get("command")
    if command not in ("judge", "sql-match"):
        raise MergeError(f"{sidecar}: unknown command {command!r}")
    shard = Shard.from_json(record.get("shard"))
    if shard is None:
        raise MergeError(f"{sidecar}: no shard recorded")
    return ShardOutput(path, str(command), shard, str(record.get("fingerprint")), record)


def _run_kind(benchmark: object) -> str:
    """``"agent"`` for the run directory of a benchmark an agent runs, else ``"run"``."""
    from hopscore import benchmarks

    if not isinstance(benchmark, str):
        return "run"
    try:
        runner = benchmarks.get(benchmark).runner
    except HopscoreError:  # not known here: merge_run names what it cannot load
        return "run"
    return "agent" if runner == "agent" else "run"


def check_set(outputs: Sequence[ShardOutput], differ: Callable[[ShardOutput, ShardOutput],
                                                               list[str]]) -> int:
    """Refuse outputs that are not shards of one run: mixed kinds, other settings (their
    fingerprints differ; ``differ`` names the settings), other splits or the same shard twice.
    Returns the number of shards."""
    if not outputs:
        raise MergeError("no shard outputs given")
    first = outputs[0]
    for other in outputs[1:]:
        if other.kind != first.kind:
            raise MergeError(f"{first.path} is a {first.kind} output but {other.path} is a "
                             f"{other.kind} output")
        if other.fingerprint != first.fingerprint:
            names = differ(first, other)
            what = ("; they differ in " + ", ".join(names)) if names else ""
            raise MergeError(f"{first.path} and {other.path} were made with different settings "
                             f"(fingerprints {first.fingerprint} and {other.fingerprint}){what}")
        if other.count != first.count:
            raise MergeError(f"{first.label} and {other.label} are shards of different splits")
    seen: dict[int, ShardOutput] = {}
    for output in outputs:
        if output.index in seen:
            raise MergeError(f"{seen[output.index].path} and {output.path} are the same shard "
                             f"{output.shard}: their rows overlap; give each shard once")
        seen[output.index] = output
    return first.count


def check_output(out: Path, outputs: Sequence[ShardOutput]) -> None:
    """The merged output is none of the shards and does not hold one."""
    target = out.resolve()
    for output in outputs:
        source = output.path.resolve()
        if source == target or target in source.parents or source in target.parents:
            raise MergeError(f"-o {out}: overlaps the shard output {output.path}; merge into "
                             "a place of its own")
    if out.is_dir() and (out / "config.json").is_file() and outputs[0].kind != "suite":
        record = _json_object(out / "config.json")
        if record.get("shard") is not None:
            raise MergeError(f"-o {out}: holds a shard ({record['shard'].get('spec')}); merge "
                             "into a place of its own")
        if record.get("fingerprint") not in (None, outputs[0].fingerprint):
            raise MergeError(f"-o {out}: holds a run of other settings; choose another output")
    if out.is_file() and sidecar_path(out).is_file():
        raise MergeError(f"-o {out}: is itself a shard output ({sidecar_path(out).name}); merge "
                         "into a file of its own")


@contextmanager
def reading(output: ShardOutput) -> Iterator[None]:
    """Hold ``output``'s own lock while the block reads it: a shard still being written is
    refused (:class:`MergeError` naming its pid). A shard in a place this process cannot
    write (read-only) cannot be written by anyone either, and is read as it is."""
    from hopscore.files.output_locks import lock_output
    from hopscore.files.output_specs import Output, OutputBusy, OutputError

    with ExitStack() as stack:
        try:
            stack.enter_context(lock_output(Output(output.path, "shard", output.path.is_dir())))
        except OutputBusy as exc:
            raise MergeError(f"a shard is still running: {exc}") from None
        except OutputError:
            pass
        yield


def check_not_running(outputs: Sequence[ShardOutput]) -> None:
    """Refuse at once, before any shard is read, when one of them is being written (each lock
    is taken and given back: none is held)."""
    for output in outputs:
        with reading(output):
            pass


@dataclass(slots=True)
class StoredRows:
    """The latest row of each key in one shard's results file, with its exact bytes."""

    raw: dict[str, bytes] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    torn: bool = False


def read_rows(path: Path, key_of: Callable[[dict[str, Any]], str | None]) -> StoredRows:
    """Every row of a shard's JSON Lines results file, last row of a key winning (a failure
    then its retry), read only. A torn last line is skipped; any other bad line is an error."""
    stored = StoredRows()
    if not path.is_file():
        return stored
    data = path.read_bytes()
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        last = number == len(lines)
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to read
            if last:
                stored.torn = True
                break
            where = Location(str(path), line=number)
            try:
                row = parse_json_line(raw, where)
            except InputError as exc:
                raise InputError(where, f"unreadable line in a shard's results file "
                                 f"({exc.message})") from None
        key = key_of(row) if isinstance(row, dict) else None
        if key is None:
            raise InputError(Location(str(path), line=number),
                             "a row without a run key: not a file hopscore wrote")
        stored.raw[key] = raw + b"\n"
        stored.rows[key] = row
    return stored


@dataclass(slots=True)
class Collected:
    """The rows of every shard, by key, and what is wrong with them."""

    raw: dict[str, bytes] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: keys of no row this merge expects (other settings or examples), per shard output
    foreign: dict[str, int] = field(default_factory=dict)


def collect(outputs: Sequence[ShardOutput], files: Callable[[ShardOutput], Path],
            key_of: Callable[[dict[str, Any]], str | None], owner: dict[str, int],
            warn: Callable[[str], None]) -> Collected:
    """Gather the rows of every shard: each key must belong to the shard that holds it and be
    held once (else the shards overlap: an error)."""
    out = Collected()
    holder: dict[str, ShardOutput] = {}
    for output in outputs:
        with reading(output):
            stored = read_rows(files(output), key_of)
        if stored.torn:
            warn(f"note: {files(output)} ends in a torn line (its shard was killed while "
                 "writing); that row counts as missing")
        foreign = 0
        for key, row in stored.rows.items():
            expected = owner.get(key)
            if expected is None:
                foreign += 1
                continue
            if key in holder:
                raise MergeError(f"{holder[key].path} and {output.path} both hold the row "
                                 f"{describe_key(row, key)}: the shards overlap")
            if expected != output.index:
                raise MergeError(f"{output.label} holds the row {describe_key(row, key)}, which "
                                 f"belongs to shard {expected}/{output.count}: it is not a "
                                 "shard of this split")
            holder[key] = output
            out.raw[key] = stored.raw[key]
            out.rows[key] = row
        if foreign:
            out.foreign[str(output.path)] = foreign
            warn(f"warning: {files(output)} holds {foreign} rows of other settings or inputs "
                 "(left out)")
    return out


def describe_key(row: dict[str, Any], key: str) -> str:
    for name in ("id", "instance_id", "line"):
        value = row.get(name)
        if value is not None:
            return f"{name} {value!r}"
    return f"key {key[:16]}"


def refuse_missing(missing: dict[int, list[str]], count: int,
                   outputs: Sequence[ShardOutput], what: str) -> None:
    """Raise one error listing, per shard, the rows not there and how to run them."""
    if not any(missing.values()):
        return
    by_index = {output.index: output for output in outputs}
    lines = []
    total = 0
    for index in sorted(missing):
        names = missing[index]
        if not names:
            continue
        total += len(names)
        shown = ", ".join(names[:FIRST_MISSING]) + (", ..." if len(names) > FIRST_MISSING
                                                    else "")
        output = by_index.get(index)
        where = f"{output.path}" if output is not None else "no output given"
        rerun = "re-run it with the same command" if output is not None else \
            f"run it with --shard {index}/{count}"
        lines.append(f"shard {index}/{count} ({where}): {len(names)} {what} missing ({shown}); "
                     f"{rerun}, then merge again")
    raise MergeError(f"{total} {what} are missing, nothing was written:\n  " + "\n  ".join(lines))


T = TypeVar("T")


def settings_from_json(cls: type[T], data: dict[str, Any], **overrides: Any) -> T:
    """A settings dataclass from its ``to_json`` form (paths and tuples restored)."""
    names = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise MergeError(f"the shards' settings have fields this hopscore does not know "
                         f"({', '.join(unknown)}): merge with the version that ran them")
    values: dict[str, Any] = {}
    for name, value in data.items():
        kind = str(names[name].type)
        if value is not None and "Path" in kind:
            value = Path(value)
        elif isinstance(value, list) and "tuple" in kind:
            value = tuple(value)
        elif "Shard" in kind:
            value = None
        values[name] = value
    values.update(overrides)
    return cls(**values)


def join_lines(raw: Iterable[bytes]) -> str:
    """Rows' bytes as the text of one JSON Lines file."""
    return b"".join(raw).decode("utf-8")


def merged_from(outputs: Sequence[ShardOutput]) -> list[dict[str, Any]]:
    """The ``merged_from`` block of a merged output's config: each shard and where it was."""
    return [{"path": str(output.path.resolve()), "shard": str(output.shard or "0/1"),
             "status": output.record.get("status"),
             "command": output.record.get("command") or output.record.get("argv")}
            for output in sorted(outputs, key=lambda o: o.index)]
