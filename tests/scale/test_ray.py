"""--executor ray on an embedded local Ray with 2 CPUs (bound to 127.0.0.1): the same outputs as
the local executor for a model run, the judge, sql-match and the HDR agent; a worker killed by
pid mid-run loses and duplicates nothing; the per-endpoint limit holds across workers."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SRC, run_cli
from tests.hdr.world import ALL_TASKS, SCRIPTS, TASKS, build_world, scripted
from tests.judge.test_judge_cli import honest, judge_args, make_rows, write_rows
from tests.openai_server import FakeOpenAI
from tests.procs import alive, default_sigint, open_files
from tests.run.helpers import run_args
from tests.scale.helpers import jsonl, load, same_bytes, same_json, same_rows, strip
from tests.scale.test_merge_files import sql_rows
from tests.scale.test_merge_hdr import FILES, copies
from tests.scale.test_merge_run import reply
from tests.sql.dbs import build_shop

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

RAY = ("--executor", "ray", "--ray-workers", "2")
ENV = {"JUDGE_API_KEY": "sk-test", "RAY_ADDRESS": ""}


def test_ray_model_run_equals_local(tmp_path: Path) -> None:
    with FakeOpenAI(reply) as server:
        args = run_args("hotpotqa", server.base_url, tmp_path / "local", tmp_path / "cache",
                        "--no-cache", "--concurrency", "3")
        assert run_cli(*args, env=ENV).returncode == 0
        args[args.index("-o") + 1] = tmp_path / "ray"
        result = run_cli(*args, *RAY, env=ENV)
        assert result.returncode == 0, result.stderr
        assert server.max_in_flight <= 3
    local, ray = tmp_path / "local", tmp_path / "ray"
    same_rows(local / "samples.jsonl", ray / "samples.jsonl")
    for name in ("hotpot_predictions.json", "scores.jsonl"):
        if (local / name).exists():
            same_bytes(local / name, ray / name)
    same_json(local / "metrics.json", ray / "metrics.json")
    config = load(ray / "config.json")
    assert config["executor"]["executor"] == "ray" and config["executor"]["workers"] == 2
    assert config["executor"]["rows_lost"] == 0
    assert config["requests"]["sent"] == load(local / "config.json")["requests"]["sent"]
    reference = load(local / "config.json")
    for block in (config, reference):
        block.pop("executor", None)
        for name in ("executor", "ray_workers"):
            block["settings"].pop(name)
    assert strip(config) == strip(reference)


def test_ray_judge_equals_local_and_the_limit_is_global(tmp_path: Path) -> None:
    source = write_rows(tmp_path / "in.jsonl", make_rows(40))
    with FakeOpenAI(honest, latency=0.1) as server:
        local = run_cli(*judge_args(server, source, tmp_path / "local.jsonl", "--no-cache",
                                    "--concurrency", "4"), env=ENV)
        assert local.returncode == 0, local.stderr
        server.max_in_flight = 0
        ray = run_cli(*judge_args(server, source, tmp_path / "ray.jsonl", "--no-cache",
                                  "--concurrency", "4", "--summary-json", tmp_path / "s.json",
                                  *RAY), env=ENV)
        assert ray.returncode == 0, ray.stderr
        # the driver and 2 workers, each with an engine of concurrency 4: 4 in all
        assert server.max_in_flight == 4
    assert strip(jsonl(tmp_path / "ray.jsonl")) == strip(jsonl(tmp_path / "local.jsonl"))
    # a job shorter than Ray's start: the driver did (nearly) every row while Ray started
    counts = load(tmp_path / "s.json")["executor"]
    assert counts["executor"] == "ray" and counts["rows_lost"] == 0
    assert counts["rows_on_driver"] + counts["rows_on_workers"] == 40
    assert counts["rows_on_driver"] > counts["rows_on_workers"]
    assert "ray: " in ray.stderr and "rows on the driver" in ray.stderr


def test_ray_sql_match_equals_local(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in sql_rows(30)) + "not json\n")
    common = ["-i", source, "--db-root", root, "--timeout", "10"]
    local = run_cli("sql-match", *common, "-o", tmp_path / "local.jsonl", "--workers", "2")
    assert local.returncode == 0, local.stderr
    ray = run_cli("sql-match", *common, "-o", tmp_path / "ray.jsonl", *RAY, env=ENV)
    assert ray.returncode == 0, ray.stderr
    assert strip(jsonl(tmp_path / "ray.jsonl")) == strip(jsonl(tmp_path / "local.jsonl"))
    # the driver grades on both CPUs (--workers default: this machine's): a local Ray of 2
    # CPUs could only share them, so it is not started
    assert "ray: 32 rows on the driver, 0 on 0 workers; Ray was not used" in ray.stderr
    accuracy = next(line for line in local.stdout.splitlines() if line.startswith("accuracy"))
    assert accuracy in ray.stdout


def heavy_rows(work: Path, n: int) -> tuple[Path, Path]:
    """``n`` S2SQL rows whose queries are CPU-heavy (a 1,200 x 1,200 self-join, about 70 ms
    each) over one database, and its root."""
    root = work / "dbs"
    db = root / "heavy" / "heavy_template.sqlite"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(1200)])
    con.commit()
    con.close()
    rows = []
    for i in range(n):
        gold = f"SELECT count(*) FROM t a, t b WHERE (a.x * b.x + {i}) % 7 = {i % 7}"
        agent = gold if i % 5 else gold.replace("% 7 =", "% 5 =")
        rows.append(json.dumps({"instance_id": f"q{i}", "db": "heavy", "gold_sql": gold,
                                "response": f"```sql\n{agent}\n```"}))
    source = work / "heavy.jsonl"
    source.write_text("\n".join(rows) + "\n")
    return source, root


def test_ray_workers_grade_sql_match_rows_as_the_driver_does(tmp_path: Path) -> None:
    """The driver grades with one sandbox process and Ray has a CPU left for a worker: a job
    long enough for Ray's start to pay back has rows graded by the worker's own sandbox, and
    the output is the local executor's."""
    source, root = heavy_rows(tmp_path, 300)
    common = ["-i", source, "--db-root", root, "--timeout", "30"]
    local = run_cli("sql-match", *common, "-o", tmp_path / "local.jsonl", "--workers", "2")
    assert local.returncode == 0, local.stderr
    ray = run_cli("sql-match", *common, "-o", tmp_path / "ray.jsonl", "--workers", "1", *RAY,
                  env=ENV)
    assert ray.returncode == 0, ray.stderr
    assert strip(jsonl(tmp_path / "ray.jsonl")) == strip(jsonl(tmp_path / "local.jsonl"))
    line = " ".join(ray.stderr[ray.stderr.index("ray: "):].split())
    found = re.match(r"ray: (\d+) rows on the driver, (\d+) on (\d+) workers?", line)
    assert found is not None, line
    driver, workers, pool = map(int, found.groups())
    assert driver + workers == 300 and pool == 1, line
    assert driver > 0 and workers > 0, line


def test_ray_hdr_agent_equals_local(tmp_path: Path) -> None:
    extra = copies()
    world = build_world(tmp_path, [*TASKS, *extra])
    ALL_TASKS.extend(extra)
    try:
        with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
            base = ["run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root",
                    world.db_root, "--corpus", world.corpus, "--model", "openai/agent",
                    "--base-url", server.base_url, "--judge-model", "judge", "--judge-base-url",
                    server.base_url, "--no-cache", "--no-progress", "--concurrency", "3",
                    "--repeats", "2", "--resamples", "200"]
            local = run_cli(*base, "--output-dir", tmp_path / "local", env=ENV)
            assert local.returncode == 0, local.stderr
            ray = run_cli(*base, "--output-dir", tmp_path / "ray", *RAY, env=ENV)
            assert ray.returncode == 0, ray.stderr
    finally:
        del ALL_TASKS[-len(extra):]
    a, b = tmp_path / "local", tmp_path / "ray"
    for name in FILES:
        same_rows(a / name, b / name)
    for name in ("predictions.jsonl", "predictions.attempt-1.jsonl", "scores.jsonl"):
        same_bytes(a / name, b / name)
    metrics = strip(load(b / "metrics.json"))
    assert metrics == strip(load(a / "metrics.json"))
    for name in sorted(p.name for p in (a / "trajectories").iterdir()):
        same_json(a / "trajectories" / name, b / "trajectories" / name)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def ports_to(pid: int, port: int) -> set[int]:
    """The local ports of the TCP connections process ``pid`` has open to ``127.0.0.1:port``."""
    inodes = {target[8:-1] for target in open_files(pid) if target.startswith("socket:[")}
    found = set()
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state == "01" and inode in inodes and int(remote.split(":")[1], 16) == port:
                found.add(int(local.split(":")[1], 16))
    return found


def cli_env() -> dict[str, str]:
    return {**os.environ, **ENV, "PYTHONPATH": str(SRC), "NO_PROXY": "127.0.0.1,localhost"}


def start_cli(*args: str | Path) -> subprocess.Popen[str]:
    """``python -m hopscore ARGS`` with Ctrl-C at its default (however the tests run)."""
    return subprocess.Popen([sys.executable, "-m", "hopscore", *map(str, args)], env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)


def workers_sending(proc: subprocess.Popen[str], server: FakeOpenAI) -> tuple[list[int], list[int]]:
    """Wait until both of ``proc``'s Ray workers are up and sending to ``server``, one with a
    request being answered now: ``(workers, busy)`` (it holds rows then: a worker whose batch
    just ended holds none, and its death would go unseen were no batch sent to it again)."""
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    deadline = time.monotonic() + 150
    workers: list[int] = []
    busy: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        workers = [p for p in descendants(proc.pid) if "BatchWorker" in cmdline(p)]
        if len(workers) == 2 and all(ports_to(p, port) for p in workers):
            busy = [p for p in workers if ports_to(p, port) & server.ports_in_flight()]
            if busy:
                break
        time.sleep(0.02)
    assert proc.poll() is None, "the driver finished before the workers sent anything"
    assert len(workers) == 2 and busy, [cmdline(p) for p in descendants(proc.pid)]
    return workers, busy


def raylet(pid: int) -> int:
    """The raylet of the local Ray started by process ``pid``."""
    found = [p for p in descendants(pid) if cmdline(p).split(" ")[0].endswith("/raylet")]
    assert len(found) == 1, [cmdline(p) for p in descendants(pid)]
    return found[0]


def gone(pids: list[int], within: float) -> list[str]:
    """The command lines of the processes of ``pids`` still running after ``within`` s (they
    are killed then)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(map(alive, pids)):
        time.sleep(0.1)
    left = [f"{p} {cmdline(p)[:80]}" for p in pids if alive(p)]
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def test_a_lost_ray_node_fails_its_rows_over_to_the_driver(tmp_path: Path) -> None:
    """The local Ray's raylet dies mid-run (a model run: the driver sends nothing while its
    workers do): the driver does every row left itself, the run ends at once with every row
    written once, as a local run writes them, and nothing Ray started outlives it."""
    with FakeOpenAI(reply, latency=1.0) as server:
        args = run_args("hotpotqa", server.base_url, tmp_path / "ray", tmp_path / "cache",
                        "--no-cache", "--concurrency", "2", "--repeats", "4")
        proc = start_cli(*args, *RAY)
        try:
            workers_sending(proc, server)
            ray = descendants(proc.pid)
            os.kill(raylet(proc.pid), signal.SIGKILL)
            server.latency = 0.05
            _, stderr = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, stderr
        assert gone(ray, 10) == []
        server.latency = 0.0
        args[args.index("-o") + 1] = tmp_path / "local"
        local = run_cli(*args, env=ENV)
        assert local.returncode == 0, local.stderr
    same_rows(tmp_path / "local" / "samples.jsonl", tmp_path / "ray" / "samples.jsonl")
    same_json(tmp_path / "local" / "metrics.json", tmp_path / "ray" / "metrics.json")
    counts = load(tmp_path / "ray" / "config.json")["executor"]
    assert counts["ray_lost"] and counts["rows_lost"] == 0, counts
    assert counts["rows_on_driver"] > 0 and counts["rows_on_workers"] > 0, counts
    assert counts["rows_on_driver"] + counts["rows_on_workers"] == 14 * 4, counts


def test_ctrl_c_after_the_ray_node_died_ends_the_run_at_once(tmp_path: Path) -> None:
    """Ctrl-C of a judge run whose local Ray lost its raylet: exit 130 within seconds, no row
    written twice, and nothing Ray started left running."""
    source = write_rows(tmp_path / "in.jsonl", make_rows(300))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest, latency=1.0) as server:
        proc = start_cli(*judge_args(server, source, out, "--no-cache", "--concurrency", "4",
                                     *RAY))
        try:
            workers_sending(proc, server)
            ray = descendants(proc.pid)
            os.kill(raylet(proc.pid), signal.SIGKILL)
            time.sleep(2)
            started = time.monotonic()
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
            took = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130, stderr
    assert took < 15, f"Ctrl-C took {took:.1f} s"
    assert "Traceback" not in stderr
    assert gone(ray, 10) == []
    keys = [r["judge"]["key"] for r in jsonl(out)]
    assert len(keys) == len(set(keys))


def test_the_drivers_death_ends_every_process_ray_started(tmp_path: Path) -> None:
    """A driver SIGKILLed mid-run: its local Ray's servers, agents and workers all end."""
    source = write_rows(tmp_path / "in.jsonl", make_rows(300))
    with FakeOpenAI(honest, latency=1.0) as server:
        proc = start_cli(*judge_args(server, source, tmp_path / "out.jsonl", "--no-cache",
                                     "--concurrency", "4", *RAY))
        try:
            workers_sending(proc, server)
            ray = descendants(proc.pid)
            assert any("DashboardAgent" in cmdline(p) for p in ray), [cmdline(p) for p in ray]
            line = next(cmdline(p) for p in ray if "--temp-dir" in cmdline(p)).split()
            temp = Path(line[line.index("--temp-dir") + 1])
            assert temp.is_dir()
            proc.kill()
        finally:
            proc.kill()
            proc.communicate()
    assert gone(ray, 15) == []
    assert not temp.exists()  # Ray's files went with it


def test_a_killed_worker_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """A job long enough for Ray to come up: the driver and both workers send (under one
    limit); one worker, killed by pid while it sends, loses and duplicates nothing, and the
    output is the local executor's."""
    rows = make_rows(200)
    source = write_rows(tmp_path / "in.jsonl", rows)
    out, summary = tmp_path / "out.jsonl", tmp_path / "s.json"
    env = {**os.environ, **ENV, "PYTHONPATH": str(SRC), "NO_PROXY": "127.0.0.1,localhost"}
    # slow replies until the workers send (the driver alone must not finish first, however
    # long Ray takes to start here), then fast ones
    with FakeOpenAI(honest, latency=1.0) as server:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        args = judge_args(server, source, out, "--no-cache", "--concurrency", "4",
                          "--summary-json", str(summary), *RAY)
        proc = subprocess.Popen([sys.executable, "-m", "hopscore", *args], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 150
            workers: list[int] = []
            busy: list[int] = []
            while time.monotonic() < deadline and proc.poll() is None:
                workers = [p for p in descendants(proc.pid) if "BatchWorker" in cmdline(p)]
                # both workers up and sending, and one with a request being answered now:
                # it holds rows (a worker whose batch just ended holds none, and its death
                # would go unseen were no batch sent to it again)
                if len(workers) == 2 and all(ports_to(p, port) for p in workers):
                    busy = [p for p in workers if ports_to(p, port) & server.ports_in_flight()]
                    if busy:
                        break
                time.sleep(0.02)
            assert proc.poll() is None, "the driver finished before the workers sent anything"
            assert len(workers) == 2 and busy, [cmdline(p) for p in descendants(proc.pid)]
            # the driver and the workers together, all sending
            assert server.max_in_flight <= 4
            os.kill(busy[0], signal.SIGKILL)  # one worker, by its pid, mid-request
            server.latency = 0.05
            stdout, stderr = proc.communicate(timeout=240)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        sent = len(server.log)
        # the dead worker's slots are given back at once, while the server may still be
        # answering its requests: those (4 at most) can overlap the others' for a moment
        assert server.max_in_flight <= 4 + 4
        server.latency = 0.0  # the reference: the same endpoint, run locally
        local = run_cli(*judge_args(server, source, tmp_path / "local.jsonl", "--no-cache",
                                    "--concurrency", "4"), env=ENV)
        assert local.returncode == 0, local.stderr
    assert proc.returncode == 0, stderr
    final = jsonl(out)
    assert len(final) == len(rows)  # nothing lost
    assert len({r["judge"]["key"] for r in final}) == len(rows)  # nothing written twice
    assert [r["instance_id"] for r in final] == [r["instance_id"] for r in rows]
    assert all(r["judge"]["status"] == "judged" for r in final)
    assert strip(final) == strip(jsonl(tmp_path / "local.jsonl"))
    assert "rows judged this run / already done" in stdout
    counts = load(summary)["executor"]
    assert counts["worker_deaths"] == 1 and counts["rows_lost"] == 0
    assert 1 <= counts["rows_resent"] <= 4  # what the dead worker held (4 a worker)
    assert counts["rows_on_driver"] > 0 and counts["rows_on_workers"] > 0
    assert counts["rows_on_driver"] + counts["rows_on_workers"] == len(rows)
    # the dead worker's rows in flight were asked again: no more than it held
    assert len(rows) <= sent <= len(rows) + 4
