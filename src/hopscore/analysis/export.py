"""Per-example scores of one or more runs as one long table: ``hopscore export``.

One row per (run, example, metric), with the columns

``run, source, benchmark, model, id, metric, value, missing, prediction, gold, cluster,
prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, requests, group_<key>...``

``run`` is the input's label (as ``compare`` and ``report`` name it), ``source`` its path,
``model`` the model of a ``hopscore run`` directory (else empty), ``gold`` the gold answers
(a list; in CSV a JSON array), ``cluster`` the example's recorded cluster, the token and
request counts of the example's usage ledger, every role summed (a run's sample rows, a judge
file's rows; empty where the input has none, :mod:`hopscore.engine.ledger`), and one
``group_<key>`` column per group key of any input (empty where an example has no label).
Rows of different runs join on ``(id, metric)``. Formats, by the output's extension or
``--format``: Parquet (``.parquet``, needs pyarrow: ``pip install 'hopscore[parquet]'``),
CSV (``.csv``) and JSON Lines (``.jsonl``). Rows are written in batches, so a run of a million
examples needs little memory, and the file is renamed into place when complete.

CSV cells are safe to open in a spreadsheet (OWASP's CSV injection guidance): a text cell that
starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return would be read as a formula
(``=cmd|' /C calc'!A0``), so it is written with a single quote in front (``'=cmd...``), which
spreadsheets show as text; a cell that is a plain number (``-1.5``, ``+3``, ``-2e-3``) is left
as it is. Only CSV is changed: Parquet and JSON Lines hold every text exactly.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hopscore.analysis.scored import ScoredSet
from hopscore.engine.ledger import TOKENS, Tally, row_usage
from hopscore.errors import HopscoreError
from hopscore.files.atomic import temp_beside
from hopscore.files.io import iter_jsonl, json_line
from hopscore.files.jsontext import escape_surrogates

FORMATS = ("parquet", "csv", "jsonl")
BASE_COLUMNS = ("run", "source", "benchmark", "model", "id", "metric", "value", "missing",
                "prediction", "gold", "cluster", *TOKENS, "requests")
#: the usage columns (every role of the example's ledger summed)
USAGE_COLUMNS = (*TOKENS, "requests")
BATCH = 50_000


def format_of(path: Path, given: str | None) -> str:
    """The format named by ``--format``, else by the file's extension."""
    if given is not None:
        if given not in FORMATS:
            raise HopscoreError(f"--format must be one of {', '.join(FORMATS)}")
        return given
    suffix = path.suffix.lower().lstrip(".")
    if suffix in ("parquet", "pq"):
        return "parquet"
    if suffix in ("csv", "jsonl"):
        return suffix
    if suffix in ("ndjson",):
        return "jsonl"
    raise HopscoreError(f"-o {path}: the extension does not name a format (.parquet, .csv or "
                        ".jsonl); or give --format")


def group_column(key: str) -> str:
    return "group_" + re.sub(r"[^A-Za-z0-9_]+", "_", key)


def columns_of(sets: Sequence[ScoredSet]) -> tuple[list[str], list[str]]:
    """The table's columns and the group keys behind the ``group_*`` ones."""
    keys: list[str] = []
    for scored in sets:
        keys.extend(k for k in scored.groups if k not in keys)
    names = [group_column(k) for k in keys]
    if len(set(names)) != len(names):
        raise HopscoreError(f"group keys {', '.join(keys)} give clashing column names")
    return [*BASE_COLUMNS, *names], keys


def model_of(scored: ScoredSet) -> str | None:
    config = scored.config or {}
    model = config.get("model")
    if isinstance(model, dict) and isinstance(model.get("spec"), str):
        return str(model["spec"])
    return None


def rows_of(scored: ScoredSet, keys: Sequence[str], metrics: Sequence[str] | None
            ) -> Iterator[tuple[Any, ...]]:
    """Every (example, metric) row of one scored set, in example then metric order."""
    names = [m for m in scored.names if metrics is None or m in metrics]
    columns = [scored.names.index(m) for m in names]
    source, model = str(scored.source), model_of(scored)
    label, benchmark = scored.label, scored.benchmark
    values = scored.values
    groups = [(scored.groups.get(k)) for k in keys]
    usage = usage_by_id(scored)
    empty = (None,) * len(USAGE_COLUMNS)
    for row, example_id in enumerate(scored.ids):
        labels = tuple(None if g is None or g.codes[row] < 0 else g.labels[int(g.codes[row])]
                       for g in groups)
        cluster = scored.clusters[row] if scored.clusters is not None else None
        prediction = scored.predictions[row]
        gold = list(scored.gold[row])
        missing = bool(scored.missing[row])
        line = values[row]
        spent = usage.get(example_id)
        counts = empty if spent is None else tuple(getattr(spent, c) for c in USAGE_COLUMNS)
        for name, column in zip(names, columns, strict=True):
            yield (label, source, benchmark, model, example_id, name, float(line[column]),
                   missing, prediction, gold, cluster, *counts, *labels)


def usage_by_id(scored: ScoredSet) -> dict[str, Tally]:
    """Each example's usage ledger, every role summed: from a run's sample rows (the attempts
    of ``--repeats`` added up) or a judge file's rows; empty for an input without them."""
    rows: Iterable[dict[str, Any]] = ()
    if scored.rows is not None:
        rows = scored.rows.values()
    elif scored.samples_path is not None and scored.samples_path.is_file():
        rows = (value for _, value in iter_jsonl(scored.samples_path))
    out: dict[str, Tally] = {}
    for value in rows:
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            continue
        meta = value.get("judge")
        ledger = row_usage(meta if isinstance(meta, dict) else value)
        if ledger:
            total = out.setdefault(value["id"], Tally())
            for tally in ledger.values():
                total.add(tally)
    return out


def batches(sets: Sequence[ScoredSet], keys: Sequence[str], metrics: Sequence[str] | None
            ) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for scored in sets:
        for row in rows_of(scored, keys, metrics):
            batch.append(row)
            if len(batch) >= BATCH:
                yield batch
                batch = []
    if batch:
        yield batch


def export(sets: Sequence[ScoredSet], path: Path, fmt: str,
           metrics: Sequence[str] | None = None) -> int:
    """Write the table to ``path`` (atomically); return the number of rows."""
    if metrics:
        known = {m for s in sets for m in s.names}
        unknown = [m for m in metrics if m not in known]
        if unknown:
            raise HopscoreError(f"--metric {', '.join(unknown)}: no input has it (metrics: "
                                f"{', '.join(sorted(known))})")
    columns, keys = columns_of(sets)
    writer = {"parquet": _write_parquet, "csv": _write_csv, "jsonl": _write_jsonl}[fmt]
    if fmt == "parquet":
        _pyarrow()  # a missing extra stops before any file is made
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temp_beside(path)
    os.close(fd)
    try:
        count = writer(Path(tmp), columns, batches(sets, keys, metrics or None))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def _write_jsonl(path: Path, columns: list[str], parts: Iterator[list[tuple[Any, ...]]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for part in parts:
            handle.write("".join(json_line(dict(zip(columns, row, strict=True))) for row in part))
            count += len(part)
    return count


#: what a spreadsheet reads as the start of a formula (OWASP: CSV injection)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?",
                           re.ASCII)


def csv_text(text: str) -> str:
    """A text cell as CSV holds it: a single quote before a would-be formula (see the module
    docstring), plain numbers and every other text as they are."""
    if text.startswith(FORMULA_START) and _PLAIN_NUMBER.fullmatch(text) is None:
        return "'" + text
    return text


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return escape_surrogates(json.dumps(value, ensure_ascii=False))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return csv_text(escape_surrogates(value))
    return repr(value) if isinstance(value, float) else value


def _write_csv(path: Path, columns: list[str], parts: Iterator[list[tuple[Any, ...]]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(columns)
        for part in parts:
            out.writerows([_csv_cell(v) for v in row] for row in part)
            count += len(part)
    return count


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise HopscoreError("Parquet export needs pyarrow: pip install 'hopscore[parquet]' (or "
                            "write .csv or .jsonl)") from None
    return pyarrow


def _write_parquet(path: Path, columns: list[str], parts: Iterator[list[tuple[Any, ...]]]
                   ) -> int:
    pa = _pyarrow()
    import pyarrow.parquet as pq

    text = pa.string()
    types = {"value": pa.float64(), "missing": pa.bool_(), "gold": pa.list_(text),
             **{name: pa.int64() for name in USAGE_COLUMNS}}
    schema = pa.schema([(name, types.get(name, text)) for name in columns])
    count = 0
    with pq.ParquetWriter(str(path), schema) as writer:
        for part in parts:
            data = {name: [_arrow_cell(row[i]) for row in part]
                    for i, name in enumerate(columns)}
            writer.write_table(pa.table(data, schema=schema))
            count += len(part)
        if count == 0:
            writer.write_table(schema.empty_table())
    return count


def _arrow_cell(value: Any) -> Any:
    if isinstance(value, str):
        return escape_surrogates(value) if _has_surrogate(value) else value
    if isinstance(value, list):
        return [_arrow_cell(v) for v in value]
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
