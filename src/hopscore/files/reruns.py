"""Reruns never discard work: what happens to rows of other settings in a results file.

A results file (``samples.jsonl`` of a run, a judge output) keys each row by everything that
made it (settings, prompt, example). On a rerun, rows whose key the new run does not have were
made with other settings or for other examples or inputs. They are never dropped silently:

* ``refuse`` (the default): exit 2 before any work, naming the settings that differ
  (``max_tokens: 1024 -> 8``); nothing is changed;
* ``restart`` (``--restart``): start over; the results file is emptied (cached responses still
  answer identical requests: ``--no-cache`` asks again);
* ``resume-any`` (``--resume-any``): rows of other settings are moved beside the results file,
  into ``<name>.other-settings<suffix>`` (``samples.other-settings.jsonl``), so that the results
  file, and every accuracy computed from it, only ever holds one setting; rows of the side file
  whose key this run has are moved back and reused (switching back and forth loses nothing).

:func:`prepare_results` does this before :class:`~hopscore.engine.ResultLog` loads the file.

A score directory (``hopscore score -o DIR``) is rewritten whole, so its rule is simpler
(:func:`check_score_dir`): it is rewritten when it was made from the same gold file (the same
benchmark and the same bytes: ``metrics.json`` records them under ``scored_from``); a score
directory of another gold, or one whose gold is not known, is refused unless ``--restart``; and
a run directory (``config.json``, ``samples.jsonl``, ``suite.json``) is never turned into a
score directory, whatever the flags.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError
from hopscore.files.atomic import temp_beside

REFUSE, RESTART, RESUME_ANY = "refuse", "restart", "resume-any"
POLICIES = (REFUSE, RESTART, RESUME_ANY)
SIDE = ".other-settings"
#: how many differing settings a refusal names
MAX_NAMED = 12

KeyOf = Callable[[dict[str, Any]], "str | None"]


class RerunRefused(HopscoreError):
    """A rerun would replace rows of other settings (exit status 2)."""


def policy_of(restart: bool, resume_any: bool) -> str:
    """The policy from the ``--restart`` and ``--resume-any`` flags."""
    if restart and resume_any:
        raise HopscoreError("--restart and --resume-any exclude each other")
    return RESTART if restart else RESUME_ANY if resume_any else REFUSE


def side_path(path: Path) -> Path:
    """``samples.jsonl`` -> ``samples.other-settings.jsonl``."""
    return path.with_name(f"{path.stem}{SIDE}{path.suffix}") if path.suffix else \
        path.with_name(path.name + SIDE)


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flat(inner, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: value}


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        text = value[:12]  # a sha256
    return text if len(text) <= 60 else text[:57] + "..."


def comparable_config(config: Mapping[str, Any], operational: Collection[str],
                      fields: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """What of a run's config.json decides its rows: its ``settings`` less the operational
    ones, plus each of ``fields`` (a shown name -> a path of keys into the config; None where
    the path is absent)."""

    def get(*path: str) -> Any:
        value: Any = config
        for name in path:
            value = value.get(name) if isinstance(value, Mapping) else None
        return value

    out = {name: value for name, value in (get("settings") or {}).items()
           if name not in operational}
    out.update({shown: get(*path) for shown, path in fields.items()})
    return out


def settings_diff(old: Mapping[str, Any], new: Mapping[str, Any],
                  ignore: Collection[str] = ()) -> list[str]:
    """``name: old -> new`` for every (flattened) setting that differs, ``ignore`` left out
    (a name or any dotted prefix of it)."""
    before, after = _flat(old), _flat(new)
    lines = []
    for name in dict.fromkeys([*before, *after]):
        if any(name == skip or name.startswith(skip + ".") for skip in ignore):
            continue
        a, b = before.get(name, "(unset)"), after.get(name, "(unset)")
        if a != b:
            lines.append(f"{name}: {_shown(a)} -> {_shown(b)}")
    return lines


@dataclass(slots=True)
class PreparedResults:
    """What :func:`prepare_results` did."""

    policy: str
    #: rows of other settings found in the results file
    foreign: int = 0
    #: rows moved into the side file, and moved back from it
    set_aside: int = 0
    restored: int = 0
    #: rows discarded by --restart
    discarded: int = 0
    #: the rows set aside were made for other inputs with the same settings (``other_inputs``)
    for_other_inputs: bool = False

    def note(self, path: Path) -> str | None:
        """One line for the user, or None when nothing happened."""
        parts = []
        if self.discarded:
            parts.append(f"--restart: discarded {self.discarded} rows of {path}")
        if self.set_aside and self.for_other_inputs:
            parts.append(f"set aside {self.set_aside} rows made for other inputs in "
                         f"{side_path(path)} (reused when those inputs come back)")
        elif self.set_aside:
            parts.append(f"--resume-any: kept {self.set_aside} rows of other settings in "
                         f"{side_path(path)}")
        if self.restored:
            parts.append(f"reused {self.restored} rows from {side_path(path)}")
        return "; ".join(parts) or None


def _scan(path: Path) -> list[bytes] | None:
    """The complete lines of ``path`` (blank ones dropped); None when the file does not exist.
    A torn last line (no newline, not JSON) is left out."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines:
        try:
            json.loads(lines[-1])
        except (ValueError, RecursionError):
            lines.pop()  # torn: ResultLog.load cuts it
    return [line for line in lines if line.strip()]


def _rows(lines: Iterable[bytes]) -> list[tuple[bytes, dict[str, Any]]] | None:
    out = []
    for line in lines:
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):  # not a file of ours: ResultLog.load says where
            return None
        if not isinstance(row, dict):
            return None
        out.append((line, row))
    return out


def _append(path: Path, lines: list[bytes]) -> None:
    if not lines:
        return
    with path.open("ab+") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell():
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":  # a torn line left by a crash: end it first
                handle.write(b"\n")
        handle.write(b"".join(line + b"\n" for line in lines))
        handle.flush()
        os.fsync(handle.fileno())


def _rewrite(path: Path, lines: list[bytes]) -> None:
    if not lines:
        path.unlink(missing_ok=True)
        return
    fd, tmp = temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(b"".join(line + b"\n" for line in lines))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare_results(
    path: Path,
    keys: Iterable[str],
    key_of: KeyOf,
    *,
    policy: str,
    what: str,
    differences: Callable[[list[dict[str, Any]]], list[str]],
    set_aside: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    other_inputs: str | None = None,
) -> PreparedResults:
    """Apply ``policy`` to the rows of ``path`` whose key is not in ``keys``.

    ``what`` names the rows in messages ("samples", "judge rows"); ``differences(rows)`` gives
    the ``name: old -> new`` lines of a refusal from the rows of other settings (called only
    then); ``set_aside`` may change a row
    as it is moved to the side file (the agent moves its trajectory file with it). Rows
    without a key and unreadable lines are left for :class:`ResultLog` to report.

    ``other_inputs`` (a policy) replaces ``refuse`` for rows of the same settings made for
    other inputs (``differences`` names nothing): an agent run's judge file, whose inputs are the
    run's own attempts, already checked against the run's settings, sets such rows aside
    (``resume-any``) so that they are reused when those attempts are graded again.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown rerun policy {policy!r}")
    done = PreparedResults(policy)
    scanned = _scan(path)
    if policy == RESTART:
        if scanned is not None:
            done.discarded = len(scanned)
            path.unlink()
        return done
    wanted = set(keys)
    rows = _rows(scanned) if scanned is not None else []
    if rows is None or any(key_of(row) is None for _, row in rows):
        return done  # not a file of ours: ResultLog.load says where
    foreign = [(line, row) for line, row in rows if key_of(row) not in wanted]
    done.foreign = len({key_of(row) for _, row in foreign})
    if foreign and policy == REFUSE:
        named = differences([row for _, row in foreign])
        if named or other_inputs in (None, REFUSE):
            raise RerunRefused(_refusal(path, what, done.foreign, named))
        policy, done.for_other_inputs = other_inputs, True
        if policy == RESTART:
            path.unlink()
            done.discarded = len(rows)
            return done
    side = side_path(path)
    kept = [line for line, row in rows if key_of(row) in wanted]
    if foreign:
        moved = [line if set_aside is None else
                 json.dumps(set_aside(row), ensure_ascii=False).encode("utf-8")
                 for line, row in foreign]
        _append(side, moved)  # first: a crash between the two leaves rows twice, never none
        done.set_aside = len(moved)
    back = _take_back(side, wanted, key_of, {key_of(row) for _, row in rows if key_of(row) in
                                             wanted}) if policy == RESUME_ANY else []
    done.restored = len(back)
    if foreign or back:
        _rewrite(path, kept + back)
        if back:
            _drop_from_side(side, wanted, key_of)
    return done


def _side_rows(side: Path) -> list[tuple[bytes, dict[str, Any]]]:
    lines = _scan(side)
    rows = _rows(lines) if lines is not None else None
    return rows or []


def _take_back(side: Path, wanted: set[str], key_of: KeyOf, present: set[Any]) -> list[bytes]:
    """Rows of the side file whose key this run has and the results file lacks (the last of
    each key)."""
    back: dict[str, bytes] = {}
    for line, row in _side_rows(side):
        key = key_of(row)
        if key in wanted and key not in present:
            back[key] = line
    return list(back.values())


def _drop_from_side(side: Path, wanted: set[str], key_of: KeyOf) -> None:
    rows = _side_rows(side)
    _rewrite(side, [line for line, row in rows if key_of(row) not in wanted])


def _refusal(path: Path, what: str, count: int, differences: list[str]) -> str:
    if differences:
        named = differences[:MAX_NAMED]
        more = f" (and {len(differences) - MAX_NAMED} more)" if len(differences) > MAX_NAMED else ""
        why = "made with other settings: " + "; ".join(named) + more
    else:
        why = "made for other examples or inputs than this run's"
    return (f"{path} holds {count} {what} {why}. Nothing was changed. Rerun with --restart to "
            f"start over, or with --resume-any to keep them beside the new ones (in "
            f"{side_path(path).name})")


# --- score directories -----------------------------------------------------------------------

#: The files that make a directory a run's (hopscore run, hopscore agent, suite mcr).
RUN_FILES = ("config.json", "samples.jsonl", "suite.json")


def scored_from(gold: Path, given: str | Path) -> dict[str, Any]:
    """The ``scored_from`` block of a score directory's ``metrics.json``: the gold file that
    made it (``given``: as the user named it) and its sha256 (of a gold folder: of what it
    holds; None when it cannot be read: scoring then says why)."""
    return scored_from_soon(gold, given)()


def scored_from_soon(gold: Path, given: str | Path, *, beside: bool = False
                     ) -> Callable[[], dict[str, Any]]:
    """:func:`scored_from` as a call; with ``beside``, a gold file whose digest is not
    remembered is hashed in a thread while the caller reads it
    (:func:`~hopscore.files.digest.remembered_sha256_soon`), and the call waits for it."""
    from hopscore.files.digest import remembered_sha256_soon

    gold_file = str(gold.absolute())
    digest: Callable[[], str] | None = None
    try:
        if gold.exists():
            digest = remembered_sha256_soon(gold, beside=beside)
    except OSError:
        pass

    def made() -> dict[str, Any]:
        sha: str | None = None
        with contextlib.suppress(OSError):
            sha = None if digest is None else digest()
        return {"gold": str(given), "gold_file": gold_file, "gold_sha256": sha}

    return made


def check_score_dir(directory: Path, benchmark: str,
                    made_from: Callable[[], Mapping[str, Any]], *, restart: bool) -> None:
    """Refuse (:class:`RerunRefused`) to write a score directory's ``metrics.json`` and
    ``scores.jsonl`` into ``directory`` when that would replace a run's files, or, unless
    ``restart``, the scores of another gold (see the module docstring). ``made_from`` gives
    the new scores' ``scored_from`` (:func:`scored_from_soon`), asked for only when the
    directory holds scores already."""
    if not directory.is_dir():
        return
    found = [name for name in RUN_FILES if (directory / name).exists()]
    if found:
        raise RerunRefused(
            f"{directory} is a run directory ({found[0]}); score would replace its metrics.json "
            "and scores.jsonl with a score directory's. Nothing was changed. Score into a "
            "directory of its own (hopscore report and compare read a run directory as it is)")
    metrics, scores = directory / "metrics.json", directory / "scores.jsonl"
    if restart or not (metrics.exists() or scores.exists()):
        return
    why = _other_gold(metrics, benchmark, made_from())
    if why is not None:
        raise RerunRefused(
            f"{directory} holds {why}. Nothing was changed. Rerun with --restart to replace "
            "them, or choose another --output-dir")


def _other_gold(metrics: Path, benchmark: str, made_from: Mapping[str, Any]) -> str | None:
    """What of the score directory ``metrics`` belongs to says it was made from another gold
    than ``made_from`` (None: the same gold)."""
    try:
        data = json.loads(metrics.read_bytes())
    except FileNotFoundError:
        return "scores.jsonl without metrics.json, made from a gold it does not name"
    except (OSError, ValueError, RecursionError):
        return "a metrics.json hopscore score did not write (unreadable)"
    if not isinstance(data, dict):
        return "a metrics.json hopscore score did not write"
    old = data.get("benchmark")
    count = data.get("n_gold")
    examples = f"the scores of {count} examples" if isinstance(count, int) else "scores"
    if old != benchmark:
        return f"{examples} of another benchmark ({_shown(old)}, not {benchmark})"
    before = data.get("scored_from")
    if not isinstance(before, dict) or not before.get("gold_sha256"):
        return f"{examples} made from a gold it does not name (written by an older hopscore)"
    now = made_from.get("gold_sha256")
    if now is None:  # the new gold cannot be read: scoring says so; the same file is the same
        same = before.get("gold_file") == made_from.get("gold_file")
    else:
        same = before.get("gold_sha256") == now
    if same:
        return None
    return (f"{examples} made from another gold file: {before.get('gold')} (sha256 "
            f"{_shown(before.get('gold_sha256'))}), not {made_from.get('gold')} (sha256 "
            f"{_shown(now)})")
