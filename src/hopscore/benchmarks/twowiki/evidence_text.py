"""Evidence triples in a model's reply for 2WikiMultihopQA: the relation names offered in the
prompt, the reply's "Evidence:" section and the ``(subject; relation; object)`` triples in it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hopscore.benchmarks.twowiki.example import Triple, TwoWikiExample

#: Relations of 2WikiMultihopQA's evidence triples (Wikidata property labels) offered to a
#: model besides those found in the gold file.
RELATIONS = (
    "director", "producer", "composer", "performer", "author", "editor", "creator",
    "founded by", "publisher", "manufacturer", "presenter", "date of birth", "date of death",
    "place of birth", "place of death", "place of burial", "cause of death",
    "country of citizenship", "country", "country of origin", "located in", "educated at",
    "employer", "occupation", "award received", "father", "mother", "spouse", "child",
    "sibling", "publication date", "inception",
)
_EVIDENCE_LABEL = re.compile(r"^[\s>*_#-]*evidence\s*(?:triples)?\s*[:：]", re.I | re.M)
_SECTION_END = re.compile(r"^[\s>*_#-]*(?:(?:final\s+)?answer|supporting\s+facts)\s*[:：]",
                          re.I | re.M)
_GROUP = re.compile(r"\(([^()\n]{3,400})\)|\[([^\[\]\n]{3,400})\]")


def relation_vocabulary(examples: Sequence[TwoWikiExample]) -> tuple[str, ...]:
    found = {triple[1] for example in examples for triple in example.evidences}
    return tuple(dict.fromkeys([*RELATIONS, *sorted(found - set(RELATIONS))]))


def split_evidence(output: str) -> tuple[str, str]:
    """(the reply without its evidence section, the evidence section): the section runs from
    the last "Evidence:" line to the next "Answer:" or "Supporting facts:" line."""
    labels = list(_EVIDENCE_LABEL.finditer(output))
    if not labels:
        return output, ""
    start = labels[-1]
    rest = output[start.end():]
    end = _SECTION_END.search(rest)
    cut = start.end() + (end.start() if end else len(rest))
    return output[:start.start()] + output[cut:], output[start.end():cut]


def cited_triples(text: str, relations: Sequence[str] = RELATIONS) -> tuple[Triple, ...]:
    """(subject; relation; object) triples written in parentheses or brackets.

    Parts are split on ";" or "|" when that gives three; otherwise on commas around a known
    relation (longest first, so "date of birth" wins over "birth"), so names holding commas
    survive; otherwise on exactly two commas. Quotes and spaces around parts are dropped;
    duplicates are dropped, order kept.
    """
    known = sorted({r.lower() for r in relations}, key=len, reverse=True)
    out: dict[Triple, None] = {}
    for match in _GROUP.finditer(text):
        inner = (match.group(1) or match.group(2)).strip()
        parts: list[str] | None = None
        for separator in (";", "|"):
            pieces = inner.split(separator)
            if len(pieces) == 3:
                parts = pieces
                break
        if parts is None:
            lowered = inner.lower()
            for relation in known:
                at = lowered.find(f", {relation},")
                if at > 0:
                    parts = [inner[:at], inner[at + 2: at + 2 + len(relation)],
                             inner[at + 3 + len(relation):]]
                    break
        if parts is None and inner.count(",") == 2:
            parts = inner.split(",")
        if parts is None:
            continue
        triple = tuple(p.strip().strip("\"'“”‘’`*").strip() for p in parts)
        if all(triple):
            out[triple] = None
    return tuple(out)
