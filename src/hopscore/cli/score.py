"""``hopscore score``: score a prediction file against a benchmark's gold file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from hopscore import benchmarks
from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.cli import request_options as ro
from hopscore.errors import HopscoreError, InputError
from hopscore.scores.display import print_report, print_table, print_warnings

if TYPE_CHECKING:
    from hopscore.benchmarks.base import Benchmark

#: What ``hopscore score --output-dir`` writes, and with --judge also.
SCORE_WRITES = ("metrics.json", "scores.jsonl")
JUDGE_WRITES = ("judge.jsonl", "judge_disagreements.jsonl")


def predictions_hint(bench: Benchmark[Any, Any], predictions: Path) -> str:
    """What to add to an error in the predictions file: that the files look swapped (it reads
    as the benchmark's gold), else the formats the predictions may come in."""
    try:
        bench.load_gold(predictions)
    except Exception:  # any failure: it is not gold either
        return f" (predictions for {bench.name}: {bench.prediction_formats})"
    return (f"; it reads as {bench.name} gold: did you swap --gold and --predictions? "
            f"(predictions: {bench.prediction_formats})")


def judge_max_tokens(reasoning: Any, model: str | None) -> int:
    """The judge's max_tokens: the default, raised past an Anthropic thinking budget (Anthropic
    counts the thinking in it), with a note."""
    from hopscore.defaults import DEFAULT_MAX_TOKENS
    from hopscore.engine.reasoning import provider_of, room_for_thinking

    fitted = room_for_thinking(reasoning, provider_of(model or ""), DEFAULT_MAX_TOKENS)
    if fitted != DEFAULT_MAX_TOKENS:
        err_console.print(f"note: the judge's max_tokens is {fitted} (its thinking budget plus "
                          f"{DEFAULT_MAX_TOKENS}): Anthropic counts the thinking in max_tokens",
                          markup=False, highlight=False)
    return fitted


@app.command(rich_help_panel="Score and grade")
def score(
    benchmark: str = typer.Argument(
        ..., help="Benchmark name: {benchmark names}.", show_default=False
    ),
    gold: Path = typer.Option(
        ..., "--gold", "-g", metavar="FILE",
        help="The benchmark's official gold file, or a Hugging Face copy: hf:NAME[:CONFIG][@SPLIT],"
        " parquet, a save_to_disk folder or a JSON Lines export (docs/getting-the-data.md).",
    ),
    predictions: Path = typer.Option(
        ..., "--predictions", "-p", metavar="FILE",
        help="Predictions: the official format or universal JSONL."
    ),
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", metavar="DIR", help="Write metrics.json and scores.jsonl here."
    ),
    aliases: Path | None = typer.Option(
        None, "--aliases", metavar="FILE",
        help="The gold answers' aliases, for a benchmark whose gold comes with them (e.g. "
        "id_aliases.json, JSON Lines)."
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Exit with status 1 when ids are missing or extra."
    ),
    judge: bool = typer.Option(
        False, "--judge", help="Also grade every answer with an LLM judge (judge_accuracy)."
    ),
    judge_model: str | None = typer.Option(
        None, "--judge-model", metavar="NAME", envvar="JUDGE_MODEL", show_default=False,
        help="Judge model for --judge.",
    ),
    judge_base_url: str | None = typer.Option(
        None, "--judge-base-url", metavar="URL", envvar="JUDGE_BASE_URL", show_default=False,
        help="OpenAI-compatible endpoint for --judge (key from JUDGE_API_KEY).",
    ),
    judge_concurrency: int = typer.Option(
        8, "--judge-concurrency", metavar="N", min=1, help="Judge requests in flight."
    ),
    judge_max_retries: int = typer.Option(
        5, "--judge-max-retries", metavar="N", min=0, help="Retries per judge request."
    ),
    judge_prompt_file: Path | None = typer.Option(
        None, "--judge-prompt-file", metavar="FILE",
        help="Judge prompt template (see hopscore judge --help); replaces the preset's."
    ),
    judge_preset: str | None = typer.Option(
        None, "--judge-preset", metavar="NAME", show_default=False,
        help="The benchmark's judge preset NAME, or builtin (default: the benchmark's own "
        "default preset, else builtin; docs/judge.md)."),
    judge_retry_unparsed: bool = typer.Option(
        False, "--judge-retry-unparsed",
        help="Ask the judge again (past the cache) where its reply gave no verdict."),
    judge_max_outage: float = ro.max_outage_option("--judge-max-outage", panel=None),
    judge_calibration: Path | None = typer.Option(
        None, "--judge-calibration", metavar="FILE",
        help="A calibration of this judge (hopscore judge-calibrate): also report its accuracy "
        "corrected for its error rates, with an interval."),
    restart: bool = o.RESTART,
    resume_any: bool = o.RESUME_ANY,
    ci: str = o.CI,
    ci_level: float = o.CI_LEVEL,
    resamples: int = o.RESAMPLES,
    seed: int = o.SEED,
    cluster: str | None = o.CLUSTER,
    cluster_file: Path | None = o.CLUSTER_FILE,
    source: str | None = typer.Option(
        None, "--from", show_default=False, metavar="lm-eval|inspect",
        help="Read --predictions as another harness's output: lm-eval (a samples_<task>_*.jsonl"
        " file of lm_eval --log_samples) or inspect (an inspect_ai .eval or .json log); replies"
        " are joined to the gold by id, else by question (docs/integrations.md).",
    ),
    lm_filter: str | None = typer.Option(
        None, "--filter", metavar="NAME", show_default=False,
        help="With --from lm-eval: the filter whose responses are scored (needed when the file "
        "holds several, e.g. strict-match and flexible-extract).",
    ),
    json_output: bool = o.JSON,
    judge_reasoning_effort: str | None = ro.JUDGE_REASONING_EFFORT,
    judge_thinking_budget: int | None = ro.JUDGE_THINKING_BUDGET,
    judge_reasoning_style: str | None = ro.JUDGE_REASONING_STYLE,
) -> None:
    """Score predictions against a benchmark's gold file, as its official scorer would.

    Prints a table (in percent) and, with --output-dir, writes metrics.json (unrounded
    fractions, overall and per group, with missing and extra ids) and scores.jsonl (one line
    per gold example). A gold example without a prediction scores 0 and stays in the
    denominator; a predicted id not in the gold is ignored. Both are listed and warned about.
    An existing --output-dir is rewritten only when it holds the scores of the same gold
    (metrics.json records it): another gold's exits 2 unless --restart, a run directory always.

    With --judge, an LLM judge (settings as for hopscore judge: JUDGE_MODEL, JUDGE_BASE_URL,
    JUDGE_API_KEY) also grades each example, adding judge_accuracy (overall and per group) and
    listing the examples where the judge and exact match disagree; with --output-dir it writes
    judge.jsonl (resumable) and judge_disagreements.jsonl. Exit status 1 when the judge failed
    on some examples after its retries.

    Every metric and group gets a 95% confidence interval (metrics.json "ci", naming method and
    level): Wilson for 0/1 metrics, BCa for the others (--ci to choose), over whole clusters with
    --cluster. Shown as value ± half-width when symmetric, else value [low, high].

    Examples:

      {benchmark examples: hopscore score}
    """
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command
    from hopscore.files.outputs import output_dir as directory
    from hopscore.hub import official_gold

    if output_dir is not None:
        inputs = [Input(gold, "--gold"), Input(predictions, "--predictions")]
        if aliases is not None:
            inputs.append(Input(aliases, "--aliases"))
        claim_for_command(directory(output_dir, "--output-dir",
                                    writes=SCORE_WRITES + (JUDGE_WRITES if judge else ())),
                          inputs=inputs)
    bench = benchmarks.get(benchmark)
    gold_file = official_gold(bench.name, gold)
    for line in (gold_file.note(), *gold_file.warnings):
        if line:
            err_console.print(line, markup=False, highlight=False)
    gold = gold_file.path
    if lm_filter is not None and source != "lm-eval":
        raise HopscoreError("--filter needs --from lm-eval")
    spec, clusters = o.interval_options(ci, ci_level, resamples, seed, cluster, cluster_file)
    if not judge and (resume_any or judge_retry_unparsed or judge_preset or judge_calibration):
        raise HopscoreError("--resume-any, --judge-retry-unparsed, --judge-preset and "
                            "--judge-calibration are about the judge's rows: they go with "
                            "--judge")
    made_from = None
    if output_dir is not None:  # never the scores of another gold, never a run directory
        from hopscore.files.reruns import check_score_dir, scored_from_soon

        # a gold file not hashed before is hashed beside its reading
        made_from = scored_from_soon(gold, gold_file.source, beside=True)
        check_score_dir(output_dir, bench.name, made_from, restart=restart)
    if not judge:
        from hopscore.scores.scoring import score_files

        reader = None
        if source is not None:
            from hopscore.harness import predictions_reader

            def note(line: str) -> None:
                err_console.print(line, markup=False, highlight=False)

            reader = predictions_reader(bench, predictions, source, lm_filter, note)
        try:
            report = score_files(bench, gold, predictions, output_dir, aliases=aliases,
                                 intervals=spec, clusters=clusters, read_predictions=reader,
                                 scored_from=made_from)
        except InputError as exc:
            if source is not None or Path(exc.where.path) != Path(predictions):
                raise
            raise InputError(exc.where, exc.message + predictions_hint(bench, predictions),
                             field=exc.field) from None
        if json_output:
            o.print_json(report.to_json())
            print_warnings(report, err_console)
        else:
            print_report(report, console, err_console)
        if output_dir is not None:
            err_console.print(f"wrote {output_dir / 'metrics.json'} and "
                              f"{output_dir / 'scores.jsonl'}", markup=False, highlight=False)
        if strict and (report.missing_ids or report.extra_ids):
            err_console.print(f"--strict: {len(report.missing_ids)} missing and "
                              f"{len(report.extra_ids)} extra ids", style="red")
            raise typer.Exit(1)
        if report.matched == 0:
            raise typer.Exit(1)
        return
    from hopscore.cli.judge import judge_config, local_judge  # loaded only when asked for
    from hopscore.engine import RetryPolicy
    from hopscore.judge.score_judge import print_disagreements, score_files_with_judge

    if source is not None:
        raise HopscoreError("--judge does not read --from harness outputs yet: score the "
                            "harness output without --judge")
    from hopscore.judge.presets import judge_prompt

    prompt = judge_prompt(judge_preset, judge_prompt_file, bench)
    from hopscore.engine.reasoning import reasoning_settings

    reasoning = reasoning_settings(judge_reasoning_effort, judge_thinking_budget,
                                   judge_reasoning_style)
    max_tokens = judge_max_tokens(reasoning, judge_model)
    config = judge_config(judge_model, judge_base_url, judge_concurrency, prompt,
                          retry=RetryPolicy(max_retries=judge_max_retries),
                          retry_unparsed=judge_retry_unparsed, max_outage=judge_max_outage,
                          reasoning=reasoning, max_tokens=max_tokens)
    calibration = None
    if judge_calibration is not None:
        from hopscore.judge.calibration import load_calibration

        calibration = (load_calibration(judge_calibration), judge_calibration)
    judged = score_files_with_judge(bench, gold, predictions, output_dir, config,
                                    calibration=calibration,
                                    backend=local_judge(config),
                                    aliases=aliases, console=err_console, warn=err_console,
                                    intervals=spec, clusters=clusters,
                                    rerun=o.rerun_policy(restart, resume_any),
                                    scored_from=None if made_from is None else made_from())
    report = judged.report
    from hopscore.cli.judge import summary_warnings

    report.warnings.extend(summary_warnings(judged.summary))
    if json_output:
        o.print_json(judged.to_json())
        print_warnings(report, err_console)
    else:
        print_report(report, console, err_console)
        print_disagreements(judged, console)
        if judged.agreement is not None:
            from hopscore.cli.report import agreement_console_table

            print_table(console, agreement_console_table(judged.agreement, benchmark))
        if judged.corrected is not None:
            from hopscore.cli.judge_calibrate import corrected_table

            print_table(console, corrected_table(judged.corrected))
    if output_dir is not None:
        err_console.print(f"wrote {output_dir / 'metrics.json'} and {output_dir / 'scores.jsonl'}",
                          markup=False, highlight=False)
    if strict and (report.missing_ids or report.extra_ids):
        err_console.print(
            f"--strict: {len(report.missing_ids)} missing and {len(report.extra_ids)} extra ids",
            style="red",
        )
        raise typer.Exit(1)
    if judged.summary.errors > 0 or report.matched == 0:
        raise typer.Exit(1)
