"""``hopscore suite preset NAME``: the named suites benchmarks declare, several gold files of one
data folder run on one benchmark with one model, then one table.

A benchmark declares its presets (:attr:`~hopscore.benchmarks.base.Benchmark.suite_presets`):
each names its datasets, where each one's gold lies under the data folder (the first of its
folders holding one of its files), and the metrics of the table. A dataset whose gold is missing
is reported in the table and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hopscore import benchmarks
from hopscore.benchmarks.base import SuiteDataset, SuitePreset
from hopscore.errors import HopscoreError


def presets() -> dict[str, tuple[str, SuitePreset]]:
    """Every declared preset: its name -> (benchmark, preset), in registry order."""
    found: dict[str, tuple[str, SuitePreset]] = {}
    for name in benchmarks.names():
        for preset in benchmarks.get(name).suite_presets:
            if preset.name in found:
                raise HopscoreError(f"suite preset {preset.name!r} is declared by both "
                                    f"{found[preset.name][0]} and {name}")
            found[preset.name] = (name, preset)
    return found


def preset(name: str) -> tuple[str, SuitePreset]:
    """The preset ``name`` (case-insensitive) and its benchmark; an error naming the others."""
    known = presets()
    key = name.lower()
    if key not in known:
        raise HopscoreError(f"unknown suite preset {name!r}; choose one of: "
                            f"{', '.join(known) or 'none is declared'}")
    return known[key]


def described() -> list[str]:
    """One line per preset, for ``hopscore suite preset --help``: its name, title, datasets and
    where their gold lies."""
    lines = []
    for name, (_, found) in presets().items():
        places = "; ".join(f"{d.label}: {layout(d)}" for d in found.datasets)
        lines.append(f"{name}: {found.title} ({places})")
    return lines


def layout(dataset: SuiteDataset) -> str:
    """Where a dataset's gold is looked for, in words."""
    folder = dataset.folders[0]
    files = " or ".join(dataset.files)
    return f"{folder}/{files}" if folder else files


def chosen(found: SuitePreset, datasets: str | None) -> list[SuiteDataset]:
    """The datasets ``--datasets`` picks (all by default), in the preset's order."""
    if datasets is None:
        return list(found.datasets)
    asked = [name.strip().lower() for name in datasets.split(",") if name.strip()]
    labels = [d.label for d in found.datasets]
    unknown = [name for name in asked if name not in labels]
    if unknown:
        raise HopscoreError(f"--datasets: {', '.join(unknown)} not in {', '.join(labels)}")
    return [d for d in found.datasets if d.label in asked]


def locate(data_dir: Path, dataset: SuiteDataset) -> Path | None:
    """The gold file of one dataset under ``data_dir`` (None: none of its files is there)."""
    for folder in dataset.folders:
        base = data_dir / folder if folder else data_dir
        for name in dataset.files:
            if (base / name).is_file():
                return base / name
    return None


def looked_for(dataset: SuiteDataset) -> str:
    folders = "|".join(f or "." for f in dataset.folders)
    return f"{folders}/{{{', '.join(dataset.files)}}}"


def inputs(data_dir: Path, datasets: list[SuiteDataset]) -> list[Any]:
    """The gold files the preset reads (for the output-is-an-input check)."""
    from hopscore.files.output_specs import Input

    found = []
    for dataset in datasets:
        gold = locate(data_dir, dataset)
        if gold is not None:
            found.append(Input(gold, f"--data-dir ({dataset.label})"))
    return found


def settings_for(base: Any, benchmark: str, gold: Path, output_dir: Path, label: str) -> Any:
    """One dataset's run settings from the suite's (a RunSettings)."""
    return replace(base, benchmark=benchmark, gold=gold, output_dir=output_dir / label)


@dataclass(frozen=True, slots=True)
class PresetRow:
    dataset: str
    status: str
    #: the run's overall metrics (fractions), None when it did not run
    metrics: dict[str, float] | None = None
    n: int | None = None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "status": self.status, "n": self.n,
                "metrics": self.metrics, "detail": self.detail}


def average(rows: list[PresetRow], metrics: tuple[str, ...]) -> dict[str, float] | None:
    """The unweighted mean over the datasets that ran, as the papers' "Avg." column."""
    ran = [row.metrics for row in rows if row.metrics is not None]
    if not ran:
        return None
    return {name: sum(m.get(name, 0.0) for m in ran) / len(ran) for name in metrics}
