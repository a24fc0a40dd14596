"""The built-in sample files that ship inside the package (``hopscore/data/samples``).

Each benchmark that has a sample owns one folder, named after the benchmark, holding its gold and
prediction files in the official formats (invented for hopscore, not copied from the datasets)
and a ``manifest.json``::

    {"gold": "gold.json", "predictions": "predictions.json", "aliases": null, "note": "..."}

Samples are found by scanning, so adding one is adding a folder; nothing else changes.
"""

from __future__ import annotations

import json
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


def samples_root() -> Traversable:
    return resources.files("hopscore") / "data" / "samples"


def _text_field(manifest: dict[str, object], key: str, where: str, *, optional: bool) -> str | None:
    value = manifest.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise HopscoreError(f"{where}: {key!r} must name a file in the sample folder")
    return value


def read_sample(folder: Traversable) -> Sample:
    where = f"sample manifest {folder.name}/{MANIFEST}"
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HopscoreError(f"{where}: cannot read: {exc}") from None
    if not isinstance(manifest, dict):
        raise HopscoreError(f"{where}: expected a JSON object")
    names = {
        key: _text_field(manifest, key, where, optional=key == "aliases")
        for key in ("gold", "predictions", "aliases")
    }
    for key, name in names.items():
        if name is not None and not (folder / name).is_file():
            raise HopscoreError(f"{where}: {key} file {name!r} is not in the sample folder")
    note = manifest.get("note", "")
    return Sample(
        benchmark=str(manifest.get("benchmark", folder.name)),
        folder=folder,
        gold=str(names["gold"]),
        predictions=str(names["predictions"]),
        aliases=names["aliases"],
        note=note if isinstance(note, str) else "",
    )


def discover() -> list[Sample]:
    """Every sample folder with a manifest, sorted by benchmark name."""
    root = samples_root()
    if not root.is_dir():
        return []
    folders = [f for f in root.iterdir() if f.is_dir() and (f / MANIFEST).is_file()]
    return [read_sample(f) for f in sorted(folders, key=lambda f: f.name)]
