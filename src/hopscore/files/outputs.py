"""Where a command writes: one writer per output, locations checked first, inputs never eaten.

Every command that writes a result file or a run directory enters :func:`claim` before any
work (before reading large inputs, before any request)::

    with claim(output_dir(out, "--output-dir", writes=("metrics.json", "scores.jsonl")),
               inputs=[gold, predictions]):
        ...

:func:`claim` does three things, in this order, and raises
:class:`~hopscore.files.output_specs.OutputError` (exit status 2, one line naming the path) when
one fails; nothing has been written by then:

1. **Location checks** (:func:`~hopscore.files.output_checks.check_location`): the output is of
   the right kind (a file output that is a directory, a directory output that is a file, a
   device or fifo are refused), its nearest existing parent is a folder (missing parent folders
   are created, as ``mkdir -p`` would), the place is writable (a read-only folder or file
   system is named), and the file system has at least
   :data:`~hopscore.files.output_checks.MIN_FREE_BYTES` free.
2. **Outputs are never inputs** (:func:`~hopscore.files.output_checks.refuse_inputs`): an output
   file that is one of the inputs (same file by device and inode: hard links and symlinks
   included, also into an input folder read as a whole), or a directory
   output that would write over an input file inside it (``score -p d/scores.jsonl -o d``), or
   an output inside a folder that is read as a whole (an agent's task folder), is refused and the
   input is left as it is.
3. **One writer per output** (:func:`~hopscore.files.output_locks.lock_output`): an exclusive
   ``fcntl.flock`` on a lock file
   (``DIR/.hopscore.lock`` for a directory output, ``.NAME.lock`` beside a file output, and one
   per file a directory output writes, so that ``judge -o runs/x/samples.jsonl`` cannot write
   into a running ``run -o runs/x``). The lock follows the file, not its name: lock files are
   placed with every symbolic link resolved, and an output file that exists is also locked
   itself (its inode), so that a hard link under another name is refused too
   (:mod:`hopscore.files.holders` finds the holder and the name it writes by). The lock file
   holds the holder's pid and command; a second process on the same output fails at once with
   :class:`~hopscore.files.output_specs.OutputBusy` naming both. The
   kernel drops the lock when the holder dies (even by SIGKILL), so a stale lock file never
   blocks anyone. Locks are re-entrant inside one process: a library function that claims an
   output its command already claimed just shares the lock. The lock file is removed when the
   last holder in the process releases it.

:func:`environment_error` turns an ``OSError`` of the environment (no space left, read-only
file system, permission denied, quota, I/O error) raised while writing into the one-line
error the CLI prints with exit status 2, naming the file (or the claimed outputs when the
error does not carry a file name, as a failed ``write`` does).
"""

from __future__ import annotations

import errno
import importlib.machinery
import os
import site
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

from hopscore.files.output_checks import check_location, refuse_inputs
from hopscore.files.output_locks import lock_output
from hopscore.files.output_specs import Input, Output, OutputError, open_error

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None  # type: ignore[assignment]

#: errno values that are faults of the environment (exit status 2), not bugs.
ENVIRONMENT_ERRNOS = frozenset({
    errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
    errno.EFBIG, errno.ENAMETOOLONG, errno.EMFILE, errno.ENFILE, errno.ENOTDIR,
    errno.EISDIR, errno.ELOOP, errno.ETXTBSY,
})


#: the outputs this process has claimed, most recent last (named by environment_error)
_CLAIMED: list[Output] = []
#: the output released last (named by environment_error once the claim has ended)
_LAST: Output | None = None


def output_file(path: Path | str, option: str = "--output", *,
                create_parents: bool = True) -> Output:
    """A file output (``-o out.jsonl``)."""
    return Output(Path(path), option, False, (), create_parents)


def output_dir(path: Path | str, option: str = "--output-dir", *, writes: Sequence[str] = (),
               create_parents: bool = True) -> Output:
    """A directory output and the names the command writes inside it."""
    return Output(Path(path), option, True, tuple(writes), create_parents)



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
        raise open_error(output, output.path, exc) from None


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
