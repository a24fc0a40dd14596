"""The ``hopscore`` entry point, with a short way in for the score command.

The command line is a typer application (:mod:`hopscore.cli`). typer imports pydantic and builds
a converter for every parameter on each call: about a third of a second of CPU before any work,
more than scoring a few thousand examples takes. So :func:`main` first looks at the arguments:
the usual form of ``hopscore score`` (the benchmark name and options of the score command, each
given once as ``--option VALUE``, ``--option=VALUE`` or ``-o VALUE``) runs directly, through
the same :func:`run_score` that the typer command calls. Anything else (``--help``, another
command, an unknown or repeated option, a missing required option, a value that starts with
``-``) goes to the typer application, which parses it and reports usage errors as usual.
``HOPSCORE_FULL_CLI=1`` sends every call to typer. ``tests/test_launch.py`` checks that both ways
read the same arguments and print the same output.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

#: score command options read here: parameter name -> (flags, takes a value)
SCORE_OPTIONS: dict[str, tuple[tuple[str, ...], bool]] = {
    "gold": (("--gold", "-g"), True),
    "predictions": (("--predictions", "-p"), True),
    "output_dir": (("--output-dir", "-o"), True),
    "aliases": (("--aliases",), True),
    "strict": (("--strict",), False),
    "resamples": (("--resamples",), True),
    "seed": (("--seed",), True),
}
#: options whose value is a whole number (anything but plain digits goes to typer)
_NUMBERS = ("resamples", "seed")
REQUIRED = ("gold", "predictions")
_BY_FLAG = {flag: name for name, (flags, _) in SCORE_OPTIONS.items() for flag in flags}


@dataclass(frozen=True)
class ScoreRequest:
    """The arguments of ``hopscore score``, as the typer command receives them."""

    benchmark: str
    gold: Path
    predictions: Path
    output_dir: Path | None = None
    aliases: Path | None = None
    strict: bool = False
    resamples: int | None = None  # None: the default of score_files
    seed: int | None = None
    #: read --predictions as another harness's output ("lm-eval", "inspect"); None: a file in
    #: the benchmark's official or universal format
    source: str | None = None
    #: the lm-eval filter whose responses are scored (--filter)
    lm_filter: str | None = None


def quick_score_request(args: Sequence[str]) -> ScoreRequest | None:
    """The score arguments when ``args`` has the usual form; None sends them to typer."""
    if not args or args[0] != "score":
        return None
    values: dict[str, str | bool] = {}
    positional: list[str] = []
    rest = list(args[1:])
    while rest:
        token = rest.pop(0)
        if not token.startswith("-"):
            positional.append(token)
            continue
        flag, has_inline, inline = token.partition("=")
        name = _BY_FLAG.get(flag)
        if name is None or name in values or (has_inline and not flag.startswith("--")):
            return None  # help, "--", unknown, repeated, "-gVALUE", "-g=VALUE": typer decides
        takes_value = SCORE_OPTIONS[name][1]
        if not takes_value:
            if has_inline:
                return None
            values[name] = True
            continue
        if has_inline:
            value = inline
        elif rest:
            value = rest.pop(0)
        else:
            return None
        if not value or value.startswith("-"):
            return None
        if name in _NUMBERS and not (value.isascii() and value.isdigit()):
            return None
        values[name] = value
    if len(positional) != 1 or any(name not in values for name in REQUIRED):
        return None

    def path(name: str) -> Path | None:
        value = values.get(name)
        return Path(value) if isinstance(value, str) else None

    def number(name: str) -> int | None:
        value = values.get(name)
        return int(value) if isinstance(value, str) else None

    gold, predictions = path("gold"), path("predictions")
    assert gold is not None and predictions is not None
    return ScoreRequest(
        benchmark=positional[0],
        gold=gold,
        predictions=predictions,
        output_dir=path("output_dir"),
        aliases=path("aliases"),
        strict=values.get("strict") is True,
        resamples=number("resamples"),
        seed=number("seed"),
    )


def run_score(request: ScoreRequest, console: Console, err_console: Console) -> int:
    """Score, print the table and warnings, write the files; return the exit status."""
    from hopscore import benchmarks
    from hopscore.display import print_report
    from hopscore.errors import HopscoreError
    from hopscore.hub import official_gold
    from hopscore.scoring import score_files

    bench = benchmarks.get(request.benchmark)
    gold = official_gold(bench.name, request.gold)
    for line in (gold.note(), *gold.warnings):
        if line:
            err_console.print(line, markup=False, highlight=False)
    options: dict[str, int] = {}
    if request.resamples is not None:
        options["resamples"] = request.resamples
    if request.seed is not None:
        options["seed"] = request.seed
    reader = None
    if request.source is not None:
        from hopscore.harness import predictions_reader

        def note(line: str) -> None:
            err_console.print(line, markup=False, highlight=False)

        reader = predictions_reader(bench, request.predictions, request.source,
                                    request.lm_filter, note)
    elif request.lm_filter is not None:
        raise HopscoreError("--filter needs --from lm-eval")
    report = score_files(
        bench,
        gold.path,
        request.predictions,
        request.output_dir,
        aliases=request.aliases,
        read_predictions=reader,
        **options,
    )
    print_report(report, console, err_console)
    if request.output_dir is not None:
        out = request.output_dir
        written = f"wrote {out / 'metrics.json'} and {out / 'scores.jsonl'}"
        err_console.print(written, markup=False, highlight=False)
    if request.strict and (report.missing_ids or report.extra_ids):
        err_console.print(
            f"--strict: {len(report.missing_ids)} missing and {len(report.extra_ids)} extra ids",
            style="red",
        )
        return 1
    return 0


def guarded(call: Callable[[], None], err_console: Console) -> None:
    """Run a command; a user error prints one line and exits 2, never a traceback."""
    from hopscore.errors import HopscoreError

    try:
        call()
    except HopscoreError as exc:
        err_console.print(f"error: {exc}", style="red", markup=False, highlight=False)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted", style="red")
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("HOPSCORE_DEBUG"):
            raise
        err_console.print(
            f"internal error: {type(exc).__name__}: {exc}\nThis is a bug in hopscore; rerun "
            "with HOPSCORE_DEBUG=1 for the traceback and report it.",
            style="red",
            markup=False,
            highlight=False,
        )
        sys.exit(3)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``hopscore`` console script and of ``python -m hopscore``."""
    args = list(sys.argv[1:] if argv is None else argv)
    request = None if os.environ.get("HOPSCORE_FULL_CLI") else quick_score_request(args)
    if request is None:
        from hopscore.cli import main as full_main

        full_main(args)
        return
    from rich.console import Console

    console, err_console = Console(), Console(stderr=True)
    status = 0

    def call() -> None:
        nonlocal status
        status = run_score(request, console, err_console)

    guarded(call, err_console)
    if status:
        sys.exit(status)
