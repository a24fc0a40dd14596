"""hopscore suite mcr split into 2 shards and merged equals the unsharded suite."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import MODEL, asked
from tests.run.test_suite import data_dir, mcr_answers
from tests.scale.helpers import load, same_bytes, same_json, same_rows, strip


def test_suite_shards_merge_into_the_unsharded_suite(tmp_path: Path) -> None:
    data = data_dir(tmp_path / "data")
    answers = mcr_answers(data, tmp_path / "scratch")
    outs = [tmp_path / "s0", tmp_path / "s1"]
    with FakeOpenAI(lambda p, a: Reply(answers[asked(p)])) as server:
        base = ["suite", "mcr", "--data-dir", data, "--model", MODEL, "--base-url",
                server.base_url, "--no-cache", "--no-progress", "--limit", "6",
                "--datasets", "fermi,quartz,bamboogle"]
        whole = run_cli(*base, "-o", tmp_path / "whole")
        assert whole.returncode == 0, whole.stderr
        for index, out in enumerate(outs):
            assert run_cli(*base, "-o", out, "--shard", f"{index}/2").returncode == 0
    assert load(outs[1] / "suite.json")["shard"]["spec"] == "1/2"
    merged = run_cli("merge", *outs, "-o", tmp_path / "merged")
    assert merged.returncode == 0, merged.stderr
    assert "MCR protocol" in merged.stdout
    whole_suite, merged_suite = load(tmp_path / "whole" / "suite.json"), \
        load(tmp_path / "merged" / "suite.json")
    assert strip(merged_suite["datasets"]) == strip(whole_suite["datasets"])
    for name in ("fermi", "quartz", "bamboogle"):
        a, b = tmp_path / "whole" / name, tmp_path / "merged" / name
        same_rows(a / "samples.jsonl", b / "samples.jsonl")
        same_bytes(a / "scores.jsonl", b / "scores.jsonl")
        same_json(a / "metrics.json", b / "metrics.json")
    same_bytes(tmp_path / "whole" / "fermi_realfp.json", tmp_path / "merged" / "fermi_realfp.json")
