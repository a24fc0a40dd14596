"""Run the OFFICIAL MuSiQue scorer on the real records and on seeded adversarial predictions, and
record its numbers (not run by pytest).

The official code is never part of hopscore: fetch StonyBrookNLP/musique @ 922ac98 elsewhere
(``evaluate_v1.0.py`` and ``metrics/``) and point ``--official`` at that folder::

    python3 tests/parity/run_official_musique.py --official /work/oracle/musique/official \
        --shared ../shared/data --work /tmp/musique-cases \
        --output tests/parity/expected/musique.json

For each case it writes the gold and prediction JSONL to ``--work``, runs ``evaluate_v1.0.py``
on them as a process (its printed, rounded numbers are kept), and feeds the official metric
classes each question's lines as ``evaluate()`` does (unrounded means and per-question values,
checked against the printout). The predictions come from ``adversarial_musique.py`` (seeded),
so the test regenerates them; only numbers and digests are written.
"""
import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ARGS = argparse.ArgumentParser()
ARGS.add_argument("--official", type=Path, required=True)
ARGS.add_argument("--shared", type=Path, required=True)
ARGS.add_argument("--work", type=Path, required=True)
ARGS.add_argument("--output", type=Path, required=True)
OPTS = ARGS.parse_args()
OFFICIAL = OPTS.official.resolve()
sys.path.insert(0, str(OFFICIAL))
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from metrics.answer import AnswerMetric  # noqa: E402
from metrics.group_answer_sufficiency import GroupAnswerSufficiencyMetric  # noqa: E402
from metrics.group_support_sufficiency import GroupSupportSufficiencyMetric  # noqa: E402
from metrics.support import SupportMetric  # noqa: E402

from tests.parity import adversarial_musique as adv  # noqa: E402  (the generator; no hopscore)

SHARED = OPTS.shared / "musique/migres/musique.json"
SAMPLE = REPO / "src/hopscore/benchmarks/musique/samples/gold.jsonl"
PER_EXAMPLE = ["answer_em", "answer_f1", "support_em", "support_f1", "support_prec",
               "support_recall", "sufficiency", "group_answer_sufficiency_em",
               "group_answer_sufficiency_f1", "group_support_sufficiency_em",
               "group_support_sufficiency_f1"]


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def per_question(gold, preds):
    """Per question (by str(id), first-appearance order): the official metric classes fed
    that question's lines exactly as evaluate() feeds them."""
    groups = {}
    for g, p in zip(gold, preds, strict=True):
        groups.setdefault(str(g["id"]), []).append((g, p))
    out = {}
    for qid, pairs in groups.items():
        am, sm = AnswerMetric(), SupportMetric()
        ga, gs = GroupAnswerSufficiencyMetric(), GroupSupportSufficiencyMetric()
        for g, p in pairs:
            answers = [g["answer"]] + g["answer_aliases"]
            gsup = [x["idx"] for x in g["paragraphs"] if x["is_supporting"]]
            if g["answerable"]:
                am(p["predicted_answer"], answers)
                sm(p["predicted_support_idxs"], gsup)
            said = p["predicted_answerable"]
            ga(p["predicted_answer"], answers, said, g["answerable"], g["id"])
            gs(p["predicted_support_idxs"], gsup, said, g["answerable"], g["id"])
        aem, af1 = am.get_metric()
        sem, sf1 = sm.get_metric()
        row = [aem, af1, sem, sf1, sm._total_precision / sm._count, sm._total_recall / sm._count]
        if len(pairs) == 2:
            a, s = ga.get_metric(), gs.get_metric()
            assert a["suff"] == s["suff"]
            row += [a["suff"], a["em"], a["f1"], s["em"], s["f1"]]
        out[qid] = [float(v) for v in row]
    return out


def case(name, gold_ref, gold, preds, spec, explicit=False):
    gpath, ppath = OPTS.work / f"{name}.gold.jsonl", OPTS.work / f"{name}.pred.jsonl"
    write(gpath, gold)
    write(ppath, preds)
    printed = json.loads(subprocess.run(
        [sys.executable, str(OFFICIAL / "evaluate_v1.0.py"), str(ppath), str(gpath)],
        cwd=OFFICIAL, capture_output=True, text=True, check=True).stdout)
    rows = per_question(gold, preds)
    n = len(rows)
    width = max(len(r) for r in rows.values())
    means = {PER_EXAMPLE[j]: sum(r[j] for r in rows.values()) / n for j in range(width)}
    # the official aggregates, unrounded: answer/support over answerable lines, groups over ids
    assert all(abs(round(means[k], 3) - printed[k]) < 1e-12 for k in printed if k in means), (
        name, printed, means)
    result = {"name": name, "gold": gold_ref, "predictions": spec, "lines": len(preds),
              "gold_digest": digest(gold), "predictions_digest": digest(preds),
              "official_printed": printed, "metrics": means,
              "per_example_digest": digest({k: [round(v, 12) for v in r] for k, r in rows.items()})}
    if explicit:
        result["per_example"] = rows
    return result


def main():
    OPTS.work.mkdir(parents=True, exist_ok=True)
    shared = read(SHARED)
    sample = read(SAMPLE)
    cases = []
    for label, ref, ans in (("shared", "shared:musique/migres/musique.json", shared),
                            ("sample", "sample:musique/gold.jsonl", sample)):
        full = adv.full_gold(ans, 0)
        seeds = range(1, 13) if label == "shared" else range(1, 4)
        cases.append(case(f"ans_perfect_{label}", {"file": ref}, ans, adv.perfect(ans), "perfect"))
        cases.append(case(f"full_perfect_{label}", {"file": ref, "full_seed": 0}, full,
                          adv.perfect(full), "perfect"))
        for seed in seeds:
            cases.append(case(f"ans_seed{seed}_{label}", {"file": ref}, ans,
                              adv.predictions(ans, seed), {"seed": seed}, explicit=seed == 1))
            cases.append(case(f"full_seed{seed}_{label}", {"file": ref, "full_seed": 0}, full,
                              adv.predictions(full, seed), {"seed": seed}, explicit=seed == 1))
    out = {"scorer": "StonyBrookNLP/musique @ 922ac98f19a201998dbdae6d7f2887a5258dbdeb, "
                     "evaluate_v1.0.py + metrics/*.py",
           "per_example_metrics": PER_EXAMPLE, "cases": cases}
    OPTS.output.write_text(json.dumps(out, indent=1) + "\n")
    print(len(cases), "cases,", sum(c["lines"] for c in cases), "prediction lines")


main()
