"""Who holds the exclusive ``flock`` of a file: the process and the name it opened the file by.

:mod:`hopscore.files.output_locks` locks an output file itself (its inode), so that a second writer
of the same file under another name (a hard link, a symbolic link) is refused. The kernel tells a
process that the lock is taken, not by whom; on Linux ``/proc/locks`` lists each lock with its
owner's pid and the file's device and inode, and ``/proc/PID/fd`` the names that process opened its
files by (readable for one's own processes). Elsewhere, or when these cannot be read, the holder is
unknown and the refusal says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

LOCKS = "/proc/locks"


@dataclass(frozen=True, slots=True)
class FileHolder:
    """The process holding a file's exclusive lock, and the path it opened the file by."""

    pid: int | None
    path: str | None


def _device(info: os.stat_result) -> str:
    # /proc/locks writes MAJOR:MINOR:INODE, the device numbers in hexadecimal
    return f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"


def lock_owner(info: os.stat_result, locks: str = LOCKS) -> int | None:
    """The pid holding an exclusive ``flock`` of the file ``info`` describes, if known."""
    wanted = _device(info)
    try:
        with open(locks, encoding="ascii", errors="replace") as handle:
            lines = handle.readlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split()
        if "->" in parts or len(parts) < 6:  # "->": a process waiting for the lock
            continue
        if parts[1] == "FLOCK" and parts[3] == "WRITE" and parts[5] == wanted:
            try:
                return int(parts[4])
            except ValueError:
                return None
    return None


def opened_as(pid: int, info: os.stat_result) -> str | None:
    """The path process ``pid`` opened the file ``info`` describes by (None if not found)."""
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    for name in names:
        link = os.path.join(folder, name)
        try:
            other = os.stat(link)
            if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                return os.readlink(link)
        except OSError:
            continue
    return None


def holder_of(info: os.stat_result) -> FileHolder:
    """Who holds the exclusive lock of the file ``info`` describes (fields None if unknown)."""
    pid = lock_owner(info)
    return FileHolder(pid, None if pid is None else opened_as(pid, info))
