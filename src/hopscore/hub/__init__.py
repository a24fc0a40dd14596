"""Gold from Hugging Face dataset layouts: ``--gold hf:NAME[:CONFIG][@SPLIT]`` and the files
``datasets`` exports.

:func:`official_gold` is called by every command that takes ``--gold``. A path to an official
file comes back unchanged. A Hub source (an ``hf:`` name, a parquet or arrow file, a
``save_to_disk`` folder, or a JSON / JSON Lines export whose rows have a Hub layout) is read,
each row is turned into the benchmark's official record (the :class:`HubLayout` it declares,
``Benchmark.hub_layout``: :mod:`hopscore.benchmarks.hub_layout`), and the
records are written once as the official file under the hopscore cache
(``$HOPSCORE_CACHE_DIR/gold``, keyed by content). The benchmark's own loader then reads that
file, so a Hub copy is scored by exactly the code that scores the official release; an error in
a row names the converted file and the row's index, which is the row's index in the split.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Benchmark
from hopscore.benchmarks.hub_layout import HubLayout
from hopscore.errors import HopscoreError
from hopscore.files.atomic import write_json_atomic, write_text_atomic
from hopscore.files.io import json_line
from hopscore.hub.source import (
    HF_PREFIX,
    HubSpec,
    Rows,
    first_record,
    is_save_to_disk,
    json_rows_kind,
    load_arrow,
    load_disk,
    load_hub,
    load_json_rows,
    load_parquet,
    split_suffix,
)


def _declared(benchmark: str) -> type[Benchmark[Any, Any]] | None:
    """The benchmark's class, for its declared facts (``hub_layout``, ``hub_id_field``,
    ``gold_is_json_list``)."""
    from hopscore import benchmarks

    return type(benchmarks.get(benchmark)) if benchmarks.is_known(benchmark) else None


@dataclass(frozen=True, slots=True)
class GoldFile:
    """The official-format gold file to read, and what it was made from."""

    path: Path
    #: what the user gave
    source: str
    #: True when ``path`` was written from a Hub layout
    converted: bool = False
    rows: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def note(self) -> str | None:
        """One line saying where a converted gold came from (None for an official file)."""
        if not self.converted:
            return None
        return f"gold {self.source}: {self.rows} rows read in the official layout from {self.path}"


def hub_source_kind(benchmark: str, gold: Path | str) -> str | None:
    """How ``gold`` is read as a Hub layout (``hub``, ``save_to_disk``, ``parquet``, ``arrow``,
    ``jsonl``, ``json``), or None for an official file."""
    text = str(gold)
    if text.startswith(HF_PREFIX):
        return "hub"
    path, split = split_suffix(text)
    suffix = path.suffix.lower()
    declared = _declared(benchmark)
    if declared is not None and suffix and suffix in declared.official_gold_suffixes:
        return None
    if split is not None or is_save_to_disk(path):
        return "save_to_disk"
    if suffix == ".parquet":
        return "parquet"
    if suffix == ".arrow":
        return "arrow"
    layout = declared.hub_layout if declared is not None else None
    if layout is None or not path.is_file() or suffix not in (".json", ".jsonl"):
        return None
    try:
        first = first_record(path)
    except HopscoreError:
        return None  # the official loader reports what is wrong with the file
    if not isinstance(first, dict):
        return None
    from hopscore.files.io import sniff_json_kind

    # a one-row JSON Lines export is one object, which is JSON Lines only by its name (an
    # official gold may be one object, such as an {id: answer} reference)
    lines = sniff_json_kind(path) == "jsonl" or (suffix == ".jsonl"
                                                 and json_rows_kind(path) == "jsonl")
    if lines:
        if layout.official_suffix == ".json" or layout.is_hub_row(first):
            return "jsonl"
        return None
    if declared is not None and declared.gold_is_json_list and layout.is_hub_row(first):
        return "json"
    return None


def layout_of(benchmark: str) -> HubLayout:
    """The Hugging Face layout ``benchmark`` declares; an error when it declares none."""
    declared = _declared(benchmark)
    layout = declared.hub_layout if declared is not None else None
    if layout is None:
        raise HopscoreError(f"{benchmark} has no Hugging Face layout; give its official gold file")
    return layout


def read_rows(benchmark: str, gold: Path | str, kind: str) -> Rows:
    layout = layout_of(benchmark)
    text = str(gold)
    if kind == "hub":
        return load_hub(HubSpec.parse(text), layout.default_split)
    path, split = split_suffix(text)
    if kind == "save_to_disk":
        return load_disk(path, split, layout.default_split)
    if kind == "parquet":
        return load_parquet(path)
    if kind == "arrow":
        return load_arrow(path)
    return load_json_rows(path)


def official_records(benchmark: str, rows: Rows) -> tuple[list[dict[str, object]], list[str]]:
    """The rows as the benchmark's official records, with warnings (ids made from positions)."""
    layout = layout_of(benchmark)
    records = [layout.to_official(row, rows.where, i) for i, row in enumerate(rows.rows)]
    warnings = []
    declared = _declared(benchmark)
    id_field = declared.hub_id_field if declared is not None else None
    if id_field and records and not any(id_field in record for record in records):
        for index, record in enumerate(records):
            record[id_field] = str(index)
        warnings.append(
            f"{rows.where} has no ids: examples are numbered by their position in the split "
            f"(\"0\", \"1\", ...), so predictions must use those positions as ids"
        )
    return records, warnings


def _cache_root() -> Path:
    from hopscore.engine.cache import default_cache_dir

    return default_cache_dir() / "gold"


def _file_name(source: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", source.replace(HF_PREFIX, "hf_", 1)).strip("_")[:120]


def _cached_digest(path: Path) -> str | None:
    """The sha256 of a converted file already in the cache (None when there is none): the
    cache is keyed by the digest of what is written, so a file whose digest differs from its
    key was changed after it was written, and is not reused."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        return None
    return digest.hexdigest()


def official_gold(benchmark: str, gold: Path | str) -> GoldFile:
    """The official gold file for ``gold``: itself, or the official file made from a Hub
    layout (written once per content under the hopscore cache)."""
    kind = hub_source_kind(benchmark.lower(), gold)
    if kind is None:
        return GoldFile(Path(gold), str(gold))
    name = benchmark.lower()
    layout = layout_of(name)
    rows = read_rows(name, gold, kind)
    if not rows.rows:
        raise HopscoreError(f"{rows.where}: the split has no rows")
    records, warnings = official_records(name, rows)
    if layout.official_suffix == ".jsonl":
        text = "".join(json_line(record) for record in records)
    else:
        text = json.dumps(records, ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    folder = _cache_root() / name / digest[:20]
    target = folder / (_file_name(str(gold) if kind == "hub" else Path(gold).name)
                       + ".official" + layout.official_suffix)
    try:
        cached = _cached_digest(target)
        if cached != digest:
            if cached is not None:
                warnings.append(
                    f"the converted gold {target} had been changed since it was written "
                    f"(sha256 {cached[:12]}..., not {digest[:12]}...); it was written again "
                    f"from {rows.where}"
                )
            write_text_atomic(target, text)
            write_json_atomic(folder / "source.json", {
                "benchmark": name, "source": str(gold), "read_as": rows.where, "kind": kind,
                "rows": len(records), "fingerprint": rows.fingerprint, "sha256": digest,
            })  # fmt: skip
    except OSError as exc:
        raise HopscoreError(
            f"cannot write the converted gold under {folder} ({exc.strerror}); set "
            "HOPSCORE_CACHE_DIR to a writable folder"
        ) from None
    return GoldFile(target, str(gold), True, len(records), tuple(warnings))
