"""2WikiMultihopQA's alias file and evidence triples: reading ``id_aliases.json``, the alias
variants of each gold triple, and ``[subject, relation, object]`` fields."""

from __future__ import annotations

from itertools import product
from pathlib import Path
from typing import Any

from hopscore.benchmarks.twowiki.example import Triple
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl
from hopscore.text.normalize import normalize_no_articles


def read_aliases(path: Path) -> dict[str, tuple[str, ...]]:
    """The JSON Lines alias file: ``Q_id`` -> aliases + demonyms (a repeated id: last wins)."""
    table: dict[str, tuple[str, ...]] = {}
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        qid = record.str("Q_id")
        names: list[str] = []
        for field in ("aliases", "demonyms"):
            items = record.list(field) if field == "aliases" else record.list(field, [])
            for item in items:
                if not isinstance(item, str):
                    raise record.error(field, f"expected strings, got {json_type(item)} {item!r}")
            names.extend(items)
        table[qid] = tuple(dict.fromkeys(names))
    return table


def _string_triple(value: Any, record: Fields, field: str) -> Triple:
    if not isinstance(value, list) or len(value) != 3 or not all(isinstance(x, str) for x in value):
        raise record.error(field, f"expected [subject, relation, object] strings, got {value!r}")
    return (value[0], value[1], value[2])


def _aliases_of(
    entity_id: Any, record: Fields, aliases: dict[str, tuple[str, ...]]
) -> tuple[str, ...]:
    if isinstance(entity_id, (list, dict)):
        raise record.error("evidences_id", f"ids must be strings, got {json_type(entity_id)}")
    return aliases.get(entity_id, ()) if isinstance(entity_id, str) else ()


def evidence_variants(
    record: Fields, evidences: tuple[Triple, ...], aliases: dict[str, tuple[str, ...]]
) -> frozenset[Triple]:
    """All normalized ``(subject alias, relation, object alias)`` forms of the gold triples."""
    ids = record.list("evidences_id", [])
    if ids and len(ids) != len(evidences):
        raise record.error(
            "evidences_id", f"has {len(ids)} triples but evidences has {len(evidences)}"
        )
    variants: set[Triple] = set()
    for index, (subject, relation, obj) in enumerate(evidences):
        subjects, objects = {subject}, {obj}
        if ids:
            triple = ids[index]
            if not isinstance(triple, list) or len(triple) != 3:
                raise record.error("evidences_id", f"expected [id, relation, id], got {triple!r}")
            if triple[1] != relation:
                raise record.error(
                    "evidences_id",
                    f"relation {triple[1]!r} of triple [{index}] differs from "
                    f"evidences' {relation!r}",
                )
            subjects.update(_aliases_of(triple[0], record, aliases))
            objects.update(_aliases_of(triple[2], record, aliases))
        relation_norm = normalize_no_articles(relation)
        for s, o in product(subjects, objects):
            variants.add((normalize_no_articles(s), relation_norm, normalize_no_articles(o)))
    return frozenset(variants)


def parse_triples(value: Any, record: Fields, field: str) -> tuple[Triple, ...]:
    if not isinstance(value, list):
        raise record.error(
            field, f"expected a list of [subject, relation, object], got {json_type(value)}"
        )
    return tuple(_string_triple(item, record, field) for item in value)
