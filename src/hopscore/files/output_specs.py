"""What a command writes and reads (:class:`Output`, :class:`Input`) and the errors of an output.

:mod:`hopscore.files.outputs` claims them; :mod:`hopscore.files.output_checks` checks their
locations; :mod:`hopscore.files.output_locks` holds their locks.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path

from hopscore.errors import HopscoreError


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



def as_input(value: Input | Path | str, option: str = "") -> Input:
    return value if isinstance(value, Input) else Input(Path(value), option)



def open_error(output: Output, path: Path, exc: OSError) -> OutputError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return OutputError(f"{output.label}: no space left on device (cannot write {path})")
    if exc.errno == errno.EROFS:
        return OutputError(f"{output.label}: read-only file system (cannot write {path})")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return OutputError(f"{output.label}: permission denied (cannot write {path})")
    if exc.errno == errno.ENOENT:
        return OutputError(f"{output.label}: the folder {path.parent} does not exist")
    return OutputError(f"{output.label}: cannot write {path}: {exc.strerror}")

