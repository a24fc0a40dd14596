"""One side-by-side comparison: an official scorer and ``hopscore score`` on the same inputs.

Figures per input, each the median of repeated runs:

* **official, process**: the official script run as its README says (``python script.py
  PRED GOLD``) in its own interpreter, from interpreter start to exit;
* **hopscore, process**: ``python -m hopscore score ...`` end to end through the CLI (start-up,
  loading, scoring, writing ``metrics.json`` / ``scores.jsonl`` and printing the table), in two
  modes: ``--resamples 0`` (no confidence intervals: the same work as the official script) and
  the default (a 2,000-resample bootstrap interval on every metric, overall and per group);
* **official, in-process** and **hopscore, in-process**: the scoring work alone, timed inside
  one warm interpreter (imports done, a first run discarded, garbage collected between runs).
  The official script is executed with ``runpy`` from its checkout (nothing of it is copied
  here); hopscore's work is ``hopscore.scores.scoring.score_files`` with an output folder, so it
  includes writing both files.

The process runs take turns (official, hopscore in each mode, again), after one warm-up round,
so that a change of load on the shared machine falls on all of them; besides the ratio of the
medians, the median of the per-round ratios of CPU time is reported ("paired"). Wall time, CPU
time (user + system) and peak RSS come from ``os.wait4`` for each child.

Both sides must agree on the numbers: the official printout is parsed and compared with
hopscore's ``metrics.json`` to 1e-9, so the timing is of equal work.
"""

from __future__ import annotations

import ast
import json
import os
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import (
    Series,
    checked,
    hopscore_env,
    measure,
    measure_interleaved,
    run_child,
    speedup,
)

#: Runs an official script ``repeats + 1`` times in one interpreter; prints the times as JSON.
OFFICIAL_DRIVER = r"""
import contextlib, gc, io, json, runpy, sys, time
script, repeats, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
times = []
for i in range(repeats + 1):
    sys.argv = [script, *args]
    gc.collect()  # the previous run's module globals form a cycle with its functions
    start, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(script, run_name="__main__")
    if i:
        times.append([time.perf_counter() - start, time.process_time() - cpu])
print(json.dumps(times))
"""

#: The same for hopscore's library call.
HOPSCORE_DRIVER = r"""
import gc, json, sys, time
from pathlib import Path
from hopscore import benchmarks
from hopscore.scores.scoring import score_files
name, gold, predictions, out, repeats, resamples = sys.argv[1:7]
options = {} if resamples == "default" else {"resamples": int(resamples)}
bench = benchmarks.get(name)
times = []
for i in range(int(repeats) + 1):
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    score_files(bench, Path(gold), Path(predictions), Path(out), **options)
    if i:
        times.append([time.perf_counter() - start, time.process_time() - cpu])
print(json.dumps(times))
"""


@dataclass
class Case:
    name: str
    benchmark: str
    gold: Path
    predictions: Path
    official_script: Path
    #: the official script's arguments (its prediction file may differ in format from ours)
    official_args: list[str]
    #: the official printout -> {hopscore metric name: fraction}
    parse_official: Callable[[str], dict[str, float]]
    official_env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    notes: dict[str, Any] = field(default_factory=dict)


def parse_hotpot(stdout: str) -> dict[str, float]:
    """``hotpot_evaluate_v1.py`` prints ``missing ...`` lines, then one dict of fractions."""
    last = [line for line in stdout.splitlines() if line.startswith("{")][-1]
    return {k: float(v) for k, v in ast.literal_eval(last).items()}


def parse_hybridqa(stdout: str) -> dict[str, float]:
    """``evaluate_script.py`` prints an OrderedDict of percentages; keep the totals."""
    pairs = dict(re.findall(r"\('([^']+)', ([-0-9.eE+]+)\)", stdout))
    return {"em": float(pairs["total exact"]) / 100, "f1": float(pairs["total f1"]) / 100}


def json_backend(python: str, env: dict[str, str]) -> str:
    """Which ``ujson`` the official HotpotQA script will get in this interpreter."""
    probe = run_child(
        [python, "-c", "import ujson; print(getattr(ujson, '__version__', ''), ujson.__file__)"],
        env=env,
    )
    if probe.returncode != 0:
        return "missing"
    version, _, where = probe.stdout.strip().partition(" ")
    return f"ujson {version}" if version else f"stand-in ({where})"


def official_env_for_hotpot(python: str, shim: Path | None) -> tuple[dict[str, str], str]:
    """The real ujson when the interpreter has it, else the stdlib-json stand-in ``shim``."""
    env = dict(os.environ)
    backend = json_backend(python, env)
    if backend == "missing" and shim is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shim), env.get("PYTHONPATH")]))
        backend = json_backend(python, env)
    if backend == "missing":
        sys.exit(f"{python} has no ujson (pip install ujson, or pass --ujson-shim DIR)")
    return env, backend


def _in_process(
    cmd: list[str], env: dict[str, str], cwd: Path | None, what: str
) -> dict[str, Any]:
    """Wall and CPU seconds of each timed run, and their medians."""
    run = checked(run_child(cmd, cwd=cwd, env=env), what)
    times = json.loads(run.stdout.strip().splitlines()[-1])
    walls, cpus = [t[0] for t in times], [t[1] for t in times]
    return {
        "wall_s_median": statistics.median(walls),
        "cpu_s_median": statistics.median(cpus),
        "wall_s_all": walls,
        "cpu_s_all": cpus,
    }


#: hopscore configurations timed against the official scripts: the same work as theirs (no
#: confidence intervals), and the default (2,000-resample bootstrap interval on every metric)
MODES: dict[str, list[str]] = {
    "no intervals": ["--resamples", "0"],
    "default": [],
}


def run_case(
    case: Case,
    *,
    python: str,
    official_python: str,
    work: Path,
    repeats: int,
    in_process_repeats: int,
    extra_args: list[str],
    modes: dict[str, list[str]] | None = None,
    warm_up: bool = True,
) -> list[dict[str, Any]]:
    """Measure one case: the official script once, hopscore in each mode (one result each).

    Exits when hopscore and the official script disagree on the numbers.
    """
    script_dir = case.official_script.parent
    official_cmd = [official_python, case.official_script.name, *case.official_args]
    outs: dict[str, Path] = {}
    commands: list[tuple[str, list[str], Path | None, dict[str, str] | None]] = [
        ("official", official_cmd, script_dir, case.official_env)
    ]
    for mode, mode_args in (modes or MODES).items():
        slug = re.sub(r"[^a-z0-9]+", "-", f"{case.name} {mode}".lower()).strip("-")
        outs[mode] = out = work / f"out-{slug}"
        commands.append((mode, [
            python, "-m", "hopscore", "score", case.benchmark,
            "--gold", str(case.gold), "--predictions", str(case.predictions),
            "--output-dir", str(out), *mode_args, *extra_args,
        ], None, hopscore_env()))  # fmt: skip
    print(f"[{case.name}] official script and hopscore score, taking turns, x{repeats} ...",
          flush=True)  # fmt: skip
    timed = measure_interleaved(commands, repeats, warm_up=warm_up)
    official = timed["official"]
    official_in_process = None
    if in_process_repeats > 0:
        print(f"[{case.name}] official in-process x{in_process_repeats} ...", flush=True)
        official_in_process = _in_process(
            [official_python, "-c", OFFICIAL_DRIVER, case.official_script.name,
             str(in_process_repeats), *case.official_args],
            case.official_env, script_dir, "official in-process",
        )  # fmt: skip
    results = []
    for mode, mode_args in (modes or MODES).items():
        out = outs[mode]
        ours = timed[mode]
        official_metrics = case.parse_official(official.runs[-1].stdout)
        result: dict[str, Any] = {
            "case": case.name,
            "mode": mode,
            "benchmark": case.benchmark,
            "gold": str(case.gold),
            "predictions": str(case.predictions),
            "notes": case.notes,
            "metrics_agree": _agreement(official_metrics, out / "metrics.json"),
            "official_process": official.summary(),
            "hopscore_process": ours.summary(),
        }
        result["speedup_process_wall"] = speedup(
            official.summary()["wall_s_median"], ours.summary()["wall_s_median"]
        )
        result["speedup_process_cpu"] = speedup(
            official.summary()["cpu_s_median"], ours.summary()["cpu_s_median"]
        )
        # the runs took turns, so round i of both saw about the same machine load
        result["speedup_process_cpu_paired_median"] = statistics.median(
            speedup(a.cpu_s, b.cpu_s) for a, b in zip(official.runs, ours.runs, strict=True)
        )
        if official_in_process is not None:
            print(f"[{case.name}] hopscore in-process ({mode}) x{in_process_repeats} ...",
                  flush=True)  # fmt: skip
            resamples = mode_args[mode_args.index("--resamples") + 1] if mode_args else "default"
            # a folder of its own: the library call records no gold path, which the next
            # command's run into ``out`` would refuse (it holds another gold's scores)
            our_times = _in_process(
                [python, "-c", HOPSCORE_DRIVER, case.benchmark, str(case.gold),
                 str(case.predictions), str(out.with_name(f"{out.name}-in-process")),
                 str(in_process_repeats), resamples],
                hopscore_env(), None, "hopscore in-process",
            )  # fmt: skip
            result["official_in_process"] = official_in_process
            result["hopscore_in_process"] = our_times
            result["speedup_in_process_wall"] = speedup(
                official_in_process["wall_s_median"], our_times["wall_s_median"]
            )
            result["speedup_in_process_cpu"] = speedup(
                official_in_process["cpu_s_median"], our_times["cpu_s_median"]
            )
        results.append(result)
    return results


def _agreement(official: dict[str, float], metrics_json: Path) -> dict[str, Any]:
    ours = json.loads(metrics_json.read_text(encoding="utf-8"))["metrics"]
    worst = max(abs(official[name] - ours[name]) for name in official)
    if worst > 1e-9:
        sys.exit(f"hopscore and the official script disagree (max difference {worst}):\n"
                 f"official {official}\nhopscore {ours}")
    return {"metrics_compared": sorted(official), "max_abs_difference": worst}


def table_rows(results: list[dict[str, Any]]) -> list[list[Any]]:
    rows = []
    for r in results:
        off, ours = r["official_process"], r["hopscore_process"]
        row: list[Any] = [
            f"{r['case']}, {r['mode']}",
            off["wall_s_median"], ours["wall_s_median"], r["speedup_process_wall"],
            off["cpu_s_median"], ours["cpu_s_median"], r["speedup_process_cpu_paired_median"],
        ]  # fmt: skip
        if "official_in_process" in r:
            row += [
                r["official_in_process"]["cpu_s_median"],
                r["hopscore_in_process"]["cpu_s_median"],
                r["speedup_in_process_cpu"],
            ]
        else:
            row += ["-", "-", "-"]
        row += [off["max_rss_mib_max"], ours["max_rss_mib_max"]]
        rows.append(row)
    return rows


TABLE_HEADERS = [
    "input",
    "official wall s", "hopscore wall s", "x",
    "official cpu s", "hopscore cpu s", "x (paired)",
    "official in-proc cpu s", "hopscore in-proc cpu s", "x",
    "official RSS MiB", "hopscore RSS MiB",
]  # fmt: skip


def startup(python: str, repeats: int) -> dict[str, Any]:
    """Start-up: a bare interpreter, ``hopscore --version`` and ``hopscore --help``."""
    env = hopscore_env()
    series: list[Series] = [
        measure("python -c pass", [python, "-c", "pass"], repeats, env=env),
        measure("hopscore --version", [python, "-m", "hopscore", "--version"], repeats, env=env),
        measure("hopscore --help", [python, "-m", "hopscore", "--help"], repeats, env=env),
    ]
    return {s.name: s.summary() for s in series}
