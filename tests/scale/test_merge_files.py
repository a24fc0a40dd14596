"""hopscore judge and hopscore sql-match split into 4 shards and merged equal the unsharded
file, byte for byte; merge refuses shards of other settings or inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SRC, run_cli
from tests.judge.test_judge_cli import honest, judge_args, make_rows, write_rows
from tests.openai_server import FakeOpenAI, Reply
from tests.scale.helpers import jsonl, load, strip
from tests.sql.dbs import build_shop

FENCE = "```sql\n{}\n```"


def refusing(prompt: str, attempt: int) -> Reply:
    return Reply(status=400) if "Q077" in prompt else honest(prompt, attempt)


def without_timing(path: Path) -> list[Any]:
    return strip(jsonl(path))


def test_judge_shards_merge_into_the_unsharded_file(tmp_path: Path) -> None:
    rows = make_rows(30)
    rows.append(dict(rows[3]))  # a duplicate row is a row of its own
    rows.append({"question": "Q099: empty?", "response": "", "correct_answer": "x"})
    rows.append({"question": "Q077: refused?", "response": "y", "correct_answer": "x"})
    source = write_rows(tmp_path / "in.jsonl", rows)
    env = {"JUDGE_API_KEY": "sk-test"}
    outs = [tmp_path / f"judged.{i}.jsonl" for i in range(4)]
    with FakeOpenAI(refusing) as server:
        whole = run_cli(*judge_args(server, source, tmp_path / "whole.jsonl", "--no-cache"),
                        env=env)
        assert whole.returncode == 1, whole.stderr  # Q077 fails: its error row is kept
        for index, out in enumerate(outs):
            shard = run_cli(*judge_args(server, source, out, "--no-cache", "--shard",
                                        f"{index}/4"), env=env)
            assert shard.returncode in (0, 1), shard.stderr
            record = load(out.with_name(out.name + ".shard.json"))
            assert record["shard"]["spec"] == f"{index}/4" and record["input"]["rows"] == 33
    sizes = [len(jsonl(out)) for out in outs]
    assert sum(sizes) == len(rows) and all(sizes)
    merged = tmp_path / "merged.jsonl"
    result = run_cli("merge", *outs, "-o", merged)
    assert result.returncode == whole.returncode, result.stderr
    assert without_timing(merged) == without_timing(tmp_path / "whole.jsonl")
    assert "accuracy (all rows)" in result.stdout
    record = load(merged.with_name("merged.jsonl.merge.json"))
    assert [m["shard"] for m in record["merged_from"]] == ["0/4", "1/4", "2/4", "3/4"]
    # refusals: a missing shard, an input that changed, shards of another judge
    missing = run_cli("merge", *outs[:3], "-o", tmp_path / "m.jsonl")
    assert missing.returncode == 2 and "shard 3/4" in missing.stderr and "line " in missing.stderr
    with FakeOpenAI(refusing) as server:
        other = tmp_path / "other.3.jsonl"
        assert run_cli(*judge_args(server, source, other, "--no-cache", "--shard", "3/4",
                                   "--model", "judge-2"), env=env).returncode in (0, 1)
    refused = run_cli("merge", *outs[:3], other, "-o", tmp_path / "m.jsonl")
    assert refused.returncode == 2 and "different settings" in refused.stderr
    assert "model" in refused.stderr
    source.write_text(source.read_text() + json.dumps(rows[0]) + "\n")
    changed = run_cli("merge", *outs, "-o", tmp_path / "m.jsonl")
    assert changed.returncode == 2 and "not the input the shards read" in changed.stderr
    assert not (tmp_path / "m.jsonl").exists()


def sql_rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        gold = f"SELECT name FROM people WHERE id = {1 + i % 3}"
        agent = gold if i % 4 else f"SELECT name FROM people WHERE id = {2 + i % 3}"
        out.append({"instance_id": f"s{i}", "db": "shop", "gold_sql": gold,
                    "response": FENCE.format(agent)})
    out.append({"instance_id": "bad", "db": "shop", "gold_sql": "SELECT nope", "response": ""})
    return out


def test_sql_match_shards_merge_into_the_unsharded_file(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    lines = [json.dumps(r) for r in sql_rows(24)]
    lines.insert(5, "this is not JSON")  # an invalid line is a verdict row too
    lines.insert(9, "")  # a blank line is skipped, and counts for line numbers
    source.write_text("\n".join(lines) + "\n")
    common = ["--db-root", root, "--timeout", "10", "--workers", "1"]
    whole = run_cli("sql-match", "-i", source, "-o", tmp_path / "whole.jsonl", *common)
    assert whole.returncode == 0, whole.stderr
    outs = [tmp_path / f"v.{i}.jsonl" for i in range(4)]
    for index, out in enumerate(outs):
        shard = run_cli("sql-match", "-i", source, "-o", out, *common, "--shard", f"{index}/4")
        assert shard.returncode == 0, shard.stderr
    assert sum(len(jsonl(out)) for out in outs) == 26
    merged = tmp_path / "merged.jsonl"
    result = run_cli("merge", *outs, "-o", merged)
    assert result.returncode == 0, result.stderr
    assert without_timing(merged) == without_timing(tmp_path / "whole.jsonl")
    assert [r["key"] for r in jsonl(merged)] == [r["key"] for r in jsonl(tmp_path / "whole.jsonl")]
    accuracy = next(line for line in whole.stdout.splitlines() if line.startswith("accuracy"))
    assert accuracy in result.stdout
    # the merged file resumes as an unsharded run's: nothing is graded again
    again = run_cli("sql-match", "-i", source, "-o", merged, *common)
    assert again.returncode == 0 and "resumed: 26 rows" in again.stderr
    strict = tmp_path / "strict.2.jsonl"
    assert run_cli("sql-match", "-i", source, "-o", strict, *common, "--strict", "--shard",
                   "2/4").returncode == 0
    refused = run_cli("merge", outs[0], outs[1], strict, outs[3], "-o", tmp_path / "m.jsonl")
    assert refused.returncode == 2 and "compare" in refused.stderr
    mixed = run_cli("merge", outs[0], tmp_path / "whole.jsonl", "-o", tmp_path / "m.jsonl")
    assert mixed.returncode == 2 and "not the output of a judge or sql-match run" in mixed.stderr


def test_merge_names_a_line_nested_too_deeply(tmp_path: Path) -> None:
    """A 100,000-deep line in a shard's results file (or its shard record) is a located error,
    exit 2, never a RecursionError (exit 3)."""
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in sql_rows(6)))
    common = ["--db-root", root, "--timeout", "10", "--workers", "1"]
    outs = [tmp_path / f"v.{i}.jsonl" for i in range(2)]
    for index, out in enumerate(outs):
        shard = run_cli("sql-match", "-i", source, "-o", out, *common, "--shard", f"{index}/2")
        assert shard.returncode == 0, shard.stderr
    deep = "[" * 100_000 + "]" * 100_000
    lines = len(outs[1].read_text().splitlines())
    with outs[1].open("a") as handle:
        handle.write(deep + "\n")
    result = run_cli("merge", *outs, "-o", tmp_path / "m.jsonl")
    assert result.returncode == 2, result.stderr
    assert f"{outs[1]}:{lines + 1}:" in result.stderr, result.stderr
    assert "nested too deeply" in result.stderr and "Traceback" not in result.stderr
    sidecar = outs[0].with_name(outs[0].name + ".shard.json")
    sidecar.write_text(deep)
    record = run_cli("merge", *outs, "-o", tmp_path / "m.jsonl")
    assert record.returncode == 2, record.stderr
    assert str(sidecar) in record.stderr and "nested too deeply" in record.stderr
    assert not (tmp_path / "m.jsonl").exists()


def test_a_rerun_onto_a_file_with_a_line_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    """Resuming sql-match onto an output holding a 100,000-deep line: exit 2 naming the line
    (the rerun check and the results log read it), never a RecursionError."""
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in sql_rows(3)))
    out = tmp_path / "v.jsonl"
    common = ["-i", source, "-o", out, "--db-root", root, "--timeout", "10", "--workers", "1"]
    assert run_cli("sql-match", *common).returncode == 0
    with out.open("a") as handle:
        handle.write("[" * 100_000 + "]" * 100_000 + "\n")
    again = run_cli("sql-match", *common)
    assert again.returncode == 2, again.stderr
    assert f"{out}:5:" in again.stderr and "unreadable line" in again.stderr


@pytest.mark.slow  # 300 shards: about 9 s
def test_merge_holds_no_descriptor_per_shard(tmp_path: Path) -> None:
    """300 sql-match shards merged by a process that may open 256 files (1,100 shards under
    1,024 failed with 'Too many open files', naming hopscore's own source file): the merge
    holds one shard's lock at a time, and its file equals the unsharded run's."""
    import resource

    from hopscore.files.shard import Shard
    from hopscore.sql.match_job import MatchOptions, run_sql_match
    from hopscore.sql.sandbox import SqlExecutor

    count = 300
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in sql_rows(40)))
    outs = [tmp_path / "shards" / f"v.{i}.jsonl" for i in range(count)]
    with SqlExecutor(1) as executor:  # the library sql-match runs on: one sandbox for all
        run_sql_match(source, tmp_path / "whole.jsonl", MatchOptions(db_root=root),
                      executor=executor)
        for index, out in enumerate(outs):
            run_sql_match(source, out, MatchOptions(db_root=root), executor=executor,
                          shard=Shard(index, count))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    merged = tmp_path / "merged.jsonl"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-m", "hopscore", "merge", *map(str, outs), "-o",
                           str(merged)], env=env, capture_output=True, text=True,
                          preexec_fn=limit, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"merged {count} shards" in done.stderr
    assert without_timing(merged) == without_timing(tmp_path / "whole.jsonl")
