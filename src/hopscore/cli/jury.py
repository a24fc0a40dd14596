"""``hopscore jury``: several judges over the same rows, one verdict per row by a stated rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.cli.gathered import gathered
from hopscore.cli.request_options import ReasoningOptions
from hopscore.defaults import DEFAULT_MAX_TOKENS
from hopscore.errors import HopscoreError
from hopscore.scores.display import print_table

if TYPE_CHECKING:
    from hopscore.judge.jury import JuryResult

WRITES = ("jury.jsonl", "jury_disagreements.jsonl", "jury_summary.json")


@app.command(rich_help_panel="Score and grade")
@gathered(reasoning=ReasoningOptions)
def jury(
    input_path: Path = typer.Option(
        ..., "--input", "-i", metavar="FILE",
        help="JSON Lines rows with 'question', 'response', 'correct_answer'."),
    output_dir: Path = typer.Option(
        ..., "--output-dir", "-o", metavar="DIR",
        help="judge-N.jsonl per judge (resumed when there), jury.jsonl, "
        "jury_disagreements.jsonl, jury_summary.json."),
    judges: list[str] = typer.Option(
        ..., "--judge", "-m", metavar="MODEL",
        help="A judge model; repeat for each judge (the same model twice with two "
        "--prompt-file is two judges)."),
    prompt_files: list[Path] = typer.Option(
        [], "--prompt-file", metavar="FILE",
        help="Judge prompt template: one for every judge, or one per --judge in order."),
    weights: list[float] = typer.Option(
        [], "--weight", metavar="W", help="Weight of each judge for --rule weighted, in order."),
    rule: str = typer.Option(
        "majority", "--rule", help="majority, weighted or unanimous (docs/judge.md, Juries)."),
    on_tie: str = typer.Option(
        "wrong", "--on-tie", help="A tied vote is: wrong, correct or undecided."),
    min_votes: int = typer.Option(
        1, "--min-votes", metavar="N", help="Fewest judges with a verdict for a jury verdict."),
    base_url: str | None = typer.Option(
        None, "--base-url", metavar="URL", envvar="JUDGE_BASE_URL", show_default=False,
        help="The judges' OpenAI-compatible endpoint."),
    api_key_env: str = typer.Option(
        "JUDGE_API_KEY", "--api-key-env", metavar="VAR", help="Variable holding the API key."),
    concurrency: int = typer.Option(
        8, "--concurrency", "-c", metavar="N", min=1, help="Requests in flight per judge."),
    max_tokens: int = typer.Option(
        DEFAULT_MAX_TOKENS, "--max-tokens", metavar="N", min=0,
        help="Completion budget per call; 0 sends none."),
    max_retries: int = typer.Option(
        5, "--max-retries", metavar="N", min=0, help="Retries per row after the first attempt."),
    cache_dir: Path | None = typer.Option(
        None, "--cache-dir", metavar="DIR", envvar="HOPSCORE_CACHE_DIR", show_default=False,
        help="Response cache folder (default ~/.cache/hopscore)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the response cache."),
    restart: bool = typer.Option(
        False, "--restart", help="Judge again from scratch where a judge's file holds rows of "
        "other settings."),
    show: int = typer.Option(10, "--show", metavar="N", min=0,
                             help="Disagreeing rows printed (the most even splits first)."),
    reasoning: ReasoningOptions = ...,  # type: ignore[assignment]
) -> None:
    """Grade each row with several judges and combine their verdicts by a stated rule.

    Each judge writes its own judge-N.jsonl in DIR (the rows of hopscore judge, raw replies
    included; a re-run resumes it). A judge without a verdict on a row abstains. jury.jsonl
    holds one row per input row with the jury's verdict and every vote; rows where the judges
    disagree are also in jury_disagreements.jsonl, the most even splits first. Agreement among
    the judges: Fleiss' kappa and Krippendorff's alpha. Exit status 1 when some judge rows
    still failed.

    Examples:

      hopscore jury -i answers.jsonl -o jury/ --judge gpt-4.1-mini --judge qwen3-32b \
          --judge llama-3.3-70b --base-url http://localhost:8000/v1
    """
    from hopscore.engine import RetryPolicy
    from hopscore.files.atomic import write_json_atomic
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command
    from hopscore.files.outputs import output_dir as directory
    from hopscore.judge import run_judge
    from hopscore.judge.jury import Juror, check_rule, deliberate, rows_by_line

    if len(prompt_files) not in (0, 1, len(judges)):
        raise HopscoreError(f"{len(prompt_files)} --prompt-file for {len(judges)} judges: give "
                            "one for all, or one per --judge")
    check_rule(rule, on_tie, weights or [1.0] * len(judges), len(judges), min_votes)
    names = tuple(f"judge-{i + 1}.jsonl" for i in range(len(judges)))
    claim_for_command(directory(output_dir, "--output-dir", writes=WRITES + names),
                      inputs=[Input(input_path, "--input"),
                              *(Input(p, "--prompt-file") for p in prompt_files)])
    from hopscore.cli.judge import judge_config

    jurors = []
    failed = 0
    for i, model in enumerate(judges):
        prompt = prompt_files[i if len(prompt_files) > 1 else 0] if prompt_files else None
        config = judge_config(model, base_url, concurrency, prompt, api_key_env=api_key_env,
                              max_tokens=max_tokens,
                              retry=RetryPolicy(max_retries=max_retries),
                              cache_dir=cache_dir, use_cache=not no_cache,
                              reasoning=reasoning.reasoning())
        path = output_dir / names[i]
        label = f"judge-{i + 1}"
        err_console.print(f"{label}: {model} (prompt sha256 {config.prompt.sha256[:12]})",
                          markup=False, highlight=False)
        summary = run_judge(input_path, path, config, warn=err_console,
                            rerun=o.rerun_policy(restart, False))
        if summary.aborted:
            raise HopscoreError(f"{label} ({model}) stopped early: {summary.aborted}; the rows "
                                f"finished so far are in {path}: re-run to continue")
        failed += summary.errors
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        jurors.append(Juror(label, model, config.prompt.sha256,
                            weights[i] if weights else 1.0, rows_by_line(rows, str(path))))
    result = deliberate(jurors, rule, on_tie, min_votes)
    write_jury(result, output_dir)
    write_json_atomic(output_dir / "jury_summary.json", result.to_json())
    print_table(console, jury_table(result))
    print_table(console, split_table(result, show))
    for line in result.warnings:
        err_console.print(f"warning: {line}", style="yellow", markup=False, highlight=False)
    err_console.print(f"wrote {output_dir / 'jury.jsonl'}", markup=False, highlight=False)
    if failed:
        err_console.print(f"incomplete: {failed} judge rows failed (those judges abstain "
                          "there); re-run the same command to retry them", style="yellow",
                          markup=False, highlight=False)
        raise typer.Exit(1)


def write_jury(result: JuryResult, output_dir: Path) -> None:
    from hopscore.files.atomic import write_text_atomic
    from hopscore.judge.jury import disagreeing_first

    def lines(indices: list[int]) -> str:
        return "".join(json.dumps(result.row(i), ensure_ascii=False) + "\n" for i in indices)

    write_text_atomic(output_dir / "jury.jsonl", lines(list(range(len(result.lines)))))
    write_text_atomic(output_dir / "jury_disagreements.jsonl", lines(disagreeing_first(result)))


def jury_table(result: JuryResult) -> Table:
    data = result.to_json()
    table = Table(title=f"jury of {len(result.jurors)} judges, rule {result.rule} (ties: "
                        f"{result.on_tie})", title_justify="left")
    for column in ("judge", "model", "decided", "accuracy"):
        table.add_column(column, justify="left" if column in ("judge", "model") else "right")
    for juror in data["judges"]:
        accuracy = juror["accuracy_decided"]
        table.add_row(juror["judge"], juror["model"], f"{juror['decided']}/{juror['rows']}",
                      "-" if accuracy is None else f"{100 * accuracy:.2f}%")
    accuracy = data["accuracy"]
    table.add_row("jury", result.rule, f"{data['decided']}/{data['rows']}",
                  "-" if accuracy is None else f"{100 * accuracy:.2f}%")
    table.caption = (f"split votes: {data['split_rows']} rows ({data['ties']} ties); "
                     f"Fleiss' kappa {result.fleiss.text()}; "
                     f"Krippendorff's alpha {result.alpha.text()}. Jury accuracy: correct "
                     "over all rows (no verdict counts wrong).")
    table.caption_justify = "left"
    return table


def split_table(result: JuryResult, show: int) -> Table:
    from hopscore.judge.jury import disagreeing_first

    order = disagreeing_first(result)
    table = Table(title=f"rows where the judges disagree: {len(order)}"
                        + (f" (first {show})" if len(order) > show else ""),
                  title_justify="left")
    for column in ("line", "response", "votes", "jury"):
        table.add_column(column, overflow="fold")
    for i in order[:show]:
        row = result.row(i)
        votes = " ".join({True: "✓", False: "✗", None: "-"}[v["correct"]]
                         for v in row["jury"]["votes"])
        verdict = {True: "correct", False: "wrong", None: "-"}[row["correct"]]
        table.add_row(str(result.lines[i]), str(row.get("response") or "")[:40], votes,
                      verdict)
    return table
