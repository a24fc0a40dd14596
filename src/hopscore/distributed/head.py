"""Reaching Ray for ``--executor ray``: the cluster at ``RAY_ADDRESS``, or a local Ray of the
command's own (:class:`LocalHead`).

The local Ray is ``ray start --head --block`` in a process group of its own, bound to
127.0.0.1, with its own temporary directory and port (never a Ray found on this machine), and
the driver connects to it as to any cluster. Being a separate process group is what makes it
cheap to give up: a command whose rows are all done while Ray is still starting (the driver
works on rows meanwhile) stops every process of it at once, instead of waiting for Ray's start
to finish in order to shut it down; it dies with the command too (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import ctypes
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
from collections import deque
from typing import Any

from hopscore.errors import HopscoreError

#: set before ``import ray``: a local Ray then advertises and binds 127.0.0.1 only
_LOOPBACK = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
#: what ``ray start --block`` prints once the head is up
_READY = "block forever"
#: seconds to wait for a killed local Ray's first process to be gone
_GRACE_S = 5.0


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class LocalHead:
    """A local Ray head of ``cpus`` CPUs for one command (see the module docstring). Start it
    from the event loop's thread (the death signal follows the thread that started it)."""

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
        command = [sys.executable, "-c", "from ray.scripts.scripts import main; main()",
                   "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port",
                   str(self.port), "--num-cpus", str(cpus), "--include-dashboard", "false",
                   "--disable-usage-stats", "--temp-dir", self.temp]
        self.proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True, preexec_fn=_die_with_parent)
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

    def stop(self) -> None:
        """Stop every process of this Ray at once (its process group: the head's servers,
        agents and workers). Nothing of it is kept: its state dies with the command."""
        self.stopped = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=_GRACE_S)
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
