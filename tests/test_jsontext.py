"""hopscore.files.jsontext writes exactly the text of ``json.dumps(..., ensure_ascii=False)``.

Cache keys, resume keys and prompt hashes are sha256 of that text, so one character of
difference would make every existing cache and run directory miss: the oracle is the standard
library's own encoder, on random values with every kind of character (controls, DEL, accents,
astral characters, lone surrogates, backslashes before ``u``) and on the cases that decide
the fast path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.engine import ChatRequest, canonical_json, sha256_text
from hopscore.files.jsontext import dumps, dumps_encodable, escape_surrogates

OPTIONS: list[dict[str, Any]] = [
    {}, {"sort_keys": True, "separators": (",", ":")}, {"indent": 2}, {"separators": (",", ":")},
]

#: characters that decide the encoding: controls, the short escapes, DEL, Latin-1, a BMP
#: character, an astral one, lone surrogates (high and low), and text that looks like escapes
PIECES = ["\x00", "\x01", "\x1f", "\n", "\t", "\r", "\b", "\f", '"', "\\", "\x7f", "\x80",
          "é", "\u2028", "\ufeff", "😀", "\ud83d", "\ude00", "\ud800", "\udfff", "u001f",
          "\\u00e9", "\\\\u00e9", "\\ud83d", "u", "a"]
text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(blacklist_categories=())),  # surrogates too
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(value: Any) -> None:
    for options in OPTIONS:
        assert dumps(value, **options) == json.dumps(value, ensure_ascii=False, **options)
        assert dumps_encodable(value, **options) == escape_surrogates(
            json.dumps(value, ensure_ascii=False, **options))


@pytest.mark.parametrize("piece", [*PIECES, "😀😀", "\ud83d\ude00", "é\\", "\\é", "\x7fé",
                                   "é\x01", "é\ud800", "a\\\\\\u00e9", ""])
def test_each_deciding_case(piece: str) -> None:
    for value in (piece, {piece: [piece, 1.5, None]}, [f"x{piece}y", piece * 3]):
        for options in OPTIONS:
            assert dumps(value, **options) == json.dumps(value, ensure_ascii=False, **options)
            encodable = dumps_encodable(value, **options)
            assert encodable == escape_surrogates(json.dumps(value, ensure_ascii=False,
                                                             **options))
            assert json.loads(encodable.encode("utf-8")) == json.loads(json.dumps(value))


def test_cache_keys_are_those_earlier_versions_wrote() -> None:
    """A request's cache key and a prompt's hash are the ones hopscore computed before (with
    ``json.dumps(..., ensure_ascii=False)``): a cache filled by an earlier version still hits."""
    messages = [{"role": "system", "content": "Réponds brièvement.\n"},
                {"role": "user", "content": "Qui a écrit « Ed Wood » ? 😀 \\u00e9 \x7f"}]
    request = ChatRequest(model="m", messages=messages, temperature=0.0, max_tokens=64,
                          stop=["\nQuestion:"], cache_tag="repeat=1")
    earlier = json.dumps({"endpoint": "http://127.0.0.1:8000/v1", "model": "m",
                          "messages": messages, "params": request.body(), "tag": "repeat=1",
                          "require_content": True},
                         sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert request.cache_key("http://127.0.0.1:8000/v1") == sha256_text(earlier)
    # the same value, as main at b4456b1 computed it: a change of the fields or encoding shows
    assert sha256_text(earlier) == \
        "f251fc88332cf4aa2424dff26b046945bd47f0aafb119c0d29109e496092cc50"
    again = ChatRequest(model="m", messages=messages, temperature=0.0, max_tokens=64,
                        stop=["\nQuestion:"], cache_tag="repeat=1")  # a fresh memo
    assert again.cache_key("http://127.0.0.1:8000/v1", canonical_json(messages)) == \
        sha256_text(earlier)
    assert canonical_json(messages) == json.dumps(messages, sort_keys=True,
                                                  separators=(",", ":"), ensure_ascii=False)



@settings(max_examples=200, deadline=None)
@given(text, text, st.lists(st.fixed_dictionaries({"role": text, "content": text}), max_size=3),
       st.none() | st.floats(0, 2), st.none() | st.integers(1, 9), st.none() | st.lists(text),
       st.dictionaries(text, values, max_size=3), text, st.booleans())
def test_a_requests_cache_key_is_the_hash_of_its_canonical_json(
    endpoint: str, model: str, messages: list[dict[str, Any]], temperature: float | None,
    max_tokens: int | None, stop: list[str] | None, extra: dict[str, Any], tag: str,
    require_content: bool,
) -> None:
    """The key is written in pieces (the messages encoded once): the same text as the whole."""
    request = ChatRequest(model=model, messages=messages, temperature=temperature,
                          max_tokens=max_tokens, stop=stop, extra=extra, cache_tag=tag,
                          require_content=require_content)
    whole = json.dumps({"endpoint": endpoint, "model": model, "messages": messages,
                        "params": request.body(), "tag": tag,
                        "require_content": require_content},
                       sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert request.cache_key(endpoint) == sha256_text(whole)


messages = st.lists(st.dictionaries(text, text, max_size=3), max_size=3)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text


@settings(max_examples=300, deadline=None)
@given(messages, st.dictionaries(text, scalars | messages | values, max_size=4))
def test_chat_messages_and_requests_holding_them(chat: list[dict[str, str]],
                                                 request: dict[str, Any]) -> None:
    """The msgspec path (a list of string dicts, or a dict holding one) writes the same text."""
    body = {**request, "messages": chat}
    for value in (chat, body, [*chat, {"n": 1}], {"m": chat, "x": [chat]}):
        for options in OPTIONS:
            assert dumps(value, **options) == json.dumps(value, ensure_ascii=False, **options)
            assert dumps_encodable(value, **options) == escape_surrogates(
                json.dumps(value, ensure_ascii=False, **options))


def test_msgspec_escapes_every_character_as_json_does() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    chat = [{"role": "user", "content": every + "\\u00e9 \x7f"}]
    for options in OPTIONS:
        assert dumps(chat, **options) == json.dumps(chat, ensure_ascii=False, **options)
