"""``hopscore score -o DIR`` over an existing directory (issue 22): the scores of another gold
are never replaced silently (125 examples became 5), and a run directory never becomes a score
directory. Refused with exit 2 and one line, the files left as they were; ``--restart``
replaces a score directory (never a run's)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.conftest import FIXTURES, run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import run_args

GOLD = FIXTURES / "hotpotqa/dev_small.json"


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    return lines[0]


def test_the_scores_of_another_gold_are_not_replaced(tmp_path: Path) -> None:
    records = json.loads(GOLD.read_text(encoding="utf-8"))
    assert len(records) > 3
    small = tmp_path / "small.json"
    small.write_text(json.dumps(records[:2]), encoding="utf-8")
    predictions = tmp_path / "p.json"
    predictions.write_text(json.dumps({"answer": {r["_id"]: "yes" for r in records},
                                       "sp": {}}), encoding="utf-8")
    out = tmp_path / "scored"
    first = run_cli("score", "hotpotqa", "-g", GOLD, "-p", predictions, "-o", out)
    assert first.returncode == 0, first.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_gold"] == len(records)
    assert metrics["scored_from"]["gold"] == str(GOLD)
    assert metrics["scored_from"]["gold_sha256"] == hashlib.sha256(GOLD.read_bytes()).hexdigest()
    before = _files(out)
    refused = run_cli("score", "hotpotqa", "-g", small, "-p", predictions, "-o", out)
    assert refused.returncode == 2, refused.stderr
    line = _error(refused.stderr)
    assert f"holds the scores of {len(records)} examples made from another gold file" in line
    assert str(GOLD) in line and str(small) in line and "--restart" in line
    assert _files(out) == before
    # the same gold again (other predictions; a copy of the gold elsewhere): rewritten
    copy = tmp_path / "copy.json"
    copy.write_bytes(GOLD.read_bytes())
    predictions.write_text(json.dumps({"answer": {r["_id"]: "no" for r in records}, "sp": {}}))
    again = run_cli("score", "hotpotqa", "-g", copy, "-p", predictions, "-o", out)
    assert again.returncode == 0, again.stderr
    assert (out / "scores.jsonl").read_bytes() != before["scores.jsonl"]
    # another benchmark's scores
    other = run_cli("score", "bamboogle", "-g", FIXTURES / "bamboogle/gold_small.csv",
                    "-p", predictions, "-o", out)
    assert other.returncode == 2 and "of another benchmark (hotpotqa, not bamboogle)" in \
        _error(other.stderr)
    # --restart replaces them
    restarted = run_cli("score", "hotpotqa", "-g", small, "-p", predictions, "-o", out,
                        "--restart")
    assert restarted.returncode == 0, restarted.stderr
    assert json.loads((out / "metrics.json").read_text())["n_gold"] == 2
    # a score directory whose gold is not known (an older hopscore): refused, --restart helps
    data = json.loads((out / "metrics.json").read_text())
    del data["scored_from"]
    (out / "metrics.json").write_text(json.dumps(data))
    unknown = run_cli("score", "hotpotqa", "-g", small, "-p", predictions, "-o", out)
    assert unknown.returncode == 2 and "a gold it does not name" in _error(unknown.stderr)


def test_a_run_directory_never_becomes_a_score_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with FakeOpenAI(lambda prompt, attempt: Reply("Reasoning.\nAnswer: yes")) as server:
        made = run_cli(*run_args("hotpotqa", server.base_url, run, tmp_path / "cache",
                                 "--no-cache"))
    assert made.returncode == 0, made.stderr
    gold = json.loads((run / "config.json").read_text())["gold"]["path"]
    predictions = next(p for p in run.iterdir() if p.name.startswith("predictions"))
    before = _files(run)
    for extra in ([], ["--restart"]):
        refused = run_cli("score", "hotpotqa", "-g", gold, "-p", predictions, "-o", run, *extra)
        assert refused.returncode == 2, refused.stderr
        assert f"{run} is a run directory (config.json)" in _error(refused.stderr)
        assert _files(run) == before
