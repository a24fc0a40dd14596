"""The SHA-256 of a file, read in blocks (inputs recorded by runs, shards and merges), and of a
gold file, remembered between runs (:func:`remembered_sha256`)."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from pathlib import Path

from hopscore.files.atomic import write_text_atomic
from hopscore.files.cachedir import default_cache_dir


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


#: A file whose status changed less than this long before it was hashed is not remembered: a
#: change within the same timestamp tick could leave its status as it was (git's "racy" files).
SETTLE_NS = 2_000_000_000


def remembered_sha256(path: Path) -> str:
    """:func:`file_sha256` of a gold file, remembered between runs.

    Scoring a set of predictions records the gold's digest (``metrics.json``'s
    ``scored_from``); hashing a 700 MB gold file costs half a second every time. The digest is
    kept in the cache folder (:func:`~hopscore.files.cachedir.default_cache_dir`, ``digests/``)
    under the file's identity and status: device, inode, size, modification and change times
    (the change time moves with every write and every change of status, and no program can set
    it). A file is remembered only when its status was settled (:data:`SETTLE_NS`) before it
    was hashed and did not change while it was; a folder, a cache that cannot be read or
    written, or ``HOPSCORE_DIGEST_CACHE=0`` hashes every time.
    """
    if os.environ.get("HOPSCORE_DIGEST_CACHE") == "0":
        return file_sha256(path)
    try:
        before = os.stat(path)
    except OSError:
        return file_sha256(path)  # which names the problem
    if stat.S_ISDIR(before.st_mode):
        return file_sha256(path)
    identity = file_identity(path, before)
    entry = default_cache_dir() / "digests" / hashlib.sha256(identity.encode()).hexdigest()
    try:
        kept_identity, _, digest = entry.read_text(encoding="utf-8").partition("\n")
        if kept_identity == identity and len(digest) == 64:
            return digest
    except (OSError, UnicodeDecodeError):
        pass
    started = time.time_ns()
    digest = file_sha256(path)
    try:
        settled = started - before.st_ctime_ns >= SETTLE_NS
        if settled and file_identity(path, os.stat(path)) == identity:
            write_text_atomic(entry, f"{identity}\n{digest}")
    except OSError:
        pass  # nothing remembered: the next run hashes again
    return digest


def file_identity(path: Path, status: os.stat_result) -> str:
    """A file's identity and status: its real path, device, inode, size, modification and
    change times (the change time moves with every write and change of status)."""
    return (f"{os.path.realpath(path)}\0{status.st_dev}\0{status.st_ino}\0{status.st_size}\0"
            f"{status.st_mtime_ns}\0{status.st_ctime_ns}")
