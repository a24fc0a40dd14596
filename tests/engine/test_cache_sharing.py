"""The shared response cache: other processes holding its locks, foreign or broken files, a
read-only or full disk. The run always finishes (warning once), never exits 3, never stalls."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore.engine import ChatEngine, ChatRequest, OpenAIBackend, ResponseCache
from tests.conftest import _cli_env, run_cli
from tests.openai_server import FakeOpenAI, judge_reply

WARNING = "warning: the response cache"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lambda prompt, attempt: judge_reply(True), latency=0.02) as fake:
        yield fake


def rows(path: Path, n: int, tag: str = "") -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "question": f"Q{tag}{i:03d}?",
                                        "response": "x", "correct_answer": "x"}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def judge(server: FakeOpenAI, tmp: Path, cache_dir: Path, name: str = "out", n: int = 8,
          tag: str = "") -> tuple[int, str, float]:
    started = time.monotonic()
    result = run_cli("judge", "-i", rows(tmp / f"{name}.in.jsonl", n, tag), "-o",
                     tmp / f"{name}.jsonl", "--model", "m", "--base-url", server.base_url,
                     "--no-progress", env={"HOPSCORE_CACHE_DIR": str(cache_dir)}, timeout=120)
    took = time.monotonic() - started
    lines = (tmp / f"{name}.jsonl").read_text().splitlines() if result.returncode < 2 else []
    assert result.returncode == 0, result.stderr
    assert len(lines) == n and all(json.loads(x)["correct"] is True for x in lines)
    return result.returncode, result.stderr, took


def hold_lock(path: Path, how: str) -> subprocess.Popen[str]:
    """Another process holding the cache's lock until it is killed."""
    script = f"""
import sqlite3, sys, time
db = sqlite3.connect({str(path)!r}, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, body TEXT NOT NULL,"
           " latency_s REAL, created REAL NOT NULL)")
if {how!r} == "exclusive":
    db.execute("PRAGMA locking_mode=EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
db.execute("INSERT OR REPLACE INTO responses VALUES ('held', '{{}}', 0, 0)")
if {how!r} == "exclusive":
    db.execute("COMMIT")
    db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(600)
"""
    path.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.parametrize("how", ["write", "exclusive"])
def test_another_process_holding_the_lock_never_stalls_or_fails_the_run(
    server: FakeOpenAI, tmp_path: Path, how: str
) -> None:
    cache_dir = tmp_path / "cache"
    holder = hold_lock(cache_dir / "responses.sqlite", how)
    try:
        _, stderr, took = judge(server, tmp_path, cache_dir, n=16)
    finally:
        holder.kill()
        holder.wait()
    assert stderr.count(WARNING) == 1, stderr
    assert "locked" in stderr
    assert took < 30  # the busy wait (5 s) happens off the event loop, once


@pytest.mark.parametrize("kind", ["schema", "corrupt", "directory"])
def test_a_foreign_or_broken_cache_file_is_skipped_with_one_warning(
    server: FakeOpenAI, tmp_path: Path, kind: str
) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    path = cache_dir / "responses.sqlite"
    if kind == "schema":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE responses (k TEXT, v TEXT)")
        db.commit()
        db.close()
    elif kind == "corrupt":
        path.write_bytes(b"this is not an SQLite database, just bytes\n" * 200)
    else:
        path.mkdir()
    _, stderr, _ = judge(server, tmp_path, cache_dir)
    assert stderr.count(WARNING) == 1, stderr
    assert {"schema": "another schema", "corrupt": "not a database",
            "directory": "directory"}[kind] in stderr
    if kind == "schema":  # the foreign table is left as it was
        db = sqlite3.connect(path)
        assert [r[1] for r in db.execute("PRAGMA table_info(responses)")] == ["k", "v"]
        db.close()


def test_two_processes_share_one_cache(server: FakeOpenAI, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    env = _cli_env({"HOPSCORE_CACHE_DIR": str(cache_dir)})
    procs = []
    for name in ("a", "b"):
        args = ["judge", "-i", rows(tmp_path / f"{name}.in.jsonl", 60, name), "-o",
                tmp_path / f"{name}.jsonl", "--model", "m", "--base-url", server.base_url,
                "--no-progress", "-c", "16"]
        procs.append(subprocess.Popen([sys.executable, "-m", "hopscore", *map(str, args)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and WARNING not in err, err
    sent = len(server.log)
    assert sent == 120
    cache = ResponseCache.in_dir(cache_dir)
    assert len(cache) == 120
    cache.close()
    for name in ("a", "b"):  # a rerun of either into a fresh output is answered by the cache
        _, stderr, _ = judge(server, tmp_path, cache_dir, name=f"{name}2", n=60, tag=name)
        assert WARNING not in stderr
    assert len(server.log) == sent


def test_cache_reads_do_not_block_the_event_loop(tmp_path: Path) -> None:
    """While the cache waits for a lock, other requests go on."""
    cache_dir = tmp_path / "cache"
    holder = hold_lock(cache_dir / "responses.sqlite", "exclusive")
    try:
        with FakeOpenAI(lambda p, a: judge_reply(True), latency=0.05) as fake:
            async def go() -> list[float]:
                engine = ChatEngine(OpenAIBackend(fake.base_url, "k"), concurrency=4,
                                    adaptive=False, cache=ResponseCache.in_dir(cache_dir))
                done: list[float] = []
                start = time.monotonic()

                async def one(i: int) -> None:
                    await engine.complete(ChatRequest(
                        model="m", messages=[{"role": "user", "content": f"q{i}"}]))
                    done.append(time.monotonic() - start)

                async def ticker() -> float:
                    worst, last = 0.0, time.monotonic()
                    while len(done) < 8:
                        await asyncio.sleep(0.01)
                        now = time.monotonic()
                        worst, last = max(worst, now - last), now
                    return worst

                worst_tick = asyncio.create_task(ticker())
                await asyncio.gather(*(one(i) for i in range(8)))
                await engine.aclose()
                return [await worst_tick]

            [worst] = asyncio.run(go())
    finally:
        holder.kill()
        holder.wait()
    assert worst < 0.5, f"the event loop stalled {worst:.2f} s"


def _unshare() -> None:
    if shutil.which("unshare") is None or sys.platform != "linux":
        pytest.skip("needs unshare (Linux)")
    probe = subprocess.run(["unshare", "-m", "sh", "-c",
                            "mount -t tmpfs -o size=64k tmpfs /mnt && umount /mnt"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot mount a tmpfs in a private mount namespace here")


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_a_full_or_read_only_disk_under_the_cache_is_skipped(
    server: FakeOpenAI, tmp_path: Path, fault: str
) -> None:
    _unshare()
    mount = tmp_path / "fs"
    mount.mkdir()
    good = tmp_path / "good-cache"
    judge(server, tmp_path, good, name="seed", n=2, tag="seed")  # a valid cache file to copy
    if fault == "full":
        prepare = (f"mount -t tmpfs -o size=96k tmpfs {mount} && "
                   f"dd if=/dev/zero of={mount}/filler bs=1k count=96 2>/dev/null; true")
    else:
        prepare = (f"mount -t tmpfs -o size=4m tmpfs {mount} && mkdir {mount}/cache && "
                   f"cp {good}/responses.sqlite {mount}/cache/ && "
                   f"mount -o remount,ro {mount}")
    cli = " ".join(map(str, [
        sys.executable, "-m", "hopscore", "judge", "-i", rows(tmp_path / "in.jsonl", 8), "-o",
        tmp_path / "out.jsonl", "--model", "m", "--base-url", server.base_url, "--no-progress"]))
    env = _cli_env({"HOPSCORE_CACHE_DIR": str(mount / "cache")})
    result = subprocess.run(["unshare", "-m", "sh", "-c", f"{prepare} && exec {cli}"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count(WARNING) == 1, result.stderr
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len(lines) == 8 and all(json.loads(x)["correct"] is True for x in lines)
