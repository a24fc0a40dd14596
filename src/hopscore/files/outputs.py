"""Where a command writes: one writer per output, locations checked first, inputs never eaten.

Every command that writes a result file or a run directory enters :func:`claim` before any
work (before reading large inputs, before any request)::

    with claim(output_dir(out, "--output-dir", writes=("metrics.json", "scores.jsonl")),
               inputs=[gold, predictions]):
        ...

:func:`claim` does three things, in this order, and raises :class:`OutputError` (exit status 2,
one line naming the path) when one fails; nothing has been written by then:

1. **Location checks** (:func:`check_location`): the output is of the right kind (a file output
   that is a directory, a directory output that is a file, a device or fifo are refused), its
   nearest existing parent is a folder (missing parent folders are created, as ``mkdir -p``
   would), the place is writable (a read-only folder or file system is named), and the file
   system has at least :data:`MIN_FREE_BYTES` free.
2. **Outputs are never inputs** (:func:`refuse_inputs`): an output file that is one of the
   inputs (same file by device and inode: hard links and symlinks included, also into an
   input folder read as a whole), or a directory
   output that would write over an input file inside it (``score -p d/scores.jsonl -o d``), or
   an output inside a folder that is read as a whole (an agent's task folder), is refused and the
   input is left as it is.
3. **One writer per output** (:func:`lock_output`): an exclusive ``fcntl.flock`` on a lock file
   (``DIR/.hopscore.lock`` for a directory output, ``.NAME.lock`` beside a file output, and one
   per file a directory output writes, so that ``judge -o runs/x/samples.jsonl`` cannot write
   into a running ``run -o runs/x``). The lock follows the file, not its name: lock files are
   placed with every symbolic link resolved, and an output file that exists is also locked
   itself (its inode), so that a hard link under another name is refused too
   (:mod:`hopscore.files.holders` finds the holder and the name it writes by). The lock file
   holds the holder's pid and command; a
   second process on the same output fails at once with :class:`OutputBusy` naming both. The
   kernel drops the lock when the holder dies (even by SIGKILL), so a stale lock file never
   blocks anyone. Locks are re-entrant inside one process: a library function that claims an
   output its command already claimed just shares the lock. The lock file is removed when the
   last holder in the process releases it.

``filelock`` was considered: its Unix lock truncates the lock file when it opens it, so a
waiting process would erase the holder's pid before failing; here the file is opened without
truncation and written only by the process that got the lock.

:func:`environment_error` turns an ``OSError`` of the environment (no space left, read-only
file system, permission denied, quota, I/O error) raised while writing into the one-line
error the CLI prints with exit status 2, naming the file (or the claimed outputs when the
error does not carry a file name, as a failed ``write`` does).
"""

from __future__ import annotations

import errno
import importlib.machinery
import json
import os
import site
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path

from hopscore.errors import HopscoreError

try:
    import fcntl
    import resource
except ImportError:  # pragma: no cover - not POSIX: no locking, everything else still checked
    fcntl = None  # type: ignore[assignment]
    resource = None  # type: ignore[assignment]

#: Refuse to start when the output's file system has less free space than this.
MIN_FREE_BYTES = 1 << 20
#: The lock file inside a directory output.
DIR_LOCK = ".hopscore.lock"
#: errno values that are faults of the environment (exit status 2), not bugs.
ENVIRONMENT_ERRNOS = frozenset({
    errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
    errno.EFBIG, errno.ENAMETOOLONG, errno.EMFILE, errno.ENFILE, errno.ENOTDIR,
    errno.EISDIR, errno.ELOOP, errno.ETXTBSY,
})


class OutputError(HopscoreError):
    """An output location that cannot be used (exit status 2)."""


class OutputBusy(OutputError):
    """Another process holds the output's lock."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


@dataclass(frozen=True, slots=True)
class Output:
    """One place a command writes to.

    ``writes`` (directory outputs): the names written inside it, relative paths; a name ending
    in ``/`` is a sub-folder written as a whole (``trajectories/``). ``create_parents``:
    missing parent folders are created (``-o runs/x`` without ``runs/``, as the default
    ``runs/<name>`` is); False refuses a location whose parent folder does not exist.
    """

    path: Path
    option: str = "--output"
    directory: bool = False
    writes: tuple[str, ...] = ()
    create_parents: bool = True

    @property
    def label(self) -> str:
        return f"{self.option} {self.path}" if self.option else str(self.path)

    def targets(self) -> list[Path]:
        """The files (and sub-folders) this output writes."""
        if not self.directory:
            return [self.path]
        return [self.path / name.rstrip("/") for name in self.writes]


@dataclass(frozen=True, slots=True)
class Input:
    """One thing a command reads. A directory with ``reads`` is read only through those names;
    a directory without them is read as a whole (every file below it is an input)."""

    path: Path
    option: str = ""
    reads: tuple[str, ...] | None = None

    @property
    def label(self) -> str:
        return f"{self.option} {self.path}" if self.option else str(self.path)


def output_file(path: Path | str, option: str = "--output", *,
                create_parents: bool = True) -> Output:
    """A file output (``-o out.jsonl``)."""
    return Output(Path(path), option, False, (), create_parents)


def output_dir(path: Path | str, option: str = "--output-dir", *, writes: Sequence[str] = (),
               create_parents: bool = True) -> Output:
    """A directory output and the names the command writes inside it."""
    return Output(Path(path), option, True, tuple(writes), create_parents)


def as_input(value: Input | Path | str, option: str = "") -> Input:
    return value if isinstance(value, Input) else Input(Path(value), option)


# --- location checks -------------------------------------------------------------------------


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids)


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def free_bytes(path: Path) -> int | None:
    """Free space (for unprivileged users) of the file system holding ``path``."""
    try:
        info = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return info.f_bavail * info.f_frsize


def _check_space(output: Output, folder: Path) -> None:
    free = free_bytes(folder)
    if free is not None and free < MIN_FREE_BYTES:
        raise OutputError(f"{output.label}: no space left on the device of {folder} "
                          f"({free // 1024} KiB free)")


def check_location(output: Output) -> None:
    """Refuse an output that cannot be written; see the module docstring. Writes nothing."""
    path = output.path
    wanted = "a directory" if output.directory else "a file"
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except NotADirectoryError:
        raise OutputError(f"{output.label}: a parent of it is a file, not a folder") from None
    except OSError as exc:
        raise OutputError(f"{output.label}: cannot use it: {exc.strerror}") from None
    if info is not None:
        kind = _kind(info.st_mode)
        if kind != wanted:
            raise OutputError(f"{output.label}: is {kind}, expected {wanted}")
        folder = path if output.directory else path.parent
        if not _writable(folder) or (not output.directory and not os.access(path, os.W_OK)):
            raise OutputError(f"{output.label}: not writable ({_why_not_writable(folder)})")
        if output.directory:
            _check_targets(output)
        _check_space(output, folder)
        return
    if path.is_symlink():
        raise OutputError(f"{output.label}: is a symbolic link to a missing target")
    parent = path.parent
    if output.create_parents:
        parent = _nearest_existing(parent)
    if not parent.exists():
        raise OutputError(f"{output.label}: the folder {parent} does not exist (create it "
                          "first, or choose another output)")
    if not parent.is_dir():
        raise OutputError(f"{output.label}: {parent} is a file, not a folder")
    if not _writable(parent):
        raise OutputError(f"{output.label}: cannot create it in {parent} "
                          f"({_why_not_writable(parent)})")
    _check_space(output, parent)


def _check_targets(output: Output) -> None:
    """Inside an existing directory output: each name it writes is free or of the right kind."""
    for name in output.writes:
        target = output.path / name.rstrip("/")
        try:
            mode = target.stat().st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise OutputError(f"{output.label}: cannot use {target}: {exc.strerror}") from None
        wanted = "a directory" if name.endswith("/") else "a file"
        kind = _kind(mode)
        if kind != wanted:
            raise OutputError(f"{output.label}: {target} is {kind}, expected {wanted}")


def _why_not_writable(folder: Path) -> str:
    try:
        flags = os.statvfs(folder).f_flag
    except OSError:
        flags = 0
    if flags & getattr(os, "ST_RDONLY", 1):
        return "read-only file system"
    return "permission denied"


# --- outputs are never inputs ----------------------------------------------------------------


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def refuse_inputs(outputs: Iterable[Output], inputs: Iterable[Input | Path | str]) -> None:
    """Raise :class:`OutputError` when writing an output would change one of the inputs."""
    files: list[tuple[Input, Path, tuple[int, int]]] = []
    trees: list[tuple[Input, Path]] = []
    for value in inputs:
        item = as_input(value)
        if item.path.is_dir():
            if item.reads is None:
                trees.append((item, _resolved(item.path)))
                continue
            for name in item.reads:
                identity = _identity(item.path / name)
                if identity is not None:
                    files.append((item, item.path / name, identity))
            continue
        identity = _identity(item.path)
        if identity is not None:
            files.append((item, item.path, identity))
    for output in outputs:
        for target in output.targets():
            identity = _identity(target)
            for item, path, other in files:
                if identity is not None and identity == other:
                    same = "is" if target == output.path else f"would write {target}, which is"
                    raise OutputError(
                        f"{output.label} {same} the input {item.label}"
                        + ("" if path == item.path else f" ({path})")
                        + "; choose another output (the input is left as it is)")
            resolved = _resolved(target)
            for item, folder in trees:
                if _inside(resolved, folder) or _linked_into(target, folder):
                    raise OutputError(
                        f"{output.label} would write {target} inside the input folder "
                        f"{item.label}, which is read as a whole; choose another output")


def _linked_into(target: Path, folder: Path) -> bool:
    """Whether the existing file ``target`` is also a file below ``folder`` under another name
    (a hard link: looked for only when the file has more than one name)."""
    try:
        info = target.stat()
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return False
    identity = (info.st_dev, info.st_ino)
    for root, _dirs, names in os.walk(folder):
        for name in names:
            if _identity(Path(root) / name) == identity:
                return True
    return False


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
#: the outputs this process has claimed, most recent last (named by environment_error)
_CLAIMED: list[Output] = []
#: the output released last (named by environment_error once the claim has ended)
_LAST: Output | None = None


def lock_path(output: Output) -> Path:
    """Where the lock of ``output`` lives: beside (or inside) the file or folder it names,
    every symbolic link resolved, so that two names of one place share one lock."""
    real = _resolved(output.path)
    if output.directory:
        return real / DIR_LOCK
    return _file_lock_path(real)


def _file_lock_path(target: Path) -> Path:
    real = _resolved(target)
    return real.parent / f".{real.name}.lock"


def _holder_text(target: Path) -> bytes:
    command = " ".join(["hopscore", *sys.argv[1:]]) if sys.argv else "hopscore"
    info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command[:500],
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
    if isinstance(host, str) and host != socket.gethostname():
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


def _open_error(output: Output, path: Path, exc: OSError) -> OutputError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return OutputError(f"{output.label}: no space left on device (cannot write {path})")
    if exc.errno == errno.EROFS:
        return OutputError(f"{output.label}: read-only file system (cannot write {path})")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return OutputError(f"{output.label}: permission denied (cannot write {path})")
    if exc.errno == errno.ENOENT:
        return OutputError(f"{output.label}: the folder {path.parent} does not exist")
    return OutputError(f"{output.label}: cannot write {path}: {exc.strerror}")


def _acquire(output: Output, target: Path, path: Path) -> int:
    """Open and lock ``path`` exclusively; the holder record is written into it."""
    for _ in range(50):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as exc:
            raise _open_error(output, path, exc) from None
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise _busy(output, target, _read_holder(fd)) from None
            # the previous holder may have removed the file between our open and our lock
            mine = os.fstat(fd)
            current = _identity(path)
            if current != (mine.st_dev, mine.st_ino):
                os.close(fd)
                continue
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, _holder_text(target), 0)
            except OSError as exc:
                _remove(path, fd)
                raise _open_error(output, path, exc) from None
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
        if _identity(path) == (mine.st_dev, mine.st_ino):
            path.unlink()
    except OSError:
        pass


def _key(path: Path) -> tuple[object, ...]:
    """What a lock file is, whatever it is called: its folder's (device, inode) and its name
    (the resolved path where the folder cannot be read)."""
    identity = _identity(path.parent)
    if identity is None:
        return ("path", str(_resolved(path.parent) / path.name))
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
    p = _resolved(Path(path))
    keys = {_key(p / DIR_LOCK), _key(_file_lock_path(p))}
    with _HELD_GUARD:
        return any(key in _HELD for key in keys)


# --- claim: all of it ------------------------------------------------------------------------


@contextmanager
def claim(*outputs: Output, inputs: Iterable[Input | Path | str] = ()) -> Iterator[None]:
    """Check, refuse clashes with ``inputs``, create directory outputs, then lock every output.

    Everything that can fail fails before the block starts. A directory output is created
    (with its parents when ``create_parents``); a file output is not created, its missing
    parent folders are.
    """
    for output in outputs:
        check_location(output)
    refuse_inputs(outputs, list(inputs))
    with ExitStack() as stack:
        for output in outputs:
            if output.directory:
                _make_dir(output)
            elif output.create_parents and not output.path.parent.is_dir():
                _make_dir(Output(output.path.parent, output.option, True, (), True))
            stack.enter_context(lock_output(output))
            _CLAIMED.append(output)
            stack.callback(_unclaim, output)
        try:
            yield
        except OSError as exc:
            message = environment_error(exc)
            if message is None:
                raise
            raise OutputError(message) from exc


_SCOPES: list[ExitStack] = []


@contextmanager
def command_scope() -> Iterator[None]:
    """The life of one CLI command (entered by :func:`hopscore.launch.guarded`): outputs
    claimed with :func:`claim_for_command` are held until it ends."""
    with ExitStack() as stack:
        _SCOPES.append(stack)
        try:
            yield
        finally:
            _SCOPES.remove(stack)


def claim_for_command(*outputs: Output, inputs: Iterable[Input | Path | str] = ()) -> None:
    """:func:`claim` for the rest of the running command, so that a command claims its outputs
    in one line before any work. Outside a command (a library caller), use :func:`claim`."""
    if not _SCOPES:
        raise RuntimeError("claim_for_command() outside hopscore.files.outputs.command_scope()")
    _SCOPES[-1].enter_context(claim(*outputs, inputs=inputs))


def _unclaim(output: Output) -> None:
    global _LAST
    _LAST = output
    for i in range(len(_CLAIMED) - 1, -1, -1):
        if _CLAIMED[i] is output:
            del _CLAIMED[i]
            return


def _make_dir(output: Output) -> None:
    try:
        output.path.mkdir(parents=output.create_parents, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"{output.label}: is a file, expected a directory") from None
    except OSError as exc:
        raise _open_error(output, output.path, exc) from None


def claimed() -> list[Output]:
    """The outputs this process holds now, in the order they were claimed."""
    return list(_CLAIMED)


# --- environment faults while writing ---------------------------------------------------------


def _too_many_files(number: int) -> str:
    if number == errno.ENFILE:
        return "too many open files on this machine (the system's limit)"
    try:
        limit = f" (this process may open {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}; " \
                "raise it with ulimit -n)"
    except (AttributeError, OSError, ValueError):  # not POSIX
        limit = ""
    return "too many open files" + limit


def _module_of(name: str) -> str | None:
    """The dotted name of the Python module whose file ``name`` is (a source, bytecode or
    extension file of hopscore itself, the standard library or the installed packages; never
    a file of the current folder, which a user may write), else None."""
    suffix = next((end for end in importlib.machinery.all_suffixes() if name.endswith(end)), None)
    if suffix is None:
        return None
    roots = {str(Path(__file__).resolve().parents[2]), os.path.dirname(os.__file__)}
    with suppress(Exception):  # no imports here: this runs when descriptors have run out
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    path = os.path.abspath(name)
    for root in roots:
        base = os.path.join(os.path.abspath(root), "")
        if path.startswith(base):
            parts = path[len(base):-len(suffix)].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(part.split(".")[0] for part in parts) or None
    return None


def environment_error(exc: BaseException) -> str | None:
    """The one-line message for an OSError caused by the environment, else None (a bug)."""
    if not isinstance(exc, OSError) or exc.errno not in ENVIRONMENT_ERRNOS:
        return None
    what = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "no space left on device" if exc.errno == errno.ENOSPC else "disk quota exceeded"
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        what = _too_many_files(exc.errno)
    module = _module_of(str(exc.filename)) if exc.filename else None
    if module is not None:
        # Python failed to load a module (hopscore's, the standard library's): the file is
        # not the user's and not at fault; the environment is
        return f"{what}, while loading the Python module {module}"
    if exc.filename:
        return f"{exc.filename}: {what}"
    outputs = claimed()
    last = outputs[-1] if outputs else _LAST
    if last is not None:
        return f"{last.label}: {what} while writing it"
    return what
