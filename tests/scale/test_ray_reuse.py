"""--executor ray on a cluster already running (``ray start --head`` on 127.0.0.1, started here
and stopped in the teardown): the next command finds the workers the first one left and uses
them at once; a driver killed mid-run is resumed with every row written once; and a Ray that
does not start leaves the rows to the driver, which says why while it works."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import SRC, _cli_env, run_cli
from tests.judge.test_judge_cli import honest, judge_args, make_rows, write_rows
from tests.openai_server import FakeOpenAI
from tests.scale.helpers import jsonl, load, strip
from tests.scale.test_ray import cmdline, descendants, gone, ports_to

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

ENV = {"JUDGE_API_KEY": "sk-test"}


class Cluster:
    """``ray start --head --block`` with 2 CPUs on 127.0.0.1, a port, temp dir and auth token
    of its own, in a session of its own (stopped whole in :meth:`stop`)."""

    def __init__(self) -> None:
        self.temp = tempfile.mkdtemp(prefix="hsray-", dir="/tmp")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.env = {"RAY_ADDRESS": f"127.0.0.1:{self.port}", "RAY_AUTH_MODE": "token",
                    "RAY_AUTH_TOKEN": secrets.token_hex(32), "HOPSCORE_RAY_KEEP_S": "300"}
        env = {**_cli_env(None), **self.env, "RAY_ADDRESS": "",
               "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from ray.scripts.scripts import main; main()", "start",
             "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(self.port),
             "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
             "--temp-dir", self.temp], env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True)
        assert self.proc.stdout is not None
        seen = []
        for line in self.proc.stdout:
            seen.append(line)
            if "block forever" in line:
                break
        else:
            self.stop()
            raise AssertionError("ray start failed:\n" + "".join(seen[-20:]))
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def workers(self) -> list[int]:
        return [p for p in descendants(self.proc.pid) if "BatchWorker" in cmdline(p)]

    def stop(self) -> list[str]:
        """Stop the cluster; the command lines of its processes still running after 20 s."""
        processes = descendants(self.proc.pid)
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)
        left = gone(processes, 20)
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        shutil.rmtree(self.temp, ignore_errors=True)
        return left


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    running = Cluster()
    try:
        yield running
    finally:
        assert running.stop() == []


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hopscore", *args],
                            env={**_cli_env(None), **ENV, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def workers_sending(cluster: Cluster, proc: subprocess.Popen[str], server: FakeOpenAI
                    ) -> list[int]:
    """Wait until the cluster's 2 workers are sending ``proc``'s rows to ``server``."""
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    deadline = time.monotonic() + 150
    workers: list[int] = []
    while time.monotonic() < deadline and proc.poll() is None:
        workers = cluster.workers()
        if len(workers) == 2 and all(ports_to(p, port) for p in workers):
            return workers
        time.sleep(0.05)
    raise AssertionError(f"the workers did not send (driver ended: {proc.poll()}); "
                         f"{proc.communicate()[1][-2000:] if proc.poll() is not None else ''}")


def finish(proc: subprocess.Popen[str]) -> str:
    try:
        _, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    return stderr


def test_a_running_clusters_workers_serve_the_next_command_and_a_killed_driver_resumes(
        tmp_path: Path, cluster: Cluster) -> None:
    rows = make_rows(200)
    source = write_rows(tmp_path / "in.jsonl", rows)
    with FakeOpenAI(honest, latency=1.0) as server:
        local = run_cli(*judge_args(server, source, tmp_path / "local.jsonl", "--no-cache",
                                    "--concurrency", "4", "--summary-json",
                                    tmp_path / "local.json"), env=ENV)
        assert local.returncode == 0, local.stderr
        expected = strip(jsonl(tmp_path / "local.jsonl"))
        reference = load(tmp_path / "local.json")
        seen: list[list[int]] = []
        for name in ("first", "second"):
            server.latency = 1.0  # the driver alone would take 50 s: Ray is asked for
            out, summary = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.json"
            proc = start(judge_args(server, source, out, "--no-cache", "--concurrency", "4",
                                    "--executor", "ray", "--summary-json", str(summary)),
                         cluster.env)
            seen.append(sorted(workers_sending(cluster, proc, server)))
            server.latency = 0.02
            stderr = finish(proc)
            final = jsonl(out)
            assert len({r["judge"]["key"] for r in final}) == len(final) == len(rows)
            assert strip(final) == expected
            # the counts and the usage ledger are this command's own, driver and workers
            # together (a kept worker counts each command apart)
            for key in ("requests_sent", "prompt_tokens", "completion_tokens", "usage"):
                assert load(summary)[key] == reference[key], key
            counts = load(summary)["executor"]
            assert counts["rows_on_driver"] + counts["rows_on_workers"] == len(rows)
            assert counts["rows_on_workers"] > 0 and counts["rows_lost"] == 0, counts
            assert counts["workers"] == 2
            # the first command started the workers; the second found them running
            assert counts["reused"] == (0 if name == "first" else 2), counts
            if name == "second":
                assert "2 kept from an earlier command" in stderr
        assert seen[0] == seen[1]  # the same worker processes served both commands

        # a driver killed while its rows are on the workers: its rerun resumes, every row
        # written once, the output the local executor's
        server.latency = 1.0
        out = tmp_path / "killed.jsonl"
        args = judge_args(server, source, out, "--no-cache", "--concurrency", "4",
                          "--executor", "ray")
        proc = start(args, cluster.env)
        workers_sending(cluster, proc, server)
        time.sleep(1.5)  # rows come back from the workers and are written
        proc.kill()
        proc.communicate()
        written = len(jsonl(out))
        assert 0 < written < len(rows)
        server.latency = 0.0
        finish(start(args, cluster.env))
    final = jsonl(out)
    assert len({r["judge"]["key"] for r in final}) == len(final) == len(rows)
    assert sorted(map(str, strip(final))) == sorted(map(str, expected))


FAKE_RAY_START = """\
import sys


def main():
    print("the port is in use (a stand-in for a Ray that cannot start)", flush=True)
    sys.exit(1)
"""


def test_a_ray_that_does_not_start_leaves_the_rows_to_the_driver(tmp_path: Path) -> None:
    """``ray start`` fails (a stand-in ``ray.scripts.scripts`` ahead of Ray on the path): the
    driver says why while it goes on, and finishes every row as a local run would."""
    fake = tmp_path / "fake"
    (fake / "ray" / "scripts").mkdir(parents=True)
    (fake / "ray" / "__init__.py").write_text("def is_initialized():\n    return False\n")
    (fake / "ray" / "scripts" / "__init__.py").write_text("")
    (fake / "ray" / "scripts" / "scripts.py").write_text(FAKE_RAY_START)
    rows = make_rows(400)
    source = write_rows(tmp_path / "in.jsonl", rows)
    out, summary = tmp_path / "ray.jsonl", tmp_path / "s.json"
    with FakeOpenAI(honest, latency=0.2) as server:
        proc = start(judge_args(server, source, out, "--no-cache", "--concurrency", "4",
                                "--executor", "ray", "--ray-workers", "2", "--summary-json",
                                str(summary)),
                     {"RAY_ADDRESS": "", "PYTHONPATH": f"{fake}{os.pathsep}{SRC}"})
        assert proc.stderr is not None
        told = ""
        for line in proc.stderr:
            if "Ray did not start" in line:
                told = line
                break
        running = proc.poll() is None  # told while the driver still works on the rows
        server.latency = 0.0
        stderr = told + finish(proc)
        local = run_cli(*judge_args(server, source, tmp_path / "local.jsonl", "--no-cache",
                                    "--concurrency", "4"), env=ENV)
        assert local.returncode == 0, local.stderr
    assert running and "the port is in use" in told, stderr
    assert "the driver does the rows itself" in told
    final = jsonl(out)
    assert len({r["judge"]["key"] for r in final}) == len(final) == len(rows)
    assert strip(final) == strip(jsonl(tmp_path / "local.jsonl"))
    counts = load(summary)["executor"]
    assert counts["rows_on_driver"] == len(rows) and counts["rows_on_workers"] == 0
    assert "Ray did not start" in counts["ray_lost"]
