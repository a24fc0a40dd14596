"""Where a self-ask chain's contexts come from: one snippet per question, as MCR's retriever.

MCR asks Google (via SerpAPI) for ``en.wikipedia.org <question>`` and keeps one snippet,
``"<title>: <snippet>"`` (``mcr-methods-and-feverous-db.md`` A2). hopscore's sources, chosen by
:func:`make_source` from the run's settings:

* ``corpus``: BM25 over ``--corpus`` (JSON Lines ``{id, title, text}``); the best document's
  most relevant passage (about 300 characters), titled;
* ``search``: an HTTP search service (``--search-backend http --search-url``, the same client
  as the agent's ``web_search``); the first hit's title and snippet;
* ``context``: for a benchmark whose gold file carries paragraphs (``Benchmark.evidence`` is
  ``"context"``), BM25 over that example's own sentences (the distractor setting): the best
  sentence, titled;
* ``wiki``: for a benchmark that reads a wiki database (``Benchmark.evidence`` is ``"wiki"``)
  with ``--wiki-db``, the best element of the retrieved pages (``Benchmark.open_wiki``);
* none: no contexts; the model answers its follow-ups from what it knows.

Every source is deterministic except a live search service. Lookups run in a worker thread
(an HTTP call must not block the event loop) and are memoised per run. A lookup that raises
(a search service down) fails the question, like a failed model request: a re-run retries it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hopscore.benchmarks.base import Benchmark, Wiki
from hopscore.errors import HopscoreError
from hopscore.run.selfask import Evidence

SNIPPET_CHARS = 300
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchSettings:
    """The search options :func:`make_source` reads (:meth:`RunSettings.search
    <hopscore.run.settings.RunSettings.search>`)."""

    #: "http": a search service (else --corpus or none)
    search_backend: str | None
    search_url: str | None
    fetch_url: str | None
    #: the environment variable holding the service's key (None: no key)
    search_api_key_env: str | None
    search_timeout: float


class EvidenceSource(Protocol):
    label: str

    def lookup(self, query: str, example: Any) -> Evidence | None: ...

    def describe(self) -> dict[str, Any]: ...


def _snippet(text: str, query: str) -> str:
    from hopscore.run.search import snippet

    return snippet(text, query, SNIPPET_CHARS)


class CorpusSource:
    label = "corpus"

    def __init__(self, corpus: Any) -> None:
        self.corpus = corpus

    def lookup(self, query: str, example: Any) -> Evidence | None:
        found = self.corpus.search(query, 1)
        if not found:
            return None
        document = found[0]
        return Evidence(document.title, _snippet(document.text, query), document.id)

    def describe(self) -> dict[str, Any]:
        return {"source": "corpus", "path": str(self.corpus.path), "sha256": self.corpus.sha256,
                "documents": len(self.corpus.documents)}


class SearchSource:
    label = "search"

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def lookup(self, query: str, example: Any) -> Evidence | None:
        hits = self.backend.search(query, 1)
        if not hits:
            return None
        hit = hits[0]
        title = re.sub(r"\s*-\s*Wikipedia\s*$", "", hit.title or "")
        return Evidence(title, (hit.snippet or "").replace("...", "").strip(), hit.url or None)

    def describe(self) -> dict[str, Any]:
        return {"source": "search", **self.backend.describe()}


class ContextSource:
    """BM25 over one example's own paragraphs (its ``context``: ``(title, sentences)`` pairs),
    sentence by sentence; the source id is ``"<title> [<sentence number>]"``."""

    label = "context"

    def __init__(self) -> None:
        self._indexes: dict[str, Any] = {}

    def _index(self, example: Any) -> Any:
        index = self._indexes.get(example.id)
        if index is None:
            index = self._indexes[example.id] = _SentenceIndex(example.context)
        return index

    def lookup(self, query: str, example: Any) -> Evidence | None:
        found: Evidence | None = self._index(example).best(query)
        return found

    def describe(self) -> dict[str, Any]:
        return {"source": "context", "unit": "sentence"}


class _SentenceIndex:
    def __init__(self, context: Sequence[tuple[str, Sequence[str]]]) -> None:
        import bm25s

        self.units = [(title, n, sentence.strip()) for title, sentences in context
                      for n, sentence in enumerate(sentences) if sentence.strip()]
        self._bm25s = bm25s
        self._index: Any = None
        if self.units:
            tokens = bm25s.tokenize([f"{t} {s}" for t, _, s in self.units], stopwords="en",
                                    show_progress=False)
            self._index = bm25s.BM25()
            self._index.index(tokens, show_progress=False)

    def best(self, query: str) -> Evidence | None:
        if self._index is None or not _WORD.search(query):
            return None
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not any(len(ids) for ids in tokens.ids):
            return None
        results, scores = self._index.retrieve(tokens, k=1, show_progress=False)
        if float(scores[0][0]) <= 0:
            return None
        title, number, sentence = self.units[int(results[0][0])]
        return Evidence(title, sentence, f"{title} [{number}]")


class CachedSource:
    """Memoises lookups of a source by (example, query); runs them off the event loop."""

    def __init__(self, source: EvidenceSource) -> None:
        self.source = source
        self.label = source.label
        self._memo: dict[tuple[str, str], Evidence | None] = {}

    async def lookup(self, query: str, example: Any) -> Evidence | None:
        key = (example.id if self.source.label in ("context", "wiki") else "", query)
        if key in self._memo:
            return self._memo[key]
        found = await asyncio.to_thread(self.source.lookup, query, example)
        self._memo[key] = found
        return found

    def describe(self) -> dict[str, Any]:
        return self.source.describe()


class WikiSource:
    """A chain strategy's evidence from a benchmark's wiki: the best unit for a follow-up
    question, over the pages of the question and of the example's."""

    label = "wiki"

    def __init__(self, wiki: Wiki) -> None:
        self.wiki = wiki

    def lookup(self, query: str, example: Any) -> Evidence | None:
        found = self.wiki.evidence(query, example.question)
        return None if found is None else Evidence(*found)

    def describe(self) -> dict[str, Any]:
        return self.wiki.describe()


def make_source(settings: SearchSettings, benchmark: Benchmark[Any, Any], corpus: Any,
                wiki_db: Path | None = None) -> EvidenceSource | None:
    """The evidence source of a strategy run (see the module docstring), or None."""
    if corpus is not None:
        return CorpusSource(corpus)
    if settings.search_backend == "http":
        from hopscore.run.search import HttpSearch

        if not settings.search_url:
            raise HopscoreError("--search-backend http needs --search-url")
        import os

        key = (os.environ.get(settings.search_api_key_env) if settings.search_api_key_env
               else None)
        try:
            return SearchSource(HttpSearch(settings.search_url, fetch_url=settings.fetch_url,
                                           timeout=settings.search_timeout, api_key=key))
        except ValueError as exc:
            raise HopscoreError(f"--search-url: {exc}") from None
    if benchmark.evidence == "wiki" and wiki_db is not None:
        return WikiSource(benchmark.open_wiki(wiki_db))
    if benchmark.evidence == "context":
        return ContextSource()
    return None
