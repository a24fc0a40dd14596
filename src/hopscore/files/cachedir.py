"""Where hopscore keeps what it can make again (responses, gold files, file digests)."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$HOPSCORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hopscore``, else ``~/.cache/hopscore``."""
    explicit = os.environ.get("HOPSCORE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "hopscore"
