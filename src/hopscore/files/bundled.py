"""Sample files a benchmark ships as package data: ``samples/`` beside its module.

A benchmark with a sample has a folder (its ``sample_folder``, ``samples`` by default, found
through ``Benchmark.resource``: :mod:`hopscore.benchmarks.sample_files`) holding its gold and
prediction files in the official formats (invented, not copied from the datasets) and a
``manifest.json``::

    {"benchmark": "NAME", "gold": "gold.json", "predictions": "predictions.json",
     "aliases": null, "note": "..."}

hopscore's own benchmarks keep theirs in ``hopscore/benchmarks/<package>/samples/``;
:func:`discover` finds those by scanning (``hopscore demo`` scores them), each manifest naming
its benchmark.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    from importlib.resources.abc import Traversable
else:  # pragma: no cover - Python 3.10
    from importlib.abc import Traversable

from hopscore.errors import HopscoreError

MANIFEST = "manifest.json"
#: the folder of a built-in benchmark's package that holds its sample
SAMPLES = "samples"


@dataclass(frozen=True, slots=True)
class Sample:
    """One benchmark's sample: where its files are inside the package."""

    benchmark: str
    folder: Traversable
    gold: str
    predictions: str
    aliases: str | None
    note: str

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


class BuiltinSamples:
    """The sample folders of hopscore's own benchmarks, by benchmark name (``root / "NAME"``);
    printed as where they lie (``.../hopscore/benchmarks/*/samples``)."""

    def __init__(self, packages: Traversable) -> None:
        self.packages = packages

    def folders(self) -> dict[str, Traversable]:
        """Benchmark name -> its sample folder, for each package folder with a manifest."""
        found = {}
        if self.packages.is_dir():
            for package in sorted(self.packages.iterdir(), key=lambda f: f.name):
                folder = package / SAMPLES
                if package.is_dir() and (folder / MANIFEST).is_file():
                    named = _manifest(folder).get("benchmark")
                    found[named if isinstance(named, str) and named else package.name] = folder
        return found

    def __truediv__(self, benchmark: str) -> Traversable:
        folders = self.folders()
        if benchmark not in folders:
            raise HopscoreError(f"no built-in sample for {benchmark!r}; samples: "
                                f"{', '.join(sorted(folders))}")
        return folders[benchmark]

    def __str__(self) -> str:
        return os.path.join(str(self.packages), "*", SAMPLES)


def samples_root() -> BuiltinSamples:
    return BuiltinSamples(resources.files("hopscore") / "benchmarks")


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


def read_sample(folder: Traversable, benchmark: str | None = None) -> Sample:
    """The sample in ``folder``, for ``benchmark`` (default: the one its manifest names)."""
    where = f"sample manifest {folder / MANIFEST}"
    manifest = _manifest(folder)
    names = {
        key: _text_field(manifest, key, where, optional=key == "aliases")
        for key in ("gold", "predictions", "aliases")
    }
    for key, name in names.items():
        if name is not None and not (folder / name).is_file():
            raise HopscoreError(f"{where}: {key} file {name!r} is not in the sample folder")
    note = manifest.get("note", "")
    return Sample(
        benchmark=benchmark or str(manifest.get("benchmark", folder.name)),
        folder=folder,
        gold=str(names["gold"]),
        predictions=str(names["predictions"]),
        aliases=names["aliases"],
        note=note if isinstance(note, str) else "",
    )


def discover() -> list[Sample]:
    """The samples of hopscore's own benchmarks, sorted by benchmark name."""
    folders = samples_root().folders()
    return [read_sample(folders[name], name) for name in sorted(folders)]
