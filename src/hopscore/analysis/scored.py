"""Scored sets: one system's per-example scores, whatever file they came from.

Accepted inputs (the kind is told by content, not by name):

* a score directory (``hopscore score --output-dir``) or run directory (``hopscore run``):
  ``metrics.json`` + ``scores.jsonl``, and for runs ``samples.jsonl`` and ``config.json``;
* a ``scores.jsonl`` file on its own;
* ``hopscore judge`` output JSONL, or a jury's ``jury.jsonl`` (``hopscore jury``): one binary
  metric ``correct`` per row;
* ``hopscore sql-match`` output JSONL: one binary metric ``match`` per row.

Per-example metric values are a numpy matrix (examples x metrics) and group labels are integer
codes, so a large file stays compact.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl, load_json
from hopscore.inference.clusters import ClusterSpec
from hopscore.inference.values import ExampleValues
from hopscore.text.words import agree, counted

#: Fields that identify a row in judge / sql-match output, in order of preference.
ID_FIELDS = ("instance_id", "id", "question_id", "_id", "qid")
#: String fields of judge / sql-match rows that are read as group labels when present.
GROUP_FIELDS = ("hybrid_type", "type", "level", "difficulty", "category", "db")


@dataclass(slots=True)
class GroupColumn:
    """One group key: its labels and, per example, the label's index (-1: no label)."""

    labels: list[str]
    codes: NDArray[np.int32]


@dataclass(slots=True)
class ScoredSet:
    label: str
    source: Path
    #: "scores" (score/run directory or scores.jsonl), "judge" or "sql"
    kind: str
    benchmark: str | None
    ids: list[str]
    names: tuple[str, ...]
    values: NDArray[np.float64]
    groups: dict[str, GroupColumn]
    missing: NDArray[np.bool_]
    predictions: list[str | None]
    gold: list[tuple[str, ...]]
    #: ``metrics.json`` content (or the same shape computed for judge / sql files)
    summary: dict[str, Any]
    #: judge / sql-match output rows by id
    rows: dict[str, dict[str, Any]] | None = None
    samples_path: Path | None = None
    config: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    #: each example's cluster as scores.jsonl records it (``score --cluster``); None: none
    clusters: list[str | None] | None = None
    _index: dict[str, int] | None = None

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {example_id: row for row, example_id in enumerate(self.ids)}
        return self._index

    def groups_of(self, row: int) -> dict[str, str]:
        out = {}
        for key, column in self.groups.items():
            code = int(column.codes[row])
            if code >= 0:
                out[key] = column.labels[code]
        return out

    def metrics_of(self, row: int) -> dict[str, float]:
        return dict(zip(self.names, self.values[row].tolist(), strict=True))

    @property
    def reported(self) -> dict[str, float]:
        """The reported (finalized) metrics, overall."""
        metrics: dict[str, float] = self.summary.get("metrics", {})
        return metrics


def load_scored(path: Path, label: str | None = None) -> ScoredSet:
    """Load any accepted input (see the module docstring)."""
    path = Path(path)
    name = label or (path.name if path.is_dir() else path.stem)
    if path.is_dir():
        return _load_directory(path, name)
    if not path.exists():
        raise InputError(path, "not found (expected a score/run directory or a JSONL file)")
    first = _first_record(path)
    if "metrics" in first and ("id" in first or "groups" in first):
        return _load_scores(path, name, None, None)
    if "match" in first and ("judge_kind" in first or "reason" in first or "agent_sql" in first):
        return _load_verdicts(path, name, "sql", "match")
    if "correct" in first and ("parse_ok" in first or "raw_judge_output" in first
                               or isinstance(first.get("jury"), dict)):
        return _load_verdicts(path, name, "judge", "correct")
    raise InputError(
        Location(str(path), line=1),
        "not a scores.jsonl, judge output or sql-match output row "
        "(expected 'metrics', 'correct' + 'parse_ok', or 'match' + 'reason')",
    )


def load_many(paths: list[Path]) -> list[ScoredSet]:
    """Load several inputs and give them distinct labels (the name, then the parent's name)."""
    sets = [load_scored(p) for p in paths]
    seen: dict[str, int] = {}
    for scored in sets:
        base = scored.label
        if base in seen or sum(s.label == base for s in sets) > 1:
            parent = scored.source.resolve().parent.name
            scored.label = f"{parent}/{base}"
        count = seen.get(scored.label, 0)
        seen[scored.label] = count + 1
        if count:
            scored.label = f"{scored.label}#{count + 1}"
    return sets


def _first_record(path: Path) -> dict[str, Any]:
    for where, value in iter_jsonl(path):
        if not isinstance(value, dict):
            raise InputError(where, f"expected a JSON object, got {json_type(value)}")
        return value
    raise InputError(path, "file holds no records")


def _load_directory(path: Path, label: str) -> ScoredSet:
    scores = path / "scores.jsonl"
    metrics = path / "metrics.json"
    if not scores.exists():
        raise InputError(
            path, "no scores.jsonl here; score predictions with `hopscore score --output-dir`"
        )
    summary = load_json(metrics) if metrics.exists() else None
    if summary is not None and not isinstance(summary, dict):
        raise InputError(metrics, f"expected a JSON object, got {json_type(summary)}")
    config_path = path / "config.json"
    config = load_json(config_path) if config_path.exists() else None
    scored = _load_scores(scores, label, summary, path)
    if isinstance(config, dict):
        scored.config = config
    samples = path / "samples.jsonl"
    scored.samples_path = samples if samples.exists() else None
    return scored


def _load_scores(
    path: Path, label: str, summary: dict[str, Any] | None, directory: Path | None
) -> ScoredSet:
    ids: list[str] = []
    seen: dict[str, int] = {}
    missing: list[bool] = []
    predictions: list[str | None] = []
    gold: list[tuple[str, ...]] = []
    clusters: list[str | None] = []
    store: ExampleValues | None = None
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        example_id = record.id("id")
        if example_id in seen:
            raise InputError(
                where, f"duplicate id {example_id!r} (first at line {seen[example_id]})", field="id"
            )
        seen[example_id] = where.line or 0
        metrics = _metric_values(record)
        if store is None:
            store = ExampleValues(tuple(metrics))
        elif metrics.keys() != set(store.names):
            raise record.error(
                "metrics", f"has {sorted(metrics)} but earlier rows have {sorted(store.names)}"
            )
        store.add(metrics, _labels(record))
        ids.append(example_id)
        missing.append(bool(record.bool("missing", False)))
        predictions.append(record.str("prediction", None, nullable=True))
        gold.append(tuple(str(g) for g in record.list("gold", [])))
        clusters.append(record.str("cluster", None, nullable=True))
    if store is None:
        raise InputError(path, "holds no score rows")
    benchmark = summary.get("benchmark") if summary else None
    scored = ScoredSet(
        label=label, source=directory or path, kind="scores",
        benchmark=benchmark if isinstance(benchmark, str) else None,
        ids=ids, names=store.names, values=store.matrix(), groups=_columns(store),
        missing=np.array(missing, dtype=bool), predictions=predictions, gold=gold,
        summary=summary or {},
        clusters=clusters if any(c is not None for c in clusters) else None,
    )  # fmt: skip
    if summary is None:
        scored.warnings.append(f"{path}: no metrics.json beside it; metrics are plain means")
    return scored


def _metric_values(record: Fields) -> dict[str, float]:
    metrics = record.dict("metrics")
    out = {}
    for name, value in metrics.items():
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise record.error("metrics", f"{name!r} must be a finite number, got {value!r}")
        out[name] = float(value)
    return out


def _labels(record: Fields) -> dict[str, str]:
    groups = record.dict("groups", {})
    for key, value in groups.items():
        if not isinstance(value, str):
            raise record.error(
                "groups", f"label of {key!r} must be a string, got {json_type(value)}"
            )
    return dict(groups)


def _columns(store: ExampleValues) -> dict[str, GroupColumn]:
    return {
        key: GroupColumn(labels, np.frombuffer(codes, dtype=np.int32).copy())
        for key, (labels, codes) in store.group_columns().items()
    }


def _row_id(record: Fields, line: int) -> tuple[str, bool]:
    for name in ID_FIELDS:
        if record.has(name) and record.raw(name) not in (None, ""):
            return record.id(name), True
    return f"line {line}", False


def _load_verdicts(path: Path, label: str, kind: str, metric: str) -> ScoredSet:
    """Judge or sql-match output: a row without a decision (an API or input error) is left out."""
    rows: dict[str, dict[str, Any]] = {}
    store = ExampleValues((metric,))
    ids: list[str] = []
    no_id = undecided = parse_failures = 0
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        example_id, has_id = _row_id(record, where.line or 0)
        no_id += not has_id
        if example_id in rows:
            raise InputError(where, f"duplicate id {example_id!r}", field="id")
        verdict = record.raw(metric, None)
        if verdict is None or (kind == "judge" and record.raw("error", None)):
            undecided += 1
            continue
        if not isinstance(verdict, bool):
            raise record.error(metric, f"expected a boolean, got {json_type(verdict)}")
        if kind == "judge" and record.raw("parse_ok", True) is False:
            parse_failures += 1
        rows[example_id] = record.data
        ids.append(example_id)
        store.add({metric: float(verdict)}, _row_groups(record))
    if not ids:
        raise InputError(path, f"no row carries a {metric!r} verdict")
    scored = ScoredSet(
        label=label, source=path, kind=kind, benchmark=None, ids=ids, names=(metric,),
        values=store.matrix(), groups=_columns(store), missing=np.zeros(len(ids), dtype=bool),
        predictions=[_prediction(kind, rows[i]) for i in ids],
        gold=[_gold(kind, rows[i]) for i in ids], summary={}, rows=rows,
    )  # fmt: skip
    if no_id:
        scored.warnings.append(f"{path}: {counted(no_id, 'row')} {agree(no_id, 'has', 'have')} "
                               f"no id field ({', '.join(ID_FIELDS)}); "
                               f"{agree(no_id, 'it is', 'they are')} identified by line number")
    if undecided:
        scored.warnings.append(f"{path}: {counted(undecided, 'row')} "
                               f"{agree(undecided, 'has', 'have')} no {metric} verdict "
                               f"(errors); {agree(undecided, 'it is', 'they are')} left out, "
                               "not scored as wrong")
    if parse_failures:
        scored.warnings.append(f"{path}: {parse_failures} judge replies could not be parsed; "
                               "they count as incorrect, as the judge reports them")
    return scored


def _row_groups(record: Fields) -> dict[str, str]:
    return {
        name: record.data[name] for name in GROUP_FIELDS
        if isinstance(record.data.get(name), str) and record.data[name]
    }  # fmt: skip


def _prediction(kind: str, row: dict[str, Any]) -> str | None:
    keys = ("agent_sql", "response", "final_answer") if kind == "sql" else ("response",)
    for key in keys:
        if isinstance(row.get(key), str):
            return str(row[key])
    return None


def _gold(kind: str, row: dict[str, Any]) -> tuple[str, ...]:
    keys = ("gold_sql", "sql") if kind == "sql" else ("correct_answer",)
    for key in keys:
        if isinstance(row.get(key), str):
            return (str(row[key]),)
    return ()


def recorded_cluster(scored: ScoredSet) -> str | None:
    """The name of the clustering recorded with a scored set (``score --cluster``)."""
    settings = scored.summary.get("ci_settings")
    name = settings.get("cluster") if isinstance(settings, dict) else None
    return name if isinstance(name, str) else ("cluster" if scored.clusters else None)


def cluster_codes(scored: ScoredSet, spec: ClusterSpec | None
                  ) -> tuple[list[int], str] | None:
    """One cluster code per example of ``scored`` and the clustering's name, or None.

    Without ``spec`` the clusters recorded in scores.jsonl are used, when there are any. With
    ``--cluster FIELD``: a group key of the examples, or the recorded clustering of that name;
    with ``--cluster-file``: its mapping. An example without a cluster is a cluster of its own.
    """
    labels: list[str | None]
    if spec is None:
        if scored.clusters is None:
            return None
        labels, name = list(scored.clusters), recorded_cluster(scored) or "cluster"
    elif spec.file is not None:
        mapping = spec.mapping() or {}
        labels, name = [mapping.get(example_id) for example_id in scored.ids], spec.name
        if not any(label is not None for label in labels):
            raise HopscoreError(f"--cluster-file {spec.file} names none of the ids of "
                                f"{scored.label}")
    else:
        assert spec.field is not None
        column = scored.groups.get(spec.field)
        if column is not None:
            labels = [column.labels[c] if c >= 0 else None for c in column.codes.tolist()]
        elif scored.clusters is not None and spec.field in (recorded_cluster(scored), "cluster"):
            labels = list(scored.clusters)
        else:
            keys = ", ".join(scored.groups) or "none"
            raise HopscoreError(
                f"--cluster {spec.field}: {scored.label} has no such group key (keys: {keys}) "
                "and no clusters of that name in scores.jsonl; score it with --cluster, or "
                "give --cluster-file")
        name = spec.name
    codes: dict[str, int] = {}
    out = []
    for row, label in enumerate(labels):
        key = label if label is not None else f"\x00{row}"
        out.append(codes.setdefault(key, len(codes)))
    return out, name


def iter_samples(path: Path) -> Iterator[tuple[Location, dict[str, Any]]]:
    """Rows of a run's ``samples.jsonl``, each a JSON object."""
    for where, value in iter_jsonl(path):
        if not isinstance(value, dict):
            raise InputError(where, f"expected a JSON object, got {json_type(value)}")
        yield where, value


def require_same_benchmark(sets: list[ScoredSet]) -> None:
    names = {s.benchmark for s in sets if s.benchmark}
    if len(names) > 1:
        listing = ", ".join(f"{s.label}: {s.benchmark}" for s in sets)
        raise HopscoreError(f"inputs are scores of different benchmarks ({listing})")
