"""``hopscore suite mcr``: the seven MCR datasets in one go, one MCR-style table.

The data folder holds one sub-folder per dataset. Each benchmark of the suite declares where
its gold is (``Benchmark.suite_files``): the folder names tried (the dataset's own and the
usual aliases), the file names tried in order (those of the official release and of MCR's
readers; the first found is used), and its place in MCR's table. A benchmark whose gold is
built from several files builds it (``Benchmark.suite_gold``: train and val joined and
deduplicated by question, as MCR's reader does). A dataset whose folder or files are missing
is reported in the table and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark, SuiteFiles
from hopscore.errors import HopscoreError


def suite_benchmarks() -> tuple[str, ...]:
    """The benchmarks of the suite, in MCR's table order."""
    return tuple(name for name, _ in _layout())


def _layout() -> list[tuple[str, SuiteFiles]]:
    found = []
    for name in benchmarks.names():
        files = benchmarks.get(name).suite_files
        if files is not None:
            found.append((name, files))
    return sorted(found, key=lambda entry: entry[1].position)


def described() -> list[tuple[str, str]]:
    """How ``hopscore suite mcr --help`` names each benchmark of the suite, in table order, and
    tells where its gold lies (:attr:`~hopscore.benchmarks.base.Benchmark.suite_title`,
    :attr:`~hopscore.benchmarks.base.Benchmark.suite_layout`, else what ``suite_files`` says)."""
    out = []
    for name, files in _layout():
        bench = benchmarks.get(name)
        layout = bench.suite_layout or f"{files.folders[0]}/{' or '.join(files.files)}"
        out.append((bench.suite_title or bench.title, layout))
    return out


def suite_writes() -> tuple[str, ...]:
    """The files the benchmarks of the suite build in the suite directory (their
    :attr:`~hopscore.benchmarks.base.Benchmark.suite_writes`), in table order."""
    return tuple(written for name, _ in _layout()
                 for written in benchmarks.get(name).suite_writes)


def __getattr__(name: str) -> Any:
    if name == "BENCHMARKS":  # read when asked: the registry's plugins are found lazily
        return suite_benchmarks()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, slots=True)
class Located:
    benchmark: str
    gold: Path | None
    #: what was looked for, when nothing was found
    looked_for: str = ""


def locate(data_dir: Path, benchmark: str, work_dir: Path) -> Located:
    """The gold file of one dataset under ``data_dir`` (built by the benchmark when it is
    joined from several files)."""
    bench = benchmarks.get(benchmark)
    files = _suite_files(bench)
    for folder in files.folders:
        base = data_dir / folder
        if not base.is_dir():
            continue
        built = bench.suite_gold(base, work_dir)
        if built is not None:
            return Located(benchmark, built)
        for name in files.files:
            if (base / name).is_file():
                return Located(benchmark, base / name)
    tried = f"{'|'.join(files.folders)}/{{{', '.join(files.files)}}}"
    return Located(benchmark, None, tried)


def _suite_files(bench: Benchmark[Any, Any]) -> SuiteFiles:
    if bench.suite_files is None:
        raise HopscoreError(f"{bench.title} is not in the MCR suite")
    return bench.suite_files


def suite_inputs(data_dir: Path) -> list[Any]:
    """Every gold file the suite may read under ``data_dir`` (for the output-is-an-input
    check: a suite directory inside the data folder is fine, one that would write over a gold
    file is not)."""
    from hopscore.files.output_specs import Input

    found = []
    for benchmark, files in _layout():
        for folder in files.folders:
            for name in (*files.files, *files.companions):
                if (data_dir / folder / name).is_file():
                    found.append(Input(data_dir / folder / name, f"--data-dir ({benchmark})"))
    return found


def suite_settings(base: Any, located: Located, output_dir: Path) -> Any:
    """Per-dataset run settings from the suite's (a RunSettings with benchmark and gold set)."""
    assert located.gold is not None
    return replace(base, benchmark=located.benchmark, gold=located.gold,
                   output_dir=output_dir / located.benchmark, protocol="mcr")


@dataclass(frozen=True, slots=True)
class SuiteRow:
    benchmark: str
    status: str
    mcr: dict[str, Any] | None = None
    run: dict[str, Any] | None = None
    detail: str = ""
    #: the run's ``methods`` block (SA, SC, oracle, MCR) under a chain strategy
    methods: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "status": self.status, "mcr": self.mcr,
                "run": self.run, "detail": self.detail, "methods": self.methods}
