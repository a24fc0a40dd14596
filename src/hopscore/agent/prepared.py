"""A prepared agent run: its settings, model, tasks, knowledge and search, and the
key of each (task, attempt) in its sample log. Shared by the runner, which makes it, and the
run's output files (:mod:`hopscore.agent.report`), which describe it."""

from __future__ import annotations

from dataclasses import dataclass, field

from hopscore.agent.knowledge import KnowledgeBase
from hopscore.agent.protocol import ToolProtocol
from hopscore.agent.settings import HdrSettings
from hopscore.benchmarks.agent_tasks import HdrTask, Overlay
from hopscore.engine import canonical_json, sha256_text
from hopscore.run.providers import ModelSpec
from hopscore.run.search import SearchBackend


@dataclass(slots=True)
class PreparedAgentRun:
    settings: HdrSettings
    spec: ModelSpec
    base_url: str | None
    endpoint: str
    tasks: list[HdrTask]
    overlay: Overlay | None
    knowledge: dict[str, KnowledgeBase | None]
    search: SearchBackend
    fingerprint: str
    #: "empty" or "null": the content of tool-call turns without text, for this endpoint
    content_style: str = "empty"
    #: native or text tools, shared by every attempt (auto switches once per run)
    protocol: ToolProtocol = field(default_factory=ToolProtocol)


def attempt_key(prepared: PreparedAgentRun, task: HdrTask, attempt: int) -> str:
    """The sample-log key of one attempt: the task, the attempt number, the run's settings
    fingerprint and the task record's hash (a changed task is run again)."""
    record = sha256_text(canonical_json(task.record))[:12]
    return f"{task.id}#{attempt}@{prepared.fingerprint}:{record}"
