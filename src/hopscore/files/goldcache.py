"""Gold examples remembered between runs: a gold file read in full once, then from a compact copy.

Scoring one set of predictions reads the whole gold file, and a researcher scores many against
the same one. A gold file with paragraphs is mostly text that scoring never reads (a 46 MB
file's examples, as scoring holds them, are 2 MB). So once a gold file has been read in full,
its examples are kept in the cache folder (:func:`~hopscore.files.cachedir.default_cache_dir`,
``examples/``) as msgpack batches, and the next scoring of that file reads them instead. Only
the gold of a benchmark whose reading depends on the file alone is kept (it says so:
:attr:`~hopscore.benchmarks.base.Loading.gold_examples_kept`).

An entry is used only for the same file in the same state (its identity and status,
:func:`~hopscore.files.digest.file_identity`: a rewrite, a ``touch`` or a new link changes the
change time, which no program can set back), read by the same code (every module of the
installed hopscore, by size and modification time) for the same benchmark. It is written only
when the reading reached the end of the file without an error, the file's status was settled
before it (:data:`~hopscore.files.digest.SETTLE_NS`) and was unchanged after it, each batch
decoded back gives equal examples that encode to the same bytes, and the whole is at most a
quarter of the file (a gold without paragraphs would gain little and double its disk space).
Entries are written whole (a temporary file, then renamed). ``HOPSCORE_GOLD_CACHE=0`` turns it
off; removing the folder is always safe.

The folder is kept under a size (:data:`LIMIT_MB` megabytes, ``HOPSCORE_GOLD_CACHE_MB``): each
entry written makes room by removing the entries used least recently (an entry's modification
time is its last use), never the new one; temporary files left by a reading that was killed
go once they are an hour old. An entry removed while another process reads it is still read
whole (an open file outlives its name).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import msgspec

from hopscore.errors import HopscoreError, InputError
from hopscore.files.atomic import temp_beside, write_text_atomic
from hopscore.files.cachedir import default_cache_dir, prune, used
from hopscore.files.digest import SETTLE_NS, file_identity

T = TypeVar("T")

#: examples a batch holds (one msgspec call each way)
BATCH = 4096
#: bumped when the layout of an entry changes
_LAYOUT = 1
_LENGTH = 4
#: the examples folder's default size limit, in megabytes (``HOPSCORE_GOLD_CACHE_MB``)
LIMIT_MB = 1024


def remembered_examples(kind: str, path: Path, read: Callable[[], Iterable[T]]) -> Iterable[T]:
    """The examples ``read()`` gives for the gold file ``path`` (scored as benchmark ``kind``),
    from the cache when an entry was kept for it, else from ``read()``, kept on the way."""
    if os.environ.get("HOPSCORE_GOLD_CACHE") == "0":
        return read()
    limit = limit_bytes()  # a wrong setting is said before the reading, not after it
    if limit == 0:
        return read()
    try:
        before = os.stat(path)
    except OSError:
        return read()  # the reader names the problem
    if not stat.S_ISREG(before.st_mode):
        return read()
    key = json.dumps([_LAYOUT, kind, file_identity(path, before), _code()])
    entry = default_cache_dir() / "examples" / hashlib.sha256(key.encode()).hexdigest()
    kept = _open(entry, key)
    if kept is _NOT_KEPT:  # an earlier reading found its examples not worth keeping
        return read()
    if kept is not None:
        used(entry)
        return _kept(entry, *kept)
    return _keeping(read(), entry, key, path, before, limit)


def limit_bytes() -> int:
    """The examples folder's size limit: ``HOPSCORE_GOLD_CACHE_MB`` megabytes, else
    :data:`LIMIT_MB`."""
    text = os.environ.get("HOPSCORE_GOLD_CACHE_MB", "").strip()
    if not text:
        return LIMIT_MB * 1_000_000
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = -1.0
    if not megabytes >= 0 or megabytes == float("inf"):
        raise HopscoreError(f"HOPSCORE_GOLD_CACHE_MB must be a number of megabytes (0 or "
                            f"more), got {text!r}")
    return int(megabytes * 1_000_000)


#: what :func:`_open` gives for the mark of a gold file whose examples are not kept
_NOT_KEPT: Any = object()


def _code() -> str:
    """The installed hopscore's modules by path, size and modification time, digested."""
    root = Path(__file__).resolve().parents[1]
    parts: list[str] = []
    folders = [str(root)]
    while folders:
        with os.scandir(folders.pop()) as found:
            for item in found:
                if item.is_dir(follow_symlinks=False):
                    if item.name != "__pycache__":
                        folders.append(item.path)
                elif item.name.endswith(".py"):
                    status = item.stat()
                    parts.append(f"{item.path}\0{status.st_size}\0{status.st_mtime_ns}")
    parts.sort()
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _open(entry: Path, key: str) -> Any:
    """The entry opened after its header (its key and example class checked, its batches
    whole to the end), :data:`_NOT_KEPT` for the mark left by a reading whose examples were
    not to be kept, or None when there is nothing to use."""
    try:
        handle = entry.open("rb")
    except OSError:
        return None
    try:
        header = json.loads(handle.readline(1 << 16))
        if header.get("key") != key:
            handle.close()
            return None
        if header.get("kept") is False:
            handle.close()
            return _NOT_KEPT
        cls = _example_class(header.get("class", ""))
        start = handle.tell()
        size = os.fstat(handle.fileno()).st_size
        offset = start
        while offset < size:  # a cut or grown file is not used
            handle.seek(offset)
            offset += _LENGTH + int.from_bytes(handle.read(_LENGTH), "little")
        if offset != size or cls is None:
            handle.close()
            return None
        handle.seek(start)
        return handle, cls
    except (OSError, ValueError, AttributeError):
        handle.close()
        return None


def _example_class(name: str) -> type | None:
    module, _, qualname = name.partition(":")
    try:
        cls = getattr(importlib.import_module(module), qualname)
    except (ImportError, AttributeError, ValueError):
        return None
    return cls if isinstance(cls, type) and dataclasses.is_dataclass(cls) else None


def _kept(entry: Path, handle: BinaryIO, cls: type) -> Iterator[Any]:
    decoder = msgspec.msgpack.Decoder(list[cls])  # type: ignore[valid-type]
    with handle:
        while head := handle.read(_LENGTH):
            data = handle.read(int.from_bytes(head, "little"))
            try:
                batch = decoder.decode(data)
            except msgspec.DecodeError:
                with contextlib.suppress(OSError):
                    entry.unlink()
                raise InputError(entry, "this remembered copy of a gold file is damaged and was "
                                 "removed: run the command again (HOPSCORE_GOLD_CACHE=0 reads "
                                 "gold files without it)") from None
            yield from batch


def _keeping(examples: Iterable[T], entry: Path, key: str, path: Path,
             before: os.stat_result, limit: int) -> Iterator[T]:
    """``examples`` passed through, written to ``entry`` on the way when they may be kept
    (at most a quarter of the file and at most the folder's ``limit``)."""
    if time.time_ns() - before.st_ctime_ns < SETTLE_NS:  # may still be being written
        yield from examples
        return
    writer: _Writer | None = None
    keep = True
    batch: list[T] = []
    try:
        for example in examples:
            if keep:
                batch.append(example)
                if len(batch) >= BATCH:
                    writer = writer or _Writer.start(entry, key, type(example),
                                                     before.st_size, limit)
                    keep = writer is not None and writer.add(batch)
                    batch = []
            yield example
        if keep and batch:
            writer = writer or _Writer.start(entry, key, type(batch[0]), before.st_size,
                                             limit)
            keep = writer is not None and writer.add(batch)
        if keep and writer is not None:
            if writer.finish(entry, path, before):
                prune(entry.parent, limit, keep=entry)
            writer = None
        elif writer is None or writer.lasting:
            # not worth keeping (too large, not exact): the next readings do not try again
            _mark_not_kept(entry, key)
    finally:
        if writer is not None:
            writer.abandon()


def _mark_not_kept(entry: Path, key: str) -> None:
    """Write the mark of a gold file whose examples are not kept, whole or not at all."""
    with contextlib.suppress(OSError):  # no mark: the next reading tries again
        write_text_atomic(entry, json.dumps({"key": key, "kept": False}) + "\n")


class _Writer:
    """A temporary file beside the entry, filled batch by batch."""

    def __init__(self, handle: BinaryIO, temporary: str, cls: type, limit: int, room: int,
                 decoder: msgspec.msgpack.Decoder[list[Any]]) -> None:
        self.handle = handle
        self.temporary = temporary
        self.cls = cls
        self.limit = limit  # a quarter of the gold file
        self.room = room  # the folder's size limit
        self.written = 0
        #: given up for a reason the next reading would meet again (too large, not exact),
        #: not a failing disk
        self.lasting = False
        self.encoder = msgspec.msgpack.Encoder()
        self.decoder = decoder

    @classmethod
    def start(cls, entry: Path, key: str, example: type, size: int, limit: int
              ) -> _Writer | None:
        """A writer of examples of the class ``example`` for a gold file of ``size`` bytes
        (the entry at most a quarter of it and at most ``limit`` bytes), or None when they are
        not to be kept (not a slotted dataclass, no room)."""
        if not dataclasses.is_dataclass(example) or "__slots__" not in example.__dict__:
            return None  # a field msgspec cannot see could be lost
        try:
            decoder = msgspec.msgpack.Decoder(list[example])  # type: ignore[valid-type]
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = temp_beside(entry)
        except (OSError, TypeError):
            return None
        handle = os.fdopen(fd, "wb")
        name = f"{example.__module__}:{example.__qualname__}"
        writer = cls(handle, temporary, example, size // 4, limit, decoder)
        try:
            handle.write(json.dumps({"key": key, "class": name}).encode() + b"\n")
        except OSError:
            writer.abandon()
            return None
        return writer

    def add(self, batch: list[Any]) -> bool:
        """Write ``batch``; False (the file removed) when it cannot be kept exactly or the
        whole grows past a quarter of the gold file."""
        if not self._add(batch):
            self.abandon()
            return False
        return True

    def _add(self, batch: list[Any]) -> bool:
        self.lasting = True
        if any(type(example) is not self.cls for example in batch):
            return False
        try:
            data = self.encoder.encode(batch)
            again = self.decoder.decode(data)
            if again != batch or self.encoder.encode(again) != data:
                return False
            self.written += len(data) + _LENGTH
            if self.written > self.limit:
                return False
            if self.written > self.room:  # no mark: a larger limit may keep them
                self.lasting = False
                return False
        except (msgspec.MsgspecError, TypeError, ValueError, OverflowError):
            return False
        self.lasting = False
        try:
            self.handle.write(len(data).to_bytes(_LENGTH, "little") + data)
        except OSError:  # a full disk: another reading may keep them
            return False
        return True

    def finish(self, entry: Path, path: Path, before: os.stat_result) -> bool:
        """Put the entry in place if the gold file did not change while it was read; whether
        it was."""
        try:
            self.handle.close()
            if file_identity(path, os.stat(path)) == file_identity(path, before):
                os.replace(self.temporary, entry)
                return True
        except OSError:
            pass  # nothing kept: the next run reads the gold file again
        finally:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
        return False

    def abandon(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()
        with contextlib.suppress(OSError):
            os.unlink(self.temporary)
