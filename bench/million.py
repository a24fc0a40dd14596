"""Score one million examples: time and peak memory, against the official scripts.

Usage (from the repository root)::

    python bench/million.py --official OFFICIAL [--official-python PY] [--size 1000000] \
        [--only hotpotqa,hybridqa]

HotpotQA: a million official gold records without their paragraphs (``inputs.hotpotqa_lean``:
the shared 53 records under fresh ids, ``context: []``) and official predictions with answers
and supporting facts, scored by ``OFFICIAL/hotpot/hotpot_evaluate_v1.py`` and by ``hopscore
score`` with its default intervals and without.

HybridQA: (``inputs.hybridqa_million``) a ``dev_reference.json``-style gold with a million
ids, and the same predictions as universal JSON Lines (what hopscore scores) and as the
official prediction list (what ``OFFICIAL/HybridQA/evaluate_script.py`` scores). Its reference
file is a single JSON document, so hopscore cannot stream the gold line by line: it has to
parse it and keep the predictions keyed by id, which makes this the harder memory case.

The targets (issue 28): a peak RSS under 400 MB for HotpotQA and 300 MB for HybridQA, and at
least 3x the official script's speed (paired CPU time). Writes ``bench/results/million.json``
(with ``--only``, the other case's earlier figures are kept under ``earlier``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

from cases import (
    TABLE_HEADERS,
    Case,
    official_env_for_hotpot,
    parse_hotpot,
    parse_hybridqa,
    run_case,
    table_rows,
)
from harness import REPO, machine, print_table, write_results
from inputs import in_child

#: issue 28: peak RSS under these many MB, at least this many times the official speed
RSS_TARGETS_MB = {"hotpotqa": 400, "hybridqa": 300}
SPEED_TARGET = 3.0


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", type=Path, required=True, help="folder of the checkouts")
    parser.add_argument("--official-python", default=sys.executable)
    parser.add_argument(
        "--shared",
        type=Path,
        default=Path(os.environ.get("HOPSCORE_SHARED_DATA", REPO.parent / "shared" / "data")),
    )
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "hopscore-bench"
    )
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--in-process-repeats", type=int, default=0)
    parser.add_argument("--hopscore-args", default="")
    parser.add_argument("--only", default="", help="comma-separated: hotpotqa,hybridqa")
    parser.add_argument("--ujson-shim", type=Path, default=None)
    return parser.parse_args()


def main() -> None:
    args = arguments()
    args.work.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    official = args.official.resolve()
    cases = []
    print(f"generating {args.size:,} examples under {args.work} (once) ...", flush=True)
    if not only or "hotpotqa" in only:
        gold, predictions = in_child("hotpotqa_lean", args.shared, args.work, args.size)
        env, backend = official_env_for_hotpot(args.official_python, args.ujson_shim)
        cases.append(Case(
            name=f"hotpotqa x{args.size:,} (no paragraphs)",
            benchmark="hotpotqa", gold=gold, predictions=predictions,
            official_script=official / "hotpot" / "hotpot_evaluate_v1.py",
            official_args=[str(predictions), str(gold)], parse_official=parse_hotpot,
            official_env=env,
            notes={"official_json_backend": backend, "gold_bytes": gold.stat().st_size,
                   "predictions_bytes": predictions.stat().st_size},
        ))  # fmt: skip
    if not only or "hybridqa" in only:
        gold, universal, official_predictions = in_child("hybridqa_million", args.shared,
                                                          args.work, args.size)
        cases.append(Case(
            name=f"hybridqa x{args.size:,} (universal JSONL)",
            benchmark="hybridqa", gold=gold, predictions=universal,
            official_script=official / "HybridQA" / "evaluate_script.py",
            official_args=[str(official_predictions), str(gold)],
            parse_official=parse_hybridqa,
            notes={
                "gold_bytes": gold.stat().st_size,
                "universal_predictions_bytes": universal.stat().st_size,
                "official_predictions_bytes": official_predictions.stat().st_size,
            },
        ))  # fmt: skip
    results = [
        result
        for case in cases
        for result in run_case(
            case,
            python=sys.executable,
            official_python=args.official_python,
            work=args.work,
            repeats=args.repeats,
            in_process_repeats=args.in_process_repeats,
            extra_args=shlex.split(args.hopscore_args),
            warm_up=False,  # long runs; the inputs were just written (or read) and are cached
        )
    ]
    for result in results:
        peak = result["hopscore_process"]["max_rss_mib_max"]
        target = RSS_TARGETS_MB[result["benchmark"]] * 1e6 / (1024 * 1024)
        result["rss_target_mib"] = target
        result["rss_target_met"] = peak < target
        result["speed_target"] = SPEED_TARGET
        result["speed_target_met"] = result["speedup_process_cpu_paired_median"] >= SPEED_TARGET
    payload = {"machine": machine(), "results": results}
    payload["machine_after"] = {"load_average": list(os.getloadavg())}
    payload["earlier"] = earlier_results({case.name for case in cases})
    path = write_results("million", payload)

    print()
    print(f"medians of {args.repeats} runs; load average "
          f"{payload['machine']['load_average'][0]:.2f} before, "
          f"{payload['machine_after']['load_average'][0]:.2f} after")
    print_table(TABLE_HEADERS, table_rows(results))
    for result in results:
        peak = result["hopscore_process"]["max_rss_mib_max"]
        verdict = "met" if result["rss_target_met"] else "NOT met"
        print(f"{result['benchmark']} ({result['mode']}) peak RSS {peak:.0f} MiB "
              f"(target < {result['rss_target_mib']:.0f} MiB): {verdict}; "
              f"{result['speedup_process_cpu_paired_median']:.2f}x the official script's "
              f"CPU (target >= {SPEED_TARGET}x): "
              f"{'met' if result['speed_target_met'] else 'NOT met'}")
    print(f"\nwrote {path.relative_to(REPO)}")


def earlier_results(rerun: set[str]) -> list[dict]:
    """The previous results file's figures of the cases not run this time (``--only``), each
    with the machine it was measured on, so one case's rerun keeps the other's numbers."""
    path = REPO / "bench" / "results" / "million.json"
    try:
        previous = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    kept = [r for r in previous.get("earlier", []) if r["case"] not in rerun]
    for result in previous.get("results", []):
        if result["case"] not in rerun:
            kept.append({**result, "machine": previous.get("machine")})
    return kept


if __name__ == "__main__":
    main()
