"""What a process has open, from /proc (Linux): for tests that wait on another process."""

from __future__ import annotations

import os
from pathlib import Path


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
