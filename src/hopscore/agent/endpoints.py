"""The agent's endpoints: its judge's settings and credentials, the check of both endpoints
before the first batch (:mod:`hopscore.engine.preflight`), and the advice when no reply called
a tool, read from what the server says of its chat template."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console

from hopscore.agent.prepared import PreparedAgentRun
from hopscore.agent.settings import HdrSettings
from hopscore.engine import ChatBackend, warn_printer
from hopscore.engine.capacity import ask_async
from hopscore.engine.preflight import preflight, tool_support
from hopscore.errors import HopscoreError
from hopscore.jobs import retry_policy
from hopscore.judge.judge_config import JudgeConfig
from hopscore.judge.prompt import JudgePrompt
from hopscore.run.providers import resolve, target_of

#: the most agents at once that the slots a server declares may call for
MOST_AGENTS = 64


async def agents_at_once(prepared: PreparedAgentRun, warn: Console | None) -> int:
    """How many attempts run at once: --concurrency, or, when it was not given
    (``follow_slots``), the slots the server declares (:mod:`hopscore.engine.capacity`) plus an
    eighth (an agent also spends time in its tools), at most :data:`MOST_AGENTS`."""
    settings = prepared.settings
    if prepared.spec.is_local:
        return 1
    if not (settings.follow_slots and settings.adaptive and settings.executor == "local"):
        return settings.concurrency
    key = os.environ.get(settings.api_key_env)
    capacity = await ask_async(prepared.endpoint,
                               {"Authorization": f"Bearer {key}"} if key else None)
    if capacity is None:
        return settings.concurrency
    agents = min(max(settings.concurrency, capacity.slots + max(1, capacity.slots // 8)),
                 MOST_AGENTS)
    if warn is not None and agents != settings.concurrency:
        warn.print(f"the server has {capacity.slots} slots ({capacity.source}): {agents} "
                   "attempts at once (--concurrency N to choose)", markup=False,
                   highlight=False)
    return agents


def no_tool_call_hint(used: str, props: dict[str, Any] | None) -> str:
    """What to try when no reply called a tool, from what the server says of its chat template
    (llama.cpp's /props) where it says something."""
    if used == "text":
        return "the model could not follow the text tool-call protocol either"
    support = tool_support(props)
    if support is False:
        return ("the server's chat template has no tool support (llama.cpp's /props: "
                "chat_template_caps); start llama-server with a template that has one "
                "(--jinja --chat-template-file FILE), or use --tool-protocol text")
    if support is True:
        return ("the server's chat template supports tools (llama.cpp's /props), so the model "
                "itself made no call; try --tool-protocol text (or auto), or another model")
    return ("if the server ignores tools, try --tool-protocol text (or auto); "
            "llama-cpp-python needs --chat_format chatml-function-calling, vLLM "
            "--enable-auto-tool-choice --tool-call-parser, llama.cpp a chat template with "
            "tool support (--jinja)")


async def check_endpoints(prepared: PreparedAgentRun, backend: ChatBackend | None,
                          judge_backend: ChatBackend | None, warn: Console | None) -> None:
    """Credentials and endpoints of the agent and its judge, checked before the first batch
    (:func:`hopscore.engine.preflight.preflight`): hours of attempts are not run for a judge
    that cannot be reached."""
    settings = prepared.settings
    printer = warn_printer(warn)
    if backend is None:
        info = await preflight(target_of(settings.model, prepared.base_url, settings.api_key_env),
                               cache_dir=settings.cache_dir, warn=printer)
        prepared.protocol.props = None if info is None else info.props
    judge = judge_config(settings) if settings.grade else None
    if judge is None or judge_backend is not None:
        return
    if judge.provider == "local":
        raise HopscoreError(f"--judge-model {judge.model}: the local model judges only the run "
                            "of the local model itself (it is loaded once, for both); judge "
                            "with an endpoint's model, or grade later with hopscore judge")
    await preflight(judge.target(), cache_dir=settings.cache_dir, warn=printer,
                    what="the judge (--judge-model)", key_option="--judge-api-key-env")


def judge_config(settings: HdrSettings) -> JudgeConfig | None:
    model = settings.judge_model_name()
    if not model:
        return None
    prompt = JudgePrompt.from_file(settings.judge_prompt_file) if settings.judge_prompt_file \
        else JudgePrompt.builtin()
    named = settings.judge_api_key_env
    target = resolve(model, settings.judge_endpoint(), named, openai_env=None,
                     default_key_env=named if named in ("JUDGE_API_KEY", settings.api_key_env)
                     else "JUDGE_API_KEY", option="--judge-model",
                     url_option="--judge-base-url", key_option="--judge-api-key-env")
    return JudgeConfig(model=model, base_url=settings.judge_endpoint(),
                       api_key=target.api_key, key_env=target.key_env,
                       prompt=prompt, concurrency=settings.judge_concurrency,
                       timeout=min(settings.timeout, 300.0),
                       retry=retry_policy(settings), cache_dir=settings.cache_dir,
                       adaptive=settings.adaptive, on_truncation=settings.on_truncation,
                       max_outage=settings.max_outage)

