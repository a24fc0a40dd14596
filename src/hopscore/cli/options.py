"""Options shared by several commands: intervals (--ci, --ci-level, --resamples, --seed) and
clusters (--cluster, --cluster-file)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from hopscore.defaults import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.intervals import IntervalSpec

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
