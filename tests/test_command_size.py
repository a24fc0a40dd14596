"""No command function of the command line takes more than 30 parameters (issue 24): a
command with more gathers its options into records (:mod:`hopscore.cli.gathered`)."""

from __future__ import annotations

import inspect
from typing import Any

import typer

from hopscore.cli import COMMANDS, app

MOST = 30


def _callbacks(typer_app: typer.Typer) -> list[Any]:
    found = [info.callback for info in typer_app.registered_commands]
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            found.extend(_callbacks(group.typer_instance))
    return [callback for callback in found if callback is not None]


def test_no_command_function_takes_more_than_30_parameters() -> None:
    import importlib

    for module in set(COMMANDS.values()):
        importlib.import_module(f"hopscore.cli.{module}")
    callbacks = _callbacks(app)
    assert len(callbacks) >= len(COMMANDS) - 1
    sizes = {f"{c.__module__}.{c.__qualname__}": len(inspect.signature(inspect.unwrap(c),
                                                                       follow_wrapped=False)
                                                       .parameters)
             for c in callbacks}
    assert not {name: n for name, n in sizes.items() if n > MOST}, sizes
