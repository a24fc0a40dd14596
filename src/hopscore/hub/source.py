"""Reading the rows of a Hugging Face dataset: ``hf:NAME[:CONFIG][@SPLIT]`` through the
``datasets`` library, or the files ``datasets`` exports (parquet, arrow, JSON Lines, JSON and
``save_to_disk`` folders).

``datasets`` is an optional dependency (``pip install 'hopscore[hf]'``) needed for ``hf:``
names, parquet, arrow and ``save_to_disk`` folders; JSON Lines and JSON exports are read
without it. ``datasets`` itself honours its offline settings (``HF_DATASETS_OFFLINE=1``,
``HF_HUB_OFFLINE=1``) and caches (``HF_HOME``, ``HF_DATASETS_CACHE``): hopscore passes the name
through and never downloads anything itself. Class-label columns (a label stored as a class
index) are turned back into their names from the dataset's features.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError
from hopscore.files.io import iter_jsonl, load_json, open_binary, sniff_json_kind

HF_PREFIX = "hf:"
INSTALL_HINT = "pip install 'hopscore[hf]'"
#: names of a save_to_disk folder's metadata files
_DISK_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")


@dataclass(frozen=True, slots=True)
class HubSpec:
    """``hf:NAME[:CONFIG][@SPLIT]``; NAME may hold ``/`` (``owner/dataset``) or be a local
    folder laid out as a Hub dataset repository."""

    name: str
    config: str | None = None
    split: str | None = None

    @classmethod
    def parse(cls, text: str) -> HubSpec:
        if not text.startswith(HF_PREFIX):
            raise HopscoreError(f"{text!r} is not an hf:NAME[:CONFIG][@SPLIT] dataset name")
        rest = text[len(HF_PREFIX):]
        split = None
        if "@" in rest:
            rest, split = rest.rsplit("@", 1)
            if not split:
                raise HopscoreError(f"{text!r}: empty split after '@'")
        config = None
        if ":" in rest:
            rest, config = rest.split(":", 1)
            if not config:
                raise HopscoreError(f"{text!r}: empty config after ':'")
        if not rest:
            raise HopscoreError(f"{text!r}: no dataset name after 'hf:'")
        return cls(rest, config, split)

    def __str__(self) -> str:
        text = HF_PREFIX + self.name
        if self.config:
            text += f":{self.config}"
        if self.split:
            text += f"@{self.split}"
        return text


@dataclass(slots=True)
class Rows:
    """The rows of one split, as Python objects, and where they came from."""

    rows: list[dict[str, Any]]
    #: how to name the source in messages: ``hf:NAME:CONFIG@SPLIT`` or the file
    where: str
    kind: str
    #: a fingerprint of the data (the dataset's, or the file's sha256) for the converted file
    fingerprint: str


def _datasets() -> Any:
    try:
        import datasets
    except ImportError:
        raise HopscoreError(
            f"reading this gold needs the datasets library: {INSTALL_HINT}"
        ) from None
    return datasets


def is_save_to_disk(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in _DISK_MARKERS)


def split_suffix(text: str) -> tuple[Path, str | None]:
    """``folder@split`` names one split of a saved DatasetDict (only when ``folder`` exists and
    the whole text does not)."""
    path = Path(text)
    if not path.exists() and "@" in text:
        head, split = text.rsplit("@", 1)
        if split and Path(head).exists():
            return Path(head), split
    return path, None


def json_rows_kind(path: Path) -> str:
    """``jsonl`` for JSON Lines and for a document holding one object (a one-row JSON Lines
    export, which :func:`hopscore.files.io.sniff_json_kind` calls a JSON document), else
    ``json``."""
    if sniff_json_kind(path) == "jsonl":
        return "jsonl"
    with open_binary(path) as handle:
        head = handle.read(1 << 12).lstrip(b"\xef\xbb\xbf \t\r\n")
    return "jsonl" if head.startswith(b"{") else "json"


def first_record(path: Path) -> Any:
    """The first record of a JSON Lines file, or the first element of a JSON list (read from the
    start of the file only); None when there is none or it cannot be read that way."""
    if sniff_json_kind(path) == "jsonl":
        return next(iter_jsonl(path), (None, None))[1]
    with open_binary(path) as handle:
        # a record is usually a few KB: read 64 KiB, and more (up to 4 MiB, doubling) only
        # while what was read does not hold a whole first record
        head = handle.read(_FIRST_READ)
        while True:
            value, parsed = _first_value(head)
            if parsed or len(head) >= _FIRST_READ_MAX:
                return value
            more = handle.read(len(head))
            if not more:
                return value
            head += more


#: the first and the largest read of :func:`first_record`
_FIRST_READ = 1 << 16
_FIRST_READ_MAX = 4 << 20


def _first_value(head: bytes) -> tuple[Any, bool]:
    """The first record in ``head`` (None if there is none) and whether that is final: False
    when it could not be parsed, which more of the file may change."""
    start = head.decode("utf-8-sig", errors="replace").lstrip()
    if start.startswith("{"):  # one object: a one-row JSON Lines export
        body = start
    elif start.startswith("["):
        body = start[1:].lstrip()
    else:
        return None, bool(start)
    try:
        return json.JSONDecoder().raw_decode(body)[0], True
    except json.JSONDecodeError:
        return None, False


def _decode_labels(rows: list[dict[str, Any]], features: Any) -> None:
    """Class-label columns (ints) back to their names, in place."""
    datasets = _datasets()
    if features is None:
        return
    for name, feature in features.items():
        if isinstance(feature, datasets.ClassLabel):
            for row in rows:
                value = row.get(name)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    row[name] = feature.int2str(value)


def _from_dataset(dataset: Any, where: str, kind: str) -> Rows:
    rows = dataset.to_list()
    _decode_labels(rows, dataset.features)
    fingerprint = getattr(dataset, "_fingerprint", None) or ""
    return Rows(rows, where, kind, fingerprint)


def _pick_split(dataset: Any, split: str | None, default: str, where: str) -> tuple[Any, str]:
    """One split of a DatasetDict: the named one, the only one, or the default."""
    names = list(dataset.keys())
    if split is None:
        split = names[0] if len(names) == 1 else default
    if split not in names:
        raise HopscoreError(f"{where} has no split {split!r}; its splits: {', '.join(names)}")
    return dataset[split], split


def load_hub(spec: HubSpec, default_split: str) -> Rows:
    """One split of a dataset by name, through ``datasets.load_dataset``."""
    datasets = _datasets()
    split = spec.split or default_split
    where = str(HubSpec(spec.name, spec.config, split))
    try:
        dataset = datasets.load_dataset(spec.name, spec.config, split=split)
    except (FileNotFoundError, ConnectionError, ValueError) as exc:
        offline = " (offline mode is on: the dataset must be in the cache)" if _offline() else ""
        raise HopscoreError(f"cannot load {where}{offline}: {type(exc).__name__}: {exc}") from None
    except Exception as exc:  # datasets raises its own classes (DatasetNotFoundError, ...)
        if type(exc).__module__.split(".")[0] not in ("datasets", "huggingface_hub", "requests"):
            raise
        offline = " (offline mode is on: the dataset must be in the cache)" if _offline() else ""
        raise HopscoreError(f"cannot load {where}{offline}: {type(exc).__name__}: {exc}") from None
    return _from_dataset(dataset, where, "hub")


def _offline() -> bool:
    import os

    return any(
        os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE")
        for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")
    )


def load_disk(path: Path, split: str | None, default_split: str) -> Rows:
    """A ``save_to_disk`` folder: a Dataset, or one split of a DatasetDict."""
    datasets = _datasets()
    try:
        dataset = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise InputError(path, f"not a datasets save_to_disk folder: {exc}") from None
    where = str(path)
    if isinstance(dataset, datasets.DatasetDict):
        dataset, chosen = _pick_split(dataset, split, default_split, where)
        where = f"{path}@{chosen}"
    elif split is not None:
        raise HopscoreError(f"{path} holds one split; drop '@{split}'")
    return _from_dataset(dataset, where, "save_to_disk")


def load_parquet(path: Path) -> Rows:
    """A parquet file (one split); the features ``datasets`` stored in it name class labels."""
    datasets = _datasets()
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(str(path))
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(path, f"cannot read parquet: {exc}") from None
    rows = table.to_pylist()
    try:
        features = datasets.Features.from_arrow_schema(table.schema)
    except (ValueError, TypeError, KeyError):
        features = None
    _decode_labels(rows, features)
    return Rows(rows, str(path), "parquet", _sha256(path))


def load_arrow(path: Path) -> Rows:
    datasets = _datasets()
    try:
        dataset = datasets.Dataset.from_file(str(path))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read arrow: {exc}") from None
    rows = _from_dataset(dataset, str(path), "arrow")
    rows.fingerprint = _sha256(path)
    return rows


def load_json_rows(path: Path) -> Rows:
    """A JSON Lines export (``Dataset.to_json``) or a JSON list of rows."""
    if sniff_json_kind(path) == "jsonl":
        rows = []
        for where, value in iter_jsonl(path):
            if not isinstance(value, dict):
                raise InputError(where, "expected a JSON object")
            rows.append(value)
        kind = "jsonl"
    else:
        data = load_json(path)
        if isinstance(data, dict):  # a one-row JSON Lines export
            data = [data]
        if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
            raise InputError(path, "expected a JSON list of rows")
        rows, kind = data, "json"
    return Rows(rows, str(path), kind, _sha256(path))


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with open_binary(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
