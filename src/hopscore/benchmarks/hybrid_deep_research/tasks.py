"""HDR task records (the gold of HybridDeepResearch): the release JSONL, the per-category source
files, and the v2 overlay. The format is the agent benchmarks' one,
:mod:`hopscore.benchmarks.agent_tasks`; its names are re-exported here."""

from __future__ import annotations

from hopscore.benchmarks.agent_tasks import (
    BY_LABEL,
    BY_TYPE,
    CATEGORY_FILES,
    DB_NAME,
    FAMILIES,
    MAX_REPORTED,
    PARALLEL,
    S2SQL,
    SQL2S,
    Family,
    HdrTask,
    Overlay,
    family_counts,
    family_of_id,
    load_tasks,
    overlay,
    read_tasks,
    tasks_jsonl,
    tasks_sha256,
)

__all__ = [
    "BY_LABEL", "BY_TYPE", "CATEGORY_FILES", "DB_NAME", "FAMILIES", "MAX_REPORTED", "PARALLEL",
    "S2SQL", "SQL2S", "Family", "HdrTask", "Overlay", "family_counts", "family_of_id",
    "load_tasks", "overlay", "read_tasks", "tasks_jsonl", "tasks_sha256",
]
