"""Reaching Ray for ``--executor ray``: the cluster at ``RAY_ADDRESS``, or a local Ray of the
command's own (:class:`LocalHead`).

The local Ray is ``ray start --head --block`` in a session of its own, bound to 127.0.0.1, with
its own temporary directory and port (never a Ray found on this machine), and the driver
connects to it as to any cluster. Every process Ray starts for it (its servers, agents and
workers, which put themselves in process groups of their own) stays in that session, so the
session is what is stopped: at once when a command's rows are all done while Ray is still
starting (the driver works on rows meanwhile), instead of waiting for Ray's start to finish in
order to shut it down. A small watchdog (:data:`_WATCH`) leads the session: it ends the whole
session when the command dies however it dies (SIGKILL included: it reads a pipe only the
command holds, and sees its end), and when Ray's head process ends by itself (a dead raylet),
so that nothing Ray started outlives either.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
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
from collections import deque
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError

#: set before ``import ray``: a local Ray then advertises and binds 127.0.0.1 only
_LOOPBACK = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: what ``ray start --block`` prints once the head is up
_READY = "block forever"
#: seconds to wait for a killed local Ray's first process to be gone
_GRACE_S = 5.0


#: The watchdog leading the local Ray's session (:func:`watch`), ``ray start``'s arguments after
#: the folder holding the package
_WATCH = ("import sys; sys.path.insert(0, sys.argv[1]); "
          "from hopscore.distributed.head import watch; watch(sys.argv[2:])")
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


def watch(command: list[str]) -> None:  # pragma: no cover - runs in the watchdog
    """The watchdog: run ``command`` (``ray start``), then end every process of this session
    when standard input ends (the command closed it, or died) or when ``command`` ends."""
    temp = command[command.index("--temp-dir") + 1] if "--temp-dir" in command else None

    def stop(*_: Any) -> None:
        kill_session(os.getsid(0))
        if temp is not None:  # Ray's files die with it
            shutil.rmtree(temp, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    ray = subprocess.Popen(command, stdin=subprocess.DEVNULL)

    def ended() -> None:
        ray.wait()
        kill_session(os.getsid(0))
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
        os._exit(ray.returncode or 1)

    threading.Thread(target=ended, daemon=True).start()
    while sys.stdin.buffer.read(4096):
        pass
    stop()


def kill_session(session: int) -> None:
    """SIGKILL every process of ``session`` but this one (from /proc, Linux), until none is
    left."""
    me = os.getpid()
    for _ in range(50):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == me:
                continue
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] not in "ZX" and int(fields[3]) == session:
                found = True
                with contextlib.suppress(OSError):
                    os.kill(int(entry), signal.SIGKILL)
        if not found:
            return
        time.sleep(0.05)


class LocalHead:
    """A local Ray head of ``cpus`` CPUs for one command, under its watchdog (see the module
    docstring)."""

    def __init__(self, cpus: int) -> None:
        self.cpus = cpus
        self.temp = tempfile.mkdtemp(prefix="hsray-", dir="/tmp")  # short: socket paths
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        # token authentication with a token of its own: only this command reaches it
        self.auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        env = {k: v for k, v in os.environ.items()
               if k not in ("RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH")}
        env.update(self.auth)
        env.setdefault(_LOOPBACK, "0")
        env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        command = [sys.executable, "-I", "-B", "-c", _WATCH, _PACKAGE_PARENT, sys.executable, "-c",
                   "from ray.scripts.scripts import main; main()",
                   "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port",
                   str(self.port), "--num-cpus", str(cpus), "--include-dashboard", "false",
                   "--disable-usage-stats", "--temp-dir", self.temp]
        # the watchdog's standard input: a pipe whose other end only this process holds
        self.proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.ready = False
        self.stopped = False
        self._seen: deque[str] = deque(maxlen=30)

    def wait_ready(self) -> str:
        """Block until the head is up; its address. Raises when it ended (or was stopped)."""
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._seen.append(line)
            if _READY in line:
                self.ready = True
                threading.Thread(target=self._drain, daemon=True).start()
                return self.address
        if self.stopped:
            raise _Stopped
        raise HopscoreError("--executor ray: the local Ray did not start:\n"
                            + "".join(self._seen).strip())

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(OSError, ValueError):
            for _ in self.proc.stdout:
                pass

    def ended(self) -> int | None:
        """The watchdog's exit status once it ended (Ray's head ended, and every process of
        the session with it), else None."""
        return self.proc.poll()

    def stop(self) -> None:
        """Stop every process of this Ray at once (its session: the head's servers, agents
        and workers). Nothing of it is kept: its state dies with the command."""
        self.stopped = True
        kill_session(self.proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=_GRACE_S)
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        shutil.rmtree(self.temp, ignore_errors=True)


class _Stopped(Exception):
    """The local Ray was stopped before it was up (the command's rows were all done)."""


def start_local(workers: int | None) -> LocalHead | None:
    """The command's own local Ray, starting (None: ``RAY_ADDRESS`` names a cluster)."""
    if os.environ.get("RAY_ADDRESS"):
        return None
    if importlib.util.find_spec("ray") is None:  # not imported here: that takes seconds
        import_ray()
    return LocalHead(workers or os.cpu_count() or 1)


#: seconds to wait for RAY_ADDRESS's server to take a connection
_REACH_S = 5.0


def check_address() -> None:
    """Raise a clear error when ``RAY_ADDRESS`` names a server that takes no connection (a
    TCP connect to its host and port, without importing Ray). ``auto`` and ``local``, which
    Ray resolves itself, are left to Ray."""
    address = os.environ.get("RAY_ADDRESS", "").strip()
    if not address or address in ("auto", "local"):
        return
    where = address.split("://", 1)[-1].split("/", 1)[0]
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        raise HopscoreError(f"--executor ray: RAY_ADDRESS={address} is not host:port (or "
                            "ray://host:port)")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=_REACH_S):
            pass
    except OSError as exc:
        raise HopscoreError(f"--executor ray: cannot reach RAY_ADDRESS={address}: {exc}; is "
                            "the cluster running and reachable from here?") from None


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise HopscoreError("--executor ray needs Ray: pip install 'hopscore[ray]'") from None
    return ray


def connect(head: LocalHead | None) -> tuple[Any, bool]:
    """``(ray, connected)``: Ray connected to ``head`` once it is up, or to ``RAY_ADDRESS``
    (``connected``: this process connected and must disconnect); ``(None, False)`` when
    ``head`` was stopped before it was up."""
    address = head.address if head is not None else os.environ.get("RAY_ADDRESS", "")
    host = address.split("://")[-1].rsplit(":", 1)[0]
    if host in ("127.0.0.1", "localhost", "::1", "[::1]"):
        os.environ.setdefault(_LOOPBACK, "0")  # a Ray on this machine: loopback only
    if head is not None:  # the head's token, read when Ray is imported
        os.environ.update(head.auth)
        os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    try:
        if head is not None:
            head.wait_ready()
        ray.init(address=address, **quiet)
    except _Stopped:
        return None, False
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"RAY_ADDRESS={address}" if head is None else "a local Ray"
        hint = ("; is the cluster running and reachable from here? A cluster with token "
                "authentication also needs RAY_AUTH_MODE=token and its token (~/.ray/auth_token, "
                "RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH)") if head is None else ""
        raise HopscoreError(f"--executor ray: cannot start or reach {where}: {exc}{hint}"
                            ) from None
    return ray, True


#: seconds Ray may take to come up (the command's own) or to take this driver (RAY_ADDRESS's
#: cluster: Ray itself would try for minutes a server that takes connections but is no Ray)
_UP_S = 60.0
_REACHED_S = 20.0


async def connect_within(head: LocalHead | None) -> tuple[Any, bool]:
    """:func:`connect` on a thread of its own, given up (an error) after its deadline:
    a thread of Ray's own making that does not answer is left behind, never waited for."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[Any, bool]] = loop.create_future()

    def settle(result: tuple[Any, bool] | None, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            assert result is not None
            done.set_result(result)

    def run() -> None:
        try:
            result = connect(head)
        except BaseException as exc:  # handed to the waiting driver
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=run, daemon=True, name="ray-connect").start()
    limit = _UP_S if head is not None else _REACHED_S
    try:
        return await asyncio.wait_for(asyncio.shield(done), limit)
    except TimeoutError:
        where = ("the local Ray" if head is not None
                 else f"RAY_ADDRESS={os.environ.get('RAY_ADDRESS')}")
        raise HopscoreError(f"--executor ray: {where} did not answer within {limit:.0f} s"
                            ) from None
