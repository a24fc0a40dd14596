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
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

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


def dumps(value: Any, *, sort_keys: bool = False, separators: tuple[str, str] | None = None,
          indent: int | None = None) -> str:
    """``json.dumps(value, ensure_ascii=False, ...)``, character for character."""
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
