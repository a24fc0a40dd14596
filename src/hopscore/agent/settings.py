"""Everything that defines an agent run, as one typed record (written to config.json)."""

from __future__ import annotations

import os
import string
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopscore.defaults import DEFAULT_MAX_OUTAGE
from hopscore.errors import HopscoreError
from hopscore.files.settings_json import option_inputs, settings_json

if TYPE_CHECKING:
    from hopscore.engine.reasoning import ReasoningSettings
    from hopscore.files.output_specs import Input
    from hopscore.files.shard import Shard

SEARCH_BACKENDS = ("bm25", "http")
TOOL_CHOICES = ("auto", "required", "none")
TOOL_PROTOCOLS = ("auto", "native", "text")
CONTENT_STYLES = ("auto", "empty", "null")
DEFAULT_TEMPLATE = "{db}/{db}_template.sqlite"


@dataclass(frozen=True, slots=True, kw_only=True)
class HdrSettings:
    tasks: Path
    db_root: Path
    model: str
    output_dir: Path
    overlay: Path | None = None
    db_template: str = DEFAULT_TEMPLATE
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    # search
    search_backend: str = "bm25"
    corpus: Path | None = None
    search_url: str | None = None
    fetch_url: str | None = None
    direct_fetch: bool = False
    search_api_key_env: str | None = None
    search_timeout: float = 30.0
    search_max_bytes: int = 2_000_000
    allow_private_fetch: bool = False
    # the loop
    max_turns: int = 300
    task_timeout: float = 3600.0
    repeats: int = 1
    limit: int | None = None
    concurrency: int = 4
    #: --concurrency was not given: as many attempts at once as the server declares slots
    #: (:func:`hopscore.agent.endpoints.agents_at_once`)
    follow_slots: bool = False
    temperature: float | None = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    #: sent as tool_choice with native tools; None: "auto" for endpoints, unset for local models
    #: (whose every reply is then a call)
    tool_choice: str | None = None
    #: native (the request's tools field), text (tools written into the prompt), or auto
    tool_protocol: str = "auto"
    #: content of an assistant tool-call turn without text: auto, empty ("") or null
    tool_call_content: str = "auto"
    #: replies in a row without a tool call before an attempt ends (status no_tool_call)
    max_text_turns: int = 5
    #: the model's context in tokens; the oldest tool results are dropped to stay inside it
    max_context_tokens: int | None = None
    sql_timeout: float = 120.0
    max_observation_chars: int = 100_000
    # requests
    timeout: float = 300.0
    max_retries: int = 5
    backoff: float = 1.0
    max_retry_wait: float = 60.0
    deadline: float | None = None
    #: seconds the requests wait for an endpoint that stopped answering (--max-outage)
    max_outage: float = DEFAULT_MAX_OUTAGE
    #: budgets (engine/budget.py): how a run executes, not what it computes
    max_cost: float | None = None
    max_tokens_total: int | None = None
    max_time: float | None = None
    #: --on-budget: the requests in flight finish, or are abandoned, once a budget is reached
    on_budget: str = "finish"
    adaptive: bool = True
    cache_dir: Path | None = None
    # grading
    grade: bool = True
    judge_model: str | None = None
    judge_base_url: str | None = None
    judge_api_key_env: str = "JUDGE_API_KEY"
    judge_prompt_file: Path | None = None
    judge_concurrency: int = 8
    compare: str = "reference"
    resamples: int = 2000
    #: intervals over tasks (each task's k attempts are one unit: clustered by task)
    ci: str = "auto"
    ci_level: float = 0.95
    #: --shard I/N: only the tasks of this shard, each with all its attempts (None: all)
    shard: Shard | None = None
    #: an attempt with a reply cut at max_tokens (finish_reason "length"): "score" it as it is,
    #: or "error" (not graded: no verdict, counted apart)
    on_truncation: str = "score"
    #: local (this process) or ray (--executor ray: a Ray cluster's workers)
    executor: str = "local"
    #: --ray-workers: worker actors (and the CPUs of an embedded local Ray); None: every CPU
    ray_workers: int | None = None
    #: --reasoning-effort, --thinking-budget, --reasoning-style (None: none given; left out of
    #: config.json then, so runs without them keep their fingerprint)
    reasoning: ReasoningSettings | None = None

    def check(self) -> None:
        from hopscore.engine.reasoning import check as check_reasoning
        from hopscore.engine.reasoning import provider_of
        from hopscore.inference.ci import check_choice

        check_choice(self.ci, self.ci_level)
        check_reasoning(self.reasoning, provider_of(self.model), self.max_tokens)
        if self.on_truncation not in ("score", "error"):
            raise HopscoreError("--on-truncation must be score or error")
        if self.search_backend not in SEARCH_BACKENDS:
            raise HopscoreError(f"--search-backend must be one of {', '.join(SEARCH_BACKENDS)}")
        if self.search_backend == "bm25" and self.corpus is None:
            raise HopscoreError("the bm25 search backend needs --corpus FILE.jsonl (documents "
                                "{url, title, text}); or use --search-backend http --search-url")
        if self.search_backend == "http" and not self.search_url:
            raise HopscoreError("--search-backend http needs --search-url")
        if self.search_backend != "http" and (self.search_url or self.fetch_url):
            raise HopscoreError("--search-url and --fetch-url are for --search-backend http")
        if self.tool_choice is not None and self.tool_choice not in TOOL_CHOICES:
            raise HopscoreError(f"--tool-choice must be one of {', '.join(TOOL_CHOICES)}")
        if self.tool_protocol not in TOOL_PROTOCOLS:
            raise HopscoreError(f"--tool-protocol must be one of {', '.join(TOOL_PROTOCOLS)}")
        if self.tool_call_content not in CONTENT_STYLES:
            raise HopscoreError(
                f"--tool-call-content must be one of {', '.join(CONTENT_STYLES)}")
        if self.max_context_tokens is not None and self.max_context_tokens < 256:
            raise HopscoreError("--max-context-tokens must be at least 256")
        if self.max_context_tokens is not None and self.max_tokens is not None and \
                self.max_tokens >= self.max_context_tokens:
            raise HopscoreError(f"--max-tokens {self.max_tokens} leaves no room for the prompt "
                                f"in --max-context-tokens {self.max_context_tokens}")
        for name in ("max_turns", "repeats", "concurrency", "judge_concurrency",
                     "max_text_turns"):
            if getattr(self, name) < 1:
                raise HopscoreError(f"--{name.replace('_', '-')} must be at least 1")
        if self.limit is not None and self.limit < 1:
            raise HopscoreError("--limit must be at least 1")
        for name in ("task_timeout", "sql_timeout", "timeout", "search_timeout"):
            if getattr(self, name) <= 0:
                raise HopscoreError(f"--{name.replace('_', '-')} must be positive")
        if self.max_observation_chars < 1000:
            raise HopscoreError("--max-observation-chars must be at least 1000")
        try:
            names = [n for _, n, _, _ in string.Formatter().parse(self.db_template) if n]
        except ValueError as exc:
            raise HopscoreError(f"--db-template {self.db_template!r}: {exc}") from None
        if names.count("db") < 1 or any(n != "db" for n in names):
            raise HopscoreError(f"--db-template {self.db_template!r} must use {{db}} and no "
                                "other field")
        if not self.db_root.is_dir():
            raise HopscoreError(f"--db-root {self.db_root}: not a folder")

    def judge_model_name(self) -> str | None:
        return self.judge_model or os.environ.get("JUDGE_MODEL") or None

    def judge_endpoint(self) -> str | None:
        return self.judge_base_url or os.environ.get("JUDGE_BASE_URL") or None

    def db_path(self, db: str) -> Path:
        return self.db_root / self.db_template.format(db=db)

    def inputs(self) -> list[Input]:
        """The files and folders the run reads, by option (the run directory never writes over
        one, and is never inside the task folder or the database root)."""
        return option_inputs({
            "--tasks": self.tasks, "--overlay": self.overlay, "--db-root": self.db_root,
            "--corpus": self.corpus, "--judge-prompt-file": self.judge_prompt_file})

    def to_json(self) -> dict[str, Any]:
        """Every setting (paths as strings): config.json's and the fingerprint's."""
        out = settings_json(self)
        if out["reasoning"] is None:  # a newer setting, out of config.json when unused
            del out["reasoning"]
        return out

    def fingerprint(self, attempts: str) -> str:
        """What the run computes, with ``attempts`` (the fingerprint in every attempt's key),
        not how it is executed: the same for every shard of a run."""
        from hopscore.files.shard import fingerprint

        return fingerprint({**self.to_json(), "attempts": attempts}, EXECUTION_FIELDS)


#: Settings that say how a run is executed, not what it computes (see :meth:`fingerprint`).
EXECUTION_FIELDS = ("output_dir", "api_key_env", "concurrency", "follow_slots", "timeout",
                    "max_retries", "backoff", "max_retry_wait", "deadline", "max_outage",
                    "max_cost", "max_tokens_total", "max_time", "on_budget",
                    "adaptive", "cache_dir", "shard", "executor", "ray_workers",
                    "search_api_key_env", "search_timeout", "judge_api_key_env",
                    "judge_concurrency")
#: Settings that change neither the attempts nor what they are asked (how the run is carried
#: out, how it is graded and reported): a rerun that differs in these alone resumes, and a
#: refused rerun does not name them. Another --shard is named (its tasks are others); the
#: judge's settings are named by the judge output's own check.
OPERATIONAL = (*(name for name in EXECUTION_FIELDS if name != "shard"), "grade", "judge_model",
               "judge_base_url", "judge_prompt_file", "compare", "resamples", "ci", "ci_level",
               "on_truncation")
