"""Per-example scores of each benchmark, on plain values: for notebooks and training loops.

Each function scores one prediction against one gold answer with the benchmark's official
semantics and returns the metrics under the names ``metrics.json`` uses, as fractions
(1.0 is a perfect score). They call the same code as ``hopscore score``, so a mean of their
values over a dataset equals the score of the whole file (``tests/test_api.py`` checks this on
every bundled sample). Nothing here reads a file or the network.

The functions live with their benchmark: each registered benchmark declares the module holding
its own (:attr:`hopscore.benchmarks.base.Benchmark.metric_functions`, the names in that
module's ``__all__``), and this module offers them all under those names, importing a
benchmark's module when one of its names is first asked for. A name two benchmarks declare is
the first one's (the built-ins come before third-party benchmarks). docs/python-api.md lists
them, each with an example.

>>> from hopscore import metrics
>>> all(callable(getattr(metrics, name)) for name in metrics.__all__)
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

#: a function found so far, by name (``__getattr__`` also keeps it in the module's globals)
_found: dict[str, Callable[..., dict[str, float]]] = {}
#: every benchmark's functions have been collected
_complete = False


def _each_benchmark() -> Iterator[dict[str, Callable[..., dict[str, float]]]]:
    """The functions of each registered benchmark in registry order, by name."""
    from hopscore import benchmarks

    for name in benchmarks.names():
        module_name = benchmarks.get(name).metric_functions
        if module_name is None:
            continue
        module = importlib.import_module(module_name)
        yield {function: getattr(module, function) for function in getattr(module, "__all__", ())}


def _lookup(name: str | None) -> Callable[..., dict[str, float]] | None:
    """The function of this name (None: collect them all), reading the benchmarks' modules
    only as far as needed."""
    global _complete
    if name in _found or _complete:
        return _found.get(name) if name is not None else None
    for functions in _each_benchmark():
        for key, function in functions.items():
            _found.setdefault(key, function)
        if name is not None and name in _found:
            return _found[name]
    _complete = True
    return _found.get(name) if name is not None else None


def _all() -> list[str]:
    _lookup(None)
    return sorted(_found)


def __getattr__(name: str) -> Any:
    """A benchmark's per-example function; also ``__all__`` (every name) and ``__test__``
    (their docstring examples, for :mod:`doctest`)."""
    if name == "__all__":
        return _all()
    if name == "__test__":
        return {key: _found[key] for key in _all()}
    if not name.startswith("__"):
        function = _lookup(name)
        if function is not None:
            globals()[name] = function
            return function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_all()})
