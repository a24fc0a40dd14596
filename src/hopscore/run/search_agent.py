"""A search agent for any QA benchmark: the model searches a local corpus in a loop, then answers
(``hopscore agent BENCH --agent search --corpus FILE``).

Two protocols:

* ``tags``: the model writes a query as ``<search>query</search>``; generation stops at the
  closing tag, the harness appends the best passages as a user message
  ``<information>...</information>``, and the model goes on; ``<answer>...</answer>`` ends
  the attempt. A reply with neither gets a reminder (and costs a turn).
* ``native``: the request offers one tool, ``search(query)``; every call is answered by a
  ``tool`` message with the passages; a reply without tool calls is final, its answer the
  text between ``<answer>`` tags (else the run's flexible extraction of the reply).

``max_turns`` model requests at most; ``top_k`` passages per search, each cut at
``passage_chars`` characters. The retrieval is BM25 over ``--corpus``
(:class:`hopscore.run.retrieval.Corpus`: ``{id, title, text}`` or the wiki-18 form ``{id,
contents}`` with ``"Title"\\ntext``). A question's sample row keeps the whole conversation
(``messages``), every search with the ids it returned (``searches``), the ids retrieved over
the attempt, best first and without repeats (``retrieved``), their titles, and counts; the
benchmark scores the answer as in any run. A request that fails after the engine's retries
fails the question, which a re-run retries (finished calls come from the response cache).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from hopscore.benchmarks.base import Benchmark, Example, ModelAnswer
from hopscore.engine import (
    CallFailure,
    ChatEngine,
    ChatRequest,
    RowResult,
    canonical_json,
    sha256_text,
)
from hopscore.errors import HopscoreError
from hopscore.run.caps import kept_text
from hopscore.run.extract import Hints, extract_flexible
from hopscore.run.retrieval import Corpus, Document
from hopscore.run.strategy import _usage_total

PROTOCOLS = ("tags", "native")
RETRIEVERS = ("bm25", "dense")
SEARCH_TOOL = "search"
#: the agent's statuses: it answered, ran out of turns, or stopped writing tags/calls
ANSWERED, MAX_TURNS = "answered", "max_turns"
#: the error kind of a question whose search failed (a dense index's endpoint down)
RETRIEVAL_ERROR = "retrieval_error"

TAGS_PROMPT = """\
Answer the question with the help of a search engine over a document collection.

To search, write one query between <search> and </search> and stop there; the best passages \
for it will be shown to you between <information> and </information>. Search again as often \
as you need, one query at a time: a question may need several facts found one after another.

When you know the answer, write it between <answer> and </answer>: a few words (a name, a \
date, a number, yes or no), with no explanation inside the tags.\
"""
NATIVE_PROMPT = """\
Answer the question with the help of the search tool, which returns the best passages of a \
document collection for a query. Call it as often as you need: a question may need several \
facts found one after another.

When you know the answer, reply without calling the tool and write the answer between \
<answer> and </answer>: a few words (a name, a date, a number, yes or no), with no \
explanation inside the tags.\
"""
TAGS_REMINDER = ("Search with <search>query</search>, or give your final answer as "
                 "<answer>answer</answer>.")
SEARCH_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SEARCH_TOOL,
        "description": "Search the document collection; returns the best passages.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "The search query."}},
            "required": ["query"],
        },
    },
}
_SEARCH = re.compile(r"<search>(.*?)(?:</search>|\Z)", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchAgentSettings:
    """The agent's own settings (``RunSettings.agent``; config.json's ``settings.agent``)."""

    protocol: str = "tags"
    #: model requests per question
    max_turns: int = 8
    #: passages per search
    top_k: int = 3
    #: characters of a passage's text shown
    passage_chars: int = 600
    #: bm25 (the default) or dense (:mod:`hopscore.run.dense`: an embeddings endpoint)
    retriever: str = "bm25"
    #: dense: the embedding model's name at the endpoint, the endpoint (None: the model's),
    #: and the prefixes of queries and documents (e5: "query: " and "passage: ")
    embed_model: str | None = None
    embed_base_url: str | None = None
    query_prefix: str = ""
    passage_prefix: str = ""

    def check(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise HopscoreError(f"--search-protocol must be one of {', '.join(PROTOCOLS)}")
        for name in ("max_turns", "top_k", "passage_chars"):
            if getattr(self, name) < 1:
                raise HopscoreError(f"--{name.replace('_', '-')} must be at least 1")
        if self.retriever not in RETRIEVERS:
            raise HopscoreError(f"--retriever must be one of {', '.join(RETRIEVERS)}")
        if self.retriever == "dense" and not self.embed_model:
            raise HopscoreError("--retriever dense needs --embed-model (the embedding model "
                                "served at --embed-base-url)")
        if self.retriever == "bm25" and (self.embed_model or self.embed_base_url):
            raise HopscoreError("--embed-model and --embed-base-url are for --retriever dense")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "search", "protocol": self.protocol,
                               "max_turns": self.max_turns, "top_k": self.top_k,
                               "passage_chars": self.passage_chars, "retriever": self.retriever}
        if self.retriever == "dense":
            out.update(embed_model=self.embed_model, embed_base_url=self.embed_base_url,
                       query_prefix=self.query_prefix, passage_prefix=self.passage_prefix)
        return out


def answer_in(text: str) -> str | None:
    """The text of the last ``<answer>`` tag (the closing tag may be missing at the end)."""
    found = _ANSWER.findall(text)
    return found[-1].strip() if found else None


def query_in(text: str) -> tuple[str, str] | None:
    """(query, the reply up to and including its ``</search>``) of the first search tag, or
    None. A search after an answer tag is ignored (the answer ends the attempt)."""
    match = _SEARCH.search(text)
    if match is None:
        return None
    answer = text.find("<answer>")
    if 0 <= answer < match.start():
        return None
    head = text[:match.end()]
    if not head.endswith("</search>"):
        head += "</search>"
    return match.group(1).strip(), head


def format_passages(documents: list[Document], chars: int) -> str:
    """The passages as the model reads them: numbered, titled, each cut at ``chars``."""
    if not documents:
        return "No passage matches this query."
    parts = []
    for number, doc in enumerate(documents, 1):
        text = " ".join(doc.text.split())
        if len(text) > chars:
            text = text[:chars].rstrip() + " ..."
        title = f' "{doc.title}"' if doc.title else ""
        parts.append(f"[{number}]{title} {text}")
    return "\n".join(parts)


@dataclass(slots=True)
class SearchAgentPlan:
    """Everything the agent needs besides the engine, fixed before the first call."""

    settings: SearchAgentSettings
    #: the BM25 corpus, or its dense index (:class:`hopscore.run.dense.DenseIndex`)
    corpus: Corpus | Any
    model: str
    temperature: float | None
    max_tokens: int | None
    seed: int | None

    def system_prompt(self) -> str:
        return TAGS_PROMPT if self.settings.protocol == "tags" else NATIVE_PROMPT

    def fingerprint(self) -> str:
        return sha256_text(canonical_json({
            **self.settings.to_json(), "corpus": self.corpus.sha256,
            "prompt": sha256_text(self.system_prompt()), "model": self.model,
            "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed,
        }))  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        describe = getattr(self.corpus, "describe", None)
        return {**self.settings.to_json(), "prompt_sha256": sha256_text(self.system_prompt()),
                "corpus": {"path": str(self.corpus.path), "sha256": self.corpus.sha256,
                           "documents": len(self.corpus.documents)},
                "index": describe() if describe is not None else {"retriever": "bm25"},
                "fingerprint": self.fingerprint()}

    def first_messages(self, question: str) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system_prompt()},
                {"role": "user", "content": f"Question: {question.strip()}"}]

    def request(self, messages: list[dict[str, Any]], tag: str, seed: int | None) -> ChatRequest:
        native = self.settings.protocol == "native"
        return ChatRequest(
            model=self.model, messages=[dict(m) for m in messages],
            temperature=self.temperature, max_tokens=self.max_tokens, seed=seed,
            stop=None if native else ["</search>"],
            tools=[SEARCH_TOOL_SCHEMA] if native else None,
            extra={"tool_choice": "auto"} if native else {}, cache_tag=tag,
            require_content=False,
        )  # fmt: skip


@dataclass(slots=True)
class _State:
    messages: list[dict[str, Any]]
    calls: list[dict[str, Any]]
    searches: list[dict[str, Any]]
    retrieved: dict[str, str]
    turns: int = 0
    output: str = ""
    answer: str | None = None
    tagged: bool = False
    status: str = MAX_TURNS


class _Failed(Exception):
    def __init__(self, failure: CallFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


class SearchAgentWorker:
    """Runs one question through the agent and builds its sample row."""

    def __init__(self, engine: ChatEngine, plan: SearchAgentPlan,
                 benchmark: Benchmark[Any, Any]) -> None:
        self.engine = engine
        self.plan = plan
        self.benchmark = benchmark

    async def _search(self, state: _State, query: str, turn: int) -> str:
        index, k = self.plan.corpus, self.plan.settings.top_k
        try:
            if getattr(index, "blocking", False):  # an HTTP call: not on the event loop
                documents = await asyncio.to_thread(index.search, query, k)
            else:
                documents = index.search(query, k)
        except Exception as exc:  # an embeddings endpoint down: the question is retried
            raise _Failed(CallFailure(RETRIEVAL_ERROR, f"search {query!r} failed: "
                                      f"{type(exc).__name__}: {exc}")) from None
        state.searches.append({"turn": turn, "query": query,
                               "ids": [d.id for d in documents]})
        for doc in documents:
            state.retrieved.setdefault(doc.id, doc.title)
        return format_passages(documents, self.plan.settings.passage_chars)

    async def _reply(self, state: _State, tag: str, seed: int | None) -> Any:
        result = await self.engine.complete(self.plan.request(state.messages, tag, seed))
        state.calls.append(result.to_json())
        if result.response is None:
            assert result.failure is not None
            raise _Failed(result.failure)
        return result.response

    async def _loop(self, state: _State, tag: str, seed: int | None) -> None:
        native = self.plan.settings.protocol == "native"
        for turn in range(1, self.plan.settings.max_turns + 1):
            state.turns = turn
            response = await self._reply(state, tag, seed)
            content = response.content or ""
            state.output = content
            if native:
                calls = response.tool_calls or []
                state.messages.append({"role": "assistant", "content": content,
                                       **({"tool_calls": calls} if calls else {})})
                if not calls:
                    state.answer, state.tagged = answer_in(content), True
                    state.status = ANSWERED
                    return
                for call in calls:
                    state.messages.append({"role": "tool", "tool_call_id": call.get("id", ""),
                                           "content": await self._tool(state, call, turn)})
                continue
            found = query_in(content)
            if found is None:
                state.messages.append({"role": "assistant", "content": content})
                answer = answer_in(content)
                if answer is not None:
                    state.answer, state.tagged = answer, True
                    state.status = ANSWERED
                    return
                state.messages.append({"role": "user", "content": TAGS_REMINDER})
                continue
            query, head = found
            state.messages.append({"role": "assistant", "content": head})
            passages = await self._search(state, query, turn)
            state.messages.append({"role": "user",
                                   "content": f"<information>\n{passages}\n</information>"})

    async def _tool(self, state: _State, call: dict[str, Any], turn: int) -> str:
        function = call.get("function") or {}
        if function.get("name") != SEARCH_TOOL:
            return f"Error: unknown tool {function.get('name')!r}; the only tool is search."
        arguments = function.get("arguments")
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError:
            parsed = None
        query = parsed.get("query") if isinstance(parsed, dict) else None
        if not isinstance(query, str) or not query.strip():
            return 'Error: search needs {"query": "<text>"}.'
        return await self._search(state, query.strip(), turn)

    async def run(self, example: Example, question: str, hints: Hints, base: dict[str, Any],
                  tag: str = "", seed: int | None = None) -> RowResult:
        """The row of one attempt (``tag``, ``seed``: the attempt's cache tag and seed)."""
        state = _State(self.plan.first_messages(question), [], [], {})
        try:
            await self._loop(state, tag, seed)
        except _Failed as failed:
            row = {**base, "raw_output": None, **self._trace(state), **_usage_total(state.calls),
                   "error": failed.failure.to_json()}
            return RowResult(row, done=False, failure=failed.failure)
        return RowResult(self._row(example, hints, base, state))

    def _trace(self, state: _State) -> dict[str, Any]:
        return {"agent_status": state.status, "turns": state.turns,
                "search_calls": len(state.searches), "searches": state.searches,
                "retrieved": list(state.retrieved),
                "retrieved_titles": list(state.retrieved.values()),
                "messages": state.messages}

    def _row(self, example: Example, hints: Hints, base: dict[str, Any],
             state: _State) -> dict[str, Any]:
        bench = self.benchmark
        output = state.output
        answer = state.answer
        if answer is None and state.status == ANSWERED:  # a final reply without the tags
            answer = extract_flexible(output, hints)
        retrieved = tuple(state.retrieved)
        prediction = bench.make_prediction(example, ModelAnswer(
            None if answer is None else kept_text(answer), kept_text(output), retrieved))
        return {
            **base, "raw_output": output,
            "extracted": {"strict": answer if state.tagged else None, "flexible": answer},
            "answer": answer, "abstained": False, "mcr_score": None,
            "prediction": {"answer": prediction.answer_text(),
                           **bench.prediction_details(prediction)},
            "scores": bench.score(example, prediction), **self._trace(state),
            **_usage_total(state.calls), "cache_key": None, "error": None,
        }  # fmt: skip
