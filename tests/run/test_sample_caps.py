"""A run's sample rows are capped (hopscore.files.rowcap, as judge rows are): huge replies make rows
of at most MAX_ROW_BYTES, marked ``row_truncated``; the answer is read from the whole reply,
and a resume needs nothing that was cut (no model call, the same metrics)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.run.caps import MAX_CELL_CHARS, MAX_ROW_BYTES
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.chain_script import scripted_chains
from tests.run.helpers import MODEL, asked, gold_replies, load, rows, run_args
from tests.run.test_strategies import SEED, meta, plans, sample_gold

#: 1.2 million characters of thinking before the reply proper
PAD = "hmm " * 300_000 + "\n"


def padded(responder: Any) -> Any:
    def respond(body: dict[str, Any], attempt: int) -> Reply:
        reply = responder(body, attempt)
        return Reply(PAD + (reply.content or ""))

    return respond


def line_sizes(path: Path) -> list[int]:
    return [len(line) for line in path.read_bytes().splitlines()]


@pytest.mark.slow
def test_sc_rows_with_huge_replies_are_capped_and_resume_without_them(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "strategyqa", "--gold", sample_gold("strategyqa"), "--model", MODEL, "-o",
            out, "--cache-dir", tmp_path / "cache", "--no-progress", "--resamples", "0",
            "--seed", str(SEED), "--strategy", "sc", "--chains", "3", "--limit", "3"]
    with FakeOpenAI(body_responder=padded(scripted_chains(plans, meta))) as server:
        first = run_cli(*args, "--base-url", server.base_url)
        assert first.returncode == 0, first.stderr
        sent = len(server.log)
        metrics = load(out / "metrics.json")
        (out / "metrics.json").unlink()
        (out / "scores.jsonl").unlink()
        again = run_cli(*args, "--base-url", server.base_url)
        assert again.returncode == 0, again.stderr
        assert len(server.log) == sent  # every row finished: nothing asked again
    sizes = line_sizes(out / "samples.jsonl")
    assert len(sizes) == 3 and max(sizes) <= MAX_ROW_BYTES, sizes
    # before: every chain's text and each call's reply whole, 10+ MB a row
    for row in rows(out / "samples.jsonl"):
        assert row["row_truncated"] is True
        assert "raw_output" in row["truncated_fields"]
        head, _, rest = row["raw_output"].rpartition(" … [")
        assert len(head) == MAX_CELL_CHARS and rest.endswith(" chars]")
        assert int(rest[:-len(" chars]")].replace(",", "")) > len(PAD)
        assert row["error"] is None and row["truncated"] is False
    again_metrics = load(out / "metrics.json")
    for block in ("metrics", "groups", "methods"):
        assert json.dumps(again_metrics[block], sort_keys=True) == json.dumps(
            metrics[block], sort_keys=True)
    # the answers are read from the whole replies: as without the padding
    plain = tmp_path / "plain"
    with FakeOpenAI(body_responder=scripted_chains(plans, meta)) as server:
        result = run_cli(*[plain if a == out else a for a in args], "--base-url",
                         server.base_url)
        assert result.returncode == 0, result.stderr
    assert [r["answer"] for r in rows(plain / "samples.jsonl")] == [
        r["answer"] for r in rows(out / "samples.jsonl")]
    assert load(plain / "metrics.json")["metrics"] == metrics["metrics"]


@pytest.mark.slow
def test_a_plain_run_row_keeps_the_head_of_a_huge_reply_and_its_answer(tmp_path: Path) -> None:
    replies = gold_replies("bamboogle")

    def respond(prompt: str, attempt: int) -> Reply:
        return Reply(PAD + f"Answer: {replies[asked(prompt)]}")

    with FakeOpenAI(respond) as server:
        result = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "run",
                                   tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    sizes = line_sizes(tmp_path / "run" / "samples.jsonl")
    assert max(sizes) <= MAX_ROW_BYTES, max(sizes)  # before: 2.4 MB and more a row
    answered = 0
    for row in rows(tmp_path / "run" / "samples.jsonl"):
        assert row["row_truncated"] is True and "raw_output" in row["truncated_fields"]
        reply = PAD + f"Answer: {replies[row['question'].strip()]}"
        if not row["answer"].startswith("hmm"):  # an empty gold answer: nothing extracted
            assert row["truncated_fields"] == ["raw_output"]
            assert row["raw_output"] == f"{reply[:MAX_CELL_CHARS]} … [{len(reply):,} chars]"
            assert row["scores"]["em"] == 1.0  # read from the end of the whole reply
            answered += 1
    assert answered >= 5
