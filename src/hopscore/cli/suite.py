"""``hopscore suite mcr``: the MCR protocol on its datasets with one model, one table.

The datasets are the benchmarks that declare their place in the suite
(:attr:`~hopscore.benchmarks.base.Benchmark.suite_files`): the default of ``--datasets``, the
table's order, and the help's list of them and of where their gold lies (placeholders filled by
:func:`hopscore.cli.help.with_declared`) all come from the registry."""

from __future__ import annotations

from pathlib import Path

import typer

from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.cli import request_options as ro
from hopscore.cli.gathered import gathered
from hopscore.cli.methods_tables import suite_methods_table, suite_table
from hopscore.cli.request_options import (
    PANEL_MODEL,
    PANEL_OUTPUT,
    PANEL_PROMPT,
    ChainOptions,
    JobOptions,
    RequestOptions,
)
from hopscore.errors import HopscoreError
from hopscore.files.outputs import claim_for_command
from hopscore.files.outputs import output_dir as directory
from hopscore.scores.display import print_table

suite_app = typer.Typer(help=(
    "Run a benchmark suite: several datasets with one model, one table.\n\n"
    "Examples:\n\n"
    "  hopscore suite mcr --data-dir mcrdata --model openai/gpt-4o-mini --sample 500"),
    no_args_is_help=True)
app.add_typer(suite_app, name="suite", rich_help_panel="Run models and agents")


@suite_app.command(name="mcr")
@gathered(requests=RequestOptions, job=JobOptions, chain=ChainOptions)
def suite_mcr(
    data_dir: Path = typer.Option(
        ..., "--data-dir", "-d", metavar="DIR",
        help="Folder with one sub-folder per dataset (layout above)."),
    model: str = ro.MODEL,
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", metavar="DIR", rich_help_panel=PANEL_OUTPUT,
        help="Suite directory (default runs/mcr__<model>)."),
    datasets: str | None = typer.Option(
        None, "--datasets", metavar="NAME,NAME,...", show_default=False,
        help="Comma-separated subset, in table order (default: all {benchmark suite count})."),
    requests: RequestOptions = ...,  # type: ignore[assignment]
    shots: int | None = typer.Option(
        None, "--shots", min=0, show_default=False, metavar="N", rich_help_panel=PANEL_PROMPT,
        help="Built-in exemplars per prompt (default: 0 for cot, 4 for the chain strategies)."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, metavar="K", rich_help_panel=PANEL_PROMPT,
        help="First K questions each."),
    sample: int | None = typer.Option(
        None, "--sample", min=1, metavar="N", rich_help_panel=PANEL_PROMPT,
        help="Seeded random sample of N questions each (MCR)."),
    sample_seed: int = ro.SAMPLE_SEED,
    temperature: float = typer.Option(
        0.0, "--temperature", min=0.0, rich_help_panel=PANEL_MODEL,
        help="Sampling temperature (chain 0 with a strategy)."),
    max_tokens: int = ro.MAX_TOKENS,
    seed: int | None = ro.SEED,
    corpus: Path | None = ro.CORPUS,
    retrieve_k: int = ro.RETRIEVE_K,
    progress: bool = ro.PROGRESS,
    chain: ChainOptions = ...,  # type: ignore[assignment]
    json_output: bool = ro.JSON_OUTPUT,
    job: JobOptions = ...,  # type: ignore[assignment]
) -> None:
    """The MCR protocol on its {benchmark suite count} datasets ({benchmark suite titles}),
    each run like hopscore run --protocol mcr, then one table.

    DATA-DIR layout (first file found wins): {benchmark suite layouts}. Missing datasets are
    reported and skipped.

    Examples:

      hopscore suite mcr --data-dir mcrdata --model openai/gpt-4o-mini --sample 500

      hopscore suite mcr --data-dir mcrdata --model local/smollm2 --shots 2 --limit 3

      hopscore suite mcr --data-dir mcrdata --model openai/gpt-4o-mini --strategy mcr \
          --chains 5 --sample 500
    """
    (base_url, api_key_env, concurrency, adaptive, timeout, max_retries, backoff,
     max_retry_wait, deadline, max_outage, cache_dir, no_cache) = (
        requests.base_url, requests.api_key_env, requests.concurrency, requests.adaptive,
        requests.timeout, requests.max_retries, requests.backoff, requests.max_retry_wait,
        requests.deadline, requests.max_outage, requests.cache_dir, requests.no_cache)
    shard, shards, on_truncation, restart, resume_any, executor, ray_workers = (
        job.shard, job.shards, job.on_truncation, job.restart, job.resume_any, job.executor,
        job.ray_workers)
    strategy, chains, chain_temperature, num_retries, chain_calls, meta_facts = (
        chain.strategy, chain.chains, chain.chain_temperature, chain.num_retries,
        chain.chain_calls, chain.meta_facts)
    from hopscore.engine.providers import EndpointUnusable
    from hopscore.files.output_specs import OutputError
    from hopscore.files.reruns import RerunRefused
    from hopscore.run.finish import truncation_warning
    from hopscore.run.run_job import run
    from hopscore.run.settings import RunSettings, default_output_dir
    from hopscore.run.suite import (
        BENCHMARKS,
        SuiteRow,
        locate,
        suite_inputs,
        suite_settings,
        suite_writes,
    )

    if (requests.max_cost, requests.max_tokens_total, requests.max_time) != (None, None, None):
        raise HopscoreError("suite mcr: --max-cost, --max-tokens-total and --max-time are not "
                            "supported across a suite yet; give them to hopscore run per dataset")
    chosen = ([name.strip().lower() for name in datasets.split(",") if name.strip()]
              if datasets is not None else list(BENCHMARKS))
    unknown = [name for name in chosen if name not in BENCHMARKS]
    if unknown:
        raise HopscoreError(f"--datasets: {', '.join(unknown)} not in {', '.join(BENCHMARKS)}")
    if not data_dir.is_dir():
        raise HopscoreError(f"--data-dir {data_dir}: not a folder")
    root = output_dir or default_output_dir("mcr", model, "default")
    rerun = o.rerun_policy(restart, resume_any)
    claim_for_command(
        directory(root, "--output-dir",
                  writes=("suite.json", *suite_writes(), *(f"{name}/" for name in chosen))),
        inputs=[*suite_inputs(data_dir), *ro.run_inputs(corpus=corpus)])
    local = model.startswith("local/")
    base = RunSettings(
        benchmark="", gold=Path(), model=model, output_dir=root, base_url=base_url,
        api_key_env=api_key_env, protocol="mcr", shots=shots, temperature=temperature,
        max_tokens=max_tokens or None, seed=seed, limit=limit, sample=sample,
        sample_seed=sample_seed, corpus=corpus, retrieve_k=retrieve_k, concurrency=concurrency,
        timeout=ro.request_timeout(timeout, model),
        max_retries=max_retries, backoff=backoff, max_retry_wait=max_retry_wait,
        deadline=deadline, max_outage=max_outage, adaptive=adaptive,
        cache_dir=ro.response_cache(cache_dir, no_cache), strategy=strategy,
        reasoning=requests.reasoning(),
        chains=chains, chain_temperature=chain_temperature, num_retries=num_retries,
        chain_calls=chain_calls, meta_facts=meta_facts, shard=o.shard_option(shard, shards),
        on_truncation=o.truncation_policy(on_truncation),
        executor=o.executor_option(executor, ray_workers), ray_workers=ray_workers,
    )  # fmt: skip
    rows: list[SuiteRow] = []
    shared = None
    if local:  # one loaded model for every dataset
        from hopscore.engine.local import LocalSmolLM2
        from hopscore.run.providers import SharedBackend

        shared = SharedBackend(LocalSmolLM2())
    try:
        for name in (b for b in BENCHMARKS if b in chosen):
            located = locate(data_dir, name, root)
            if located.gold is None:
                rows.append(SuiteRow(name, "missing", detail=f"looked for {located.looked_for}"))
                continue
            err_console.print(f"{name}: {located.gold}", markup=False, highlight=False)
            try:
                result = run(suite_settings(base, located, root), backend=shared,
                             console=err_console if progress else None, warn=err_console,
                             rerun=rerun)
            except (OutputError, RerunRefused, EndpointUnusable):
                raise  # the run directory or the endpoint cannot be used: exit 2 at once
            except HopscoreError as exc:
                rows.append(SuiteRow(name, "error", detail=str(exc)))
                continue
            if result.outcome.aborted is not None:
                raise HopscoreError(
                    f"{name}: stopped early: {result.outcome.aborted}; fix the model, endpoint "
                    "or key and re-run the same command to continue"
                )
            mcr = (result.metrics or {}).get("mcr")
            failed = result.summary.get("errors") or result.summary.get("truncated_unscored")
            status = "ok" if not failed else "incomplete"
            cut = truncation_warning(result.summary, base.max_tokens)
            if cut is not None:
                err_console.print(f"warning: {name}: {cut}", style="yellow", markup=False,
                                  highlight=False)
            rows.append(SuiteRow(name, status, mcr, result.summary,
                                 methods=(result.metrics or {}).get("methods")))
    finally:
        if shared is not None:
            import asyncio

            asyncio.run(shared.close())
    from hopscore.files.atomic import write_json_atomic

    document: dict[str, object] = {"suite": "mcr", "model": model, "data_dir": str(data_dir),
                                   "strategy": strategy,
                                   "datasets": [r.to_json() for r in rows]}
    if base.shard is not None:
        document["shard"] = base.shard.to_json()
    write_json_atomic(root / "suite.json", document)
    if json_output:
        o.print_json(document)
    elif any(r.methods for r in rows):
        print_table(console, suite_methods_table(rows, model, strategy))
    else:
        print_table(console, suite_table(rows, model))
    err_console.print(f"wrote {root / 'suite.json'} and one run directory per dataset",
                      markup=False, highlight=False)
    if not any(r.status in ("ok", "incomplete") for r in rows):
        raise HopscoreError(f"no MCR dataset could be run from {data_dir}")
    if any(r.status != "ok" for r in rows):
        raise typer.Exit(1)


# hopscore suite preset NAME: the named suites benchmarks declare
from hopscore.cli.suite_preset import suite_preset  # noqa: E402

suite_app.command(name="preset")(suite_preset)
