"""Inputs for the conformance runs: HotpotQA-format questions with long contexts (about 700
prompt tokens each with 5 paragraphs, 1,400 with the dev set's 10), and their judge input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CITIES = ["Bergen", "Lyon", "Porto", "Graz", "Turku", "Ghent", "Cork", "Split", "Brno", "Malmo"]
TRADES = ["novelist", "painter", "composer", "architect", "chemist", "sculptor", "poet",
          "engineer", "botanist", "cartographer"]


def person(i: int) -> str:
    return f"{['Mara', 'Tobias', 'Ilse', 'Rune', 'Aino', 'Pavel', 'Ines', 'Oskar'][i % 8]} " \
           f"{['Quill', 'Venn', 'Hart', 'Lund', 'Moss', 'Kade', 'Roe', 'Sand'][(i * 3) % 8]}{i}"


def paragraph(i: int, j: int) -> list[Any]:
    name = person(i * 10 + j)
    city, trade = CITIES[(i + j) % 10], TRADES[(i * 7 + j) % 10]
    sentences = [f"{name} is a {trade} born in {city} in {1900 + 7 * j + i}.",
                 f" {name} studied in {CITIES[(i + 2 * j + 1) % 10]} and later taught there.",
                 f" The work of {name} is known for its use of colour, form and long silences.",
                 f" In {1950 + j} {name} received a regional prize for a body of work.",
                 f" {name} died in {CITIES[(j + 3) % 10]}, where a street carries the name."]
    return [name, sentences]


def hotpot_gold(n: int, paragraphs: int = 5) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        context = [paragraph(i, j) for j in range(paragraphs)]
        a, b = context[0][0], context[1][0]
        answer = CITIES[i % 10]
        rows.append({"_id": f"conf-{i:02d}", "type": "bridge", "level": "medium",
                     "question": f"In which city was the teacher of the student of {a} and "
                                 f"{b} born?", "answer": answer,
                     "supporting_facts": [[a, 0], [b, 0]], "context": context})
    return rows


def write_gold(path: Path, n: int) -> Path:
    path.write_text(json.dumps(hotpot_gold(n)), encoding="utf-8")
    return path


def judge_input(path: Path, n: int) -> Path:
    """Judge rows: question, a response to grade, the reference answer."""
    rows = []
    for i, example in enumerate(hotpot_gold(n)):
        response = example["answer"] if i % 2 == 0 else CITIES[(i + 5) % 10]
        rows.append({"instance_id": example["_id"], "question": example["question"],
                     "response": f"The answer is {response}.",
                     "correct_answer": example["answer"]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
