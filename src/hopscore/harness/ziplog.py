"""The entries of a zip archive (an inspect ``.eval`` log), decompressed in bounded memory.

Python's :mod:`zipfile` before 3.14 has no Zstandard, the method inspect_ai writes ``.eval``
logs with (method 93); inspect_ai adds it by patching :mod:`zipfile` (``zipfile_zstd``), which
a reader without inspect_ai does not have. So the entries are read here: :mod:`zipfile` reads
the central directory (names, methods, sizes, offsets), and each entry's compressed bytes,
found after its local header, are streamed through the decompressor of its method (stored,
deflate, bzip2, lzma from the standard library; Zstandard from the ``zstandard`` package,
one frame read after another, as inspect writes several for a large entry).

An entry whose header declares more than :func:`entry_limit` bytes is an error at once; every
other entry is decompressed a window at a time and stops with an error as soon as its output
passes the smaller of the cap and its declared size, so a small archive holding a huge entry (a
zip bomb, honest or with a forged header) costs neither the memory nor the time of decompressing
it. The output is checked against the entry's CRC-32.
"""

from __future__ import annotations

import bz2
import lzma
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

from hopscore.errors import HopscoreError, InputError

#: the largest decompressed entry read, in MiB (``HOPSCORE_MAX_LOG_ENTRY_MB`` overrides it)
DEFAULT_ENTRY_LIMIT_MB = 256
ENV_LIMIT = "HOPSCORE_MAX_LOG_ENTRY_MB"
ZSTANDARD = 93
_WINDOW = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"


def entry_limit() -> int:
    """The cap on one entry's decompressed size, in bytes."""
    text = os.environ.get(ENV_LIMIT, "").strip()
    if not text:
        return DEFAULT_ENTRY_LIMIT_MB << 20
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise HopscoreError(f"{ENV_LIMIT} must be a positive number of MiB, not {text!r}")
    return int(value * (1 << 20))


def archive_entries(path: Path) -> list[zipfile.ZipInfo]:
    """The entries of the archive, from its central directory."""
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(path, f"not a readable zip archive: {exc}") from None


def read_entry(path: Path, handle: BinaryIO, info: zipfile.ZipInfo, limit: int) -> bytes:
    """One entry's decompressed bytes (at most ``limit`` of them, else an error)."""
    return b"".join(iter_entry(path, handle, info, limit))


def iter_entry(path: Path, handle: BinaryIO, info: zipfile.ZipInfo,
               limit: int) -> Iterator[bytes]:
    """One entry's decompressed bytes, a window at a time."""
    where = f"{path}!{info.filename}"
    if info.flag_bits & 0x1:
        raise InputError(where, "the entry is encrypted")
    if info.file_size > limit:
        raise InputError(where, _too_large(info, limit))
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
        raise InputError(where, "no local file header where the central directory points")
    fields = _LOCAL_HEADER.unpack(header)
    source = _Slice(handle, info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10],
                    info.compress_size, where)
    size = 0
    crc = 0
    for piece in _decompressed(source, info.compress_type, where):
        size += len(piece)
        if size > limit:
            raise InputError(where, _too_large(info, limit))
        if size > info.file_size:
            raise InputError(where, f"the entry decompresses to more than the {info.file_size} "
                             "bytes its header declares (a damaged or forged archive)")
        crc = zlib.crc32(piece, crc)
        yield piece
    if crc != info.CRC:
        raise InputError(where, "the decompressed entry does not match its CRC-32 "
                         "(a damaged archive)")


def _too_large(info: zipfile.ZipInfo, limit: int) -> str:
    return (f"the entry decompresses to more than {limit / (1 << 20):g} MiB ({info.compress_size} "
            f"bytes compressed); a larger entry can be read by setting {ENV_LIMIT} (MiB)")


class _Slice:
    """The compressed bytes of one entry, read from the archive as a file."""

    def __init__(self, handle: BinaryIO, start: int, size: int, where: str) -> None:
        self.handle = handle
        self.position = start
        self.remaining = size
        self.where = where

    def read(self, size: int = -1) -> bytes:
        wanted = self.remaining if size is None or size < 0 else min(size, self.remaining)
        if not wanted:
            return b""
        self.handle.seek(self.position)
        data = self.handle.read(wanted)
        if not data:
            raise InputError(self.where, "the archive ends inside the entry (a truncated file)")
        self.position += len(data)
        self.remaining -= len(data)
        return data


def _decompressed(source: _Slice, method: int, where: str) -> Iterator[bytes]:
    if method == zipfile.ZIP_STORED:
        yield from iter(lambda: source.read(_WINDOW), b"")
    elif method == ZSTANDARD:
        yield from _zstd(source, where)
    elif method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        yield from _stdlib(source, method, where)
    else:
        raise InputError(where, f"compression method {method} is not one hopscore reads "
                         "(stored, deflate, bzip2, lzma, zstandard)")


def _stdlib(source: _Slice, method: int, where: str) -> Iterator[bytes]:
    """deflate, bzip2, lzma: at most a window of output per step, whatever the input."""
    engine: Any
    if method == zipfile.ZIP_DEFLATED:
        engine = zlib.decompressobj(-15)
    elif method == zipfile.ZIP_BZIP2:
        engine = bz2.BZ2Decompressor()
    else:  # a 4-byte version, a 2-byte properties length, the properties, raw LZMA1
        head = source.read(4)
        (length,) = struct.unpack("<H", head[2:4]) if len(head) == 4 else (0,)
        properties = source.read(length)
        try:
            filters = [lzma._decode_filter_properties(  # type: ignore[attr-defined]
                lzma.FILTER_LZMA1, properties)]
        except lzma.LZMAError as exc:
            raise InputError(where, f"not valid lzma data: {exc}") from None
        engine = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)
    try:
        yield from (_zlib(source, engine) if method == zipfile.ZIP_DEFLATED
                    else _buffered(source, engine))
    except (zlib.error, OSError, lzma.LZMAError, EOFError) as exc:
        raise InputError(where, f"the compressed data is damaged: {exc}") from None


def _zlib(source: _Slice, engine: Any) -> Iterator[bytes]:
    while True:
        data = source.read(_WINDOW)
        while True:
            piece = engine.decompress(data, _WINDOW)
            data = engine.unconsumed_tail
            if piece:
                yield piece
            if engine.eof or (not data and len(piece) < _WINDOW):
                break
        if engine.eof or source.remaining == 0:
            rest = engine.flush()
            if rest:
                yield rest
            return


def _buffered(source: _Slice, engine: Any) -> Iterator[bytes]:
    """bz2 / lzma decompressors, which keep unread input themselves."""
    while not engine.eof:
        data = source.read(_WINDOW)
        if not data and engine.needs_input:
            raise EOFError("the compressed stream ends early")
        while True:
            piece = engine.decompress(data, _WINDOW)
            data = b""
            if piece:
                yield piece
            if engine.eof or engine.needs_input:
                break


def _zstd(source: _Slice, where: str) -> Iterator[bytes]:
    """Zstandard data, one frame after another (inspect writes several for a large entry)."""
    try:
        import zstandard
    except ImportError:
        raise InputError(where, "the entry is compressed with Zstandard, which needs the "
                         "zstandard package (pip install zstandard)") from None
    reader = zstandard.ZstdDecompressor().stream_reader(cast(Any, source), read_size=1 << 16,
                                                        read_across_frames=True)
    try:
        yield from iter(lambda: reader.read(_WINDOW), b"")
    except zstandard.ZstdError as exc:
        raise InputError(where, f"not valid Zstandard data: {exc}") from None
