"""One writer per output: exclusive ``fcntl.flock`` locks, re-entrant inside one process.

The third step of :func:`hopscore.files.outputs.claim` (its docstring tells the whole story).

``filelock`` was considered: its Unix lock truncates the lock file when it opens it, so a
waiting process would erase the holder's pid before failing; here the file is opened without
truncation and written only by the process that got the lock.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path

from hopscore.files.output_checks import file_identity, resolved_path
from hopscore.files.output_specs import Output, OutputBusy, OutputError, open_error

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking
    fcntl = None  # type: ignore[assignment]

#: The lock file inside a directory output.
DIR_LOCK = ".hopscore.lock"


# --- one writer per output -------------------------------------------------------------------


@dataclass(slots=True)
class _Held:
    fd: int
    #: the lock file to remove when released; None for a lock on the output file itself
    path: Path | None
    count: int


#: the locks this process holds, by what they lock: the lock file's folder (device, inode) and
#: name, or ("file", device, inode) of an output file locked itself
_HELD: dict[tuple[object, ...], _Held] = {}
_HELD_GUARD = threading.Lock()


def lock_path(output: Output) -> Path:
    """Where the lock of ``output`` lives: beside (or inside) the file or folder it names,
    every symbolic link resolved, so that two names of one place share one lock."""
    real = resolved_path(output.path)
    if output.directory:
        return real / DIR_LOCK
    return _file_lock_path(real)


def _file_lock_path(target: Path) -> Path:
    real = resolved_path(target)
    return real.parent / f".{real.name}.lock"


def _host() -> str:
    """This machine's name: ``socket.gethostname()``, read without importing :mod:`socket`
    (2 ms of every command that takes a lock) where :func:`os.uname` exists."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def _holder_text(target: Path) -> bytes:
    command = " ".join(["hopscore", *sys.argv[1:]]) if sys.argv else "hopscore"
    info = {"pid": os.getpid(), "host": _host(), "command": command[:500],
            "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "output": str(target.absolute())}
    return (json.dumps(info, ensure_ascii=False) + "\n").encode("utf-8")


def _read_holder(fd: int) -> dict[str, object]:
    """The holder's record (waits briefly: a holder writes it just after locking)."""
    for _ in range(20):
        try:
            data = os.pread(fd, 4096, 0)
        except OSError:
            return {}
        try:
            value = json.loads(data.decode("utf-8"))
            if isinstance(value, dict) and "pid" in value:
                return value
        except (UnicodeDecodeError, ValueError):
            pass
        time.sleep(0.025)
    return {}


def _busy(output: Output, target: Path, holder: dict[str, object], *,
          unnamed: bool = False) -> OutputBusy:
    """``unnamed``: the holder writes the file under another name, not known here."""
    pid = holder.get("pid")
    pid_value = pid if isinstance(pid, int) else None
    who = f"pid {pid_value}" if pid_value is not None else "pid unknown"
    host = holder.get("host")
    if isinstance(host, str) and host != _host():
        who += f" on {host}"
    command = holder.get("command")
    since = holder.get("since")
    details = "".join([f", since {since}" if isinstance(since, str) else "",
                       f": {command}" if isinstance(command, str) else ""])
    where = "" if target == output.path else f" ({target})"
    other = holder.get("output")
    if isinstance(other, str) and other != str(target.absolute()):  # another name of it
        where += f" (the same file as {other})"
    elif unnamed:
        where += " (the same file, under another name)"
    return OutputBusy(f"{output.label}{where} is being written by another hopscore process "
                      f"({who}{details}); wait for it to finish or choose another output",
                      pid_value)



def _acquire(output: Output, target: Path, path: Path) -> int:
    """Open and lock ``path`` exclusively; the holder record is written into it."""
    for _ in range(50):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as exc:
            raise open_error(output, path, exc) from None
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise _busy(output, target, _read_holder(fd)) from None
            # the previous holder may have removed the file between our open and our lock
            mine = os.fstat(fd)
            current = file_identity(path)
            if current != (mine.st_dev, mine.st_ino):
                os.close(fd)
                continue
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, _holder_text(target), 0)
            except OSError as exc:
                _remove(path, fd)
                raise open_error(output, path, exc) from None
            return fd
        except BaseException:
            with suppress(OSError):
                os.close(fd)
            raise
    raise OutputError(f"{output.label}: cannot lock {path} (it keeps being replaced)")


def _remove(path: Path, fd: int) -> None:
    """Unlink the lock file while still holding it, if it is still ours."""
    try:
        mine = os.fstat(fd)
        if file_identity(path) == (mine.st_dev, mine.st_ino):
            path.unlink()
    except OSError:
        pass


def _key(path: Path) -> tuple[object, ...]:
    """What a lock file is, whatever it is called: its folder's (device, inode) and its name
    (the resolved path where the folder cannot be read)."""
    identity = file_identity(path.parent)
    if identity is None:
        return ("path", str(resolved_path(path.parent) / path.name))
    return (*identity, path.name)


@contextmanager
def _held(key: tuple[object, ...], take: Callable[[], tuple[int, Path | None]],
          drop: Callable[[], None] = lambda: None) -> Iterator[None]:
    """Share the lock ``key`` if this process holds it (then ``drop()``), else ``take()`` it;
    release it when the last holder in the process leaves."""
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            held.count += 1
    if held is not None:
        drop()
    else:
        fd, path = take()
        with _HELD_GUARD:
            held = _HELD[key] = _Held(fd, path, 1)
    try:
        yield
    finally:
        with _HELD_GUARD:
            held.count -= 1
            last = held.count == 0
            if last:
                del _HELD[key]
        if last:
            if held.path is not None:
                _remove(held.path, held.fd)
            os.close(held.fd)


def _lock(output: Output, target: Path, path: Path) -> AbstractContextManager[None]:
    return _held(_key(path), lambda: (_acquire(output, target, path), path))


def _lock_file_itself(output: Output, target: Path) -> AbstractContextManager[None]:
    """Lock an existing output file itself (its inode), so that a second writer of the same
    file under another name (a hard link) is refused too; a file that does not exist yet (or
    cannot be opened) has only its lock file."""
    if fcntl is None:
        return nullcontext()
    fd = -1
    for mode in (os.O_RDONLY, os.O_WRONLY):  # flock needs no access: any mode that opens
        with suppress(OSError):
            fd = os.open(target, mode | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            break
    if fd < 0:
        return nullcontext()
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return nullcontext()

    def take() -> tuple[int, None]:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _busy_file(output, target, info) from None
        except BaseException:
            os.close(fd)
            raise
        return fd, None

    return _held(("file", info.st_dev, info.st_ino), take, lambda: os.close(fd))


def _busy_file(output: Output, target: Path, info: os.stat_result) -> OutputBusy:
    """Another process locked this file itself, under another name: say who and which."""
    from hopscore.files.holders import holder_of

    holder = holder_of(info)
    record: dict[str, object] = {"pid": holder.pid} if holder.pid is not None else {}
    other = holder.path
    if other is not None:
        with suppress(OSError):
            fd = os.open(_file_lock_path(Path(other)), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                found = _read_holder(fd)
            finally:
                os.close(fd)
            if found.get("pid") == holder.pid:
                record = found
    if other is not None:
        record["output"] = other  # the name the holder writes it by
    return _busy(output, target, record, unnamed=other is None and "output" not in record)


@contextmanager
def lock_output(output: Output) -> Iterator[None]:
    """Hold the exclusive lock of ``output`` (and of every file it writes) for the block:
    its lock file (every symbolic link resolved), and each existing file it writes locked
    itself (so that no other name of that file can be written meanwhile)."""
    with ExitStack() as stack:
        stack.enter_context(_lock(output, output.path, lock_path(output)))
        if not output.directory:
            stack.enter_context(_lock_file_itself(output, output.path))
        for name in output.writes if output.directory else ():
            target = output.path / name
            if not name.endswith("/") and target.parent.is_dir():
                stack.enter_context(_lock(output, target, _file_lock_path(target)))
                stack.enter_context(_lock_file_itself(output, target))
        yield


def holds(path: Path | str) -> bool:
    """Whether this process holds the lock of the output at ``path`` (file or directory)."""
    p = resolved_path(Path(path))
    keys = {_key(p / DIR_LOCK), _key(_file_lock_path(p))}
    with _HELD_GUARD:
        return any(key in _HELD for key in keys)

