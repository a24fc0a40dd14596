"""Deterministic shards of a run, for any scheduler: ``--shard I/N`` and ``--shard auto``.

A row belongs to shard ``I`` of ``N`` when a stable hash of its *shard key* is ``I`` modulo
``N``. The shard key says what a row is, never how it is run: the example id of a model run,
the task id of an agent run (so every attempt of a task is in one shard), the content of a
judge or sql-match input line with its duplicate number. The hash is SHA-256, so a row lands in
the same shard on every machine, in every Python process (``hash()`` is salted per process)
and whatever the order of the input.

``--shard auto`` reads the scheduler's variables: Slurm job arrays
(``SLURM_ARRAY_TASK_ID`` less ``SLURM_ARRAY_TASK_MIN``, divided by ``SLURM_ARRAY_TASK_STEP``, of
``SLURM_ARRAY_TASK_COUNT``) or a Kubernetes Indexed Job (``JOB_COMPLETION_INDEX``, with the
count from ``--shards N``, which Kubernetes does not put in the environment).

The shard is never part of a run's settings fingerprint (:func:`fingerprint`): the shards of
one run have equal fingerprints, which ``hopscore merge`` checks before it joins them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError
from hopscore.files.digest import file_sha256

SLURM_ID, SLURM_COUNT = "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"
SLURM_MIN, SLURM_STEP = "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP"
K8S_INDEX = "JOB_COMPLETION_INDEX"
#: How many shards one run may be split into.
MAX_SHARDS = 100_000

#: ``I/N`` exactly: ASCII digits, no spaces, no signs (``0 /2``, `` 1/4`` and ``١/٤`` are refused)
_SPEC = re.compile(r"([0-9]+)/([0-9]+)", re.ASCII)


def shard_of(key: str, count: int) -> int:
    """The shard (0 .. count-1) of a row with this shard key."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (0-based) of ``count``."""

    index: int
    count: int
    #: where the numbers came from: "option", "slurm" or "kubernetes"
    source: str = "option"

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_SHARDS:
            raise HopscoreError(f"--shard: the number of shards must be 1 to {MAX_SHARDS}, "
                                f"not {self.count}")
        if not 0 <= self.index < self.count:
            raise HopscoreError(f"--shard {self.index}/{self.count}: the index counts from 0, "
                                f"so it is 0 to {self.count - 1}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, key: str) -> bool:
        """Whether the row with this shard key is this shard's."""
        return shard_of(key, self.count) == self.index

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "count": self.count, "spec": str(self), "source": self.source}

    @classmethod
    def from_json(cls, data: Any) -> Shard | None:
        if not isinstance(data, dict):
            return None
        index, count = data.get("index"), data.get("count")
        if not isinstance(index, int) or not isinstance(count, int):
            return None
        return cls(index, count, str(data.get("source") or "option"))


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    text = env.get(name)
    if text is None or not text.strip():
        return None
    try:
        return int(text.strip())
    except ValueError:
        raise HopscoreError(f"--shard auto: {name}={text!r} is not a whole number") from None


def from_environment(shards: int | None, env: Mapping[str, str] | None = None) -> Shard:
    """``--shard auto``: the shard of this Slurm array task or Kubernetes Indexed Job pod."""
    env = os.environ if env is None else env
    task_id = _env_int(env, SLURM_ID)
    if task_id is not None:
        count = _env_int(env, SLURM_COUNT)
        if count is None:
            raise HopscoreError(f"--shard auto: {SLURM_ID} is set but {SLURM_COUNT} is not")
        first = _env_int(env, SLURM_MIN) or 0
        step = _env_int(env, SLURM_STEP) or 1
        if step < 1 or (task_id - first) % step:
            raise HopscoreError(f"--shard auto: {SLURM_ID}={task_id} is not on the array's "
                                f"steps ({SLURM_MIN}={first}, {SLURM_STEP}={step})")
        if shards is not None and shards != count:
            raise HopscoreError(f"--shards {shards} disagrees with {SLURM_COUNT}={count}")
        return Shard((task_id - first) // step, count, "slurm")
    index = _env_int(env, K8S_INDEX)
    if index is not None:
        if shards is None:
            raise HopscoreError(f"--shard auto with {K8S_INDEX} (a Kubernetes Indexed Job) "
                                "needs --shards N, the Job's completions")
        return Shard(index, shards, "kubernetes")
    raise HopscoreError(f"--shard auto: neither {SLURM_ID} (a Slurm job array) nor "
                        f"{K8S_INDEX} (a Kubernetes Indexed Job) is set; give --shard I/N")


def parse_shard(spec: str | None, shards: int | None = None,
                env: Mapping[str, str] | None = None) -> Shard | None:
    """The value of ``--shard`` (``I/N`` or ``auto``) with ``--shards``; None for no shard."""
    if spec is None:
        if shards is not None:
            raise HopscoreError("--shards is the count for --shard auto; give --shard too")
        return None
    if spec.lower() == "auto":
        return from_environment(shards, env)
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise HopscoreError(f"--shard {spec!r}: expected I/N (e.g. 0/4, the first of four "
                            "shards) or auto")
    shard = Shard(int(match.group(1)), int(match.group(2)))
    if shards is not None and shards != shard.count:
        raise HopscoreError(f"--shards {shards} disagrees with --shard {spec}")
    return shard


def occurrence_keys(contents: Iterable[str]) -> list[str]:
    """Shard keys of rows known by their content: the content and its duplicate number, so two
    identical rows are two rows, each in a shard of its own hash."""
    seen: dict[str, int] = {}
    out = []
    for content in contents:
        number = seen.get(content, 0)
        seen[content] = number + 1
        out.append(content if number == 0 else f"{content}\x00{number}")
    return out


def fingerprint(settings: Mapping[str, Any], ignored: Iterable[str] = ()) -> str:
    """A short hash of a run's settings without those in ``ignored`` (how it is executed: the
    output place, concurrency, time limits, the cache, the shard)."""
    skip = set(ignored)
    kept = {name: value for name, value in settings.items() if name not in skip}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), default=str,
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def differences(a: Mapping[str, Any], b: Mapping[str, Any], ignored: Iterable[str] = ()
                ) -> list[str]:
    """The names of the settings where ``a`` and ``b`` differ (``ignored`` left out)."""
    skip = set(ignored)
    names = sorted((set(a) | set(b)) - skip)
    return [name for name in names if a.get(name) != b.get(name)]


# --- the record of a file output's shard --------------------------------------------------------

#: ``OUT.shard.json`` beside a sharded file output (judge, sql-match): which shard of which
#: input it holds, with the settings fingerprint, so ``hopscore merge`` can check and join it.
SIDECAR_SUFFIX = ".shard.json"


def sidecar_path(output: Path) -> Path:
    return output.with_name(output.name + SIDECAR_SUFFIX)


def write_sidecar(output: Path, *, command: str, shard: Shard, fingerprint: str,
                  input_path: Path, rows: int, rows_total: int,
                  settings: Mapping[str, Any]) -> None:
    """Record that ``output`` holds ``shard`` of ``input_path`` (written before any row)."""
    from hopscore.files.atomic import write_json_atomic
    from hopscore.version import __version__

    write_json_atomic(sidecar_path(output), {
        "hopscore_version": __version__, "command": command, "output": str(output),
        "shard": shard.to_json(), "fingerprint": fingerprint,
        "input": {"path": str(input_path.resolve()), "sha256": file_sha256(input_path),
                  "rows": rows_total},
        "rows": rows, "settings": json.loads(json.dumps(dict(settings), default=str)),
        "argv": sys.argv if sys.argv and sys.argv[0] else None,
    })


def clear_sidecar(output: Path) -> None:
    """An unsharded run into ``output``: a shard record left there by an earlier run is stale."""
    sidecar_path(output).unlink(missing_ok=True)
