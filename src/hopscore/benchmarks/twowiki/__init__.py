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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.base import (
    Benchmark,
    ModelAnswer,
    Predictions,
    PromptInputs,
    SuiteFiles,
    check_unique_ids,
    load_universal,
)
from hopscore.benchmarks.citations import CitedPart
from hopscore.benchmarks.formats import (
    UNIVERSAL,
    official_ids,
    read_official_parts,
    universal_or_json,
    warn_unpredicted,
)
from hopscore.benchmarks.hotpotqa.example import parse_context, parse_facts
from hopscore.benchmarks.hotpotqa.official_scores import ZERO4
from hopscore.benchmarks.hotpotqa.reply_facts import (
    cited_facts,
    evidence_facts,
    paragraph_variables,
)
from hopscore.benchmarks.twowiki import hub
from hopscore.benchmarks.twowiki.aliases import evidence_variants, parse_triples, read_aliases
from hopscore.benchmarks.twowiki.evidence_text import (
    RELATIONS,
    cited_triples,
    relation_vocabulary,
    split_evidence,
)
from hopscore.benchmarks.twowiki.example import TwoWikiExample, TwoWikiPrediction
from hopscore.benchmarks.twowiki.official_scores import (
    answer_scores,
    evidence_scores,
    lowered_fact_scores,
)
from hopscore.errors import InputError
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import load_json
from hopscore.text.normalize import normalize_answer


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
    adds_one_by_one = True  # the official script's ``metrics[name] += value``
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
