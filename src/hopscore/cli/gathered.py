"""Options gathered into typed records: a block of options is declared once, as a frozen
dataclass whose fields carry their ``typer.Option`` (``base_url: Annotated[str | None,
typer.Option(None, "--base-url", ...)]``), and a command takes the whole block as one parameter
of that type (:func:`gathered`).

The command line sees every option of the block (typer reads the signature the decorator
makes); the command function receives one record. So the commands sharing a block take the
same names, with the same defaults and help, and no command function lists them one by one.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_args, get_type_hints

F = TypeVar("F", bound=Callable[..., Any])


def options_of(record: type) -> list[tuple[str, Any, Any]]:
    """(name, type, ``typer.Option``) of each field of ``record``, in declaration order."""
    hints = get_type_hints(record, include_extras=True)
    found = []
    for field in dataclasses.fields(record):
        kind, info = get_args(hints[field.name])[:2]
        found.append((field.name, kind, info))
    return found


def gathered(**records: type) -> Callable[[F], F]:
    """``@gathered(requests=RequestOptions)``: the command's parameter ``requests`` stands for
    every option of the record ``RequestOptions``; typer sees those options, in their place,
    and the function gets them as one record."""

    def decorate(function: F) -> F:
        hints = get_type_hints(function, include_extras=True)
        parameters: list[inspect.Parameter] = []
        for parameter in inspect.signature(function).parameters.values():
            record = records.get(parameter.name)
            if record is None:
                parameters.append(parameter.replace(
                    annotation=hints.get(parameter.name, parameter.annotation)))
                continue
            parameters.extend(inspect.Parameter(name, parameter.kind, default=info,
                                                annotation=kind)
                              for name, kind, info in options_of(record))
        names = {name: [f.name for f in dataclasses.fields(record)]
                 for name, record in records.items()}

        @functools.wraps(function)
        def command(*args: Any, **kwargs: Any) -> Any:
            for name, record in records.items():
                kwargs[name] = record(**{field: kwargs.pop(field) for field in names[name]})
            return function(*args, **kwargs)

        signature = inspect.signature(function).replace(parameters=parameters)
        command.__signature__ = signature  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in parameters}
        return command  # type: ignore[return-value]

    return decorate
