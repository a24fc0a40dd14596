"""Benchmark: HTML report generation for a 10,000-sample run (and its comparison).

Builds a synthetic HotpotQA gold file (10 paragraphs of context per question), two runs scored
with the real scorer, the second a run directory with samples.jsonl (prompt, raw output,
extraction), then times ``hopscore report BASE NEW --gold GOLD`` and reports the file size.
With chromium and playwright installed it also opens the report headless and times loading
(until the browser script is ready), a search and a filter change.

    python bench/report_bench.py [--n 10000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

WORDS = (
    "river", "city", "film", "album", "band", "actor", "director", "novel", "war", "king",
    "queen", "team", "league", "season", "born", "died", "founded", "located", "known", "played",
    "wrote", "directed", "released", "album", "song", "station", "county", "state", "island",
    "mountain", "company", "school", "university", "church", "museum", "bridge",
)


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_gold(path: Path, n: int, rng: random.Random) -> list[dict]:
    records = []
    for i in range(n):
        titles = [f"Title {i}-{k}" for k in range(10)]
        context = [[t, [sentence(rng, rng.randint(8, 20)) for _ in range(4)]] for t in titles]
        answer = "yes" if i % 5 == 0 else " ".join(rng.choice(WORDS) for _ in range(2))
        context[0][1][1] = f"The answer is {answer} here."
        records.append({
            "_id": f"id{i:06d}", "question": f"Question {i}: {sentence(rng, 12)}",
            "answer": answer, "supporting_facts": [[titles[0], 1], [titles[3], 0]],
            "context": context, "type": "comparison" if i % 5 == 0 else "bridge",
            "level": ("easy", "medium", "hard")[i % 3],
        })
    path.write_text(json.dumps(records), encoding="utf-8")
    return records


def predictions(path: Path, records: list[dict], accuracy: float, rng: random.Random) -> None:
    answers, sps = {}, {}
    for record in records:
        right = rng.random() < accuracy
        answers[record["_id"]] = record["answer"] if right else rng.choice(WORDS)
        sps[record["_id"]] = record["supporting_facts"][: 1 + (rng.random() < accuracy)]
    path.write_text(json.dumps({"answer": answers, "sp": sps}), encoding="utf-8")


def add_samples(directory: Path, records: list[dict]) -> None:
    scores = [json.loads(x) for x in (directory / "scores.jsonl").read_text().splitlines()]
    with (directory / "samples.jsonl").open("w", encoding="utf-8") as handle:
        for score, record in zip(scores, records, strict=True):
            context = "\n".join(f"{t}: {' '.join(s)}" for t, s in record["context"])
            handle.write(json.dumps({
                "id": score["id"],
                "prompt": [{"role": "user", "content": f"{context}\n\nQ: {record['question']}"}],
                "raw_output": f"Step 1 ... Step 2 ...\nSo the answer is: {score['prediction']}",
                "extracted": {"strict": score["prediction"], "flexible": score["prediction"]},
                "usage": {"prompt_tokens": 900, "completion_tokens": 60}, "latency": 0.8,
                "attempts": 1, "error": None,
            }) + "\n")
    (directory / "config.json").write_text(json.dumps({"model": "synthetic"}), encoding="utf-8")


def browser_timings(html: Path) -> dict[str, float] | None:
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        return None
    if chromium is None:
        return None
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=chromium,
                                                       headless=True, args=flags)
        page = context.new_page()
        started = time.perf_counter()
        page.goto(html.resolve().as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        page.fill("#filter-search", "id000123")
        expect(page.locator("#match-count")).to_have_text("1 of 10000 samples")
        search = time.perf_counter() - started - 0.12  # minus the input debounce
        page.fill("#filter-search", "")
        started = time.perf_counter()
        page.select_option("#filter-correct", "wrong")
        page.wait_for_selector("#sample-rows tr")
        filtering = time.perf_counter() - started
        context.close()
    return {"load_s": loaded, "search_s": search, "filter_s": filtering}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="hopscore-report-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)

    from hopscore import benchmarks
    from hopscore.scores.scoring import score_files

    gold = work / "gold.json"
    records = make_gold(gold, args.n, rng)
    for name, accuracy in (("base", 0.55), ("new", 0.6)):
        pred = work / f"{name}.json"
        predictions(pred, records, accuracy, rng)
        score_files(benchmarks.get("hotpotqa"), gold, pred, work / name)
    add_samples(work / "new", records)
    html = work / "report.html"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hopscore", "report", str(work / "base"),
                    str(work / "new"), "--gold", str(gold), "-o", str(html)],
                   check=True, env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    elapsed = time.perf_counter() - started
    print(f"samples: {args.n} x 2 runs (gold with 10 paragraphs each, run with samples.jsonl)")
    print(f"report generation (CLI wall time, 2000 resamples): {elapsed:.1f} s")
    print(f"report size: {html.stat().st_size / 1e6:.1f} MB ({html})")
    timings = browser_timings(html)
    if timings is None:
        print("browser timings: skipped (no chromium or playwright)")
    else:
        print("headless chromium: load until ready {load_s:.2f} s, search {search_s:.3f} s, "
              "filter {filter_s:.3f} s".format(**timings))


if __name__ == "__main__":
    main()
