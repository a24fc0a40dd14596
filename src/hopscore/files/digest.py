"""The SHA-256 of a file, read in blocks (inputs recorded by runs, shards and merges)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of the file at ``path``, read 1 MiB at a time. A folder (a benchmark
    whose gold or predictions are a directory of files) hashes the names and digests of what
    it holds, files and folders, in name order."""
    if path.is_dir():
        listing = "".join(f"{child.name}\0{file_sha256(child)}\n"
                          for child in sorted(path.iterdir())
                          if child.is_file() or child.is_dir())
        return hashlib.sha256(listing.encode("utf-8")).hexdigest()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
