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


def guarded(call: Callable[[], None], err_console: Console | None = None) -> None:
    """Run a command; a user error prints one line and exits 2, never a traceback.

    ``err_console`` (default: the CLI's stderr console, made only when there is something to
    say) prints the messages.

    A fault of the environment while writing (no space left, read-only file system, permission
    denied: :func:`hopscore.files.outputs.environment_error`) is a user error too, naming the file.
    Ctrl-C exits 130 with what the command kept (:class:`~hopscore.errors.Interrupted`); a
    reached budget exits 4 (:class:`~hopscore.errors.BudgetReached`).
    """
    from hopscore.errors import TERMINATED, BudgetReached, HopscoreError, Interrupted
    from hopscore.files.outputs import command_scope

    def say(message: str, style: str) -> None:
        if err_console is None:
            from hopscore.cli import err_console as console
        else:
            console = err_console
        console.print(message, style=style, markup=False, highlight=False, soft_wrap=True)

    try:
        with command_scope():
            call()
    except HopscoreError as exc:
        say(f"error: {exc}", "red")
        sys.exit(2)
    except BudgetReached as exc:
        say(f"stopped: {exc}", "yellow")
        sys.exit(4)
    except Interrupted as exc:
        say(f"interrupted: {exc}", "yellow")
        sys.exit(143 if TERMINATED else 130)
    except KeyboardInterrupt:
        say("interrupted", "red")
        sys.exit(143 if TERMINATED else 130)
    except Exception as exc:
        from hopscore.files.outputs import environment_error

        message = environment_error(exc)
        if message is not None:
            say(f"error: {message}", "red")
            sys.exit(2)
        if os.environ.get("HOPSCORE_DEBUG"):
            raise
        say(f"internal error: {type(exc).__name__}: {exc}\nThis is a bug in hopscore; rerun "
            "with HOPSCORE_DEBUG=1 for the traceback and report it.", "red")
        sys.exit(3)


#: commands that send HTTP requests (unless their model runs in-process)
HTTP_COMMANDS = frozenset({"run", "judge"})


def warm_up(args: Sequence[str]) -> None:
    """Import aiohttp on a thread of its own while the command starts, for a command that will
    send requests through it (not to a plain ``http://`` endpoint, which
    :mod:`hopscore.engine.http1` serves). Importing aiohttp builds two TLS contexts, which
    load the system's CA certificates (about 0.2 s of a 2-core machine's CPU, on a thread
    that releases the interpreter lock meanwhile): done here, it overlaps with the command's
    own imports and with loading and rendering its examples instead of coming after them."""
    if not args or args[0] not in HTTP_COMMANDS:
        return
    if any(a in ("--help", "-h") or a.startswith("local/") or a.startswith("--model=local/")
           for a in args):
        return
    for i, arg in enumerate(args):  # a plain http:// endpoint is served without aiohttp
        url = args[i + 1] if arg == "--base-url" and i + 1 < len(args) else \
            arg.partition("=")[2] if arg.startswith("--base-url=") else None
        if url is not None and url.startswith("http://"):
            return
    import contextlib
    import importlib
    import threading

    def load() -> None:
        with contextlib.suppress(Exception):  # the command's own import reports it
            importlib.import_module("aiohttp")

    threading.Thread(target=load, name="hopscore-warm-up").start()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``hopscore`` console script and of ``python -m hopscore``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered before typer, rich and the CLI load (~50 ms)
        from hopscore.version import __version__

        sys.stdout.write(f"hopscore {__version__}\n")
        return
    warm_up(args)
    import signal

    from hopscore.files.io import bulk_load

    with bulk_load():  # the command line's modules: built once, kept, never walked again
        from hopscore.cli import main as cli_main
    from hopscore.errors import stop_on_sigterm

    # SIGTERM stops a command as Ctrl-C does (also one started with Ctrl-C ignored)
    try:
        previous = signal.signal(signal.SIGTERM, stop_on_sigterm)
    except ValueError:  # not the main thread: left as it is
        previous = None
    try:
        guarded(lambda: cli_main(args))
    except SystemExit as done:
        if argv is None and done.code in (0, None) and args[:1] == ["score"] \
                and "--judge" not in args:  # a judge's cache and threads: the usual exit
            quick_exit()
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def quick_exit() -> None:
    """End the process now, with status 0, after a command that succeeded: ``atexit`` handlers
    run and stdout and stderr are flushed, but the interpreter's teardown (clearing every
    module, a last collection) is skipped: about 20 ms of a ``hopscore score`` on dev-sized
    files, 7% of it.

    Only for a command that closes every file it writes before it returns (``score`` without
    ``--judge``: its outputs are written and replaced whole), only when no other thread runs
    and only in the process's own entry point (not for :func:`main` called with ``argv``);
    otherwise, or if flushing fails, this returns and the process exits as usual."""
    import atexit
    import contextlib
    import threading

    if threading.active_count() != 1:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # the usual exit says what went wrong
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(0)
