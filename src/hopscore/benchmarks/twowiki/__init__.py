"""2WikiMultihopQA: answer, supporting-fact, evidence and joint metrics of
``2wikimultihop_evaluate_v1.1.py`` (``official-metrics.md`` §3).

Gold: the official ``data_ids`` JSON list (HotpotQA fields plus ``evidences``, ``evidences_id``,
``answer_id``, ``entity_ids``, ``type``) and, with ``--aliases``, the JSON Lines alias file
(``{"Q_id", "aliases", "demonyms"}`` per line, named ``id_aliases.json``).
Predictions: the official ``{"answer": {id: str}, "sp": {id: [[title, sent_id]]},
"evidence": {id: [[subject, relation, object]]}}`` object, or universal JSON Lines
``{"id", "answer", "sp", "evidence"}``.

What the official v1.1 script does, and so do we:

* answers: the gold set is the answer plus the aliases and demonyms of ``answer_id``; em, f1,
  precision and recall are each maxed over that set *independently* (HotpotQA normalization and
  yes/no/noanswer rule);
* supporting facts: ``(title, sent_id)`` sets, deduplicated *before* the title is lowercased, so two
  predicted facts differing only in title case both count (as true or false positives);
* evidence: triples are lowercased and stripped of ASCII punctuation (articles are kept); each gold
  triple is one slot holding every alias variant of its subject and object (aliases only when
  ``evidences_id`` is non-empty); a distinct predicted triple matching any slot is a match, so two
  alias forms of one gold triple both count and **recall can exceed 1** (reproduced, not capped);
* joint precision/recall are products over answer, sp and evidence; every sum is divided by the
  number of gold examples. We report unrounded fractions; the script prints ``round(100 * x, 2)``.

Where we differ: a missing ``"sp"``/``"evidence"`` key (official: ``KeyError``) scores those parts
0 with a warning; a non-string answer, a non-integer sent_id or a malformed triple is an error
naming the record (official: a crash or, for odd triples, silently no match); the gold's
``assert``s (``evidences_id`` as long as ``evidences``, matching relations) become located errors.
A ``Q_id`` repeated in the alias file keeps its last line, as the official dict does. Without
``--aliases`` the answer is the only gold answer and evidence slots hold only the gold triple.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.base import (
    Benchmark,
    Example,
    ModelAnswer,
    Prediction,
    Predictions,
    PromptInputs,
    SuiteFiles,
    check_unique_ids,
    load_universal,
)
from hopscore.benchmarks.citations import CitedPart
from hopscore.benchmarks.fast_init import fast_init
from hopscore.benchmarks.formats import (
    UNIVERSAL,
    official_ids,
    read_official_parts,
    universal_or_json,
    warn_unpredicted,
)
from hopscore.benchmarks.hotpotqa import (
    ZERO4,
    Context,
    Fact,
    cited_facts,
    evidence_facts,
    paragraph_variables,
    parse_context,
    parse_facts,
)
from hopscore.benchmarks.twowiki import hub
from hopscore.errors import InputError
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl, load_json
from hopscore.text.normalize import hotpot_prf, normalize_answer, normalize_no_articles

Triple = tuple[str, ...]
Scores4 = tuple[float, float, float, float]


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TwoWikiExample(Example):
    answer: str
    #: The answer plus its aliases and demonyms, raw (for display) and normalized (for scoring).
    answers: tuple[str, ...]
    answers_normalized: tuple[str, ...]
    supporting_facts: tuple[Fact, ...] = ()
    #: The gold facts as the official script compares them: set-deduplicated, then title-lowercased.
    facts_lowered: tuple[Fact, ...] = ()
    evidences: tuple[Triple, ...] = ()
    #: Every normalized variant of every gold evidence slot (a prediction matches if it is in one).
    evidence_variants: frozenset[Triple] = frozenset()
    type: str | None = None
    context: Context = ()

    def groups(self) -> dict[str, str]:
        return {"type": self.type} if self.type else {}

    def gold_answers(self) -> tuple[str, ...]:
        return self.answers


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TwoWikiPrediction(Prediction):
    sp: tuple[Fact, ...] | None = None
    evidence: tuple[Triple, ...] | None = None


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


def answer_scores(prediction: str, golds_normalized: tuple[str, ...]) -> Scores4:
    """``(em, f1, prec, recall)``, each maxed on its own over the gold answers."""
    pred = normalize_answer(prediction)
    em = f1 = precision = recall = 0.0
    for gold in golds_normalized:
        f, p, r = hotpot_prf(pred, gold)
        em = max(em, float(pred == gold))
        f1, precision, recall = max(f1, f), max(precision, p), max(recall, r)
    return em, f1, precision, recall


def lowered_fact_scores(predicted: tuple[Fact, ...], gold_lowered: tuple[Fact, ...]) -> Scores4:
    """The official ``update_sp``: dedupe, then lowercase titles; count over the lowered lists."""
    pred_lowered = [(title.lower(), sent_id) for title, sent_id in set(predicted)]
    gold_set, pred_set = set(gold_lowered), set(pred_lowered)
    tp = sum(1 for fact in pred_lowered if fact in gold_set)
    fp = len(pred_lowered) - tp
    fn = sum(1 for fact in gold_lowered if fact not in pred_set)
    return _prf_em(tp, fp, fn)


def _prf_em(tp: int, fp: int, fn: int) -> Scores4:
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return (1.0 if fp + fn == 0 else 0.0), f1, precision, recall


def evidence_scores(
    predicted: tuple[Triple, ...], variants: frozenset[Triple], n_gold: int
) -> Scores4:
    """The official ``update_evi``: recall = matches / gold triples, which may exceed 1."""
    pred = {tuple(normalize_no_articles(x) for x in triple) for triple in predicted}
    matches = sum(1 for triple in pred if triple in variants)
    precision = matches / len(pred) if pred else 0.0
    recall = matches / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    em = 1.0 if matches == len(pred) == n_gold else 0.0
    return em, f1, precision, recall


class TwoWikiMultihopQA(Benchmark[TwoWikiExample, TwoWikiPrediction]):
    name = "2wikimultihopqa"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    cited_parts: ClassVar[tuple[CitedPart, ...]] = (
        CitedPart("sp", "supporting-fact and joint metrics",
                  '[title, n] citations after a "Supporting facts:" line'),
        CitedPart("evidence", "evidence and joint metrics",
                  '(subject; relation; object) triples after an "Evidence:" line'),
    )
    hub_id_field = "_id"
    gold_is_json_list = True
    title = "2WikiMultihopQA"
    metric_functions = "hopscore.benchmarks.twowiki.per_example"
    error_categories = "hopscore.benchmarks.twowiki.categories"
    recorded_as = ("2wiki", "twowiki")
    run_options = ("--aliases",)
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {"hopscore score": (
        "hopscore score 2wikimultihopqa -g dev.json --aliases id_aliases.json -p pred.json "
        "--strict",
    )}
    metrics = (
        "em", "f1", "prec", "recall",
        "sp_em", "sp_f1", "sp_prec", "sp_recall",
        "evi_em", "evi_f1", "evi_prec", "evi_recall",
        "joint_em", "joint_f1", "joint_prec", "joint_recall",
    )  # fmt: skip
    headline = ("em", "f1", "sp_f1", "evi_f1", "joint_f1")
    group_keys = ("type",)
    gold_formats = "official data_ids dev.json (JSON list) + --aliases id_aliases.json (JSON Lines)"
    prediction_formats = (
        'official {"answer": {id: str}, "sp": {id: [[title, sent_id]]}, '
        '"evidence": {id: [[subject, relation, object]]}}; universal JSONL'
    )

    def __init__(self) -> None:
        #: Notes about the gold, passed on with the next predictions loaded (score_files loads
        #: the gold first), so they reach the report's warnings.
        self.gold_warnings: list[str] = []
        #: relation names a run's prompt offers for evidence triples (set by load_gold)
        self.relations: tuple[str, ...] = RELATIONS

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[TwoWikiExample]:
        alias_table = read_aliases(aliases) if aliases is not None else {}
        data = load_json(path)
        if not isinstance(data, list):
            raise InputError(path, f"expected a JSON list of examples, got {json_type(data)}")
        examples = [
            _gold_record(Fields.at_index(item, str(path), i), alias_table)
            for i, item in enumerate(data)
        ]
        self.gold_warnings = []
        self.relations = relation_vocabulary(examples)
        if aliases is None and any(
            isinstance(item, dict) and item.get("answer_id") for item in data
        ):
            self.gold_warnings.append(
                f"{path} has answer_id/evidences_id but no --aliases file was given: only the "
                "answer itself is gold and evidence aliases are unused, so numbers can be lower "
                "than the official v1.1 script's with id_aliases.json"
            )
        return check_unique_ids(examples, path)

    def load_predictions(self, path: Path) -> Predictions[TwoWikiPrediction]:
        data = universal_or_json(path)
        if data is UNIVERSAL:
            by_universal = load_universal(path, _parse_record)
            predictions = Predictions(by_universal, str(path), "universal",
                                      list(self.gold_warnings))
        else:
            maps, warnings = read_official_parts(path, data, ("answer", "sp", "evidence"))
            warnings = self.gold_warnings + warnings
            by_id = {}
            for example_id in official_ids(maps):
                fields = {part: m[example_id] for part, m in maps.items() if example_id in m}
                by_id[example_id] = _parse_record(
                    Fields.at_key(fields, str(path), example_id), example_id
                )
            predictions = Predictions(by_id, str(path), "official", warnings)
        official = data is not UNIVERSAL
        warn_unpredicted(predictions, "sp", lambda p: p.sp is not None,
                         "supporting-fact and joint metrics",
                         key_missing=official and "sp" not in data)
        warn_unpredicted(predictions, "evidence", lambda p: p.evidence is not None,
                         "evidence and joint metrics",
                         key_missing=official and "evidence" not in data)
        return predictions

    def score(
        self, example: TwoWikiExample, prediction: TwoWikiPrediction | None
    ) -> dict[str, float]:
        answer = sp = evidence = joint = ZERO4
        if prediction is not None:
            if prediction.answer is not None:
                answer = answer_scores(prediction.answer, example.answers_normalized)
            if prediction.sp is not None:
                sp = lowered_fact_scores(prediction.sp, example.facts_lowered)
            if prediction.evidence is not None:
                evidence = evidence_scores(
                    prediction.evidence, example.evidence_variants, len(example.evidences)
                )
            if (
                prediction.answer is not None
                and prediction.sp is not None
                and prediction.evidence is not None
            ):
                precision = answer[2] * sp[2] * evidence[2]
                recall = answer[3] * sp[3] * evidence[3]
                total = precision + recall
                f1 = 2 * precision * recall / total if total > 0 else 0.0
                joint = (answer[0] * sp[0] * evidence[0], f1, precision, recall)
        return {
            "em": answer[0], "f1": answer[1], "prec": answer[2], "recall": answer[3],
            "sp_em": sp[0], "sp_f1": sp[1], "sp_prec": sp[2], "sp_recall": sp[3],
            "evi_em": evidence[0], "evi_f1": evidence[1],
            "evi_prec": evidence[2], "evi_recall": evidence[3],
            "joint_em": joint[0], "joint_f1": joint[1],
            "joint_prec": joint[2], "joint_recall": joint[3],
        }  # fmt: skip

    note_texts: ClassVar[dict[str, str]] = {
        "evidence_over_1": "evidence scores above 100: the official scorer counts a predicted "
        "triple once for every alias form of a gold triple it matches, so evi_recall, evi_f1 "
        "and joint recall and F1 can exceed 100; reproduced, not capped",
    }

    def notes(self, values: Mapping[str, float]) -> tuple[str, ...]:
        return ("evidence_over_1",) if values["evi_recall"] > 1.0 else ()

    def is_missing(self, example: TwoWikiExample, prediction: TwoWikiPrediction | None) -> bool:
        return prediction is None or prediction.answer is None

    mcr_evaluator = "wikihop"

    answer_metric = "f1"
    evidence = "context"
    suite_files = SuiteFiles(4, ("2wikimultihopqa", "2wikihop", "2wiki", "2wikimqa"),
                             ("dev.json", "data_ids/dev.json"))
    suite_title = "2WikiMQA"
    suite_layout = "2wikimultihopqa/dev.json"

    def prompt_variables(self, example: TwoWikiExample, inputs: PromptInputs) -> dict[str, Any]:
        """Paragraphs and question, and ``relations``: the relation names evidence triples
        use (2Wiki's common relations and every relation of the loaded gold file)."""
        return {**paragraph_variables(example.question, example.context),
                "relations": list(self.relations)}

    def mcr_gold(self, example: TwoWikiExample) -> str:
        return example.answer  # MCR uses the answer alone, without aliases

    def make_prediction(self, example: TwoWikiExample, answer: ModelAnswer) -> TwoWikiPrediction:
        """Answer, cited supporting facts (before the "Evidence:" line; for the chain
        strategies, the sentences their contexts came from) and evidence triples (after it;
        :func:`cited_triples`)."""
        titles = [title for title, _ in example.context]
        facts_part, evidence_part = split_evidence(answer.output)
        sp = cited_facts(facts_part, titles) or evidence_facts(answer.evidence_ids, titles)
        return TwoWikiPrediction(id=example.id, answer=answer.text or "", sp=sp,
                                 evidence=cited_triples(evidence_part, self.relations))

    def prediction_details(self, prediction: TwoWikiPrediction) -> dict[str, Any]:
        return {"sp": [list(fact) for fact in prediction.sp or ()],
                "evidence": [list(t) for t in prediction.evidence or ()]}

    def write_predictions(self, predictions: Sequence[TwoWikiPrediction], path: Path) -> None:
        write_json_atomic(path, {
            "answer": {p.id: p.answer or "" for p in predictions},
            "sp": {p.id: [list(fact) for fact in p.sp or ()] for p in predictions},
            "evidence": {p.id: [list(t) for t in p.evidence or ()] for p in predictions},
        })  # fmt: skip


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


def _gold_record(record: Fields, aliases: dict[str, tuple[str, ...]]) -> TwoWikiExample:
    answer = record.str("answer")
    answer_id = record.raw("answer_id", None)
    answers = [answer]
    if isinstance(answer_id, str):
        answers.extend(aliases.get(answer_id, ()))
    answers = list(dict.fromkeys(answers))
    facts = parse_facts(record.raw("supporting_facts", []), record, "supporting_facts")
    evidences = parse_triples(record.raw("evidences", []), record, "evidences")
    return TwoWikiExample(
        id=record.id("_id"),
        question=record.str("question", ""),
        answer=answer,
        answers=tuple(answers),
        answers_normalized=tuple(dict.fromkeys(normalize_answer(a) for a in answers)),
        supporting_facts=facts,
        facts_lowered=tuple((title.lower(), sent_id) for title, sent_id in set(facts)),
        evidences=evidences,
        evidence_variants=evidence_variants(record, evidences, aliases),
        type=record.str("type", None, nullable=True),
        context=parse_context(record),
    )


def _parse_record(record: Fields, example_id: str) -> TwoWikiPrediction:
    return TwoWikiPrediction(
        id=example_id,
        answer=record.str("answer", None),
        sp=parse_facts(record.raw("sp"), record, "sp") if record.has("sp") else None,
        evidence=(
            parse_triples(record.raw("evidence"), record, "evidence")
            if record.has("evidence")
            else None
        ),
    )
