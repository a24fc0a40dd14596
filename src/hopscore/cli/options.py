"""Options shared by several commands: intervals (--ci, --ci-level, --resamples, --seed),
clusters (--cluster, --cluster-file), and how every path option is read (:class:`PathValue`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.models import TyperPath

from hopscore.defaults import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    from collections.abc import Sequence

    from hopscore.files.shard import Shard
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.inference.spec import IntervalSpec

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
    help="Cluster examples by this group key or gold field (e.g. a table_id field of the gold): "
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

    from hopscore.files.io import json_text

    sys.stdout.write(json_text(value, indent=2) + "\n")
    sys.stdout.flush()


def interval_options(ci: str, level: float, resamples: int, seed: int, cluster: str | None,
                     cluster_file: Path | None) -> tuple[IntervalSpec, ClusterSpec | None]:
    """The interval and cluster settings of a command's options (bad values: clear errors)."""
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.inference.spec import IntervalSpec

    clusters = None
    if cluster is not None or cluster_file is not None:
        clusters = ClusterSpec(field=cluster, file=cluster_file)
    spec = IntervalSpec(method=ci.lower(), level=level, resamples=resamples, seed=seed,
                        cluster=None if clusters is None else clusters.name)
    return spec, clusters


# --- reruns and truncation (hopscore.files.reruns; docs/reliability.md) ---------------------------

RERUN_PANEL = "Reruns"

RESTART = typer.Option(
    False, "--restart", rich_help_panel=RERUN_PANEL,
    help="Start over: discard the rows already in the output (cached replies still answer "
    "identical requests; --no-cache asks again).")
RESUME_ANY = typer.Option(
    False, "--resume-any", rich_help_panel=RERUN_PANEL,
    help="Rerun even where the output holds rows of other settings: they are kept beside it "
    "(NAME.other-settings.jsonl), never mixed into this run's accuracy. Without this or "
    "--restart such a rerun exits 2 naming the settings that differ.")
ON_TRUNCATION = typer.Option(
    "score", "--on-truncation", rich_help_panel=RERUN_PANEL, metavar="score|error",
    help="A reply cut at --max-tokens (finish_reason length): score it as it is (counted and "
    "warned about), or error (not scored; counted apart, exit status 1).")


def rerun_policy(restart: bool, resume_any: bool) -> str:
    from hopscore.files.reruns import policy_of

    return policy_of(restart, resume_any)


#: What an analysis command reads in a score or run directory it is given.
SCORED_FILES = ("scores.jsonl", "metrics.json", "config.json", "samples.jsonl")


def claim_file_output(output: Path | None, *, sources: Sequence[Path] = (),
                      **inputs: Path | Sequence[Path] | None) -> None:
    """Claim the ``--output`` FILE of an analysis command (report, analyze, compare,
    hdr-tasks) before it reads anything: the location checked, never one of its inputs (a
    score or run directory among ``sources`` is read through :data:`SCORED_FILES`; the other
    inputs by option name: ``gold=``, ``tables=``, ...), and one writer at a time."""
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command, output_file

    if output is None:
        return
    given = [Input(path, "input", reads=SCORED_FILES if path.is_dir() else None)
             for path in sources]
    for name, value in inputs.items():
        paths = [] if value is None else [value] if isinstance(value, Path) else list(value)
        given += [Input(path, "--" + name.replace("_", "-")) for path in paths]
    claim_for_command(output_file(output, "--output"), inputs=given)


def truncation_policy(value: str) -> str:
    from hopscore.errors import HopscoreError

    value = value.lower()
    if value not in ("score", "error"):
        raise HopscoreError(f"--on-truncation must be score or error, not {value!r}")
    return value


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
    from hopscore.files.shard import parse_shard

    return parse_shard(spec, shards)


# --- path options (every command) --------------------------------------------------------------


def expand_home(text: str) -> str:
    """``~`` and ``~user`` at the start of a path option, as a shell expands them (a value
    written ``--output=~/x`` reaches hopscore unexpanded); ``ValueError`` for an unknown user.

    The expansion happens once, here, where the option is read: the commands and
    :mod:`hopscore.files.outputs` take the resulting path as it is, so ``./~name/x`` stays a
    folder named ``~name`` below this one.
    """
    import os

    if not text.startswith("~"):
        return text
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):  # expanduser leaves what it cannot expand as it was
        user = text[1:].split("/", 1)[0]
        who = f"no user {user!r} on this machine" if user else "no home directory is known"
        raise ValueError(f"{text!r} starts with ~{user}, but {who}; for a folder named "
                         f"~{user} here, write ./{text}")
    return expanded


class PathValue(TyperPath):
    """The type of every path option and argument of the command line (set on each command by
    :func:`use_path_values`): an empty value is refused (``-o ""`` would otherwise mean this
    folder), and a leading ``~`` or ``~user`` is expanded or refused with a clear error, exit
    status 2, never the crash of an unknown user's home."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str):
            if not value.strip():
                self.fail("an empty path; give a file or folder name (. for this folder)",
                          param, ctx)
            try:
                value = expand_home(value)
            except ValueError as exc:
                self.fail(str(exc), param, ctx)
        return super().convert(value, param, ctx)


def use_path_values(command: Any) -> None:
    """Make every path parameter of a click command (and of its sub-commands) a
    :class:`PathValue`."""
    for param in getattr(command, "params", ()):
        if type(param.type) is TyperPath:
            param.type.__class__ = PathValue
    for sub in (getattr(command, "commands", None) or {}).values():
        use_path_values(sub)
