"""``hopscore suite preset NAME``: a named suite a benchmark declares (several gold files of one
data folder, each run on it with one model), then one table; the presets and where their gold
lies come from the registry (:mod:`hopscore.run.suite_presets`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from hopscore.cli import console, err_console
from hopscore.cli import options as o
from hopscore.cli import request_options as ro
from hopscore.cli.gathered import gathered
from hopscore.cli.request_options import (
    PANEL_MODEL,
    PANEL_OUTPUT,
    PANEL_PROMPT,
    JobOptions,
    RequestOptions,
)
from hopscore.errors import HopscoreError
from hopscore.files.outputs import claim_for_command
from hopscore.files.outputs import output_dir as directory
from hopscore.scores.display import print_table

if TYPE_CHECKING:
    from hopscore.run.suite_presets import PresetRow


@gathered(requests=RequestOptions, job=JobOptions)
def suite_preset(
    name: str = typer.Argument(..., metavar="NAME", help="The preset (list above)."),
    data_dir: Path = typer.Option(
        ..., "--data-dir", "-d", metavar="DIR",
        help="Folder holding the preset's gold files (layout above)."),
    model: str = ro.MODEL,
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", metavar="DIR", rich_help_panel=PANEL_OUTPUT,
        help="Suite directory (default runs/<preset>__<model>)."),
    datasets: str | None = typer.Option(
        None, "--datasets", metavar="NAME,NAME,...", show_default=False,
        help="Comma-separated subset of the preset's datasets (default: all)."),
    requests: RequestOptions = ...,  # type: ignore[assignment]
    shots: int | None = typer.Option(
        None, "--shots", min=0, show_default=False, metavar="N", rich_help_panel=PANEL_PROMPT,
        help="Built-in exemplars per prompt (default 0)."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, metavar="K", rich_help_panel=PANEL_PROMPT,
        help="First K questions each."),
    sample: int | None = typer.Option(
        None, "--sample", min=1, metavar="N", rich_help_panel=PANEL_PROMPT,
        help="Seeded random sample of N questions each."),
    sample_seed: int = ro.SAMPLE_SEED,
    temperature: float = typer.Option(
        0.0, "--temperature", min=0.0, rich_help_panel=PANEL_MODEL,
        help="Sampling temperature."),
    max_tokens: int = ro.MAX_TOKENS,
    seed: int | None = ro.SEED,
    corpus: Path | None = ro.CORPUS,
    retrieve_k: int = ro.RETRIEVE_K,
    progress: bool = ro.PROGRESS,
    json_output: bool = ro.JSON_OUTPUT,
    job: JobOptions = ...,  # type: ignore[assignment]
) -> None:
    """Run a named suite: each of its datasets like hopscore run, then one table of the
    metrics it names, with the unweighted average.

    Presets (DATA-DIR layout; first file found wins): {benchmark suite presets}. Missing
    datasets are reported and skipped.

    Examples:

      {benchmark examples: hopscore suite preset}
    """
    from hopscore.engine.providers import EndpointUnusable
    from hopscore.files.atomic import write_json_atomic
    from hopscore.files.output_specs import OutputError
    from hopscore.files.reruns import RerunRefused
    from hopscore.run import suite_presets as sp
    from hopscore.run.run_job import run
    from hopscore.run.settings import RunSettings, default_output_dir

    benchmark, found = sp.preset(name)
    picked = sp.chosen(found, datasets)
    if not data_dir.is_dir():
        raise HopscoreError(f"--data-dir {data_dir}: not a folder")
    root = output_dir or default_output_dir(found.name, model, "default")
    claim_for_command(
        directory(root, "--output-dir",
                  writes=("suite.json", *(f"{d.label}/" for d in picked))),
        inputs=[*sp.inputs(data_dir, picked), *ro.run_inputs(corpus=corpus)])
    base = RunSettings(
        benchmark=benchmark, gold=Path(), model=model, output_dir=root,
        base_url=requests.base_url, api_key_env=requests.api_key_env, shots=shots,
        temperature=temperature, max_tokens=max_tokens or None, seed=seed, limit=limit,
        sample=sample, sample_seed=sample_seed, corpus=corpus, retrieve_k=retrieve_k,
        concurrency=requests.concurrency, timeout=ro.request_timeout(requests.timeout, model),
        max_retries=requests.max_retries, backoff=requests.backoff,
        max_retry_wait=requests.max_retry_wait, deadline=requests.deadline,
        max_outage=requests.max_outage, adaptive=requests.adaptive,
        cache_dir=ro.response_cache(requests.cache_dir, requests.no_cache),
        shard=o.shard_option(job.shard, job.shards),
        on_truncation=o.truncation_policy(job.on_truncation),
        executor=o.executor_option(job.executor, job.ray_workers), ray_workers=job.ray_workers,
        reasoning=requests.reasoning(),
    )  # fmt: skip
    rerun = o.rerun_policy(job.restart, job.resume_any)
    rows: list[sp.PresetRow] = []
    shared = None
    if model.startswith("local/"):  # one loaded model for every dataset
        from hopscore.engine.local import LocalSmolLM2
        from hopscore.run.providers import SharedBackend

        shared = SharedBackend(LocalSmolLM2())
    try:
        for dataset in picked:
            gold = sp.locate(data_dir, dataset)
            if gold is None:
                rows.append(sp.PresetRow(dataset.label, "missing",
                                         detail=f"looked for {sp.looked_for(dataset)}"))
                continue
            err_console.print(f"{dataset.label}: {gold}", markup=False, highlight=False)
            try:
                result = run(sp.settings_for(base, benchmark, gold, root, dataset.label),
                             backend=shared, console=err_console if progress else None,
                             warn=err_console, rerun=rerun)
            except (OutputError, RerunRefused, EndpointUnusable):
                raise
            except HopscoreError as exc:
                rows.append(sp.PresetRow(dataset.label, "error", detail=str(exc)))
                continue
            if result.outcome.aborted is not None:
                raise HopscoreError(f"{dataset.label}: stopped early: {result.outcome.aborted}; "
                                    "re-run the same command to continue")
            failed = result.summary.get("errors") or result.summary.get("truncated_unscored")
            report = result.report
            rows.append(sp.PresetRow(
                dataset.label, "ok" if not failed else "incomplete",
                None if report is None else dict(report.metrics),
                None if report is None else report.n_gold))
    finally:
        if shared is not None:
            import asyncio

            asyncio.run(shared.close())
    document: dict[str, object] = {
        "suite": found.name, "benchmark": benchmark, "model": model, "data_dir": str(data_dir),
        "datasets": [row.to_json() for row in rows],
        "average": sp.average(rows, found.metrics)}
    write_json_atomic(root / "suite.json", document)
    if json_output:
        o.print_json(document)
    else:
        print_table(console, _table(found.title, model, rows, found.metrics))
    err_console.print(f"wrote {root / 'suite.json'} and one run directory per dataset",
                      markup=False, highlight=False)
    if not any(row.status in ("ok", "incomplete") for row in rows):
        raise HopscoreError(f"no dataset of {found.name} could be run from {data_dir}")
    if any(row.status != "ok" for row in rows):
        raise typer.Exit(1)


def _table(title: str, model: str, typed: list[PresetRow], metrics: tuple[str, ...]) -> Table:
    from hopscore.run.suite_presets import average

    table = Table(title=f"{title}: {model} (in %)", title_justify="left")
    notes = any(row.status != "ok" for row in typed)
    for column in ["dataset", "n", *metrics, *(["note"] if notes else [])]:
        table.add_column(column, justify="left" if column in ("dataset", "note") else "right",
                         overflow="fold", no_wrap=column != "note")
    for row in typed:
        values = [_pct(row.metrics, name) for name in metrics]
        note = [] if not notes else ["" if row.status == "ok" else
                                     f"{row.status}: {row.detail}" if row.detail else row.status]
        table.add_row(row.dataset, "" if row.n is None else str(row.n), *values, *note)
    mean = average(typed, metrics)
    if mean is not None and sum(row.metrics is not None for row in typed) > 1:
        table.add_row("average", "", *(_pct(mean, name) for name in metrics),
                      *([""] if notes else []))
    return table


def _pct(values: dict[str, float] | None, name: str) -> str:
    if values is None or name not in values:
        return ""
    return f"{values[name] * 100:.1f}"
