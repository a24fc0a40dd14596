"""A corpus made from a gold file's own paragraphs (a toy corpus for the search agent).

Every example's paragraphs (:meth:`Example.passages
<hopscore.benchmarks.typed_records.Example.passages>`: gold and distractors), one document per
distinct paragraph (a paragraph shared by several examples once), in the wiki-18 passage form
``{"id", "contents": "\\"Title\\"\\ntext"}`` (:mod:`hopscore.run.retrieval` reads it back with
the title split off).
The bundled samples' ``corpus.jsonl`` files are made this way::

    python -m hopscore.run.gold_corpus BENCHMARK GOLD OUT.jsonl
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hopscore import benchmarks
from hopscore.benchmarks.base import Example
from hopscore.errors import HopscoreError


def corpus_records(examples: Iterable[Example]) -> list[dict[str, str]]:
    """One ``{"id", "contents"}`` record per distinct (title, text) paragraph, in the order
    first seen, ids ``0, 1, ...``."""
    seen: dict[tuple[str, str], None] = {}
    for example in examples:
        for title, text in example.passages():
            if text.strip():
                seen.setdefault((title.strip(), text.strip()), None)
    return [{"id": str(i), "contents": f'"{title}"\n{text}'}
            for i, (title, text) in enumerate(seen)]


def write_corpus(records: list[dict[str, str]], path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def build(benchmark: str, gold: Path, out: Path) -> int:
    """Write the corpus of ``gold`` to ``out``; the number of documents."""
    bench: Any = benchmarks.get(benchmark)
    records = corpus_records(bench.load_gold(gold))
    if not records:
        raise HopscoreError(f"{gold}: the {bench.title} examples carry no paragraphs")
    write_corpus(records, out)
    return len(records)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m hopscore.run.gold_corpus BENCHMARK GOLD OUT.jsonl",
              file=sys.stderr)
        return 2
    try:
        count = build(args[0], Path(args[1]), Path(args[2]))
    except HopscoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {count} documents to {args[2]}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
