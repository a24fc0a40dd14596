"""``hopscore run NAME ...`` for a benchmark an agent runs on is ``hopscore agent NAME ...``,
the form it had before the agent was a command of its own (:func:`as_agent`). Read by the root
group (:class:`hopscore.cli.LazyGroup`) before it parses the run command's options, so this
module imports no command."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from hopscore import benchmarks

if TYPE_CHECKING:
    from hopscore.benchmarks.base import Benchmark


def agent_benchmark(word: str) -> Benchmark[Any, Any] | None:
    """The benchmark ``word`` names (its name or one of its other names) when an agent runs
    on it; None otherwise."""
    key = word.lower()
    names = benchmarks.names()
    if key in names:
        found = benchmarks.get(key)
        return found if found.runner == "agent" else None
    for name in names:
        bench = benchmarks.get(name)
        if bench.runner == "agent" and key in (other.lower() for other in bench.also_called):
            return bench
    return None


def _takes_value(command: Any) -> set[str]:
    """The names of the options of ``command`` that take a value."""
    return {name for param in command.params if param.param_type_name == "option"
            and not param.is_flag and not param.count for name in param.opts}


def _benchmark_word(args: list[str], takes_value: set[str]) -> int | None:
    """Where the first argument that is not an option nor an option's value is."""
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            return index + 1 if index + 1 < len(args) else None
        if word.startswith("-") and len(word) > 1:
            index += 2 if word in takes_value else 1
            continue
        return index
    return None


def as_agent(group: Any, ctx: Any, run: Any,
             args: list[str]) -> tuple[str, Any, list[str]] | None:
    """``hopscore run NAME ...`` for a benchmark an agent runs on: ``hopscore agent NAME ...``
    (``--gold`` read as ``--tasks``), after one line on stderr; None for any other run."""
    agent = group.get_command(ctx, "agent")
    where = _benchmark_word(args, _takes_value(run) | _takes_value(agent))
    if where is None or agent_benchmark(args[where]) is None:
        return None
    sys.stderr.write(f"hopscore run {args[where]} is now hopscore agent (this form keeps "
                     "working)\n")
    sys.stderr.flush()
    moved = ["--tasks" if word in ("--gold", "-g") else
             "--tasks=" + word.partition("=")[2] if word.startswith("--gold=") else word
             for word in args]
    return "agent", agent, moved
