"""``json.dumps(value, ensure_ascii=False, ...)``, the same text, about twice as fast.

CPython's encoder writes a string with ``ensure_ascii=False`` character by character (about
30 µs for an 8 KB prompt), but with ``ensure_ascii=True`` a third as long. So :func:`dumps`
encodes with ``ensure_ascii=True`` and then turns the ``\\uXXXX`` escapes that
``ensure_ascii=False`` would not have written back into their characters, with the
``raw_unicode_escape`` codec. That codec decodes ``\\u`` only after an odd number of
backslashes, which is exactly when JSON text holds an escape (``\\\\u`` is an escaped backslash
and a ``u``), and leaves every other backslash as it is.

Two kinds of escapes must stay as ``ensure_ascii=False`` writes them, and the codec would
decode them: control characters below U+0020 (``\\u0000``-``\\u001f``; both modes escape them)
and surrogates (an astral character is one escaped surrogate pair, and so are two lone
surrogates side by side, which ``ensure_ascii=False`` writes as they are). Text with either
(or with anything that looks like them, such as an escaped backslash before ``u001f``) is
encoded the slow way, so the result is always the text ``json.dumps`` gives: cache keys and
resume keys hashed from it stay the same (tests/test_jsontext.py compares them on random
values).

Chat messages (a list of dicts of strings, alone or as a value of the request's dict) are the
long texts encoded for every request, twice (the cache key, the body): their strings are
encoded by msgspec, about five times faster than CPython, and the JSON around them is written
here with the same separators and key order. msgspec escapes every character exactly as
``ensure_ascii=False`` does (checked for every code point) and refuses a lone surrogate, which
is then encoded the way above.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import msgspec

#: an escape the codec would decode but ``ensure_ascii=False`` keeps: a control character or a
#: surrogate (lower-case hex: both json encoders write it so)
_KEPT_ESCAPE = re.compile(r"\\u(?:00[01]|d[89a-f])")


@lru_cache(maxsize=16)
def _encoders(sort_keys: bool, separators: tuple[str, str] | None, indent: int | None
              ) -> tuple[json.JSONEncoder, json.JSONEncoder]:
    """The ``ensure_ascii`` True and False encoders of a set of options, made once (json.dumps
    with options makes an encoder per call: a few µs, as much as a short value's encoding)."""
    return (json.JSONEncoder(ensure_ascii=True, sort_keys=sort_keys, separators=separators,
                             indent=indent),
            json.JSONEncoder(ensure_ascii=False, sort_keys=sort_keys, separators=separators,
                             indent=indent))


_STRING = msgspec.json.Encoder().encode  # a str's JSON as UTF-8 (UnicodeEncodeError: surrogate)


def _scalar(value: Any) -> str | None:
    """A string's, number's, bool's or None's JSON as json writes it (None: another kind)."""
    kind = type(value)
    if kind is str:
        return _STRING(value).decode()
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return float.__repr__(value) if value - value == 0 else None  # NaN, inf: json's way
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return None


def _flat(value: Any, sort_keys: bool, item: str, key: str) -> str | None:
    """The JSON of a scalar, a list of scalars or a list of chat messages (dicts of strings to
    strings); None for anything else."""
    if type(value) is not list:
        return _scalar(value)
    parts: list[str] = []
    for element in value:
        if type(element) is dict:  # a message
            fields: list[str] = []
            for name, text in sorted(element.items()) if sort_keys else element.items():
                if type(name) is not str or type(text) is not str:
                    return None
                fields.append(_STRING(name).decode() + key + _STRING(text).decode())
            parts.append("{" + item.join(fields) + "}")
        else:
            part = _scalar(element)
            if part is None:
                return None
            parts.append(part)
    return "[" + item.join(parts) + "]"


def _with_messages(value: Any, sort_keys: bool, separators: tuple[str, str] | None
                   ) -> str | None:
    """The JSON of chat messages, or of a dict holding them (a request), its other values
    scalars or lists of them, or anything else encoded the usual way one by one. None for any
    other value, or text with a lone surrogate.

    (Not for a results row: its many small values cost more one by one than in one call.)"""
    item, key = (", ", ": ") if separators is None else separators
    try:
        if type(value) is list:
            return _flat(value, sort_keys, item, key) if value else None
        if type(value) is not dict or type(value.get("messages")) is not list:
            return None
        fields: list[str] = []
        for name, inner in sorted(value.items()) if sort_keys else value.items():
            if type(name) is not str:
                return None
            text = _flat(inner, sort_keys, item, key)
            if text is None:
                text = _encoded(inner, sort_keys, separators, None)
            fields.append(_STRING(name).decode() + key + text)
        return "{" + item.join(fields) + "}"
    except UnicodeEncodeError:  # a lone surrogate: msgspec does not write it
        return None


def dumps(value: Any, *, sort_keys: bool = False, separators: tuple[str, str] | None = None,
          indent: int | None = None) -> str:
    """``json.dumps(value, ensure_ascii=False, ...)``, character for character."""
    if indent is None and (type(value) is list or type(value) is dict):
        fast = _with_messages(value, sort_keys, separators)
        if fast is not None:
            return fast
    return _encoded(value, sort_keys, separators, indent)


def _encoded(value: Any, sort_keys: bool, separators: tuple[str, str] | None,
             indent: int | None) -> str:
    """:func:`dumps` by the standard library's C encoder."""
    ascii_only, unicode = _encoders(sort_keys, separators, indent)
    text = ascii_only.encode(value)
    if "\\u" not in text:  # nothing was escaped that ensure_ascii=False writes as it is
        return text
    if _KEPT_ESCAPE.search(text) is not None:
        return unicode.encode(value)
    return text.encode("ascii").decode("raw_unicode_escape")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """JSON text with every lone surrogate written as its ``\\uXXXX`` escape.

    ``json.dumps(..., ensure_ascii=False)`` keeps a lone surrogate (valid JSON such as
    ``"\\ud800 x"`` decodes to one) as a raw character, which UTF-8 cannot encode; escaped, the
    text encodes and decodes back to the same string. Surrogates only occur inside JSON strings,
    so the replacement is always an escape within a string.
    """
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps_encodable(value: Any, *, sort_keys: bool = False,
                    separators: tuple[str, str] | None = None, indent: int | None = None) -> str:
    """``escape_surrogates(json.dumps(value, ensure_ascii=False, ...))``: text that always
    encodes as UTF-8 (a results file's line)."""
    ascii_only, unicode = _encoders(sort_keys, separators, indent)
    text = ascii_only.encode(value)
    if "\\u" not in text:
        return text
    if _KEPT_ESCAPE.search(text) is not None:  # the slow way; it may hold surrogates
        return escape_surrogates(unicode.encode(value))
    # no surrogate escape was decoded, so the text holds no surrogate
    return text.encode("ascii").decode("raw_unicode_escape")
