"""Seeded generators for the MuSiQue parity test: a MuSiQue-Full gold made from MuSiQue-Ans
records, and adversarial prediction lines in the official format (same ids, same order and
line count as the gold, which the official scorer requires).

Pure functions of the gold records and a seed (``random.Random(f"{seed}:{id}:{purpose}")``),
so the test regenerates exactly what the official ``evaluate_v1.0.py`` was run on
(``run_official.py --musique``); only the numbers are committed.
"""

from __future__ import annotations

import copy
import random
from typing import Any


def _rng(seed: int, key: str, purpose: str) -> random.Random:
    return random.Random(f"{seed}:{key}:{purpose}")


def full_gold(records: list[dict[str, Any]], seed: int = 0) -> list[dict[str, Any]]:
    """MuSiQue-Full from MuSiQue-Ans: each question keeps its answerable line and gains an
    unanswerable twin (same id; one supporting paragraph dropped, as the official twins lack
    one hop's paragraph), placed before or after it by the seed."""
    out = []
    for record in records:
        twin = copy.deepcopy(record)
        twin["answerable"] = False
        supporting = [p for p in twin["paragraphs"] if p["is_supporting"]]
        rng = _rng(seed, record["id"], "twin")
        if supporting:
            dropped = rng.choice(supporting)
            twin["paragraphs"] = [p for p in twin["paragraphs"] if p is not dropped]
        for paragraph in twin["paragraphs"]:
            paragraph["is_supporting"] = False
        pair = [record, twin] if rng.random() < 0.6 else [twin, record]
        out.extend(pair)
    return out


def _answer(rng: random.Random, record: dict[str, Any]) -> str:
    gold = record["answer"]
    aliases = record.get("answer_aliases") or []
    hops = [h.get("answer", "") for h in record.get("question_decomposition") or []]
    words = gold.split()
    choice = rng.choice([
        "gold", "gold", "alias", "upper", "article", "punct", "partial", "superset", "wrong",
        "hop", "empty", "space", "only_article", "only_punct", "repeat", "spaced", "unicode",
        "number",
    ])
    if choice == "alias" and aliases:
        return rng.choice(aliases)
    if choice == "upper":
        return gold.upper() + " ."
    if choice == "article":
        return rng.choice(["the ", "The ", "a ", "An "]) + gold
    if choice == "punct":
        return f'"{gold}!"' if rng.random() < 0.5 else gold.replace(" ", ", ")
    if choice == "partial" and len(words) > 1:
        return rng.choice(words)
    if choice == "superset":
        return f"{gold} {rng.choice(['city', 'in 1990', 'and others', gold])}"
    if choice == "wrong":
        return rng.choice(["Paris", "1066", "unknown", "Johann Sebastian Bach"])
    if choice == "hop" and hops:
        return rng.choice(hops)
    if choice == "empty":
        return ""
    if choice == "space":
        return "   "
    if choice == "only_article":
        return rng.choice(["the", "A", "an the"])
    if choice == "only_punct":
        return rng.choice(["...", "?!", "-"])
    if choice == "repeat":
        return f"{gold} {gold}"
    if choice == "spaced":
        return f"  {gold.lower()}\n"
    if choice == "unicode":
        return gold.replace("e", "\u00e9") + " \u2014"
    if choice == "number":
        return rng.choice(["1", "two", "3 million"])
    return gold


def _support(rng: random.Random, record: dict[str, Any]) -> list[Any]:
    gold = [p["idx"] for p in record["paragraphs"] if p["is_supporting"]]
    others = [p["idx"] for p in record["paragraphs"] if not p["is_supporting"]]
    choice = rng.choice([
        "gold", "gold", "permuted", "duplicates", "subset", "superset", "out_of_range",
        "strings", "empty", "all", "distractors", "floats", "one",
    ])
    if choice == "permuted":
        shuffled = gold[:]
        rng.shuffle(shuffled)
        return shuffled
    if choice == "duplicates":
        return gold + gold[:1] + gold
    if choice == "subset" and len(gold) > 1:
        return rng.sample(gold, len(gold) - 1)
    if choice == "superset" and others:
        return gold + rng.sample(others, min(len(others), rng.randint(1, 3)))
    if choice == "out_of_range":
        return [*gold[:1], rng.choice([20, 21, 99, -1, 1000])]
    if choice == "strings":
        return [str(i) if rng.random() < 0.5 else f" {i}" for i in gold]
    if choice == "empty":
        return []
    if choice == "all":
        return [p["idx"] for p in record["paragraphs"]]
    if choice == "distractors" and others:
        return rng.sample(others, min(len(others), 2))
    if choice == "floats":
        return [float(i) for i in gold]
    if choice == "one" and gold:
        return [rng.choice(gold)]
    return gold


def _answerable(rng: random.Random, gold: bool) -> Any:
    choice = rng.choice(["gold", "gold", "gold", "flip", "int"])
    if choice == "flip":
        return not gold
    if choice == "int":
        return int(gold)
    return gold


def predictions(records: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """One official prediction line per gold line, in gold order."""
    out = []
    for number, record in enumerate(records):
        key = f"{record['id']}#{number}"
        out.append({
            "id": record["id"],
            "predicted_answer": _answer(_rng(seed, key, "answer"), record),
            "predicted_support_idxs": _support(_rng(seed, key, "support"), record),
            "predicted_answerable": _answerable(_rng(seed, key, "answerable"),
                                                record.get("answerable", True)),
        })
    return out


def perfect(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The gold itself as predictions."""
    return [{"id": r["id"], "predicted_answer": r["answer"],
             "predicted_support_idxs": [p["idx"] for p in r["paragraphs"] if p["is_supporting"]],
             "predicted_answerable": r.get("answerable", True)} for r in records]
