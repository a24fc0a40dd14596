"""Deterministic adversarial predictions for the parity tests.

The same functions produced the predictions that the official scorers were run on (outside the
repository) to get the expected numbers in ``tests/parity/expected/``; the tests regenerate them
and check that hopscore prints the same numbers. Every choice is a SHA-256 of (seed, id, purpose),
so the output does not depend on Python's ``random`` or on dict ordering. Changing anything here
changes the predictions, and the expected numbers must then be recomputed with the official
scripts (see ``tests/parity/README.md``).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

SEED = "hopscore-parity-1"


def pick(seed: str, key: str, n: int) -> int:
    """A stable integer in [0, n) for (seed, key)."""
    digest = hashlib.sha256(f"{seed}|{key}".encode()).hexdigest()
    return int(digest, 16) % n


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def _first(text: str) -> str:
    parts = text.split()
    return parts[0] if parts else text


#: (name, transform(gold, other_answer) -> prediction). Each probes one normalization rule.
ANSWER_VARIANTS: list[tuple[str, Callable[[str, str], str]]] = [
    ("exact", lambda a, o: a),
    ("exact2", lambda a, o: a),
    ("upper", lambda a, o: a.upper()),
    ("trailing-punct", lambda a, o: a.lower() + "!?"),
    ("article-prefix", lambda a, o: f"The {a}"),
    ("an-prefix", lambda a, o: f"an {a}"),
    ("unicode-quotes", lambda a, o: f"“{a}”"),
    ("en-dash", lambda a, o: a.replace(" ", "–", 1) if " " in a else f"{a}–"),
    ("hyphen-join", lambda a, o: a.replace(" ", "-")),
    ("repeat-token", lambda a, o: f"{a} {_first(a)} {_first(a)}"),
    ("reversed-tokens", lambda a, o: " ".join(reversed(a.split()))),
    ("first-token", lambda a, o: _first(a)),
    ("extra-tokens", lambda a, o: f"{a} and {o}"),
    ("other-answer", lambda a, o: o),
    ("yes", lambda a, o: "yes"),
    ("no", lambda a, o: "No."),
    ("yes-sir", lambda a, o: "yes sir" if a.lower() == "yes" else f"{a} yes"),
    ("flip-yes-no", lambda a, o: {"yes": "no", "no": "yes"}.get(a.strip().lower(), a)),
    ("noanswer", lambda a, o: "noanswer"),
    ("empty", lambda a, o: ""),
    ("only-article", lambda a, o: "The"),
    ("whitespace", lambda a, o: "  \t" + a.replace(" ", "\u00a0") + "\n"),
    ("no-accents", lambda a, o: _strip_accents(a)),
    ("no-commas", lambda a, o: a.replace(",", "")),
    ("dotted", lambda a, o: a.replace(" ", ".")),
    ("ellipsis", lambda a, o: f"{a}…"),
]


def answer_variant(seed: str, key: str, gold: str, other: str) -> str:
    _, transform = ANSWER_VARIANTS[pick(seed, key + "|answer", len(ANSWER_VARIANTS))]
    return transform(gold, other)


Fact = list[Any]


def fact_variant(seed: str, key: str, gold: Sequence[Fact], titles: Sequence[str]) -> list[Fact]:
    """Supporting facts: exact, partial, duplicated, case-changed, wrong sentence, extra, empty."""
    facts = [list(f) for f in gold]
    kind = pick(seed, key + "|sp", 10)
    other_title = titles[pick(seed, key + "|title", len(titles))] if titles else "Nothing"
    if kind == 0 or not facts:
        return facts
    if kind == 1:
        return facts[:-1]
    if kind == 2:
        return [*facts, facts[0], list(facts[0])]
    if kind == 3:
        return [[facts[0][0].lower(), facts[0][1]], *facts[1:]]
    if kind == 4:
        return [[facts[0][0], facts[0][1] + 1], *facts[1:]]
    if kind == 5:
        return [*facts, [other_title, 0], [other_title, 1]]
    if kind == 6:
        return []
    if kind == 7:
        return [*list(reversed(facts)), [facts[-1][0].upper(), facts[-1][1]]]
    if kind == 8:
        return [[f[0].lower(), f[1]] for f in facts] + facts
    return [*facts[:1], [other_title, 2]]


def hotpot_predictions(gold: Sequence[dict[str, Any]], seed: str = SEED) -> dict[str, Any]:
    """An official HotpotQA prediction object with missing answers/sp and extra ids."""
    answers: dict[str, str] = {}
    sp: dict[str, list[Fact]] = {}
    n = len(gold)
    for index, record in enumerate(gold):
        qid = record["_id"]
        other = gold[(index + 1) % n]["answer"]
        titles = [c[0] for c in record.get("context", [])]
        missing = pick(seed, qid + "|missing", 12)
        if missing != 0:
            answers[qid] = answer_variant(seed, qid, record["answer"], other)
        if missing != 1:
            sp[qid] = fact_variant(seed, qid, record["supporting_facts"], titles)
    answers["extra-id-not-in-gold"] = "extra"
    sp["extra-id-not-in-gold"] = [["Extra", 0]]
    return {"answer": answers, "sp": sp}


def hybridqa_predictions(reference: dict[str, str], seed: str = SEED) -> list[dict[str, str]]:
    """The official HybridQA list, one record per reference id (the official script needs all)."""
    qids = list(reference)
    out = []
    for index, qid in enumerate(qids):
        other = reference[qids[(index + 1) % len(qids)]]
        out.append({"question_id": qid, "pred": answer_variant(seed, qid, reference[qid], other)})
    return out


def answer_list_predictions(golds: Sequence[str], seed: str = SEED) -> list[str]:
    """One adversarial answer per gold answer, by position (Bamboogle)."""
    return [
        answer_variant(seed, str(i), gold, golds[(i + 1) % len(golds)])
        for i, gold in enumerate(golds)
    ]


def _evidence_variant(
    seed: str, key: str, record: dict[str, Any], aliases: dict[str, list[str]]
) -> list[list[str]]:
    triples = [list(t) for t in record.get("evidences", [])]
    ids = record.get("evidences_id") or []
    kind = pick(seed, key + "|evidence", 9)
    if not triples:
        return [["nothing", "relation", "nothing"]] if kind % 2 else []
    first = triples[0]
    subject_aliases = aliases.get(ids[0][0], []) if ids else []
    object_aliases = aliases.get(ids[0][2], []) if ids else []
    if kind == 0:
        return triples
    if kind == 1:
        return [[t[0].upper() + "!", t[1].title(), t[2] + "."] for t in triples]
    if kind == 2:  # alias forms next to the gold form: recall can exceed 1
        extra = [[first[0], first[1], alias] for alias in object_aliases]
        extra += [[alias, first[1], first[2]] for alias in subject_aliases]
        return triples + extra
    if kind == 3:  # articles are not removed from evidence
        return [[f"the {t[0]}", t[1], t[2]] for t in triples]
    if kind == 4:
        return [*triples[:1], list(triples[0])]
    if kind == 5:
        return []
    if kind == 6:
        return [[t[0], t[1] + " of", t[2]] for t in triples]
    if kind == 7:
        return [[alias, first[1], first[2]] for alias in subject_aliases] or triples[1:]
    return [*triples, ["someone", "sibling", "someone else"]]


def twowiki_predictions(
    gold: Sequence[dict[str, Any]], aliases: dict[str, list[str]], seed: str = SEED
) -> dict[str, Any]:
    """An official 2Wiki prediction object: answers (with alias forms), sp, evidence."""
    answers: dict[str, str] = {}
    sp: dict[str, list[Fact]] = {}
    evidence: dict[str, list[list[str]]] = {}
    n = len(gold)
    for index, record in enumerate(gold):
        qid = record["_id"]
        other = gold[(index + 1) % n]["answer"]
        titles = [c[0] for c in record.get("context", [])]
        names = aliases.get(record.get("answer_id") or "", [])
        base = (
            names[pick(seed, qid + "|alias", len(names))]
            if names and pick(seed, qid + "|use-alias", 3) == 0
            else record["answer"]
        )
        missing = pick(seed, qid + "|missing", 10)
        if missing != 0:
            answers[qid] = answer_variant(seed, qid, base, other)
        if missing != 1:
            sp[qid] = fact_variant(seed, qid, record["supporting_facts"], titles)
        if missing != 2:
            evidence[qid] = _evidence_variant(seed, qid, record, aliases)
    answers["extra-id-not-in-gold"] = "extra"
    return {"answer": answers, "sp": sp, "evidence": evidence}


def quartz_answers(gold: Sequence[dict[str, Any]], seed: str = SEED) -> list[str]:
    """QuaRTz answers in the forms on which MCR's rule and hopscore agree (labels, "A. text")."""
    out = []
    for record in gold:
        choices = record["question"]["choices"]
        choice = choices[pick(seed, record["id"] + "|choice", len(choices))]
        label, text = choice["label"], choice["text"]
        forms = [
            label,
            f"{label}. {text}",
            f"{label}) {text}",
            f"{label}.",
            f"{label}\n",
            f"{label}: {text}",
        ]
        out.append(forms[pick(seed, record["id"] + "|form", len(forms))])
    return out
