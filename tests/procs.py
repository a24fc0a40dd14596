"""Other processes, from /proc (Linux): what one has open, whether it runs; and how a test
starts one it will send Ctrl-C to."""

from __future__ import annotations

import ctypes
import os
import re
import signal
import time
from collections.abc import Collection
from pathlib import Path

#: Set in every process the tests start (conftest puts it in this process's environment): how
#: a process left running is told to be one of this run's, wherever it was reparented.
OWNER = "HOPSCORE_TEST_OWNER"
#: command lines of what a test starts from this project: ``python -m hopscore`` (or its
#: script), code importing it (SQL workers, the Ray watchdog, a lock holder), Ray's servers,
#: agents and workers, the tests' own servers run as scripts
OURS = re.compile(r"-m hopscore\b|/bin/hopscore\b|\bhopscore\.[a-z]|import hopscore|ray::|"
                  r"/ray/|ray\.scripts|_server\.py")


def default_sigint() -> None:  # pragma: no cover - runs in the child, before exec
    """``preexec_fn`` of a child a test sends SIGINT to: Ctrl-C at its default, so that
    Python in the child raises KeyboardInterrupt however the tests were started (a suite
    started in the background, ``nohup ... &`` or a CI job, has SIGINT ignored, and an ignored
    signal stays ignored across exec). The child also gets SIGTERM (a clean stop, as Ctrl-C)
    when the test process dies: a test killed mid-way leaves no run behind."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _term_with_parent()


def ignored_sigint() -> None:  # pragma: no cover - runs in the child, before exec
    """``preexec_fn`` of a child started as a background job is (``nohup ... &``): Ctrl-C
    ignored; SIGTERM when the test process dies, as with :func:`default_sigint`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _term_with_parent()


def _term_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def alive(pid: int) -> bool:
    """Process ``pid`` runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def open_files(pid: int) -> list[str]:
    """The targets of process ``pid``'s file descriptors (paths, ``socket:[inode]``, ...);
    empty when the process is gone."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return []
    targets = []
    for fd in fds:
        try:
            targets.append(os.readlink(fd))
        except OSError:  # closed meanwhile
            continue
    return targets


def stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state, ppid, ...); empty when
    the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace").strip()
    except OSError:
        return ""


def owned(token: str) -> dict[int, str]:
    """The running processes of ours (:data:`OURS`) whose environment carries ``OWNER=token``:
    pid -> command line."""
    marker = f"\0{OWNER}={token}\0".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = b"\0" + Path(f"/proc/{entry}/environ").read_bytes() + b"\0"
        except OSError:
            continue
        if marker not in environ:
            continue
        fields = stat(int(entry))
        line = cmdline(int(entry))
        if fields and fields[0] not in ("Z", "X") and OURS.search(line):
            found[int(entry)] = line
    return found


def left_running(token: str, grace_s: float, keep: Collection[int] = ()) -> dict[int, str]:
    """The processes of :func:`owned` (but ``keep``) still running after up to ``grace_s``:
    they are SIGKILLed, and returned."""
    deadline = time.monotonic() + grace_s
    while True:
        left = {pid: line for pid, line in owned(token).items() if pid not in keep}
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
    return left
