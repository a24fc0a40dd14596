"""HotpotQA's cited supporting facts read from a reply (reply_facts.cited_facts) against the
plain statement of its rules: exact title, else the same title ignoring case and punctuation,
else a paragraph number; an unknown title kept as written."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.benchmarks.hotpotqa.reply_facts import cited_facts
from hopscore.text.labels import strip_think
from hopscore.text.normalize import normalize_answer

TITLES = ["Ed Wood", "Scott Derrickson", "The Quill (film)", "2 Fast"]


def plain(output: str, titles: list[str]) -> tuple[tuple[str, int], ...]:
    text = strip_think(output)
    labels = list(re.finditer(r"supporting\s+(?:facts|sentences|evidence)", text, re.I))
    if labels:
        text = text[labels[-1].end():]
    normalized = {normalize_answer(title): title for title in titles}
    facts: dict[tuple[str, int], None] = {}
    pattern = r"\[\s*([^\[\]\n]{1,300}?)\s*,\s*(?:sentence\s*|s)?(\d{1,4})\s*\]"
    for match in re.finditer(pattern, text, re.I):
        raw = match.group(1).strip().strip("\"'*_`").strip()
        title = raw
        number = re.match(r"^(?:paragraph|para|p)?\s*#?(\d{1,3})$", raw, re.I)
        if raw not in titles:
            if normalize_answer(raw) in normalized:
                title = normalized[normalize_answer(raw)]
            elif number and 1 <= int(number.group(1)) <= len(titles):
                title = titles[int(number.group(1)) - 1]
        facts[(title, int(match.group(2)))] = None
    return tuple(facts)


CITED = st.sampled_from([*TITLES, "ed wood", "SCOTT DERRICKSON!", "**Ed Wood**", "Paragraph 2",
                         "3", "p4", "#1", "9", "Nobody", "2 fast"])
PIECE = st.one_of(
    st.builds(lambda t, n: f"[{t}, {n}]", CITED, st.integers(0, 12)),
    st.sampled_from(["Supporting facts:", "<think>[Ed Wood, 1]</think>", " text ", "\n",
                     "</think>", "<think>"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECE, max_size=8))
def test_citations_are_read_as_the_rules_say(pieces: list[str]) -> None:
    output = "".join(pieces)
    assert cited_facts(output, TITLES) == plain(output, TITLES)
