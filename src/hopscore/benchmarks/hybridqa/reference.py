"""A ``dev_reference.json`` read in about half the memory of the parsed document.

The reference is ``{"reference": {id: answer}, "table": [id, ...], "passage": [id, ...]}``:
one JSON document, so the whole of it is parsed before the first example is scored. Read by the
standard library, a million ids cost their strings three times (the reference's keys and the
two lists), a location dict and the parser's list of pairs. Here msgspec decodes it from the
memory-mapped file into the reference dict and one list at a time, and each list's ids are
folded into the reference's values: every answer gets a one-character tag (``\\x00`` no
location, ``t`` table, ``p`` passage), so the lists are dropped at once.

A key repeated in one object (which the standard-library reading reports, and msgspec would
silently overwrite) is caught by counting the file's colons: every ``:`` is either a key's or
inside a string that was decoded. Anything unusual (an answer that is not a string, an id
listed twice or not in the reference, an escaped colon, other top-level keys) returns None and
the caller reads the file the checked way, which names the problem.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable
from contextlib import suppress
from itertools import repeat
from pathlib import Path

import msgspec

from hopscore.files.jsonstream import count_colons, map_read, release

LOCATIONS = ("table", "passage")
#: the tag of an answer -> its location
TAGS: dict[str, str | None] = {"\x00": None, "t": "table", "p": "passage"}
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ANSWERS = msgspec.json.Decoder(dict[str, str])
_IDS = msgspec.json.Decoder(list[str])


def read_reference_quickly(path: Path) -> dict[str, str] | None:
    """The reference's answers, each tagged with its location (:data:`TAGS`), or None."""
    mapped = map_read(path)
    if mapped is None:
        return None
    try:
        answers = _read(mapped)
    finally:
        with suppress(BufferError):  # a decoded slice still held (only on an error)
            mapped.close()
    return answers


def _read(mapped: mmap.mmap) -> dict[str, str] | None:
    start = 3 if mapped[:3] == b"\xef\xbb\xbf" else 0
    head = mapped[start:start + 4096].lstrip()
    if not head.startswith(b"{") or mapped.find(b"\\u003a", start) >= 0 \
            or mapped.find(b"\\u003A", start) >= 0:
        return None
    try:
        top = _TOP.decode(mapped[start:] if start else mapped)
        release(mapped)  # each decoding reads the file's pages: they are dropped after it
        if "reference" not in top or not set(top) <= {"reference", *LOCATIONS}:
            return None
        answers = _ANSWERS.decode(top["reference"])
        release(mapped)
        colons = len(top) + _colons(top) + len(answers) + _colons(answers)
        colons += _colons(answers.values())
        for key, answer in answers.items():
            answers[key] = "\x00" + answer
        for tag, group in zip("tp", LOCATIONS, strict=True):
            if group not in top:
                continue
            ids = _IDS.decode(top[group])
            release(mapped)
            colons += _colons(ids)
            for qid in ids:
                tagged = answers.get(qid)
                if tagged is None or tagged[0] != "\x00":  # not a question, or listed twice
                    return None
                answers[qid] = tag + tagged[1:]
            del ids
    except msgspec.DecodeError:
        return None
    finally:
        top = {}  # the decoded slices of the mapped file go before it is closed
    if count_colons(mapped, start) != colons:  # a key repeated inside one object
        return None
    return answers


def _colons(texts: Iterable[str]) -> int:
    """Colons in the strings (without joining them: a million answers would be copied)."""
    return sum(map(str.count, texts, repeat(":")))


