"""A model run split into 4 shards and merged equals the unsharded run (hopscore run against a
scripted server on 127.0.0.1), and merge refuses what is not one run's shards."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.files.output_locks import lock_output
from hopscore.files.output_specs import Output
from hopscore.files.shard import Shard
from tests.conftest import SRC, run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import asked, run_args
from tests.run.test_run_cli import hotpot_reply
from tests.scale.helpers import jsonl, load, same_bytes, same_json, same_rows, strip

NAME = "hotpotqa"


def reply(prompt: str, attempt: int) -> Reply:
    question = asked(prompt)
    if question.startswith("W"):  # some answers only the flexible extraction reads
        return Reply(hotpot_reply(question).replace("\nAnswer: ", "\nthe answer is "))
    return Reply(hotpot_reply(question))


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def run_shards(args: list[object], outs: list[Path], count: int) -> None:
    """All shards at once, as a scheduler starts them."""
    procs = []
    for index, out in enumerate(outs):
        full = [str(a) for a in args]
        full[full.index("-o") + 1] = str(out)
        procs.append(subprocess.Popen([sys.executable, "-m", "hopscore", *full, "--shard",
                                       f"{index}/{count}"], env=cli_env(),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(reply) as running:
        yield running


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, server: FakeOpenAI
         ) -> tuple[Path, list[Path], Path]:
    root = tmp_path_factory.mktemp("sharded")
    whole, merged = root / "whole", root / "merged"
    outs = [root / f"shard{i}" for i in range(4)]
    args = run_args(NAME, server.base_url, whole, root / "cache", "--no-cache")
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    run_shards(args, outs, 4)
    done = run_cli("merge", *outs, "-o", merged)
    assert done.returncode == 0, done.stderr
    assert "merged 4 shards" in done.stderr
    return whole, outs, merged


def test_four_shards_merge_into_the_unsharded_run(runs: tuple[Path, list[Path], Path]) -> None:
    whole, outs, merged = runs
    ids = [row["id"] for row in jsonl(whole / "samples.jsonl")]
    per_shard = [[row["id"] for row in jsonl(out / "samples.jsonl")] for out in outs]
    assert sorted(i for shard in per_shard for i in shard) == sorted(ids)  # a partition
    assert all(per_shard)  # every shard had work
    for index, shard_ids in enumerate(per_shard):
        assert all(Shard(index, 4).owns(i) for i in shard_ids)
        assert shard_ids == [i for i in ids if i in shard_ids]  # gold order within a shard
    bench = benchmarks.get(NAME)
    same_rows(whole / "samples.jsonl", merged / "samples.jsonl")
    same_bytes(whole / bench.predictions_file, merged / bench.predictions_file)
    same_bytes(whole / "scores.jsonl", merged / "scores.jsonl")
    same_json(whole / "metrics.json", merged / "metrics.json")
    config, reference = load(merged / "config.json"), load(whole / "config.json")
    assert strip(config) == strip(reference)
    assert [m["shard"] for m in config["merged_from"]] == ["0/4", "1/4", "2/4", "3/4"]
    assert config["fingerprint"] == load(outs[0] / "config.json")["fingerprint"]
    shard_config = load(outs[1] / "config.json")
    assert shard_config["shard"]["spec"] == "1/4"
    assert shard_config["shard"]["examples"] == len(jsonl(outs[1] / "samples.jsonl"))


def test_merge_again_is_idempotent(runs: tuple[Path, list[Path], Path]) -> None:
    _, outs, merged = runs
    before = {p.name: p.read_bytes() for p in merged.iterdir() if p.name != "config.json"}
    again = run_cli("merge", *reversed(outs), "-o", merged)
    assert again.returncode == 0, again.stderr
    after = {p.name: p.read_bytes() for p in merged.iterdir() if p.name != "config.json"}
    assert after == before


def test_merge_lists_missing_rows_per_shard(runs: tuple[Path, list[Path], Path],
                                            tmp_path: Path) -> None:
    _, outs, _ = runs
    result = run_cli("merge", outs[0], outs[1], outs[3], "-o", tmp_path / "m")
    assert result.returncode == 2
    assert "examples are missing, nothing was written" in result.stderr
    assert "shard 2/4 (no output given)" in result.stderr and "--shard 2/4" in result.stderr
    assert not (tmp_path / "m").exists()
    # a shard cut short: its missing examples are named, with the shard to re-run
    cut = tmp_path / "cut"
    cut.mkdir()
    for item in outs[2].iterdir():
        (cut / item.name).write_bytes(item.read_bytes())
    lines = (cut / "samples.jsonl").read_text().splitlines(keepends=True)
    (cut / "samples.jsonl").write_text("".join(lines[:-1]) + lines[-1][:20])  # torn
    gone = jsonl(outs[2] / "samples.jsonl")[-1]["id"]
    result = run_cli("merge", outs[0], outs[1], cut, outs[3], "-o", tmp_path / "m")
    assert result.returncode == 2
    assert f"shard 2/4 ({cut}): 1 examples missing ({gone})" in result.stderr
    assert "torn line" in result.stderr


def test_merge_refuses_what_is_not_one_runs_shards(runs: tuple[Path, list[Path], Path],
                                                   server: FakeOpenAI, tmp_path: Path) -> None:
    whole, outs, _ = runs
    same = run_cli("merge", outs[0], outs[0], outs[1], outs[2], outs[3], "-o", tmp_path / "m")
    assert same.returncode == 2 and "the same shard 0/4" in same.stderr
    assert "overlap" in same.stderr
    with lock_output(Output(outs[2], "", True)):  # a shard still being written
        busy = run_cli("merge", *outs, "-o", tmp_path / "m")
    assert busy.returncode == 2 and "a shard is still running" in busy.stderr
    assert f"pid {os.getpid()}" in busy.stderr
    into = run_cli("merge", *outs, "-o", outs[0])
    assert into.returncode == 2 and "overlaps the shard output" in into.stderr
    # another split of the same run
    args = run_args(NAME, server.base_url, tmp_path / "half", tmp_path / "cache",
                    "--no-cache", "--shard", "0/2")
    assert run_cli(*args).returncode == 0
    other = run_args(NAME, server.base_url, tmp_path / "hot", tmp_path / "cache",
                     "--no-cache", "--shard", "1/4", "--temperature", "0.5")
    assert run_cli(*other).returncode == 0
    split = run_cli("merge", outs[0], tmp_path / "half", "-o", tmp_path / "m")
    assert split.returncode == 2 and "shards of different splits" in split.stderr
    settings = run_cli("merge", outs[0], tmp_path / "hot", outs[2], outs[3], "-o", tmp_path / "m")
    assert settings.returncode == 2
    assert "different settings" in settings.stderr and "temperature" in settings.stderr
    # a row moved into a shard it does not belong to
    moved = tmp_path / "moved"
    moved.mkdir()
    for item in outs[1].iterdir():
        (moved / item.name).write_bytes(item.read_bytes())
    with (moved / "samples.jsonl").open("a") as handle:
        handle.write((outs[0] / "samples.jsonl").read_text().splitlines()[0] + "\n")
    both = run_cli("merge", outs[0], moved, outs[2], outs[3], "-o", tmp_path / "m")
    assert both.returncode == 2 and "both hold the row" in both.stderr
    assert "the shards overlap" in both.stderr
    wrong = run_cli("merge", moved, outs[2], outs[3], "-o", tmp_path / "m")
    assert wrong.returncode == 2 and "belongs to shard 0/4" in wrong.stderr
    assert not (tmp_path / "m").exists()
    # an unsharded run is no place to merge into unless it is this run
    assert run_cli("merge", *outs, "-o", whole).returncode == 0
    assert run_cli("merge", *outs, "-o", tmp_path / "hot").returncode == 2
