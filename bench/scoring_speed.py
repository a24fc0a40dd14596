"""Scoring speed of hopscore against the official scripts: HybridQA dev, HotpotQA at dev size
(7,405) and at 100,000 records with contexts, and the start-up.

Usage (from the repository root; the official scripts under OFFICIAL, fetched outside the
repository: nothing of them is committed)::

    python bench/scoring_speed.py --official OFFICIAL [--official-python PY] [--repeats 5] \
        [--only hybridqa,hotpotqa,hotpotqa100k,startup]

``OFFICIAL/HybridQA/evaluate_script.py`` (wenhuchen/HybridQA) and
``OFFICIAL/hotpot/hotpot_evaluate_v1.py`` (hotpotqa/hotpot) are run with ``--official-python``
(default: this interpreter). The HotpotQA script imports ``ujson``: the real one is used when
that interpreter has it, else ``--ujson-shim DIR`` (a folder with a ``ujson.py`` re-exporting
the stdlib ``json``) and the results say so. Inputs are generated into ``--work`` (default: a
folder under the system temp dir, reused between runs; see ``inputs.py``). Prints a table and
writes ``bench/results/scoring_speed.json``. See ``cases.py`` for what each figure measures.

The table ends with the targets (issue 28): the default ``hopscore score`` at least 2x faster
than the official script on HotpotQA 7,405 and 4x on HotpotQA 100,000 (paired CPU-time
ratios), the intervals under 10% of a default score run (the CPU time of the default run over
the run without intervals, minus one), and ``hopscore --version`` at most 60 ms above
``python -c pass``.
"""

from __future__ import annotations

import argparse
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
    startup,
    table_rows,
)
from harness import REPO, machine, print_table, write_results
from inputs import HOTPOT_DEV_SIZE, in_child

#: (case name prefix, least speed-up of the default run over the official script)
SPEED_TARGETS = (("hotpotqa 53x->7,405", 2.0), ("hotpotqa 53x->100,000", 4.0))
INTERVAL_SHARE_TARGET = 0.10
#: ``hopscore --version`` at most this much above ``python -c pass`` (issue 28)
VERSION_ABOVE_PYTHON_S = 0.060


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", type=Path, required=True, help="folder of the checkouts")
    parser.add_argument("--official-python", default=sys.executable)
    parser.add_argument("--ujson-shim", type=Path, default=None)
    parser.add_argument(
        "--shared",
        type=Path,
        default=Path(os.environ.get("HOPSCORE_SHARED_DATA", REPO.parent / "shared" / "data")),
    )
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "hopscore-bench"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--large-repeats", type=int, default=3,
                        help="repeats of the 100,000-record case")
    parser.add_argument("--in-process-repeats", type=int, default=5)
    parser.add_argument(
        "--hopscore-args", default="", help="extra arguments for 'hopscore score' (one string)"
    )
    parser.add_argument("--only", default="",
                        help="comma-separated: hybridqa,hotpotqa,hotpotqa100k,startup")
    return parser.parse_args()


def main() -> None:
    args = arguments()
    args.work.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    official = args.official.resolve()
    cases = []
    if not only or "hybridqa" in only:
        gold, predictions = in_child("hybridqa_dev", args.shared, args.work)
        cases.append(
            Case(
                name="hybridqa-dev (3,466)",
                benchmark="hybridqa",
                gold=gold,
                predictions=predictions,
                official_script=official / "HybridQA" / "evaluate_script.py",
                official_args=[str(predictions), str(gold)],
                parse_official=parse_hybridqa,
            )
        )
    if not only or "hotpotqa" in only:
        gold, predictions = in_child("hotpotqa_dev_sized", args.shared, args.work,
                                     HOTPOT_DEV_SIZE)
        env, backend = official_env_for_hotpot(args.official_python, args.ujson_shim)
        cases.append(
            Case(
                name="hotpotqa 53x->7,405",
                benchmark="hotpotqa",
                gold=gold,
                predictions=predictions,
                official_script=official / "hotpot" / "hotpot_evaluate_v1.py",
                official_args=[str(predictions), str(gold)],
                parse_official=parse_hotpot,
                official_env=env,
                notes={"official_json_backend": backend},
            )
        )
    large = []
    if not only or "hotpotqa100k" in only:
        gold, predictions = in_child("hotpotqa_dev_sized", args.shared, args.work, 100_000)
        env, backend = official_env_for_hotpot(args.official_python, args.ujson_shim)
        large.append(
            Case(
                name="hotpotqa 53x->100,000 (contexts)",
                benchmark="hotpotqa",
                gold=gold,
                predictions=predictions,
                official_script=official / "hotpot" / "hotpot_evaluate_v1.py",
                official_args=[str(predictions), str(gold)],
                parse_official=parse_hotpot,
                official_env=env,
                notes={"official_json_backend": backend, "gold_bytes": gold.stat().st_size},
            )
        )
    results = [
        result
        for group, repeats in ((cases, args.repeats), (large, args.large_repeats))
        for case in group
        for result in run_case(
            case,
            python=sys.executable,
            official_python=args.official_python,
            work=args.work,
            repeats=repeats,
            in_process_repeats=args.in_process_repeats if group is cases else 0,
            extra_args=shlex.split(args.hopscore_args),
        )
    ]
    payload = {"machine": machine(), "results": results}
    if not only or "startup" in only:
        payload["startup"] = startup(sys.executable, args.repeats)
    payload["machine_after"] = {"load_average": list(os.getloadavg())}
    payload["targets"] = targets(results, payload.get("startup"))
    path = write_results("scoring_speed", payload)

    print()
    print(f"medians of {args.repeats} runs (in-process: {args.in_process_repeats}); "
          f"load average {payload['machine']['load_average'][0]:.2f} before, "
          f"{payload['machine_after']['load_average'][0]:.2f} after")
    if results:
        print_table(TABLE_HEADERS, table_rows(results))
    for note in dict.fromkeys(f"{r['case']}: {r['notes']}" for r in results if r["notes"]):
        print(note)
    if "startup" in payload:
        print()
        print_table(
            ["start-up", "wall s", "cpu s"],
            [[n, s["wall_s_median"], s["cpu_s_median"]] for n, s in payload["startup"].items()],
        )
    if payload["targets"]:
        print()
        print_table(["target", "measured", "goal", "met"],
                    [[t["what"], t["value"], t["goal"], "yes" if t["met"] else "NO"]
                     for t in payload["targets"]])
    print(f"\nwrote {path.relative_to(REPO)}")


def targets(results: list[dict], startup_figures: dict | None) -> list[dict]:
    """The issue's speed targets, each measured and checked."""
    out = []
    by_case: dict[str, dict[str, dict]] = {}
    for result in results:
        by_case.setdefault(result["case"], {})[result["mode"]] = result
    for prefix, goal in SPEED_TARGETS:
        for case, modes in by_case.items():
            if case.startswith(prefix) and "default" in modes:
                ratio = modes["default"]["speedup_process_cpu_paired_median"]
                out.append({"what": f"{case}: default score vs official (cpu, paired)",
                            "value": round(ratio, 3), "goal": f">= {goal}x",
                            "met": ratio >= goal})
    for case, modes in by_case.items():
        if "default" in modes and "no intervals" in modes:
            with_ci = modes["default"]["hopscore_process"]["cpu_s_median"]
            without = modes["no intervals"]["hopscore_process"]["cpu_s_median"]
            share = max(0.0, with_ci - without) / with_ci
            out.append({"what": f"{case}: intervals' share of the default run (cpu)",
                        "value": round(share, 3), "goal": f"< {INTERVAL_SHARE_TARGET:.0%}",
                        "met": share < INTERVAL_SHARE_TARGET})
    if startup_figures:
        above = (startup_figures["hopscore --version"]["wall_s_median"]
                 - startup_figures["python -c pass"]["wall_s_median"])
        out.append({"what": "hopscore --version above python -c pass (wall)",
                    "value": round(above, 3),
                    "goal": f"<= {VERSION_ABOVE_PYTHON_S * 1000:.0f} ms",
                    "met": above <= VERSION_ABOVE_PYTHON_S})
    return out


if __name__ == "__main__":
    main()
