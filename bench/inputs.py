"""Inputs of the speed benchmarks, generated from the shared real data into a work folder.

* HybridQA dev: the real ``dev_reference.json`` (3,466 questions) and an official prediction
  list made by ``tests/parity/adversarial.py`` (the parity tests' deterministic variants: case,
  punctuation, articles, Unicode, repeated tokens, wrong and empty answers).
* HotpotQA: the shared file holds only the first 53 dev-distractor records, so they are
  repeated with fresh ids (``<id>-<copy>``) up to the size of the real dev set, 7,405 records
  with full contexts (about 51 MB, the real file is 46 MB), and predicted with the parity
  tests' HotpotQA generator (answer and supporting-fact variants, some ids missing, one extra).
* HotpotQA at 100,000 records, with contexts (about 680 MB), made the same way, for the
  larger of the two HotpotQA speed targets.
* One million HotpotQA records without their paragraphs (``context: []``; scoring reads none,
  and a million with paragraphs would be 7 GB) for the memory target: the 53 records'
  answers, supporting facts and groups under fresh ids, predicted as above.
* One million answer-only examples for HybridQA: a gold file in the ``dev_reference.json``
  format whose answers are the real dev answers repeated under fresh ids, and the same
  predictions twice, as universal JSON Lines ``{"id", "answer"}`` (what hopscore reads) and
  as the official list ``[{"question_id", "pred"}]`` (what the official script reads).

Files are written once and reused when they already exist with the expected size.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import REPO

sys.path.insert(0, str(REPO / "tests" / "parity"))

from adversarial import hotpot_predictions, hybridqa_predictions

HOTPOT_DEV_SIZE = 7405


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(value, handle, ensure_ascii=False)
    tmp.replace(path)


def hybridqa_dev(shared: Path, work: Path) -> tuple[Path, Path]:
    """``(gold, predictions)``: the real dev reference and an official prediction list."""
    gold = shared / "hybridqa" / "dev_reference.json"
    predictions = work / "hybridqa_dev_predictions.json"
    if not predictions.exists():
        reference = json.loads(gold.read_text(encoding="utf-8"))["reference"]
        _write_json(predictions, hybridqa_predictions(reference))
    return gold, predictions


def hotpotqa_dev_sized(shared: Path, work: Path, size: int = HOTPOT_DEV_SIZE) -> tuple[Path, Path]:
    """``(gold, predictions)``: the 53 shared records repeated with fresh ids to ``size``."""
    gold = work / f"hotpot_gold_{size}.json"
    predictions = work / f"hotpot_predictions_{size}.json"
    if not (gold.exists() and predictions.exists()):
        source = shared / "hotpotqa" / "hotpot_dev_distractor_v1.first53.json"
        records = json.loads(source.read_text(encoding="utf-8"))
        n = len(records)
        big = [{**records[i % n], "_id": f"{records[i % n]['_id']}-{i // n}"} for i in range(size)]
        _write_json(gold, big)
        _write_json(predictions, hotpot_predictions(big))
    return gold, predictions


def hotpotqa_lean(shared: Path, work: Path, size: int = 1_000_000) -> tuple[Path, Path]:
    """``(gold, predictions)``: ``size`` HotpotQA records without paragraphs (see above)."""
    gold = work / f"hotpot_lean_gold_{size}.json"
    predictions = work / f"hotpot_lean_predictions_{size}.json"
    if not (gold.exists() and predictions.exists()):
        source = shared / "hotpotqa" / "hotpot_dev_distractor_v1.first53.json"
        records = json.loads(source.read_text(encoding="utf-8"))
        n = len(records)
        big = [{**records[i % n], "_id": f"{records[i % n]['_id']}-{i // n}"} for i in range(size)]
        _write_json(predictions, hotpot_predictions(big))  # (facts drawn from the titles)
        for record in big:
            record["context"] = []
        _write_json(gold, big)
    return gold, predictions


def hybridqa_million(shared: Path, work: Path, size: int = 1_000_000) -> tuple[Path, Path, Path]:
    """``(gold, universal_predictions, official_predictions)`` with ``size`` examples.

    Example ``i`` takes the answer of dev question ``i mod 3466`` and its parity-test
    prediction; its id is ``q<i>``. The gold's ``table`` / ``passage`` lists follow the dev
    question's group, so the grouped metrics are exercised too.
    """
    gold = work / f"hybridqa_gold_{size}.json"
    universal = work / f"hybridqa_predictions_{size}.jsonl"
    official = work / f"hybridqa_predictions_{size}.json"
    if gold.exists() and universal.exists() and official.exists():
        return gold, universal, official
    dev = json.loads((shared / "hybridqa" / "dev_reference.json").read_text(encoding="utf-8"))
    qids = list(dev["reference"])
    answers = [dev["reference"][q] for q in qids]
    predicted = {p["question_id"]: p["pred"] for p in hybridqa_predictions(dev["reference"])}
    guesses = [predicted[q] for q in qids]
    location = {q: "table" for q in dev["table"]} | {q: "passage" for q in dev["passage"]}
    where = [location.get(q) for q in qids]
    n = len(qids)
    ids = [f"q{i:07d}" for i in range(size)]
    _write_json(
        gold,
        {
            "reference": {ids[i]: answers[i % n] for i in range(size)},
            "table": [ids[i] for i in range(size) if where[i % n] == "table"],
            "passage": [ids[i] for i in range(size) if where[i % n] == "passage"],
        },
    )
    tmp = universal.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for i in range(size):
            handle.write(json.dumps({"id": ids[i], "answer": guesses[i % n]}, ensure_ascii=False))
            handle.write("\n")
    tmp.replace(universal)
    _write_json(official, [{"question_id": ids[i], "pred": guesses[i % n]} for i in range(size)])
    return gold, universal, official


def in_child(name: str, *args: Any) -> tuple[Path, ...]:
    """``name(*args)`` of this module, run in a child process: the inputs are built there.

    Built here, a million records grow this process to several hundred MiB, and every child
    it starts afterwards (vfork, then exec) reports that as its own peak RSS (Linux keeps the
    high-water mark across exec), which would hide the peak of the command measured.
    """
    code = ("import json, sys; from pathlib import Path; import inputs; "
            f"out = inputs.{name}(*[Path(a) if i < 2 else int(a) "
            "for i, a in enumerate(sys.argv[1:])]); "
            "print(json.dumps([str(p) for p in out]))")
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True,
                          capture_output=True, text=True, cwd=Path(__file__).parent)
    return tuple(Path(p) for p in json.loads(proc.stdout.strip().splitlines()[-1]))
