"""Before a command writes: its output locations can be used, and no output is an input.

:func:`check_location` and :func:`refuse_inputs` are the first two steps of
:func:`hopscore.files.outputs.claim`; they write nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from hopscore.files.output_specs import Input, Output, OutputError, as_input

#: Refuse to start when the output's file system has less free space than this.
MIN_FREE_BYTES = 1 << 20


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


def file_identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def resolved_path(path: Path) -> Path:
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
                trees.append((item, resolved_path(item.path)))
                continue
            for name in item.reads:
                identity = file_identity(item.path / name)
                if identity is not None:
                    files.append((item, item.path / name, identity))
            continue
        identity = file_identity(item.path)
        if identity is not None:
            files.append((item, item.path, identity))
    for output in outputs:
        for target in output.targets():
            identity = file_identity(target)
            for item, path, other in files:
                if identity is not None and identity == other:
                    same = "is" if target == output.path else f"would write {target}, which is"
                    raise OutputError(
                        f"{output.label} {same} the input {item.label}"
                        + ("" if path == item.path else f" ({path})")
                        + "; choose another output (the input is left as it is)")
            resolved = resolved_path(target)
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
            if file_identity(Path(root) / name) == identity:
                return True
    return False

