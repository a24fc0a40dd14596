"""The least a Python scorer of one million HotpotQA examples does, for scale against
``bench/million.py``.

Usage (from the repository root, after ``bench/million.py`` wrote its inputs)::

    python bench/million_floor.py [--work /tmp/hopscore-bench] [--size 1000000]

It decodes both files whole with msgspec (the fastest decoder here), scores each example with
hopscore's own answer and supporting-fact functions, keeps the 12 values in a flat array and
writes a short line per example (id, values, gold answer). No checks (types, duplicate ids,
unmatched predictions), no groups, no intervals, no bound on memory: what is left of
``hopscore score`` once everything but the scoring itself is taken away. It prints the CPU
time of each part and the peak RSS; the scores are not compared here (``bench/million.py``
compares hopscore's with the official script's).
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
import time
from array import array
from pathlib import Path
from struct import Struct

import msgspec

from harness import SRC

sys.path.insert(0, str(SRC))

from hopscore.benchmarks.hotpotqa.official_scores import (
    ZERO4,
    answer_scores,
    joint_scores,
    supporting_fact_scores,
)


class Record(msgspec.Struct, rename={"id": "_id"}):
    id: str
    answer: str
    supporting_facts: list[tuple[str, int]] = []


class Official(msgspec.Struct):
    answer: dict[str, str]
    sp: dict[str, list[tuple[str, int]]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path,
                        default=Path(tempfile.gettempdir()) / "hopscore-bench")
    parser.add_argument("--size", type=int, default=1_000_000)
    args = parser.parse_args()
    gold_path = args.work / f"hotpot_lean_gold_{args.size}.json"
    predictions_path = args.work / f"hotpot_lean_predictions_{args.size}.json"
    if not gold_path.exists() or not predictions_path.exists():
        sys.exit(f"{gold_path} or {predictions_path} is missing: run bench/million.py first")
    gc.disable()
    started = time.process_time()
    gold = msgspec.json.decode(gold_path.read_bytes(), type=list[Record])
    gold_done = time.process_time()
    official = msgspec.json.decode(predictions_path.read_bytes(), type=Official)
    predictions_done = time.process_time()
    answers, facts = official.answer, official.sp
    values = array("d")
    pack = Struct("12d").pack
    encode = msgspec.json.Encoder().encode
    lines: list[bytes] = []
    with open(args.work / "floor-scores.jsonl", "wb") as out:
        for record in gold:
            text, sp = answers.get(record.id), facts.get(record.id)
            answer = ZERO4 if text is None else answer_scores(text, record.answer)
            support = ZERO4 if sp is None else supporting_fact_scores(
                set(sp), set(record.supporting_facts))
            row = (*answer, *support, *joint_scores(answer, support))
            values.frombytes(pack(*row))
            lines.append(encode({"id": record.id, "metrics": row, "gold": [record.answer]}))
            if len(lines) >= 1024:
                lines.append(b"")
                out.write(b"\n".join(lines))
                lines = []
        lines.append(b"")
        out.write(b"\n".join(lines))
    done = time.process_time()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{len(gold):,} examples: gold decoded {gold_done - started:.2f} s, predictions "
          f"decoded {predictions_done - gold_done:.2f} s, scored, kept and written "
          f"{done - predictions_done:.2f} s; {done - started:.2f} s of CPU, peak RSS "
          f"{peak:,.0f} MiB")


if __name__ == "__main__":
    main()
