"""An append-only JSON Lines results file that survives crashes and is put in order at the end.

During a run every finished row is appended and flushed, so a crash loses only the rows in
flight. Rows carry a key (where is up to the caller: ``key_of(row)``); on restart the file is
read back, a torn last line (the process died mid-write) is cut off, and the keys already done
are skipped. A key may appear more than once (a failed row, then its successful retry): the last
row wins. :meth:`ResultLog.finalize` rewrites the file atomically with exactly one row per key,
in the order the caller gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files.atomic import temp_beside
from hopscore.files.io import loads
from hopscore.files.jsontext import dumps_encodable

if TYPE_CHECKING:
    from rich.console import Console

KeyOf = Callable[[dict[str, Any]], "str | None"]


class ResultLog:
    """The results file of one resumable run."""

    def __init__(self, path: Path, key_of: KeyOf) -> None:
        self.path = path
        self.key_of = key_of
        #: key -> byte offset of the latest row with that key
        self._offsets: dict[str, int] = {}
        #: key -> the latest row's "done" flag (a failed row is kept but is not done)
        self._done: dict[str, bool] = {}
        self._handle: IO[bytes] | None = None
        #: the byte offset where the next appended row starts
        self._end = 0
        #: bytes of a torn last line cut off by :meth:`load`
        self.torn_bytes = 0
        #: rows in the file, superseded ones included
        self.rows_stored = 0

    def load(self, is_done: Callable[[dict[str, Any]], bool]) -> int:
        """Read an existing file; return how many distinct keys it holds.

        A last line without a newline that is not valid JSON is a torn write and is truncated
        away. Any other unreadable line means the file is not ours: a located error.
        """
        if not self.path.exists():
            return 0
        if self.path.is_dir():
            raise InputError(self.path, "is a directory, expected a results file")
        data = self.path.read_bytes()
        position = 0
        line_number = 0
        good_end = 0
        while position < len(data):
            newline = data.find(b"\n", position)
            end = len(data) if newline < 0 else newline + 1
            raw = data[position:end]
            line_number += 1
            if raw.strip():
                row = self._parse(raw, line_number, last=newline < 0)
                if row is None:  # torn last line
                    break
                self._remember(row, position, is_done, line_number)
            good_end = end
            position = end
        if good_end < len(data):
            self.torn_bytes = len(data) - good_end
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
        elif data and not data.endswith(b"\n"):
            with self.path.open("ab") as handle:  # complete last row without its newline
                handle.write(b"\n")
        return len(self._offsets)

    def _parse(self, raw: bytes, line: int, *, last: bool) -> dict[str, Any] | None:
        where = Location(str(self.path), line=line)
        try:
            row = loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            if last:
                return None
            raise InputError(
                where,
                "unreadable line in an existing results file; it is not one this command "
                "wrote (remove it or choose another output)",
            ) from None
        if not isinstance(row, dict):
            raise InputError(where, "existing results file holds a non-object line")
        return row

    def _remember(self, row: dict[str, Any], offset: int, is_done: Callable[[dict[str, Any]], bool],
                  line: int) -> None:
        key = self.key_of(row)
        if key is None:
            raise InputError(
                Location(str(self.path), line=line),
                "the output file exists but this row has no run key: it was not written by this "
                "command (remove it or choose another output)",
            )
        self._offsets[key] = offset
        self._done[key] = is_done(row)
        self.rows_stored += 1

    def is_done(self, key: str) -> bool:
        return self._done.get(key, False)

    def done_keys(self) -> set[str]:
        return {key for key, done in self._done.items() if done}

    def keys(self) -> set[str]:
        return set(self._offsets)

    def append(self, row: dict[str, Any], done: bool = True, line: str | None = None) -> None:
        """Append one row and flush it to the OS (a crash of this process cannot lose it).

        ``line``: the row's text when the caller has it already
        (:func:`hopscore.files.rowcap.fitting_line`): ``dumps_encodable(row)``, not made again."""
        key = self.key_of(row)
        if key is None:
            raise ValueError("row has no key")
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("ab")
            self._end = self._handle.tell()
        # json.dumps(row, ensure_ascii=False), lone surrogates escaped
        text = dumps_encodable(row) if line is None else line
        data = text.encode("utf-8") + b"\n"
        self._handle.write(data)
        self._handle.flush()
        # the offset is counted, not asked (tell() on an append handle is a system call)
        self._offsets[key] = self._end
        self._end += len(data)
        self._done[key] = done
        self.rows_stored += 1

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def read(self, key: str) -> dict[str, Any]:
        """The latest row stored for ``key``."""
        with self.path.open("rb") as handle:
            return self._read_at(handle, key)

    def latest(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The latest row stored for each of ``keys`` that has one, by key, in ``keys`` order.

        Rows of other keys and superseded rows (a failure, then its retry) are left out.
        """
        wanted = [key for key in keys if key in self._offsets]
        if not wanted:
            return {}
        if self._handle is not None:
            self._handle.flush()
        with self.path.open("rb", buffering=1 << 20) as handle:
            return {key: self._read_at(handle, key) for key in wanted}

    def _read_at(self, handle: IO[bytes], key: str) -> dict[str, Any]:
        handle.seek(self._offsets[key])
        row: dict[str, Any] = loads(handle.readline())
        return row

    def finalize(self, order: Iterable[str]) -> int:
        """Rewrite the file atomically: the latest row of each key in ``order``, nothing else.

        Every key of ``order`` must have a row, and keys must be unique. Returns how many stored
        rows were dropped (superseded rows, and rows whose key is not in ``order``).
        """
        self.close()
        keys = list(order)
        if len(set(keys)) != len(keys):
            raise ValueError("finalize: keys are not unique")
        missing = sum(1 for key in keys if key not in self._offsets)
        if missing:
            rows = f"{missing} row is" if missing == 1 else f"{missing} rows are"
            raise HopscoreError(f"{self.path}: {rows} not finished; re-run to complete")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        fd, tmp = temp_beside(self.path)
        new_offsets: dict[str, int] = {}
        try:
            with os.fdopen(fd, "wb") as out, self.path.open("rb") as source:
                for key in keys:
                    source.seek(self._offsets[key])
                    line = source.readline()
                    new_offsets[key] = out.tell()
                    out.write(line if line.endswith(b"\n") else line + b"\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dropped = self.rows_stored - len(keys)
        self._offsets = new_offsets
        self._done = {key: self._done[key] for key in keys}
        self.rows_stored = len(keys)
        return dropped


def run_key_of(row: dict[str, Any]) -> str | None:
    """The ``run_key`` field of a row: the key of ``hopscore run``'s and the agent's samples."""
    key = row.get("run_key")
    return key if isinstance(key, str) else None


def note_resume(log: ResultLog, keys: Iterable[str], warn: Console | None, stale: str) -> None:
    """After :meth:`ResultLog.load`: warn about rows whose keys this run does not have (``stale``
    says what they are: "<path> holds <n> " + stale) and note a torn last line cut off."""
    if warn is None:
        return
    count = len(log.keys() - set(keys))
    if count:
        warn.print(f"warning: {log.path} holds {count} {stale}", style="yellow", markup=False,
                   highlight=False)
    if log.torn_bytes:
        warn.print(f"note: cut a torn last line ({log.torn_bytes} bytes) left by a crash",
                   markup=False, highlight=False)
