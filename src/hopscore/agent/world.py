"""The agent's built-in world: the package data an agent benchmark bundles (the folder it
declares, :attr:`~hopscore.benchmarks.base.Benchmark.agent_world`, read through
:meth:`~hopscore.benchmarks.base.Benchmark.resource`).

The bundled world holds invented tasks over a few SQLite databases with knowledge files and a
search corpus, in the release's formats (the task file :data:`TASKS_FILE`, ``dbs/<db>/<db>.sql``
and ``dbs/<db>/<db>_kb.jsonl``, :data:`CORPUS_FILE`), so the agent command (``hopscore
agent``) without ``--tasks``/``--db-root``/``--corpus`` and ``hopscore demo --hdr`` run with no
download. The databases ship as SQL scripts; :func:`materialize` builds the
``<db>/<db>_template.sqlite`` files (and copies the tasks, knowledge files and corpus) into a
folder named by the world's content hash under the cache folder, once, atomically (a build in
a temporary folder renamed into place, so two processes never see half a world), and reuses it
afterwards. An unwritable cache folder falls back to a temporary folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hopscore.agent.benchmark import agent_benchmark, short_title
from hopscore.errors import HopscoreError

if TYPE_CHECKING:
    from importlib.abc import Traversable

TASKS_FILE = "hybrid_ds_release.jsonl"
CORPUS_FILE = "corpus.jsonl"
_DONE = ".complete"


@dataclass(frozen=True, slots=True)
class BuiltinWorld:
    root: Path
    tasks: Path
    db_root: Path
    corpus: Path


def _folder() -> Traversable:
    """The bundled world's folder: the agent benchmark's declared package data."""
    bench = agent_benchmark()
    if bench.agent_world is None:
        raise HopscoreError(f"{bench.title} bundles no world for its agent; give --tasks, "
                            "--db-root and --corpus")
    return bench.resource(bench.agent_world)


def databases() -> tuple[str, ...]:
    """The databases of the bundled world (the folders of its ``dbs/``), sorted."""
    try:
        return tuple(sorted(entry.name for entry in (_folder() / "dbs").iterdir()
                            if entry.is_dir()))
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise HopscoreError(f"the built-in {short_title()} world is incomplete "
                            f"({exc.filename}); reinstall hopscore") from None


def _sources() -> dict[str, bytes]:
    """Every shipped file of the world, by its path relative to the world folder."""
    base = _folder()
    files = {TASKS_FILE: base / TASKS_FILE, CORPUS_FILE: base / CORPUS_FILE}
    for db in databases():
        files[f"dbs/{db}/{db}.sql"] = base / "dbs" / db / f"{db}.sql"
        files[f"dbs/{db}/{db}_kb.jsonl"] = base / "dbs" / db / f"{db}_kb.jsonl"
    try:
        return {name: path.read_bytes() for name, path in files.items()}
    except FileNotFoundError as exc:
        raise HopscoreError(f"the built-in {short_title()} world is incomplete "
                            f"({exc.filename}); reinstall hopscore") from None


def world_sha256() -> str:
    digest = hashlib.sha256()
    for name, data in sorted(_sources().items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _build(target: Path, sources: dict[str, bytes]) -> None:
    for name, data in sources.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".sql"):
            db = path.parent.name
            con = sqlite3.connect(path.parent / f"{db}_template.sqlite")
            try:
                con.executescript(data.decode("utf-8"))
                con.commit()
            finally:
                con.close()
        path.write_bytes(data)
    (target / _DONE).write_text("ok\n", encoding="utf-8")


def _world(root: Path) -> BuiltinWorld:
    return BuiltinWorld(root, root / TASKS_FILE, root / "dbs", root / CORPUS_FILE)


def materialize(cache_dir: Path | None = None) -> BuiltinWorld:
    """The built-in world's files on disk (built on first use)."""
    sources = _sources()
    name = f"hdr-world-{world_sha256()[:16]}"
    bases = [cache_dir] if cache_dir is not None else []
    env = os.environ.get("HOPSCORE_CACHE_DIR")
    if env:
        bases.append(Path(env))
    bases.append(Path.home() / ".cache" / "hopscore")
    for base in bases:
        root = base / name
        if (root / _DONE).is_file():
            return _world(root)
        try:
            base.mkdir(parents=True, exist_ok=True)
            scratch = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=base))
        except OSError:
            continue
        try:
            _build(scratch, sources)
            try:
                os.replace(scratch, root)
            except OSError:  # another process put it in place first
                if not (root / _DONE).is_file():
                    raise
        except OSError:
            continue
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return _world(root)
    root = Path(tempfile.mkdtemp(prefix="hopscore-hdr-world-")) / name
    _build(root, sources)
    return _world(root)
