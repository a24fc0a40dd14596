"""Real file-system faults for tests: a small or read-only file system in a private mount.

:func:`run_in_mount` runs a command inside a new mount namespace (``unshare -m``; with ``-r``,
a user namespace, when not root) where a fresh tmpfs of a given size is mounted on a folder:
a disk that really fills up (ENOSPC from the kernel) or that is really read-only (EROFS, which
root cannot bypass as it bypasses a chmod). Nothing outside the namespace sees the mount. Tests
that need it are skipped when namespaces are not available.
"""

from __future__ import annotations

import functools
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import CliResult, _cli_env
from tests.procs import default_sigint, ignored_sigint


@functools.cache
def _unshare_prefix() -> tuple[str, ...] | None:
    candidates = [("unshare", "-m", "--propagation", "private")]
    if os.geteuid() != 0:
        candidates = [("unshare", "-r", "-m", "--propagation", "private")]
    for prefix in candidates:
        try:
            done = subprocess.run([*prefix, "true"], capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return prefix
    return None


def require_mounts() -> tuple[str, ...]:
    prefix = _unshare_prefix()
    if prefix is None:
        pytest.skip("needs a private mount namespace (unshare -m / -rm) for a real small or "
                    "read-only file system")
    return prefix


def run_in_mount(mountpoint: Path, args: Sequence[str | Path], *, size_kb: int = 4096,
                 setup: str = "", fill_kb: int = 0, read_only: bool = False,
                 after: str = "", timeout: float = 300) -> CliResult:
    """Run ``python -m hopscore ARGS`` with a fresh tmpfs of ``size_kb`` on ``mountpoint``.

    ``setup`` (shell) runs after the mount, ``fill_kb`` KiB of it are then taken by a filler
    file (``.filler``), and ``read_only`` remounts it read-only before the command runs.
    ``after`` (shell) runs once the command ended, still inside the namespace (to copy files
    out of the mount for the test to look at); the result is the command's.
    """
    prefix = require_mounts()
    mountpoint.mkdir(parents=True, exist_ok=True)
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, "-m", "hopscore", *args))
    where = shlex.quote(str(mountpoint))
    script = [f"mount -t tmpfs -o size={size_kb}k tmpfs {where}", setup]
    if fill_kb:
        script.append(f"dd if=/dev/zero of={where}/.filler bs=1k count={fill_kb} 2>/dev/null")
    if read_only:
        script.append(f"mount -o remount,ro {where}")
    script += ["set +e", command, "status=$?", after, "exit $status"]
    proc = subprocess.run([*prefix, "sh", "-ec", "\n".join(s for s in script if s)],
                          capture_output=True, text=True, env=_cli_env(None), timeout=timeout)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


_HOLDER = """
import sys
from pathlib import Path
from hopscore.files.outputs import claim, output_dir, output_file
path, kind = Path(sys.argv[1]), sys.argv[2]
with claim(output_dir(path) if kind == "dir" else output_file(path)):
    print("locked", flush=True)
    sys.stdin.readline()
"""


@contextmanager
def holding(path: Path, kind: str = "dir") -> Iterator[int]:
    """Another real process holds the output ``path`` (a "dir" or a "file") for the block;
    yields its pid."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), kind], env=_cli_env(None),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield proc.pid
    finally:
        proc.stdin.close()
        proc.wait(30)


def interrupt_cli_when(*args: str | Path, watched: Path, lines: int,
                       env: dict[str, str] | None = None, wait_s: float = 120,
                       sig: int = signal.SIGINT, background: bool = False) -> CliResult:
    """Start ``python -m hopscore ARGS``, send it ``sig`` (Ctrl-C) once ``watched`` holds
    ``lines`` lines, and return what it printed and its exit status. The child has Ctrl-C at
    its default however the tests were started, or ignored (``background``: as a job started
    with ``nohup ... &``)."""
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", *map(str, args)],
                            env=_cli_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=ignored_sigint if background else default_sigint)
    try:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and proc.poll() is None:
            if watched.exists() and watched.read_bytes().count(b"\n") >= lines:
                break
            time.sleep(0.01)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # it did not stop: the test fails, and leaves nothing
            proc.kill()
            proc.communicate()
    return CliResult(proc.returncode, out, err)
