"""``hopscore merge``: join the shards of one run into the output an unsharded run writes.

A shard output is a run directory (``hopscore run``, or an agent's run), a suite
directory (``suite mcr``) or a judge / sql-match file, made with ``--shard I/N``. The merge
refuses outputs that are not the shards of one run (different settings fingerprints, different
splits, the same shard twice, rows in a shard they do not belong to) and, when rows are
missing, lists them per shard and writes nothing, so that one shard can be run again alone.
Merging the same shards again writes the same files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hopscore.merge.common import KINDS, MergeError, ShardOutput, locate

__all__ = ["KINDS", "MergeError", "ShardOutput", "locate", "merge"]


def merge(paths: Sequence[Path], out: Path, warn: Callable[[str], None], *,
          input_path: Path | None = None, gold: Path | None = None,
          claim: Callable[[list[ShardOutput]], None] | None = None,
          ready: Callable[[list[ShardOutput]], None] | None = None) -> tuple[str, Any]:
    """Merge the shard outputs at ``paths`` into ``out``; returns (kind, result).

    ``claim`` is called with the shard outputs once they are known, before they are read (the
    CLI checks that no shard is being written), ``ready`` once they passed every check, before
    anything is written (the CLI takes the merged output's lock there)."""
    outputs = [locate(path) for path in paths]
    if claim is not None:
        claim(outputs)
    kind = outputs[0].kind
    if input_path is not None and kind not in ("judge", "sql-match"):
        raise MergeError("--input is for judge and sql-match shards (their input file)")
    if gold is not None and kind != "run":
        raise MergeError("--gold is for the shards of hopscore run")

    def before_writing() -> None:
        if ready is not None:
            ready(outputs)

    if kind == "run":
        from hopscore.merge.runs import merge_run

        return kind, merge_run(outputs, out, warn, gold=gold, ready=before_writing)
    if kind == "suite":
        from hopscore.merge.runs import merge_suite

        return kind, merge_suite(outputs, out, warn, ready=before_writing)
    if kind == "agent":
        from hopscore.merge.agent import merge_agent

        return kind, merge_agent(outputs, out, warn, ready=before_writing)
    from hopscore.merge.files import merge_judge, merge_sql

    if kind == "judge":
        return kind, merge_judge(outputs, out, warn, input_path=input_path, ready=before_writing)
    return kind, merge_sql(outputs, out, warn, input_path=input_path, ready=before_writing)
