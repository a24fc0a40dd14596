"""The run's and the agent run's settings share one JSON form and one input list."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hopscore.files.settings_json import option_inputs, settings_json
from hopscore.files.shard import parse_shard
from hopscore.run.settings import RunSettings


@dataclass(frozen=True)
class Record:
    path: Path
    names: tuple[str, ...]
    shard: object
    count: int = 3


def test_paths_shards_and_tuples() -> None:
    shard = parse_shard("1/2")
    assert shard is not None
    record = Record(Path("a/b"), ("x", "y"), shard)
    assert settings_json(record) == {"path": "a/b", "names": ("x", "y"),
                                     "shard": shard.to_json(), "count": 3}
    assert settings_json(record, tuples_as_lists=True)["names"] == ["x", "y"]


def test_run_settings_keep_their_form() -> None:
    settings = RunSettings(benchmark="bamboogle", gold=Path("g.jsonl"), model="m",
                           output_dir=Path("out"), stop=("###",), corpus=Path("c.jsonl"))
    data = settings.to_json()
    assert data["gold"] == "g.jsonl" and data["stop"] == ["###"] and data["shard"] is None
    assert list(data)[:4] == ["benchmark", "gold", "model", "output_dir"]
    assert [(i.path, i.option) for i in settings.inputs()] == [
        (Path("g.jsonl"), "--gold"), (Path("c.jsonl"), "--corpus")]
    assert option_inputs({"--x": None}) == []
