"""Run the OFFICIAL scorers on adversarial predictions and record their numbers (not run by pytest).

The official code is never part of hopscore: check the repositories out elsewhere and point
``--official`` at them::

    OFFICIAL=/work/official          # strategyqa-evaluator/, fermi/, FEVEROUS/, reasoning-on-cots/
    $OFFICIAL/venv/bin/python tests/parity/run_official.py --official $OFFICIAL \\
        --shared ../shared/data [--only strategyqa,fermi,feverous]

It needs numpy, pint and jsonlines in that interpreter, and a ``cleantext`` stub on the path for
FEVEROUS (``evaluate.py`` imports it without using it). The predictions come from
``adversarial_sqa_fermi_feverous.py`` (seeded), so the tests regenerate them; only the numbers
and a digest of each prediction set are written, to ``tests/parity/expected/<benchmark>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import adversarial_sqa_fermi_feverous as adversarial  # noqa: E402

FIXTURES = HERE.parent / "fixtures"
PACKAGES = HERE.parents[1] / "src" / "hopscore" / "benchmarks"
EXPECTED = HERE / "expected"


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def resolve(ref: str, shared: Path) -> Path:
    kind, _, rel = ref.partition(":")
    if kind == "sample":  # sample:<package>/<file>: the sample the benchmark's package ships
        package, _, name = rel.partition("/")
        return PACKAGES / package / "samples" / name
    return {"shared": shared, "fixture": FIXTURES}[kind] / rel


# --- StrategyQA ---------------------------------------------------------------------------

STRATEGYQA_CASES: list[dict[str, Any]] = [
    {
        "name": "evaluator_small",
        "gold": "shared:strategyqa/strategyqa-evaluator/gold_small.json",
        "predictions": {"file": "shared:strategyqa/strategyqa-evaluator/predictions_small.json"},
    },
    {
        "name": "dev_bart_decomp",
        "gold": "shared:strategyqa/eladsegal/dev.json",
        "predictions": {"file": "shared:strategyqa/eladsegal/bart_decomp_dev_predictions.jsonl"},
    },
    {
        "name": "dev_all_true",
        "gold": "shared:strategyqa/eladsegal/dev.json",
        "predictions": {"constant_answer": True},
    },
    *[
        {
            "name": f"dev_adversarial_s{s}",
            "gold": "shared:strategyqa/eladsegal/dev.json",
            "predictions": {"seed": s, "keys": ["answer", "decomposition", "paragraphs"]},
        }
        for s in (1, 2, 3)
    ],
    {
        "name": "dev_answer_only_s4",
        "gold": "shared:strategyqa/eladsegal/dev.json",
        "predictions": {"seed": 4, "keys": ["answer"]},
    },
    {
        "name": "dev_decomposition_only_s5",
        "gold": "shared:strategyqa/eladsegal/dev.json",
        "predictions": {"seed": 5, "keys": ["decomposition"]},
    },
    {
        "name": "dev_paragraphs_only_s6",
        "gold": "shared:strategyqa/eladsegal/dev.json",
        "predictions": {"seed": 6, "keys": ["paragraphs"]},
    },
    {
        "name": "train_adversarial_s7",
        "gold": "shared:strategyqa/eladsegal/train.json",
        "predictions": {"seed": 7, "keys": ["answer", "decomposition", "paragraphs"]},
    },
    *[
        {
            "name": f"fixture_adversarial_s{s}",
            "gold": "fixture:strategyqa/gold.json",
            "predictions": {"seed": s, "keys": ["answer", "decomposition", "paragraphs"]},
        }
        for s in (11, 12)
    ],
    {
        "name": "fixture_answer_only_s13",
        "gold": "fixture:strategyqa/gold.json",
        "predictions": {"seed": 13, "keys": ["answer"]},
    },
    {
        "name": "sample",
        "gold": "sample:strategyqa/gold.json",
        "predictions": {"file": "sample:strategyqa/predictions.json"},
    },
]


def strategyqa_predictions(
    case: dict[str, Any], gold: list[dict[str, Any]], shared: Path
) -> dict[str, Any]:
    spec = case["predictions"]
    if "file" in spec:
        path = resolve(spec["file"], shared)
        if path.suffix == ".jsonl":  # the official evaluator reads a {qid: {...}} object
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            return {row["qid"]: {"decomposition": row["decomposition"]} for row in rows}
        return json.loads(path.read_text())
    if "constant_answer" in spec:
        return {record["qid"]: {"answer": spec["constant_answer"]} for record in gold}
    return adversarial.strategyqa_predictions(gold, spec["seed"], tuple(spec["keys"]))


def run_strategyqa(official: Path, shared: Path) -> list[dict[str, Any]]:
    evaluator = official / "strategyqa-evaluator" / "evaluator"
    results = []
    for case in STRATEGYQA_CASES:
        gold_path = resolve(case["gold"], shared)
        gold = json.loads(gold_path.read_text())
        predictions = strategyqa_predictions(case, gold, shared)
        with tempfile.TemporaryDirectory() as tmp:
            pred_path = Path(tmp) / "predictions.json"
            out_path = Path(tmp) / "metrics.json"
            pred_path.write_text(json.dumps(predictions))
            subprocess.run(
                [
                    sys.executable,
                    "eval.py",
                    "--golds_file",
                    str(gold_path),
                    "--predictions_file",
                    str(pred_path),
                    "--metrics_output_file",
                    str(out_path),
                ],
                cwd=evaluator,
                check=True,
                capture_output=True,
            )
            metrics = json.loads(out_path.read_text())
        results.append({**case, "predictions_digest": digest(predictions), "official": metrics})
        print("strategyqa", case["name"], metrics)
    return results


# --- Fermi --------------------------------------------------------------------------------

FERMI_CASES: list[dict[str, Any]] = [
    *[
        {"name": f"{split}_s{seed}", "gold": f"shared:fermi/{split}.json", "seed": seed}
        for split, seed in [
            ("realFP/train_realfp", 1),
            ("realFP/val_realfp", 2),
            ("realFP/test_realfp", 3),
            ("synthFP/val_synthfp", 4),
            ("realFP/distractor_setting/test_distractor_realfp", 5),
        ]
    ],
    *[
        {"name": f"fixture_s{seed}", "gold": "fixture:fermi/gold.json", "seed": seed}
        for seed in (11, 12, 13)
    ],
    {"name": "sample", "gold": "sample:fermi/gold.json", "file": "sample:fermi/predictions.json"},
]


def run_fermi(official: Path, shared: Path) -> dict[str, Any]:
    cwd = os.getcwd()
    os.chdir(official / "fermi")  # eval_utils loads ./units.txt at import
    sys.path.insert(0, str(official / "fermi"))
    try:
        import eval_utils  # type: ignore[import-not-found]
    finally:
        os.chdir(cwd)

    def official_score(gold: str, pred: Any) -> float | None:
        try:
            y = eval_utils.convert_units(gold)[0]
            y_hat = eval_utils.convert_units(pred)[0]
            return float(eval_utils.accuracy_metric(y, y_hat))
        except Exception:
            return None  # the official pipeline crashes on this prediction

    cases = []
    for case in FERMI_CASES:
        gold = json.loads(resolve(case["gold"], shared).read_text())
        if "file" in case:
            predictions = json.loads(resolve(case["file"], shared).read_text())
        else:
            predictions = adversarial.fermi_predictions(gold, case["seed"])
        scores = [
            official_score(r["answer"], predictions[str(i)]) if str(i) in predictions else 0.0
            for i, r in enumerate(gold)
        ]
        crashed = [str(i) for i, s in enumerate(scores) if s is None]
        mean = sum(s or 0.0 for s in scores) / len(scores)
        cases.append(
            {
                **case,
                "predictions_digest": digest(predictions),
                "per_example": scores,
                "crashed_ids": crashed,
                "mean_crash_as_zero": mean,
            }
        )
        print("fermi", case["name"], mean, f"{len(crashed)} crashed")

    sys.path.insert(0, str(official / "reasoning-on-cots"))
    from fermi_evaluator import FermiEvaluator  # type: ignore[import-not-found]

    evaluator = FermiEvaluator()

    def mcr(pred: str, gold: str) -> float | None:
        try:
            return float(evaluator.evaluate(pred, gold))
        except Exception:
            return None

    pairs = [[p, g, mcr(p, g)] for p, g in adversarial.MCR_PAIRS]
    train = json.loads((shared / "fermi/realFP/train_realfp.json").read_text())
    generated = adversarial.fermi_predictions(train, 21)
    for i, record in enumerate(train):
        pred = str(generated[str(i)])
        pairs.append([pred, record["answer"], mcr(pred, record["answer"])])
    print("mcr pairs", len(pairs), sum(1 for p in pairs if p[2] is None), "crashed")
    official_pairs = [[g, p, official_score(g, p)] for g, p in adversarial.FERMI_PAIRS]
    return {"cases": cases, "mcr_pairs": pairs, "official_pairs": official_pairs}


# --- FEVEROUS -----------------------------------------------------------------------------

FEVEROUS_CASES: list[dict[str, Any]] = [
    {"name": "perfect", "gold": "fixture:feverous/gold.jsonl", "variant": "perfect"},
    {"name": "labels_only", "gold": "fixture:feverous/gold.jsonl", "variant": "labels_only"},
    *[
        {"name": f"adversarial_s{seed}", "gold": "fixture:feverous/gold.jsonl", "seed": seed}
        for seed in range(1, 9)
    ],
    {
        "name": "sample",
        "gold": "sample:feverous/gold.jsonl",
        "file": "sample:feverous/predictions.jsonl",
    },
]


def feverous_records(
    case: dict[str, Any], gold: list[dict[str, Any]], shared: Path
) -> list[dict[str, Any]]:
    if "file" in case:  # joined to the gold by id
        lines = resolve(case["file"], shared).read_text().splitlines()
        by_id = {row["id"]: row for row in map(json.loads, filter(str.strip, lines))}
        return [by_id[r["id"]] for r in gold]
    if case.get("variant") == "perfect":
        return [
            {
                "id": r["id"],
                "predicted_label": r["label"],
                "predicted_evidence": [e for g in r["evidence"] for e in g["content"]],
            }
            for r in gold
        ]
    if case.get("variant") == "labels_only":
        return [
            {"id": r["id"], "predicted_label": r["label"], "predicted_evidence": []} for r in gold
        ]
    return adversarial.feverous_predictions(gold, case["seed"])


def run_feverous(official: Path, shared: Path) -> list[dict[str, Any]]:
    sys.path.insert(0, str(official / "FEVEROUS" / "src"))
    sys.path.insert(0, str(official / "shims"))
    from feverous.evaluation.evaluate import feverous_evaluation  # type: ignore[import-not-found]

    results = []
    for case in FEVEROUS_CASES:
        lines = resolve(case["gold"], shared).read_text().splitlines()
        header, gold = lines[0], [json.loads(line) for line in lines[1:] if line.strip()]
        predictions = feverous_records(case, gold, shared)
        with tempfile.TemporaryDirectory() as tmp:
            combined = Path(tmp) / "combined.jsonl"
            rows = [header] + [
                json.dumps({**g, **p}) for g, p in zip(gold, predictions, strict=True)
            ]
            combined.write_text("\n".join(rows) + "\n")
            strict, accuracy, precision, recall, f1 = feverous_evaluation(str(combined))
        metrics = {
            "feverous_score": strict,
            "label_accuracy": accuracy,
            "evidence_precision": precision,
            "evidence_recall": recall,
            "evidence_f1": f1,
        }
        results.append({**case, "predictions_digest": digest(predictions), "official": metrics})
        print("feverous", case["name"], metrics)
    return results


RUNNERS: dict[str, Callable[[Path, Path], Any]] = {
    "strategyqa": run_strategyqa,
    "fermi": run_fermi,
    "feverous": run_feverous,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--official", type=Path, required=True)
    parser.add_argument("--shared", type=Path, required=True)
    parser.add_argument("--only", default=",".join(RUNNERS))
    args = parser.parse_args()
    EXPECTED.mkdir(exist_ok=True)
    for name in args.only.split(","):
        result = RUNNERS[name](args.official.resolve(), args.shared.resolve())
        (EXPECTED / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
