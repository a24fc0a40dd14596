"""User-facing errors.

Every error a user can cause (a bad file, a wrong field type, a duplicate id) is raised as a
:class:`HopscoreError`; the CLI prints its message and exits with status 2 instead of showing a
traceback. :class:`InputError` additionally names the file, the line or record, and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class HopscoreError(Exception):
    """An error caused by the user's input or settings, reported without a traceback."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where a record came from: a file plus a line number (JSONL, CSV) or a record index (JSON)."""

    path: str
    line: int | None = None
    index: int | None = None
    key: str | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.key is not None:
            return f"{self.path}: record {self.key!r}"
        if self.index is not None:
            return f"{self.path}: record [{self.index}]"
        return self.path


class InputError(HopscoreError):
    """A problem in an input file, located by file, line/record and field."""

    def __init__(
        self, where: Location | Path | str, message: str, *, field: str | None = None
    ) -> None:
        self.where = where if isinstance(where, Location) else Location(str(where))
        self.field = field
        self.message = message
        prefix = str(self.where)
        if field is not None:
            prefix += f": field {field!r}"
        super().__init__(f"{prefix}: {message}")

    def __reduce__(self) -> tuple[object, ...]:
        # picklable (a located error travels with its input line to a Ray worker)
        return (_input_error, (self.where, self.message, self.field))


def _input_error(where: Location, message: str, field: str | None) -> InputError:
    return InputError(where, message, field=field)


class BudgetReached(Exception):
    """A budget (``--max-cost``, ``--max-tokens-total``, ``--max-time``) stopped a command
    after it saved every finished row; the message says which and how to go on. The CLI
    prints it and exits with status 4."""


class Interrupted(Exception):
    """The user stopped a run (Ctrl-C, or SIGTERM: :func:`stop_on_sigterm`) after it saved what
    it had; the message says what is kept and how to go on. The CLI prints it and exits with
    status 130 (143 after SIGTERM)."""


#: set once SIGTERM asked this process to stop (the CLI then exits with 143, not 130)
TERMINATED: list[bool] = []


def stop_on_sigterm(signum: int, frame: object) -> None:
    """The CLI's SIGTERM handler: a command stops as on Ctrl-C, saying what it kept (and
    also when it was started with Ctrl-C ignored, as a background job is: ``nohup ... &``).
    Raises KeyboardInterrupt where the command is; while an event loop runs,
    :func:`hopscore.engine.sync.run_sync` cancels its main task instead, as Ctrl-C does."""
    TERMINATED.append(True)
    raise KeyboardInterrupt
