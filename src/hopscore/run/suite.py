"""``hopscore suite mcr``: the seven MCR datasets in one go, one MCR-style table.

The data folder holds one sub-folder per dataset; the first file found is used (the names are
those of the official releases and of MCR's readers):

======================  ================================================================
folder                  files tried, in order
======================  ================================================================
``strategyqa/``         ``dev.json``, ``strategyqa_train.json``, ``train.json``
``fermi/``              ``train_realfp.json`` + ``val_realfp.json`` (joined and deduplicated
                        by question, as MCR's reader does), else ``realfp.json``
``quartz/``             ``dev.jsonl``, ``quartz-dataset-v1-aug2019/dev.jsonl``
``hotpotqa/``           ``hotpot_dev_fullwiki_v1.json``, ``hotpot_dev_distractor_v1.json``
``2wikimultihopqa/``    ``dev.json``, ``data_ids/dev.json``
``bamboogle/``          ``bamboogle_prerelease_random.csv``, ``Bamboogle_Prerelease.tsv``,
                        ``bamboogle.json``, ``bamboogle_test_questions_and_answers.json``
``feverous/``           ``feverous_dev_challenges.jsonl``
======================  ================================================================

Folder aliases are accepted (``2wikihop``, ``2wiki``, ``sqa``, ``quartz-dataset-v1-aug2019``).
A dataset whose folder or files are missing is reported in the table and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError
from hopscore.files.io import load_json, write_json_atomic

#: (benchmark, folder names, file names) in MCR's table order.
LAYOUT: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("strategyqa", ("strategyqa", "sqa", "strategy_qa"),
     ("dev.json", "strategyqa_train.json", "train.json")),
    ("fermi", ("fermi", "realFP", "realfp"), ("train_realfp.json", "realfp.json")),
    ("quartz", ("quartz", "quartz-dataset-v1-aug2019"),
     ("dev.jsonl", "quartz-dataset-v1-aug2019/dev.jsonl")),
    ("hotpotqa", ("hotpotqa", "hotpot"),
     ("hotpot_dev_fullwiki_v1.json", "hotpot_dev_distractor_v1.json")),
    ("2wikimultihopqa", ("2wikimultihopqa", "2wikihop", "2wiki", "2wikimqa"),
     ("dev.json", "data_ids/dev.json")),
    ("bamboogle", ("bamboogle",),
     ("bamboogle_prerelease_random.csv", "Bamboogle_Prerelease.tsv", "bamboogle.json",
      "bamboogle_test_questions_and_answers.json")),
    ("feverous", ("feverous",), ("feverous_dev_challenges.jsonl",)),
)  # fmt: skip
BENCHMARKS = tuple(name for name, _, _ in LAYOUT)


@dataclass(frozen=True, slots=True)
class Located:
    benchmark: str
    gold: Path | None
    #: what was looked for, when nothing was found
    looked_for: str = ""


def locate(data_dir: Path, benchmark: str, work_dir: Path) -> Located:
    """The gold file of one dataset under ``data_dir`` (Fermi: train + val joined)."""
    _, folders, files = next(entry for entry in LAYOUT if entry[0] == benchmark)
    for folder in folders:
        base = data_dir / folder
        if not base.is_dir():
            continue
        if benchmark == "fermi":
            train, val = base / "train_realfp.json", base / "val_realfp.json"
            if train.is_file() and val.is_file():
                return Located(benchmark, join_fermi(train, val, work_dir / "fermi_realfp.json"))
        for name in files:
            if (base / name).is_file():
                return Located(benchmark, base / name)
    tried = f"{'|'.join(folders)}/{{{', '.join(files)}}}"
    return Located(benchmark, None, tried)


def suite_inputs(data_dir: Path) -> list[Any]:
    """Every gold file the suite may read under ``data_dir`` (for the output-is-an-input
    check: a suite directory inside the data folder is fine, one that would write over a gold
    file is not)."""
    from hopscore.files.outputs import Input

    found = []
    for benchmark, folders, files in LAYOUT:
        extra = ("val_realfp.json",) if benchmark == "fermi" else ()
        for folder in folders:
            for name in (*files, *extra):
                if (data_dir / folder / name).is_file():
                    found.append(Input(data_dir / folder / name, f"--data-dir ({benchmark})"))
    return found


def join_fermi(train: Path, val: Path, target: Path) -> Path:
    """realFP train + val, first occurrence of each question kept (MCR: 292 questions)."""
    seen: set[str] = set()
    joined: list[Any] = []
    for path in (train, val):
        data = load_json(path)
        if not isinstance(data, list):
            raise HopscoreError(f"{path}: expected a JSON list of Fermi problems")
        for item in data:
            question = item.get("question") if isinstance(item, dict) else None
            if isinstance(question, str) and question in seen:
                continue
            if isinstance(question, str):
                seen.add(question)
            joined.append(item)
    write_json_atomic(target, joined)
    return target


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
