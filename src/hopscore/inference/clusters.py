"""Clusters of examples: questions that share a table, a passage, a task or a user's grouping.

Examples in one cluster are not independent (a model that misreads a table misses all its
questions), so intervals and paired tests resample or sum whole clusters. A cluster comes from
``--cluster FIELD`` (a group label of the example or a field of the gold record, e.g. the
id of the table a question is asked about) or ``--cluster-file FILE`` mapping example id to
cluster (JSON object, JSON Lines ``{"id", "cluster"}``, or CSV/TSV with ``id`` and ``cluster``
columns). An example without a cluster is a cluster of its own; the count is reported.

Pure Python here; the resampling lives in :mod:`hopscore.inference.resample`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files.fields import json_type
from hopscore.files.io import iter_delimited, iter_jsonl, load_json, sniff_json_kind

CLUSTER_COLUMNS = ("cluster", "cluster_id", "group")
ID_COLUMNS = ("id", "instance_id", "question_id", "qid", "_id")


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """Where clusters come from: a field of the examples, or a file mapping id to cluster."""

    field: str | None = None
    file: Path | None = None

    def __post_init__(self) -> None:
        if self.field is not None and self.file is not None:
            raise HopscoreError("--cluster and --cluster-file exclude each other")

    @property
    def name(self) -> str:
        return self.field if self.field is not None else f"file:{self.file}"

    def mapping(self) -> dict[str, str] | None:
        return read_cluster_file(self.file) if self.file is not None else None


def _text(value: Any, where: Location, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError(where, f"{what} must be a string or an integer, got {json_type(value)}")
    text = str(value)
    if not text.strip():
        raise InputError(where, f"{what} is empty")
    return text


def read_cluster_file(path: Path) -> dict[str, str]:
    """id -> cluster from a JSON object, JSON Lines or CSV/TSV file (located errors)."""
    out: dict[str, str] = {}

    def put(example_id: str, cluster: str, where: Location) -> None:
        if example_id in out and out[example_id] != cluster:
            raise InputError(where, f"id {example_id!r} is given two clusters "
                             f"({out[example_id]!r} and {cluster!r})")
        out[example_id] = cluster

    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv", ".tab"):
        for where, row in iter_delimited(path):
            id_column = next((c for c in ID_COLUMNS if c in row), None)
            cluster_column = next((c for c in CLUSTER_COLUMNS if c in row), None)
            if id_column is None or cluster_column is None:
                raise InputError(where, "needs an id column (id, instance_id, question_id) and "
                                 "a cluster column (cluster, cluster_id)")
            put(_text(row[id_column].strip(), where, id_column),
                _text(row[cluster_column].strip(), where, cluster_column), where)
    elif sniff_json_kind(path) == "jsonl":
        for where, value in iter_jsonl(path):
            if not isinstance(value, dict):
                raise InputError(where, f"expected a JSON object, got {json_type(value)}")
            id_key = next((k for k in ID_COLUMNS if k in value), None)
            cluster_key = next((k for k in CLUSTER_COLUMNS if k in value), None)
            if id_key is None or cluster_key is None:
                raise InputError(where, 'expected {"id": ..., "cluster": ...}')
            put(_text(value[id_key], where, id_key), _text(value[cluster_key], where, cluster_key),
                where)
    else:
        data = load_json(path)
        if not isinstance(data, dict):
            raise InputError(path, f"expected a JSON object {{id: cluster}}, got {json_type(data)}")
        for key, value in data.items():
            put(key, _text(value, Location(str(path), key=key), "the cluster"),
                Location(str(path), key=key))
    if not out:
        raise InputError(path, "holds no id -> cluster entries")
    return out


def cluster_of(example: Any, spec: ClusterSpec, mapping: Mapping[str, str] | None) -> str | None:
    """The cluster of one gold example (None: none known; it will be a cluster of its own)."""
    if mapping is not None:
        return mapping.get(example.id)
    assert spec.field is not None
    groups = example.groups()
    if spec.field in groups:
        return str(groups[spec.field])
    value = getattr(example, spec.field, None)
    if value is None or value == "":
        return None
    return str(value)


@dataclass(frozen=True, slots=True)
class ClusterStats:
    """Cluster totals of one metric over one set of examples."""

    totals: Sequence[float]
    sizes: Sequence[float]

    @property
    def count(self) -> int:
        return len(self.sizes)

    @property
    def n(self) -> float:
        return math.fsum(self.sizes)

    @property
    def mean(self) -> float:
        return math.fsum(self.totals) / self.n

    def robust_variance(self) -> float:
        """Cluster-robust (CR1) variance of the mean: G/(G-1) sum (S_g - mean n_g)^2 / N^2."""
        g = self.count
        if g < 2:
            return math.nan
        mean = self.mean
        spread = math.fsum((s - mean * m) ** 2 for s, m in zip(self.totals, self.sizes,
                                                                strict=True))
        return g / (g - 1) * spread / self.n**2

    def effective_n(self) -> float:
        """The sample size with the binomial variance of the cluster-robust one (n / design
        effect), kept between the number of clusters and n; the cluster count when the
        variance is 0 (every value the same: the within-cluster correlation is unknown)."""
        mean, n = self.mean, self.n
        binomial = mean * (1 - mean) / n
        robust = self.robust_variance()
        if binomial <= 0 or not math.isfinite(robust) or robust <= 0:
            return float(self.count)
        return min(n, max(float(self.count), n * binomial / robust))


def totals_by_cluster(values: Sequence[float], codes: Sequence[int]) -> ClusterStats:
    """Cluster totals and sizes of ``values`` (one cluster code per value)."""
    totals: dict[int, float] = {}
    sizes: dict[int, int] = {}
    for value, code in zip(values, codes, strict=True):
        totals[code] = totals.get(code, 0.0) + value
        sizes[code] = sizes.get(code, 0) + 1
    return ClusterStats(list(totals.values()), [float(sizes[c]) for c in totals])
