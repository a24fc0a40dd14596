"""Where hopscore keeps what it can make again (responses, gold files, file digests)."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

#: a temporary file (``files.atomic.temp_beside``) not written to for this long in a cache
#: folder belongs to a writer that was killed
STALE_S = 3600


def default_cache_dir() -> Path:
    """``$HOPSCORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hopscore``, else ``~/.cache/hopscore``."""
    explicit = os.environ.get("HOPSCORE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "hopscore"


def used(entry: Path) -> None:
    """Mark ``entry`` as just used (its modification time), for :func:`prune`."""
    with contextlib.suppress(OSError):
        os.utime(entry)


def prune(folder: Path, limit: int, keep: Path | None = None) -> list[Path]:
    """Remove the entries of ``folder`` used least recently until the rest take at most
    ``limit`` bytes (``keep`` stays, whatever its size), and temporary files left for
    :data:`STALE_S` seconds; return what was removed. Files that vanish meanwhile (another
    process pruning) are skipped."""
    entries: list[tuple[int, int, Path]] = []
    removed: list[Path] = []
    now = time.time()
    try:
        with os.scandir(folder) as found:
            for item in found:
                try:
                    status = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(status.st_mode):
                    continue
                path = Path(item.path)
                if item.name.startswith("."):  # a temporary (files.atomic.temp_beside)
                    if now - status.st_mtime > STALE_S:
                        with contextlib.suppress(OSError):
                            path.unlink()
                            removed.append(path)
                    continue
                entries.append((status.st_mtime_ns, status.st_size, path))
    except OSError:
        return removed
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):  # least recently used first
        if total <= limit:
            break
        if keep is not None and path == keep:
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
            total -= size
    return removed
