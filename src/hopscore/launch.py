"""The ``hopscore`` entry point and the one place where errors become exit statuses.

The command line is the typer application :mod:`hopscore.cli`; its root group imports a
command's module only when that command runs, so ``hopscore --version`` and ``hopscore score``
start without loading the other commands (``bench/scoring_speed.py`` measures the start-up).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def guarded(call: Callable[[], None], err_console: Console) -> None:
    """Run a command; a user error prints one line and exits 2, never a traceback.

    A fault of the environment while writing (no space left, read-only file system, permission
    denied: :func:`hopscore.outputs.environment_error`) is a user error too, naming the file.
    Ctrl-C exits 130 with what the command kept (:class:`~hopscore.errors.Interrupted`).
    """
    from hopscore.errors import HopscoreError, Interrupted
    from hopscore.outputs import command_scope

    try:
        with command_scope():
            call()
    except HopscoreError as exc:
        err_console.print(f"error: {exc}", style="red", markup=False, highlight=False,
                          soft_wrap=True)
        sys.exit(2)
    except Interrupted as exc:
        err_console.print(f"interrupted: {exc}", style="yellow", markup=False, highlight=False,
                          soft_wrap=True)
        sys.exit(130)
    except KeyboardInterrupt:
        err_console.print("interrupted", style="red")
        sys.exit(130)
    except Exception as exc:
        from hopscore.outputs import environment_error

        message = environment_error(exc)
        if message is not None:
            err_console.print(f"error: {message}", style="red", markup=False, highlight=False,
                              soft_wrap=True)
            sys.exit(2)
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
    from hopscore.cli import err_console
    from hopscore.cli import main as cli_main

    args = list(sys.argv[1:] if argv is None else argv)
    guarded(lambda: cli_main(args), err_console)
