"""Options shared by several commands: intervals (--ci, --ci-level, --resamples, --seed) and
clusters (--cluster, --cluster-file)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from hopscore.defaults import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.intervals import IntervalSpec
    from hopscore.shard import Shard

PANEL = "Intervals and clusters"

CI = typer.Option(
    "auto", "--ci", rich_help_panel=PANEL, metavar="METHOD",
    help="Interval method: auto (Wilson for 0/1 metrics, BCa for the others), wilson, "
    "clopper-pearson, bootstrap (percentile), bca, t, or none.")
CI_LEVEL = typer.Option(DEFAULT_LEVEL, "--ci-level", rich_help_panel=PANEL,
                        help="Confidence level of every interval.")
RESAMPLES = typer.Option(
    DEFAULT_RESAMPLES, "--resamples", min=0, rich_help_panel=PANEL,
    help="Monte Carlo replicates where an interval resamples (--ci bootstrap, clusters, derived "
    "metrics); 0: no intervals.")
SEED = typer.Option(DEFAULT_SEED, "--seed", rich_help_panel=PANEL,
                    help="Seed of the bootstrap replicates.")
CLUSTER = typer.Option(
    None, "--cluster", rich_help_panel=PANEL, show_default=False,
    help="Cluster examples by this group key or gold field (e.g. HybridQA's table_id): "
    "intervals resample whole clusters and use cluster-robust errors.")
CLUSTER_FILE = typer.Option(
    None, "--cluster-file", rich_help_panel=PANEL, show_default=False,
    help="Clusters from a file mapping id to cluster (JSON object, JSONL {id, cluster}, CSV).")


#: --backoff: the same option, with the same meaning, on every command that calls a model
BACKOFF_HELP = ("First retry wait in seconds (drawn between half of it and all of it), doubling "
                "per retry up to 60 s; a server's Retry-After overrides it up to --max-retry-wait.")


JSON_HELP = ("Print the result as one JSON document on stdout instead of the tables (the "
             "messages still go to stderr), for scripts.")
JSON = typer.Option(False, "--json", help=JSON_HELP)


def print_json(value: object) -> None:
    """The result as indented JSON on stdout, written as is (never wrapped to the terminal)."""
    import sys

    from hopscore.io import json_text

    sys.stdout.write(json_text(value, indent=2) + "\n")
    sys.stdout.flush()


def interval_options(ci: str, level: float, resamples: int, seed: int, cluster: str | None,
                     cluster_file: Path | None) -> tuple[IntervalSpec, ClusterSpec | None]:
    """The interval and cluster settings of a command's options (bad values: clear errors)."""
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.intervals import IntervalSpec

    clusters = None
    if cluster is not None or cluster_file is not None:
        clusters = ClusterSpec(field=cluster, file=cluster_file)
    spec = IntervalSpec(method=ci.lower(), level=level, resamples=resamples, seed=seed,
                        cluster=None if clusters is None else clusters.name)
    return spec, clusters


SCALE_PANEL = "Scaling out"

_SHARD: dict[str, Any] = {
    "rich_help_panel": SCALE_PANEL, "metavar": "I/N|auto", "show_default": False,
    "help": "Only shard I of N (counted from 0) of the rows, chosen by a stable hash of each "
    "row's id; auto reads a Slurm job array's or a Kubernetes Indexed Job's index. Give each "
    "shard its own output and join them with hopscore merge."}
_SHARDS: dict[str, Any] = {
    "min": 1, "rich_help_panel": SCALE_PANEL, "show_default": False,
    "help": "The number of shards for --shard auto in a Kubernetes Indexed Job (its "
    "completions); a Slurm array gives it itself."}
#: --shard and --shards as plain defaults (``shard: str | None = SHARD``) ...
SHARD = typer.Option(None, "--shard", **_SHARD)
SHARDS = typer.Option(None, "--shards", **_SHARDS)
#: ... and for Annotated signatures (``Annotated[str | None, SHARD_A] = None``)
SHARD_A = typer.Option("--shard", **_SHARD)
SHARDS_A = typer.Option("--shards", **_SHARDS)


_EXECUTOR: dict[str, Any] = {
    "rich_help_panel": SCALE_PANEL, "metavar": "local|ray",
    "help": "Where rows run: local (this process) or ray (the workers of the Ray cluster at "
    "RAY_ADDRESS, else an embedded local Ray on 127.0.0.1; needs hopscore[ray]). The output is "
    "written here either way; --concurrency is then a limit for the whole cluster."}
_RAY_WORKERS: dict[str, Any] = {
    "min": 1, "rich_help_panel": SCALE_PANEL, "show_default": False,
    "help": "--executor ray: worker actors, one CPU each (default: every CPU of the cluster; "
    "an embedded local Ray gets this many CPUs)."}
EXECUTOR = typer.Option("local", "--executor", **_EXECUTOR)
RAY_WORKERS = typer.Option(None, "--ray-workers", **_RAY_WORKERS)
EXECUTOR_A = typer.Option("--executor", **_EXECUTOR)
RAY_WORKERS_A = typer.Option("--ray-workers", **_RAY_WORKERS)


def executor_option(name: str, workers: int | None) -> str:
    """The value of ``--executor`` (checked), with ``--ray-workers``."""
    from hopscore.distributed import check_executor
    from hopscore.errors import HopscoreError

    value = check_executor(name)
    if workers is not None and value != "ray":
        raise HopscoreError("--ray-workers is for --executor ray")
    return value


def shard_option(spec: str | None, shards: int | None) -> Shard | None:
    """The shard of ``--shard`` / ``--shards`` (bad values: clear errors)."""
    from hopscore.shard import parse_shard

    return parse_shard(spec, shards)
