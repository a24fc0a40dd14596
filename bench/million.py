"""Score one million answer-only examples: time and peak memory, against the official script.

Usage (from the repository root)::

    python bench/million.py --official OFFICIAL [--official-python PY] [--size 1000000]

The input is HybridQA-shaped (see ``inputs.hybridqa_million``): a ``dev_reference.json``-style
gold with a million ids, and the same predictions as universal JSON Lines (what hopscore
scores) and as the official prediction list (what ``OFFICIAL/HybridQA/evaluate_script.py``
scores). HybridQA is the answer-only benchmark with an official script, and its reference file
is a single JSON document, so hopscore cannot stream the gold line by line: it has to parse it
and keep the predictions keyed by id, which makes this the harder memory case. The target is a
peak RSS under 1 GB for ``hopscore score``. Writes ``bench/results/million.json``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

from cases import TABLE_HEADERS, Case, parse_hybridqa, run_case, table_rows
from harness import REPO, machine, print_table, write_results
from inputs import hybridqa_million

RSS_TARGET_MIB = 1000 * 1000 * 1000 / (1024 * 1024)  # 1 GB


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
    return parser.parse_args()


def main() -> None:
    args = arguments()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"generating {args.size:,} examples under {args.work} (once) ...", flush=True)
    gold, universal, official_predictions = hybridqa_million(args.shared, args.work, args.size)
    case = Case(
        name=f"hybridqa x{args.size:,} (universal JSONL)",
        benchmark="hybridqa",
        gold=gold,
        predictions=universal,
        official_script=args.official.resolve() / "HybridQA" / "evaluate_script.py",
        official_args=[str(official_predictions), str(gold)],
        parse_official=parse_hybridqa,
        notes={
            "gold_bytes": gold.stat().st_size,
            "universal_predictions_bytes": universal.stat().st_size,
            "official_predictions_bytes": official_predictions.stat().st_size,
        },
    )
    results = run_case(
        case,
        python=sys.executable,
        official_python=args.official_python,
        work=args.work,
        repeats=args.repeats,
        in_process_repeats=args.in_process_repeats,
        extra_args=shlex.split(args.hopscore_args),
        warm_up=False,  # long runs; the inputs were just written (or read) and are cached
    )
    for result in results:
        peak = result["hopscore_process"]["max_rss_mib_max"]
        result["rss_target_mib"] = RSS_TARGET_MIB
        result["rss_target_met"] = peak < RSS_TARGET_MIB
    payload = {"machine": machine(), "results": results}
    payload["machine_after"] = {"load_average": list(os.getloadavg())}
    path = write_results("million", payload)

    print()
    print(f"medians of {args.repeats} runs; load average "
          f"{payload['machine']['load_average'][0]:.2f} before, "
          f"{payload['machine_after']['load_average'][0]:.2f} after")
    print_table(TABLE_HEADERS, table_rows(results))
    for result in results:
        peak = result["hopscore_process"]["max_rss_mib_max"]
        verdict = "met" if result["rss_target_met"] else "NOT met"
        print(f"hopscore ({result['mode']}) peak RSS {peak:.0f} MiB "
              f"(target < {RSS_TARGET_MIB:.0f} MiB = 1 GB): {verdict}")
    print(f"\nwrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
