"""Workers kept on a running cluster between commands (``--executor ray`` with ``RAY_ADDRESS``).

A command on a cluster it did not start makes its workers as *named detached actors*
(``worker-0``, ``worker-1``, ...) in a namespace of this hopscore's own (:func:`namespace`:
its version and its installed files, so a changed install never reuses workers running older
code). The next command on that cluster, whichever it is (``judge`` after ``run``), finds them
by name, already started, and only builds its own work function in them: a worker holds one
work function per command (per job id), and a command's end releases its own. A worker with
no command for :func:`keep_s` seconds (``HOPSCORE_RAY_KEEP_S``, default 600) ends itself, so
the CPU it holds in Ray's accounting goes back to the cluster. ``HOPSCORE_RAY_REUSE=0`` makes
each command's workers its own again (ended with it), as they always are on the command's own
embedded Ray and for ``sql-match`` (whose driver holds CPUs on its node).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

#: seconds a kept worker with no command waits before it ends itself (default)
KEEP_S = 600.0
_PACKAGE = Path(__file__).resolve().parents[1]


def wanted(embedded: bool, local_cpus: int) -> bool:
    """Whether this command's workers are kept for the next (see the module docstring)."""
    if embedded or local_cpus > 0:
        return False
    return os.environ.get("HOPSCORE_RAY_REUSE", "1").strip().lower() not in ("0", "no", "false")


def keep_s() -> float:
    try:
        return max(1.0, float(os.environ.get("HOPSCORE_RAY_KEEP_S", KEEP_S)))
    except ValueError:
        return KEEP_S


def namespace() -> str:
    """The Ray namespace of this install's kept workers: its version, Python and the newest
    change to its files."""
    from hopscore.version import __version__

    newest = 0
    for folder, _, files in os.walk(_PACKAGE):
        for name in files:
            if name.endswith(".py"):
                newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
    digest = hashlib.sha256(f"{_PACKAGE}|{sys.version}|{newest}".encode()).hexdigest()[:12]
    return f"hopscore-{__version__}-{digest}"


def name(index: int) -> str:
    return f"worker-{index}"
