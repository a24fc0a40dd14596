"""The sample a benchmark ships, found through the registry: built-in and third-party alike.

A benchmark with a sample has a folder of package data beside its module (its
``sample_folder``, ``samples`` by default, found through :meth:`Benchmark.resource`) holding its
gold and prediction files in the official formats (invented, not copied from the datasets) and
a ``manifest.json``::

    {"benchmark": "NAME", "gold": "gold.json", "predictions": "predictions.json",
     "aliases": null, "note": "..."}

and optionally ``"corpus"``: a JSONL corpus built from the gold file's paragraphs (a toy corpus
for the search agent, ``hopscore agent NAME --agent search``).

hopscore's own benchmarks keep theirs in ``hopscore/benchmarks/<package>/samples/``. This is
the one place samples are found: the Python API (``hopscore.sample_files``), the inspect tasks
(their default gold) and ``hopscore demo`` read them here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from hopscore import benchmarks
from hopscore.errors import HopscoreError

MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class BundledSample:
    """One benchmark's sample: where its files are inside the package."""

    benchmark: str
    folder: Traversable
    gold: str
    predictions: str
    aliases: str | None
    note: str
    #: a toy corpus made from the gold's paragraphs (None: none)
    corpus: str | None = None

    @contextmanager
    def paths(self) -> Iterator[tuple[Path, Path, Path | None]]:
        """Real file paths of (gold, predictions, aliases), even when installed as a zip."""
        with ExitStack() as stack:
            gold = stack.enter_context(resources.as_file(self.folder / self.gold))
            predictions = stack.enter_context(resources.as_file(self.folder / self.predictions))
            aliases = (
                stack.enter_context(resources.as_file(self.folder / self.aliases))
                if self.aliases
                else None
            )
            yield gold, predictions, aliases


def sample_of(name: str) -> BundledSample | None:
    """The sample benchmark ``name`` ships; None when it ships none."""
    bench = benchmarks.get(name)
    folder = type(bench).resource(bench.sample_folder)
    if not (folder / MANIFEST).is_file():
        return None
    return read_sample(folder, bench.name)


def require(name: str) -> BundledSample:
    """The sample benchmark ``name`` ships; a :class:`HopscoreError` naming the samples there
    are when it is no benchmark or ships none."""
    sample = sample_of(name) if name.lower() in benchmarks.names() else None
    if sample is None:
        found = ", ".join(s.benchmark for s in samples())
        raise HopscoreError(f"no bundled sample for {name!r}; samples: {found}")
    return sample


def samples() -> list[BundledSample]:
    """Every registered benchmark's sample, sorted by benchmark name."""
    found = (sample_of(name) for name in sorted(benchmarks.names()))
    return [sample for sample in found if sample is not None]


def where(found: list[BundledSample]) -> str:
    """Where the samples lie, for people: the folders that share a parent of packages and a
    name as one pattern (``.../hopscore/benchmarks/*/samples``), any other folder as itself."""
    places: dict[tuple[str, str], list[str]] = {}
    for sample in found:
        folder = str(sample.folder).rstrip("/" + os.sep)
        parent, name = os.path.split(folder)
        places.setdefault((os.path.dirname(parent), name), []).append(folder)
    return ", ".join(os.path.join(packages, "*", name) if len(folders) > 1 else folders[0]
                     for (packages, name), folders in places.items())


def _manifest(folder: Traversable) -> dict[str, object]:
    where = f"sample manifest {folder / MANIFEST}"
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HopscoreError(f"{where}: cannot read: {exc}") from None
    if not isinstance(manifest, dict):
        raise HopscoreError(f"{where}: expected a JSON object")
    return manifest


def _text_field(manifest: dict[str, object], key: str, where: str, *, optional: bool) -> str | None:
    value = manifest.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise HopscoreError(f"{where}: {key!r} must name a file in the sample folder")
    return value


def read_sample(folder: Traversable, benchmark: str | None = None) -> BundledSample:
    """The sample in ``folder``, for ``benchmark`` (default: the one its manifest names)."""
    where = f"sample manifest {folder / MANIFEST}"
    manifest = _manifest(folder)
    names = {
        key: _text_field(manifest, key, where, optional=key in ("aliases", "corpus"))
        for key in ("gold", "predictions", "aliases", "corpus")
    }
    for key, name in names.items():
        if name is not None and not (folder / name).is_file():
            raise HopscoreError(f"{where}: {key} file {name!r} is not in the sample folder")
    note = manifest.get("note", "")
    return BundledSample(
        benchmark=benchmark or str(manifest.get("benchmark", folder.name)),
        folder=folder,
        gold=str(names["gold"]),
        predictions=str(names["predictions"]),
        aliases=names["aliases"],
        note=note if isinstance(note, str) else "",
        corpus=names["corpus"],
    )
