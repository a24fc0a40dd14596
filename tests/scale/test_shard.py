"""--shard I/N and --shard auto: parsing, the scheduler variables, a stable split."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hopscore.errors import HopscoreError
from hopscore.files.shard import Shard, fingerprint, occurrence_keys, parse_shard, shard_of


def test_parse_i_of_n() -> None:
    assert parse_shard("2/4") == Shard(2, 4)
    assert parse_shard(None) is None
    assert str(parse_shard("3/8")) == "3/8"
    for bad, message in [("4/4", "0 to 3"), ("1/0", "1 to"), ("x", "expected I/N"),
                         ("-1/4", "expected I/N"), ("1/2/3", "expected I/N"),
                         # strict: no spaces anywhere, ASCII digits only, no sign
                         ("0 /2", "expected I/N"), (" 0/2", "expected I/N"),
                         ("0/2 ", "expected I/N"), ("0/ 2", "expected I/N"),
                         (" 0 / 1 ", "expected I/N"), ("0/2\n", "expected I/N"),
                         ("+0/2", "expected I/N"), ("\u0661/\u0664", "expected I/N"),
                         (" auto", "expected I/N"), ("", "expected I/N")]:
        with pytest.raises(HopscoreError, match=message):
            parse_shard(bad)
    with pytest.raises(HopscoreError, match="disagrees"):
        parse_shard("1/4", 3)
    with pytest.raises(HopscoreError, match="--shards is the count"):
        parse_shard(None, 4)


def test_auto_reads_slurm_arrays() -> None:
    env = {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}
    assert parse_shard("auto", env=env) == Shard(3, 4, "slurm")
    # --array=1-4: ids count from the array's first id
    env = {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1"}
    assert parse_shard("auto", env=env) == Shard(0, 4, "slurm")
    # --array=0-6:2 (ids 0, 2, 4, 6)
    env = {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "4",
           "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2"}
    assert parse_shard("auto", env=env) == Shard(2, 4, "slurm")
    assert parse_shard("auto", 4, env=env) == Shard(2, 4, "slurm")
    with pytest.raises(HopscoreError, match="disagrees with SLURM_ARRAY_TASK_COUNT"):
        parse_shard("auto", 8, env=env)
    with pytest.raises(HopscoreError, match="SLURM_ARRAY_TASK_COUNT is not"):
        parse_shard("auto", env={"SLURM_ARRAY_TASK_ID": "0"})
    with pytest.raises(HopscoreError, match="not a whole number"):
        parse_shard("auto", env={"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"})


def test_auto_reads_kubernetes_indexed_jobs() -> None:
    assert parse_shard("auto", 5, env={"JOB_COMPLETION_INDEX": "4"}) == Shard(4, 5, "kubernetes")
    with pytest.raises(HopscoreError, match="needs --shards N"):
        parse_shard("auto", env={"JOB_COMPLETION_INDEX": "0"})
    with pytest.raises(HopscoreError, match="0 to 4"):
        parse_shard("auto", 5, env={"JOB_COMPLETION_INDEX": "5"})
    with pytest.raises(HopscoreError, match="neither SLURM_ARRAY_TASK_ID"):
        parse_shard("auto", 5, env={})


def test_split_is_a_partition_and_stable_across_processes() -> None:
    keys = [f"example-{i}" for i in range(2000)] + ["é", "\ud800 lone"]
    shards = [Shard(i, 4) for i in range(4)]
    owners = [[s.owns(k) for s in shards].count(True) for k in keys]
    assert owners == [1] * len(keys)
    sizes = [sum(s.owns(k) for k in keys) for s in shards]
    assert min(sizes) > 400  # roughly even
    here = [shard_of(k, 7) for k in keys[:50]]
    code = ("import json, sys; from hopscore.files.shard import shard_of; "
            "print(json.dumps([shard_of(f'example-{i}', 7) for i in range(50)]))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": "123", "PYTHONPATH": "src"})
    assert json.loads(other.stdout) == here


def test_duplicates_are_rows_of_their_own() -> None:
    assert occurrence_keys(["a", "b", "a", "a"]) == ["a", "b", "a\x001", "a\x002"]


def test_fingerprint_ignores_execution_settings() -> None:
    a = {"model": "m", "concurrency": 8, "shard": {"index": 0}}
    b = {"model": "m", "concurrency": 64, "shard": {"index": 3}}
    assert fingerprint(a, ("concurrency", "shard")) == fingerprint(b, ("concurrency", "shard"))
    assert fingerprint(a, ("concurrency", "shard")) != fingerprint({**a, "model": "n"},
                                                                   ("concurrency", "shard"))
