"""The sample a benchmark ships, found through the registry: built-in and third-party alike.

A benchmark's sample is package data of its own package: the folder named by its
``sample_folder`` beside its module (:meth:`Benchmark.resource`), with a ``manifest.json``
(:mod:`hopscore.files.bundled` reads it). The Python API (``hopscore.sample_files``) and the
inspect tasks (their default gold) read samples here.
"""

from __future__ import annotations

from hopscore import benchmarks
from hopscore.files.bundled import MANIFEST, Sample, read_sample


def sample_of(name: str) -> Sample | None:
    """The sample benchmark ``name`` ships; None when it ships none."""
    bench = benchmarks.get(name)
    folder = type(bench).resource(bench.sample_folder)
    if not (folder / MANIFEST).is_file():
        return None
    return read_sample(folder, bench.name)


def samples() -> list[Sample]:
    """Every registered benchmark's sample, sorted by benchmark name."""
    found = (sample_of(name) for name in sorted(benchmarks.names()))
    return [sample for sample in found if sample is not None]
