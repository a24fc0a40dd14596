"""Per-example values kept while scoring: every example's metric values, group labels and
cluster in flat typed arrays (8 bytes per value, 4 per label), not Python objects, so a million
examples with a dozen metrics cost about 100 MB. The scorer sums groups from them too.

:class:`ExampleValues` is filled one example at a time; :class:`MatrixValues` reads the same way
over a numpy matrix (a loaded scores file). Pure Python: numpy is imported only by ``matrix``
and by ``select`` of an array.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from struct import Struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: ``None``: every example; otherwise the row numbers of a group
Rows = Sequence[int] | None


class ExampleValues:
    """Metric values (examples x metrics), group codes and cluster codes, one example at a time."""

    __slots__ = ("_clusters", "_codes", "_keys", "_labels", "_pack", "_values", "cluster_labels",
                 "n", "names", "row_of", "unclustered")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        #: the values of ``names`` from a metrics dict, as one tuple (C speed)
        self.row_of: Callable[[Mapping[str, float]], Sequence[float]] = (
            itemgetter(*self.names) if len(self.names) > 1
            else lambda values: tuple(map(values.__getitem__, self.names)))
        self.n = 0
        self._values = array("d")
        #: a row's values as the array's bytes (several times faster than ``extend``)
        self._pack = Struct(f"{len(self.names)}d").pack
        #: group key -> (label -> code), and key -> one code per example (-1: no label)
        self._labels: dict[str, dict[str, int]] = {}
        self._codes: dict[str, array[int]] = {}
        #: cluster code per example (None until a cluster is given); label -> code
        self._clusters: array[int] | None = None
        self.cluster_labels: dict[str, int] = {}
        self.unclustered = 0
        #: the group keys of the last example when they were every key seen (a fast path)
        self._keys: Any = None

    def add(self, values: Mapping[str, float], groups: Mapping[str, str]) -> None:
        self.add_row(self.row_of(values), groups)

    def add_row(self, row: Sequence[float], groups: Mapping[str, str]) -> None:
        """An example's values of :attr:`names` (:attr:`row_of` of its metrics) and labels."""
        self._values.frombytes(self._pack(*row))
        n = self.n
        self.n = n + 1
        codes_of = self._codes
        if self._keys == groups.keys():  # the keys every example so far had: no new column
            labels_of = self._labels
            for key, label in groups.items():
                labels = labels_of[key]
                code = labels.get(label)
                if code is None:
                    code = labels[label] = len(labels)
                codes_of[key].append(code)
            return
        for key, label in groups.items():
            codes = codes_of.get(key)
            if codes is None:
                codes = codes_of[key] = array("i", [-1]) * n
                self._labels[key] = {}
            labels = self._labels[key]
            code = labels.get(label)
            if code is None:
                code = labels[label] = len(labels)
            codes.append(code)
        if len(groups) != len(codes_of):  # a key this example has no label of
            for codes in codes_of.values():
                if len(codes) <= n:
                    codes.append(-1)
        self._keys = groups.keys() if len(groups) == len(codes_of) else None

    def add_cluster(self, cluster: str | None) -> None:
        """The cluster of the example just added (None: a cluster of its own)."""
        if self._clusters is None:
            self._clusters = array("i")
        if cluster is None:
            self.unclustered += 1
            cluster = f"\x00{self.n}"  # a label no real cluster has
        code = self.cluster_labels.get(cluster)
        if code is None:
            code = self.cluster_labels[cluster] = len(self.cluster_labels)
        self._clusters.append(code)

    @property
    def clustered(self) -> bool:
        return self._clusters is not None

    def column(self, j: int, rows: Rows = None) -> Sequence[float]:
        """The values of metric ``j`` (of the selected rows), without numpy."""
        col = self._values[j :: len(self.names)]
        return col if rows is None else select(col, rows)

    def cluster_codes(self, rows: Rows = None) -> Sequence[int] | None:
        if self._clusters is None:
            return None
        return self._clusters if rows is None else select(self._clusters, rows)

    def matrix(self) -> NDArray[np.float64]:
        """All values as an (examples x metrics) array, sharing memory with the store."""
        import numpy as np

        flat = np.frombuffer(self._values, dtype=np.float64) if self.n else np.empty(0)
        return flat.reshape(self.n, len(self.names))

    def group_columns(self) -> dict[str, tuple[list[str], array[int]]]:
        """Per group key: the labels in code order and one code per example (-1: none)."""
        return {key: (list(self._labels[key]), codes) for key, codes in self._codes.items()}

    def group_rows(self) -> dict[tuple[str, str], array[int]]:
        """Row numbers of every (group key, label), in one pass per key (4 bytes a row); with
        numpy when there are :data:`NUMPY_ROWS` examples or more (a stable sort of the codes)."""
        out: dict[tuple[str, str], array[int]] = {}
        for key, codes in self._codes.items():
            labels = self._labels[key]
            if self.n >= NUMPY_ROWS:
                by_code = _rows_by_code(codes, len(labels))
            else:
                by_code = [array("i") for _ in labels]
                for row, code in enumerate(codes):
                    if code >= 0:
                        by_code[code].append(row)
            for label, code in labels.items():
                out[(key, label)] = by_code[code]
        return out


def _rows_by_code(codes: array[int], size: int) -> list[array[int]]:
    """The row numbers of each code ``0 .. size - 1`` (rows of code -1 left out), ascending."""
    import numpy as np

    values = np.frombuffer(codes, np.int32)
    order = np.argsort(values, kind="stable").astype(np.int32)
    ends = np.cumsum(np.bincount(values + 1, minlength=size + 1))  # code -1 sorts first
    return [array("i", order[ends[code]:ends[code + 1]].tobytes()) for code in range(size)]


#: a selection of fewer rows is gathered without importing numpy (its import, 0.08 s, costs
#: more than the gathering of small groups)
NUMPY_ROWS = 100_000


def select(values: Sequence[Any], rows: Sequence[int]) -> Sequence[Any]:
    """``values[rows]`` at C speed (an array of ``values``' type when it is one: 8 bytes a
    float, not a float object)."""
    if not rows:
        return ()
    if len(rows) == 1:
        return (values[rows[0]],)
    if isinstance(values, array):  # kept as an array of the same type (8 bytes a float)
        if len(rows) < NUMPY_ROWS and "numpy" not in sys.modules:
            return array(values.typecode, itemgetter(*rows)(values))
        import numpy as np  # gathered at C speed, without a float object per value

        gathered = np.frombuffer(values, values.typecode)[np.asarray(rows, dtype=np.intp)]
        return array(values.typecode, gathered.tobytes())
    picked: Sequence[Any] = itemgetter(*rows)(values)
    return picked


class MatrixValues:
    """:class:`ExampleValues`' reading interface over a numpy matrix (a loaded scores file)."""

    def __init__(self, values: NDArray[np.float64], names: Sequence[str],
                 clusters: Sequence[int] | None = None) -> None:
        self.values = values
        self.names = tuple(names)
        self.n = int(values.shape[0])
        self._clusters = clusters
        self.clustered = clusters is not None

    def column(self, j: int, rows: Rows = None) -> Sequence[float]:
        column = self.values[:, j] if rows is None else self.values[list(rows), j]
        out: list[float] = column.tolist()
        return out

    def cluster_codes(self, rows: Rows = None) -> Sequence[int] | None:
        if self._clusters is None:
            return None
        return self._clusters if rows is None else select(self._clusters, rows)

    def matrix(self) -> NDArray[np.float64]:
        return self.values


Source = ExampleValues | MatrixValues
