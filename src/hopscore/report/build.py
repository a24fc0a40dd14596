"""Assemble the HTML report: summary with intervals, group charts, comparisons, error
categories and a per-sample browser, in one self-contained file.

Everything a reader sees is rendered by a Jinja2 template with autoescaping; the sample data
for the browser is embedded as JSON in a ``<script type="application/json">`` element with
``<``, ``>``, ``&`` and the JavaScript line separators escaped, so no sample text can close the
element or inject markup, and the browser script only ever inserts text with ``textContent``.
Large data (a 10,000-sample run with prompts and context is tens of MB of JSON) is embedded
gzip-compressed and base64-encoded instead, and inflated by the browser's DecompressionStream.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from hopscore.analysis.categories import (
    Inputs,
    analyze,
    dimensions_for,
    samples_of,
)
from hopscore.analysis.compare import binary_metrics, choose_flip_metric
from hopscore.analysis.compare_records import PairComparison
from hopscore.analysis.gold import gold_index
from hopscore.analysis.judging import agreement_table
from hopscore.analysis.samples import (
    extraction,
    prompt_text,
    raw_output,
    read_records,
    request_error,
    trajectory,
)
from hopscore.analysis.scored import ScoredSet
from hopscore.report import COMPRESS_CHOICES as COMPRESS_CHOICES
from hopscore.report import DEFAULT_MAX_TEXT as DEFAULT_MAX_TEXT
from hopscore.report.charts import Bar, Cluster, bar_chart
from hopscore.report.judging import confidence_view, judge_kinds_view, jury_view
from hopscore.report.runs import settings_view
from hopscore.report.sections import (
    RunAnalysis,
    agreement_view,
    comparison_view,
    corrected_view,
    group_rows_view,
    summary_view,
)
from hopscore.report.turns import conversation, judge_reply, run_judge_rows
from hopscore.version import __version__

#: Sample data above this many bytes of JSON is embedded gzip-compressed (``--compress auto``).
COMPRESS_ABOVE = 4_000_000
CHART_METRICS = 3
JUDGE_FIELDS = ("extracted_final_answer", "reasoning", "confidence", "parse_ok", "error")
SQL_FIELDS = ("reason", "agent_sql", "agent_sql_source", "column_precision", "column_recall",
              "order_sensitive", "agent_exec_error", "gold_exec_error", "gold_sql")


def cut(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit} more characters cut]"


def safe_json(value: Any) -> Markup:
    """JSON for a ``<script type="application/json">`` element: nothing in it can end the
    element or be read as markup."""
    text = _json(value)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return Markup(text)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def embedded_data(value: Any, compress: str) -> tuple[Markup, str | None]:
    """The browser data and its encoding: plain (escaped) JSON, or gzip + base64 when
    ``compress`` is "always", or "auto" and the JSON exceeds :data:`COMPRESS_ABOVE` bytes
    (base64 has no character that could end the element either)."""
    text = _json(value)
    if compress == "never" or (compress == "auto" and len(text) <= COMPRESS_ABOVE):
        return safe_json(value), None
    packed = base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0))
    return Markup(packed.decode("ascii")), "gzip+base64"


def context_text(example: Any) -> str | None:
    """A gold example's context: titled paragraphs with numbered sentences (supporting facts
    starred) when it has them, else its other fields as JSON."""
    if example is None:
        return None
    context = getattr(example, "context", None)
    if isinstance(context, tuple) and context and all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], tuple) for p in context
    ):
        facts = set(getattr(example, "supporting_facts", ()) or ())
        blocks = []
        for title, sentences in context:
            lines = [
                f"[{i}]{'*' if (title, i) in facts else ''} {s}" for i, s in enumerate(sentences)
            ]
            blocks.append(f"## {title}\n" + "\n".join(lines))
        return "\n\n".join(blocks)
    if not dataclasses.is_dataclass(example):
        return None
    fields = {f.name: getattr(example, f.name) for f in dataclasses.fields(example)
              if f.name not in ("id", "question")}
    return json.dumps(fields, ensure_ascii=False, indent=1, default=str)


def ok_metric_of(scored: ScoredSet) -> str | None:
    names = list(scored.names)
    return choose_flip_metric(names, binary_metrics(scored.values, scored.values, names), None)


def analyse_run(scored: ScoredSet, inputs: Inputs, judge: Mapping[str, Any] | None,
                examples: int) -> RunAnalysis:
    records = read_records(scored.samples_path) if scored.samples_path else dict(scored.rows or {})
    samples = samples_of(scored, records, judge)
    dims = analyze(samples, dimensions_for(dataclasses.replace(inputs, benchmark=scored.benchmark)),
                   examples=examples)
    judge_rows: Mapping[str, Any] | None = judge
    if scored.kind == "judge":
        judge_rows = scored.rows
    elif judge is None:  # an agent run's or a ``score --judge`` directory's judge.jsonl
        run_dir = (scored.samples_path.parent if scored.samples_path is not None
                   else scored.source if scored.source.is_dir() else None)
        judge_rows = run_judge_rows(run_dir) or None
    return RunAnalysis(scored, records, dims, ok_metric_of(scored), judge_rows,
                       agreement_table(scored, judge))


def _extra(scored: ScoredSet, record: Mapping[str, Any]) -> dict[str, Any] | None:
    if scored.kind == "judge":
        return {k: record.get(k) for k in JUDGE_FIELDS if k in record}
    if scored.kind == "sql":
        return {k: record.get(k) for k in SQL_FIELDS if k in record}
    if "search_calls" in record:
        return search_view(record)
    return None


def search_view(record: Mapping[str, Any]) -> dict[str, str]:
    """A search agent's row (:mod:`hopscore.run.search_agent`) in the sample view: how it
    ended, its queries and the documents they retrieved."""
    searches = [s for s in record.get("searches") or () if isinstance(s, Mapping)]
    ids = [str(i) for i in record.get("retrieved") or ()]
    titles = [str(t) for t in record.get("retrieved_titles") or ()]
    titles += [""] * (len(ids) - len(titles))
    named = [f"{i} ({t})" if t else i for i, t in zip(ids, titles[:len(ids)], strict=True)]
    return {"agent": f"{record.get('agent_status')} after {record.get('turns')} turns",
            "search calls": str(record.get("search_calls")),
            "queries": " | ".join(str(s.get("query")) for s in searches) or "-",
            "retrieved documents": ", ".join(named) or "-"}


def sample_entry(run: RunAnalysis, row: int, flip: str | None, limit: int) -> dict[str, Any]:
    scored = run.scored
    record = run.records.get(scored.ids[row], {})
    values = scored.values[row].tolist()
    ok = None
    if run.ok_metric is not None:
        ok = int(values[scored.names.index(run.ok_metric)] >= 1)
    extracted = extraction(record) if record else None
    steps = trajectory(record) if record else None
    entry: dict[str, Any] = {
        "p": cut(scored.predictions[row], limit), "m": values, "ok": ok,
        "miss": bool(scored.missing[row]), "c": [d.labels[row] for d in run.dimensions],
        "x": list(extracted) if extracted else None,
        "raw": cut(raw_output(record), limit) if scored.kind == "scores" and record else None,
        "prompt": cut(prompt_text(record), limit) if scored.kind == "scores" and record else None,
        "traj": cut(json.dumps(steps, ensure_ascii=False, indent=1), limit) if steps else None,
        "err": cut(request_error(record), limit) if scored.kind == "scores" and record else None,
        "extra": _extra(scored, record),
        "f": flip,
    }  # fmt: skip
    run_dir = scored.samples_path.parent if scored.samples_path is not None else None
    turns = conversation(record, run_dir, limit) if record else None
    if turns is not None:
        entry["turns"] = turns
    chains = chains_view(record, limit) if record else None
    if chains is not None:
        entry["chains"] = chains
    reply = judge_reply((run.judge_rows or {}).get(scored.ids[row]), limit)
    if reply is not None:
        entry["judge"] = reply
    return entry


def chains_view(record: Mapping[str, Any], limit: int) -> list[dict[str, Any]] | None:
    """A chain strategy's rounds (``--strategy self-ask|sc|mcr``) for the sample view: every
    chain with its steps and their evidence, the methods' answers, the meta-reasoner's input
    and output; None for other rows."""
    rounds = record.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        return None
    out: list[dict[str, Any]] = []
    for number, entry in enumerate(rounds):
        if not isinstance(entry, Mapping):
            continue
        chains = []
        for chain in entry.get("chains") or ():
            if not isinstance(chain, Mapping):
                continue
            steps = []
            for step in chain.get("steps") or ():
                evidence = step.get("evidence") if isinstance(step, Mapping) else None
                steps.append({
                    "q": step.get("question"), "a": cut(str(step.get("answer") or ""), limit),
                    "e": None if not isinstance(evidence, Mapping) else cut(
                        ": ".join(p for p in (evidence.get("title"), evidence.get("text")) if p)
                        or None, limit),
                })  # fmt: skip
            chains.append({"i": chain.get("index"), "t": chain.get("temperature"),
                           "seed": chain.get("seed"), "answer": chain.get("answer"),
                           "done": chain.get("finished"), "calls": len(chain.get("calls") or ()),
                           "steps": steps, "text": cut(chain.get("text"), limit)})
        meta = entry.get("meta") if isinstance(entry.get("meta"), Mapping) else None
        methods = {name: {"answer": m.get("answer"), "score": m.get("score"),
                          "votes": m.get("votes"), "abstained": bool(m.get("abstained"))}
                   for name, m in (entry.get("methods") or {}).items() if isinstance(m, Mapping)}
        out.append({
            "round": entry.get("round", number), "answer": entry.get("answer"),
            "abstained": bool(entry.get("abstained")), "chains": chains, "methods": methods,
            "meta_in": None if meta is None else cut(prompt_text({"prompt": meta.get("input")}),
                                                     limit),
            "meta_out": None if meta is None else cut(meta.get("output"), limit),
        })  # fmt: skip
    return out


def browser_data(runs: list[RunAnalysis], pairs: list[PairComparison], baseline: int,
                 gold: Mapping[str, Any], limit: int) -> dict[str, Any]:
    order: dict[str, None] = dict.fromkeys(runs[baseline].scored.ids)
    for run in runs:
        order.update(dict.fromkeys(run.scored.ids))
    flips: list[dict[str, str]] = [{} for _ in runs]
    for pair in pairs:
        index = next(i for i, run in enumerate(runs) if run.scored is pair.b)
        ids = pair.alignment.ids
        flips[index].update({ids[p]: "rw" for p in pair.right_to_wrong.tolist()})
        flips[index].update({ids[p]: "wr" for p in pair.wrong_to_right.tolist()})
    samples = []
    for example_id in order:
        example = gold.get(example_id)
        entries: list[dict[str, Any] | None] = []
        question = getattr(example, "question", "") or ""
        groups: dict[str, str] = {}
        gold_answers: list[str] = []
        for index, run in enumerate(runs):
            row = run.scored.index.get(example_id)
            if row is None:
                entries.append(None)
                continue
            entries.append(sample_entry(run, row, flips[index].get(example_id), limit))
            groups = groups or run.scored.groups_of(row)
            gold_answers = gold_answers or list(run.scored.gold[row])
            if not question:
                record = run.records.get(example_id, {})
                question = str(record.get("question") or "")
        samples.append({"id": example_id, "q": cut(question, limit), "gold": gold_answers,
                        "g": groups, "ctx": cut(context_text(example), limit), "r": entries})
    return {
        "runs": [
            {"label": r.scored.label, "kind": r.scored.kind, "names": list(r.scored.names),
             "ok": r.ok_metric, "dims": [d.name for d in r.dimensions],
             "baseline": i == baseline}
            for i, r in enumerate(runs)
        ],
        "groupKeys": sorted({k for r in runs for k in r.scored.groups}),
        "samples": samples,
    }  # fmt: skip


def chart_metrics(runs: list[RunAnalysis]) -> list[str]:
    """Headline metrics shared by the runs (the benchmark's ``headline`` when it has one)."""
    first = runs[0].scored
    preferred: tuple[str, ...] = ()
    if first.benchmark:
        from hopscore import benchmarks
        from hopscore.errors import HopscoreError

        try:
            preferred = tuple(getattr(benchmarks.get(first.benchmark), "headline", ()) or ())
        except HopscoreError:
            preferred = ()
    reported = [m for m in first.reported if all(m in r.scored.reported for r in runs)]
    chosen = [m for m in preferred if m in reported] or reported
    return chosen[:CHART_METRICS]


def group_charts(runs: list[RunAnalysis]) -> list[Markup]:
    charts = []
    series = [r.scored.label for r in runs]
    metrics = chart_metrics(runs)
    overall = [Cluster(m, [_bar(r.scored.label, r.scored.summary, m) for r in runs])
               for m in metrics]
    charts.append(Markup(bar_chart("overall (%, 95% CI)", overall, series)))
    for metric in metrics[:2]:
        by_key: dict[str, list[Cluster]] = {}
        for name, rows in group_rows_view(runs, metric).items():
            key, bars = rows
            by_key.setdefault(key, []).append(Cluster(name, bars))
        for key, clusters in by_key.items():
            title = f"{metric} by {key or 'group'} (%, 95% CI)"
            charts.append(Markup(bar_chart(title, clusters[:24], series)))
    return charts


def _bar(series: str, summary: Mapping[str, Any], metric: str, n: int | None = None) -> Bar:
    ci = (summary.get("ci") or {}).get(metric) or {}
    return Bar(series, float(summary.get("metrics", {}).get(metric, 0.0)),
               ci.get("low"), ci.get("high"), n if n is not None else summary.get("n_gold"))


def render(runs: list[RunAnalysis], pairs: list[PairComparison], baseline: int,
           gold: Mapping[str, Any], *, limit: int = DEFAULT_MAX_TEXT, title: str | None = None,
           flip_limit: int = 200, compress: str = "auto") -> str:
    environment = jinja2.Environment(
        loader=jinja2.FunctionLoader(_resource), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )  # fmt: skip
    template = environment.get_template("template.html.j2")
    labels = ", ".join(r.scored.label for r in runs)
    data, encoding = embedded_data(browser_data(runs, pairs, baseline, gold, limit), compress)
    return template.render(
        title=title or f"hopscore report: {labels}",
        version=__version__,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        summary=summary_view(runs),
        settings=settings_view([r.scored for r in runs]),
        costs=_costs([r.scored for r in runs], pairs),
        charts=group_charts(runs),
        comparisons=[comparison_view(pair, flip_limit) for pair in pairs],
        agreements=[agreement_view(run.scored.label, run.agreement) for run in runs
                    if run.agreement is not None],
        corrections=[view for run in runs if (view := corrected_view(
            run.scored.label, run.scored.summary)) is not None],
        juries=[view for run in runs if (view := jury_view(run.scored)) is not None],
        judge_kinds=[view for run in runs if (view := judge_kinds_view(run.scored)) is not None],
        confidences=[view for run in runs if (view := confidence_view(
            run.scored.label, run.judge_rows)) is not None],
        runs=runs,
        data=data,
        encoding=encoding,
        css=Markup(_resource("report.css")),
        script=Markup(_resource("report.js").replace("</", "<\\/")),
    )


def _costs(sets: list[ScoredSet], pairs: list[PairComparison]) -> dict[str, Any] | None:
    """The "Cost and usage" table (:func:`hopscore.analysis.costs.costs_view`), on the metric
    of the flip table (else the first input's first metric)."""
    from hopscore.analysis.costs import costs_view
    from hopscore.engine.prices import load

    metric = next((p.flip_metric for p in pairs if p.flip_metric), None)
    metric = metric or next((s.names[0] for s in sets if s.names), None)
    return costs_view(sets, metric, load())


def _resource(name: str) -> str:
    return resources.files("hopscore.report").joinpath(name).read_text(encoding="utf-8")


def build(sets: list[ScoredSet], pairs: list[PairComparison], baseline: int, *,
          gold: Path | None = None, tables: Path | None = None,
          judge: Sequence[Mapping[str, Any] | None] | None = None,
          limit: int = DEFAULT_MAX_TEXT,
          examples: int = 5, title: str | None = None, compress: str = "auto") -> str:
    """The report as one HTML string."""
    inputs = Inputs(gold=gold, tables=tables)
    runs = [analyse_run(s, inputs, None if judge is None else judge[i], examples)
            for i, s in enumerate(sets)]
    benchmark = next((s.benchmark for s in sets if s.benchmark), None)
    gold_examples = gold_index(benchmark, gold) if gold is not None else {}
    return render(runs, pairs, baseline, gold_examples, limit=limit, title=title,
                  compress=compress)
