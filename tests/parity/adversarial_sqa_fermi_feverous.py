"""Seeded generators of adversarial predictions for the parity tests.

Each generator is a pure function of the gold records and a seed, so the test suite regenerates
exactly the predictions the official scorers were run on (see ``run_official.py``), and only the
resulting numbers are committed. Nothing here iterates a set or dict of strings in hash order.
"""

from __future__ import annotations

import random
from typing import Any

# --- StrategyQA ---------------------------------------------------------------------------

_SQA_ANSWERS = [
    "gold",
    "gold",
    "gold",
    "flip",
    "flip",
    "yes",
    "no",
    "Yes",
    "TRUE",
    "false",
    1,
    0,
    1.0,
    0.0,
    None,
    [],
    "",
]


def _strategyqa_answer(rng: random.Random, gold: bool) -> Any:
    choice = rng.choice(_SQA_ANSWERS)
    if choice == "gold":
        return gold
    if choice == "flip":
        return not gold
    return choice


def _strategyqa_decomposition(rng: random.Random, record: dict[str, Any]) -> list[str]:
    steps = list(record["decomposition"])
    kind = rng.randrange(12)
    if kind == 0:
        return steps
    if kind == 1:
        return [s.lower() for s in steps]
    if kind == 2 and len(steps) > 1:
        del steps[rng.randrange(len(steps))]
        return steps
    if kind == 3:
        return [*steps, steps[rng.randrange(len(steps))]]
    if kind == 4:
        rng.shuffle(steps)
        return steps
    if kind == 5:
        return [s.replace("?", " ? ") for s in steps]
    if kind == 6:
        return []
    if kind == 7:
        return [record["question"]]
    if kind == 8:
        words = record["question"].split()
        rng.shuffle(words)
        return [" ".join(words[: max(1, len(words) // 2)])]
    if kind == 9:
        return [s + " " + s for s in steps]
    if kind == 10:
        return [s.replace("#", "# ") + " Really?" for s in steps]
    return ["What is it?", "Is #1 “true” – or not?", ""]


def _evidence_ids(record: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for annotator in record["evidence"]:
        for step in annotator:
            for entry in step:
                if isinstance(entry, list):
                    for pid in entry:
                        if pid not in ids:
                            ids.append(pid)
    return ids


def _strategyqa_paragraphs(
    rng: random.Random, record: dict[str, Any], pool: list[str]
) -> list[str]:
    gold = _evidence_ids(record)
    distractors = [rng.choice(pool) for _ in range(12)]
    kind = rng.randrange(8)
    if kind == 0:
        return gold
    if kind == 1:
        return distractors[:10]
    if kind == 2:  # gold hidden beyond the retrieval limit
        return distractors[:10] + gold
    if kind == 3:
        mixed = gold[:1] + distractors[:5] + gold[1:]
        return mixed
    if kind == 4:
        return []
    if kind == 5:
        return [g.lower() for g in gold]
    if kind == 6:
        return gold[:1] * 12 + gold
    picks = gold + distractors
    rng.shuffle(picks)
    return picks


def strategyqa_predictions(
    gold: list[dict[str, Any]],
    seed: int,
    keys: tuple[str, ...] = ("answer", "decomposition", "paragraphs"),
) -> dict[str, dict[str, Any]]:
    """Official-format predictions ``{qid: {...}}`` with the given keys for every qid."""
    rng = random.Random(seed)
    pool = [pid for record in gold for pid in _evidence_ids(record)] or ["Nothing-1"]
    out: dict[str, dict[str, Any]] = {}
    for record in gold:
        prediction: dict[str, Any] = {}
        answer = _strategyqa_answer(rng, record["answer"])
        decomposition = _strategyqa_decomposition(rng, record)
        paragraphs = _strategyqa_paragraphs(rng, record, pool)
        if "answer" in keys:
            prediction["answer"] = answer
        if "decomposition" in keys:
            prediction["decomposition"] = decomposition
        if "paragraphs" in keys:
            prediction["paragraphs"] = paragraphs
        out[record["qid"]] = prediction
    return out


# --- Fermi -------------------------------------------------------------------------------

_FERMI_FIXED = [
    "about 5 km",
    "five",
    "5 million",
    "5 trillion",
    "unknown",
    "N/A",
    "inf",
    "nan",
    "−5",
    "1e400",
    "-3 km",
    "0",
    "0 km",
    "15%",
    "12 h",
    "30 degC",
    "3 x 10^5",
    "3*10^5",
    "$ 1,200",
    "7.5E+06",
    "2 ** 10",
    "1/0",
    "(5",
    "kg",
    "5 people",
    "40 sheets",
    "1e-300",
    "1e300",
    "2 hours 30 minutes",
    "5 km + 3 m",
]


def _split_number(answer: str) -> tuple[str, float | None, str]:
    """``"$7224"`` -> ("$", 7224.0, ""); ``"22.3 km"`` -> ("", 22.3, " km")."""
    prefix = "$" if answer.startswith("$") else ""
    body = answer[len(prefix) :]
    head, _, rest = body.partition(" ")
    try:
        number = float(head)
    except ValueError:
        return prefix, None, body
    return prefix, number, (" " + rest) if rest else ""


def fermi_prediction(rng: random.Random, answer: str) -> Any:
    prefix, number, unit = _split_number(answer)
    kind = rng.randrange(16)
    if number is None or kind == 0:
        return answer
    if kind <= 5:
        factor = rng.choice([10, 100, 1000, 0.1, 0.01, 2, 0.5, 3.7, 1e-4, 1e5])
        return f"{prefix}{number * factor:g}{unit}"
    if kind == 6:
        return f"{number:g}"  # the unit dropped
    if kind == 7:
        return number if rng.random() < 0.5 else int(number)  # a JSON number
    if kind == 8:
        return f"{prefix}{number:.2E}{unit}"
    if kind == 9:
        return f"${number:,.0f}"
    if kind == 10:
        return f"-{number:g}{unit}"
    if kind == 11:
        return f"{number:g} {rng.choice(['m', 'km', 'kg', 'g', 's', 'hour', 'L', 'dollars', 'mi'])}"
    return rng.choice(_FERMI_FIXED)


def fermi_predictions(gold: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Predictions ``{"0": answer, ...}`` keyed by gold position."""
    rng = random.Random(seed)
    return {str(i): fermi_prediction(rng, record["answer"]) for i, record in enumerate(gold)}


#: (prediction, gold) pairs for MCR's evaluator, which re-reads both strings.
MCR_PAIRS = [
    ("22.3", "22.3 km"),
    ("22300 m", "22.3 km"),
    ("22.3 km", "22.3 km"),
    ("223", "22.3 km"),
    ("x = 22.3", "22.3 km"),
    ("x =22.3", "22.3 km"),
    ("22.3km", "22.3 km"),
    ("5 trillion", "5e12"),
    ("5 trillion", "5e9"),
    ("5 million", "5000000"),
    ("5million", "5e6"),
    ("$7224", "$7224"),
    ("7224", "$7224"),
    ("$7,224", "$7224"),
    ("3.20E+13", "3.20E+13"),
    ("3.2e13", "3.20E+13"),
    ("5 people", "5"),
    ("5 people", "369905.95 people * km ** -2"),
    ("-5", "5"),
    ("0", "0"),
    ("0", "1"),
    ("0", "0.5"),
    ("0", "5"),
    ("unknown", "5"),
    ("about 5", "5"),
    ("12 h", "12 hour"),
    ("2.6", "2.6 hour"),
    ("1800 L", "1.8 m**3"),
    ("1800", "1800 L"),
    ("15%", "0.15"),
    ("1 = 2 = 3", "3"),
    ("5 billion", "5e9"),
    ("10 million dollars", "1e7"),
    ("0.5 trillion", "5e11"),
    # pint computes these exactly; MCR has no length or power guard
    ("x = 2**2**2**2", "65536"),
    ("2**2**2**2", "65536"),
    ("2**(3)**2", "512"),
    ("3**3**2 m", "19683 m"),
    ("(10**3)**2", "1e6"),
    ("so the total is 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 "
     "+ 1 + 1 + 1 + 1 + 1 + 1 = 25", "25"),
    (" + ".join(["1000 m"] * 30), "30 km"),
    ("2**100", "1.2676506e30"),
    ("5 people + 3 people", "8"),
    ("1 sheet + 1", "2"),
]

#: (gold, prediction) pairs for the official convert_units + accuracy_metric: sums with the
#: units that units.txt leaves unresolved (``person = _``) raise there; products do not.
FERMI_PAIRS = [
    ("8", "5 people + 3 people"),
    ("2", "1 sheet + 1"),
    ("4", "3 factorial + 1"),
    ("3", "5 people - 2 people"),
    ("8", "(5 people + 3 people) * 2"),
    ("5", "5 people"),
    ("300", "300 people * km ** -2"),
    ("2.5", "5 people / 2 people"),
    ("6", "2 people * 3"),
    ("2", "2 sheets ** 2"),
    ("8 people", "8"),
    ("5 people + 3 people", "8"),
    ("65536", "2**2**2**2"),
    ("512", "2**(3)**2"),
    ("40 km", " + ".join(["1 km"] * 40)),
    ("1e30", "2**100"),
]


# --- FEVEROUS ----------------------------------------------------------------------------

_LABEL_VARIANTS = ["same", "same", "same", "lower", "title", "wrong", "wrong", " pad"]
_LABELS = ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]


def _feverous_label(rng: random.Random, gold: str) -> str:
    kind = rng.choice(_LABEL_VARIANTS)
    if kind == "same":
        return gold
    if kind == "lower":
        return gold.lower()
    if kind == "title":
        return gold.title()
    if kind == "wrong":
        return rng.choice([label for label in _LABELS if label != gold])
    return " " + gold


def _feverous_evidence(rng: random.Random, sets: list[list[str]], pool: list[str]) -> list[str]:
    first = list(sets[0]) if sets else []
    union: list[str] = []
    for group in sets:
        for element in group:
            if element not in union:
                union.append(element)
    distractors = [rng.choice(pool) for _ in range(6)]
    kind = rng.randrange(11)
    if kind == 0:
        return first
    if kind == 1:
        return union
    if kind == 2:
        return first[:-1]
    if kind == 3:
        return distractors[:3] + first
    if kind == 4:  # the gold hidden behind 5 other sentences
        return [f"Filler Page_sentence_{i}" for i in range(5)] + first
    if kind == 5:  # the gold hidden behind 25 other cells
        return [f"Filler Page_cell_0_{i}_1" for i in range(25)] + first
    if kind == 6:
        return []
    if kind == 7:
        return first + first
    if kind == 8:
        return [e.lower() for e in first]
    if kind == 9:
        cells = [f"Filler Page_cell_1_{i}_0" for i in range(20)]
        return cells + first + [f"Filler Page_sentence_{i}" for i in range(3)]
    return distractors


def feverous_predictions(gold: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """``{"id", "predicted_label", "predicted_evidence"}`` for every gold record (no header)."""
    rng = random.Random(seed)
    pool = [e for record in gold for group in record["evidence"] for e in group["content"]]
    pool = pool or ["Nothing_sentence_0"]
    out = []
    for record in gold:
        sets = [list(group["content"]) for group in record["evidence"]]
        out.append(
            {
                "id": record["id"],
                "predicted_label": _feverous_label(rng, record["label"]),
                "predicted_evidence": _feverous_evidence(rng, sets, pool),
            }
        )
    return out
