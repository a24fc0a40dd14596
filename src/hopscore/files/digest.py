"""The SHA-256 of a file, read in blocks (inputs recorded by runs, shards and merges), and of a
gold file, remembered between runs (:func:`remembered_sha256`)."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from hopscore.files.atomic import write_text_atomic
from hopscore.files.cachedir import default_cache_dir, prune, used


def file_sha256(path: Path, block: int = 1 << 20) -> str:
    """The hex SHA-256 of the file at ``path``, read ``block`` bytes at a time. A folder (a
    benchmark whose gold or predictions are a directory of files) hashes the names and
    digests of what it holds, files and folders, in name order."""
    if path.is_dir():
        listing = "".join(f"{child.name}\0{file_sha256(child, block)}\n"
                          for child in sorted(path.iterdir())
                          if child.is_file() or child.is_dir())
        return hashlib.sha256(listing.encode("utf-8")).hexdigest()
    digest = hashlib.sha256()
    buffer = bytearray(block)
    view = memoryview(buffer)
    with path.open("rb", buffering=0) as handle:
        while size := handle.readinto(buffer):
            digest.update(view[:size])
    return digest.hexdigest()


#: the blocks hashed beside the caller: each one lets go of the interpreter while it is read
#: and hashed, and takes it back once (few, so that the caller's work seldom waits for it)
BESIDE_BLOCK = 16 << 20
#: a smaller file is hashed by the caller (in well under 0.1 s): a thread beside it would
#: cost more CPU time than the wall time it saves (a 50 MB gold: 5% less wall, 10% more CPU)
BESIDE_MIN_BYTES = 128 << 20


#: A file whose status changed less than this long before it was hashed is not remembered: a
#: change within the same timestamp tick could leave its status as it was (git's "racy" files).
SETTLE_NS = 2_000_000_000

#: the ``digests/`` folder's size: each digest written removes those used least recently
#: beyond this many bytes of entries (an entry is its identity and digest, about 200-400
#: bytes: some thousands of gold files remembered)
DIGESTS_LIMIT = 1_000_000


def remembered_sha256(path: Path) -> str:
    """:func:`file_sha256` of a gold file, remembered between runs.

    Scoring a set of predictions records the gold's digest (``metrics.json``'s
    ``scored_from``); hashing a 700 MB gold file costs half a second every time. The digest is
    kept in the cache folder (:func:`~hopscore.files.cachedir.default_cache_dir`, ``digests/``)
    under the file's identity and status: device, inode, size, modification and change times
    (the change time moves with every write and every change of status, and no program can set
    it). A file is remembered only when its status was settled (:data:`SETTLE_NS`) before it
    was hashed and did not change while it was; a folder, a cache that cannot be read or
    written, or ``HOPSCORE_DIGEST_CACHE=0`` hashes every time. The folder keeps the digests
    used most recently (:data:`DIGESTS_LIMIT`).
    """
    return remembered_sha256_soon(path)()


def remembered_sha256_soon(path: Path, *, beside: bool = False) -> Callable[[], str]:
    """:func:`remembered_sha256` of ``path``, as a call that returns it (or raises what hashing
    raised). A remembered digest is looked up at once; with ``beside``, a file of
    :data:`BESIDE_MIN_BYTES` or more that has to be hashed is hashed in a thread of its own
    while the caller goes on (``hashlib`` lets go of the interpreter over large blocks, so a
    gold file's reading and its hashing share two cores), and the call waits for it."""
    try:
        before: os.stat_result | None = os.stat(path)
    except OSError:
        before = None  # hashing names the problem
    remembered = _remembered(path, before)
    if isinstance(remembered, str):
        return lambda: remembered
    started = time.time_ns()
    large = before is not None and stat.S_ISREG(before.st_mode) and \
        before.st_size >= BESIDE_MIN_BYTES
    if not beside or not large:
        return lambda: _remember(path, remembered, started, file_sha256(path))
    done: list[str] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            done.append(file_sha256(path, BESIDE_BLOCK))
        except BaseException as exc:  # handed to the caller, who waits for it
            failed.append(exc)

    thread = threading.Thread(target=work, name="hopscore-gold-sha256", daemon=True)
    thread.start()

    def wait() -> str:  # the digest is remembered here, never by a thread left at exit
        thread.join()
        if failed:
            raise failed[0]
        if len(done) == 1:
            done.append(_remember(path, remembered, started, done[0]))
        return done[0]

    return wait


def _remembered(path: Path, before: os.stat_result | None
                ) -> str | tuple[os.stat_result, str, Path] | None:
    """The remembered digest of ``path`` (whose status is ``before``); else what remembering
    it needs (its status, identity and cache entry), or None when it is not to be remembered
    (a folder, no status, the cache off)."""
    if os.environ.get("HOPSCORE_DIGEST_CACHE") == "0" or before is None or \
            stat.S_ISDIR(before.st_mode):
        return None
    identity = file_identity(path, before)
    entry = default_cache_dir() / "digests" / hashlib.sha256(identity.encode()).hexdigest()
    try:
        kept_identity, _, digest = entry.read_text(encoding="utf-8").partition("\n")
        if kept_identity == identity and len(digest) == 64:
            used(entry)
            return digest
    except (OSError, UnicodeDecodeError):
        pass
    return before, identity, entry


def _remember(path: Path, remember: tuple[os.stat_result, str, Path] | None, started: int,
              digest: str) -> str:
    """Keep ``digest`` of ``path`` (hashed from ``started``, in ns) under ``remember`` when the
    file's status was settled before and has not changed since (see
    :func:`remembered_sha256`); return it."""
    if remember is None:
        return digest
    before, identity, entry = remember
    try:
        settled = started - before.st_ctime_ns >= SETTLE_NS
        if settled and file_identity(path, os.stat(path)) == identity:
            write_text_atomic(entry, f"{identity}\n{digest}")
            prune(entry.parent, DIGESTS_LIMIT, keep=entry)
    except OSError:
        pass  # nothing remembered: the next run hashes again
    return digest


def file_identity(path: Path, status: os.stat_result) -> str:
    """A file's identity and status: its real path, device, inode, size, modification and
    change times (the change time moves with every write and change of status)."""
    return (f"{os.path.realpath(path)}\0{status.st_dev}\0{status.st_ino}\0{status.st_size}\0"
            f"{status.st_mtime_ns}\0{status.st_ctime_ns}")
