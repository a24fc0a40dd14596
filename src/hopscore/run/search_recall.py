"""The ``search`` block of a search-agent run's metrics.json (:mod:`hopscore.run.search_agent`):
searches and turns per question, and the recall of the gold paragraphs among the documents
retrieved, by title, for the benchmarks whose examples declare them
(:meth:`Example.gold_titles <hopscore.benchmarks.typed_records.Example.gold_titles>`)."""

from __future__ import annotations

from typing import Any

from hopscore.benchmarks.base import Example


def title_key(title: str) -> str:
    return " ".join(title.split()).casefold()


def search_block(examples: list[Example], rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """metrics.json's ``search`` block: searches and turns per question, and the recall of the
    retrieved documents against the gold paragraphs (by title) where the benchmark has them
    (:meth:`Example.gold_titles <hopscore.benchmarks.typed_records.Example.gold_titles>`)."""
    done = [(e, rows[e.id]) for e in examples
            if e.id in rows and rows[e.id].get("error") is None]
    statuses: dict[str, int] = {}
    for _, row in done:
        status = str(row.get("agent_status"))
        statuses[status] = statuses.get(status, 0) + 1
    recalls: list[float] = []
    complete = 0
    for example, row in done:
        gold = {title_key(t) for t in example.gold_titles() or ()}
        if not gold:
            continue
        found = {title_key(str(t)) for t in row.get("retrieved_titles") or ()}
        recalls.append(len(gold & found) / len(gold))
        complete += gold <= found
    n = len(done)

    def mean(field: str) -> float | None:
        return sum(float(r.get(field) or 0) for _, r in done) / n if n else None

    return {
        "questions": n, "search_calls": sum(int(r.get("search_calls") or 0) for _, r in done),
        "search_calls_per_question": mean("search_calls"), "turns_per_question": mean("turns"),
        "documents_per_question": (sum(len(r.get("retrieved") or ()) for _, r in done) / n
                                   if n else None),
        "statuses": statuses, "gold_questions": len(recalls),
        "retrieval_recall": sum(recalls) / len(recalls) if recalls else None,
        "all_gold_retrieved": complete / len(recalls) if recalls else None,
    }  # fmt: skip
