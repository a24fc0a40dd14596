"""The typed records a benchmark works with: a gold :class:`Example`, a :class:`Prediction`,
the :class:`Predictions` of a file, what a model run read from a reply (:class:`ModelAnswer`),
and the run settings and files a benchmark may be handed (:class:`PromptInputs`,
:class:`SuiteFiles`, :class:`Wiki`).

Benchmarks subclass :class:`Example` and :class:`Prediction` with their own fields;
:mod:`hopscore.benchmarks.base` declares what a benchmark does with them (and names them too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from hopscore.benchmarks.fast_init import fast_init


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """One gold example. Benchmarks subclass this with their own gold fields."""

    id: str
    question: str = ""

    def groups(self) -> dict[str, str]:
        """Group labels of this example, e.g. ``{"type": "bridge", "level": "hard"}``."""
        return {}

    def gold_answers(self) -> tuple[str, ...]:
        """The gold answer(s) as text, for display, judging and error analysis."""
        return ()

    def gold_titles(self) -> tuple[str, ...] | None:
        """The titles of the gold (supporting) paragraphs, for the recall of retrieved
        documents (a search agent's); None: the benchmark has no gold paragraphs."""
        return None

    def passages(self) -> tuple[tuple[str, str], ...]:
        """The example's own paragraphs as (title, text), gold and distractors, for building
        a corpus from a gold file; () when it has none."""
        return ()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """One system prediction. Benchmarks subclass this with their own predicted fields."""

    id: str
    answer: str | None = None

    def answer_text(self) -> str | None:
        """The predicted answer as text, for display and judging."""
        return self.answer


@dataclass(frozen=True, slots=True)
class ModelAnswer:
    """What a model run read from one reply."""

    #: the extracted answer text; None when nothing was extracted
    text: str | None
    #: the whole reply (supporting-fact citations are read from it)
    output: str = ""
    #: ids of the documents retrieved for the prompt, best first (None: no retrieval)
    retrieved: tuple[str, ...] | None = None
    #: ids of the evidence the answer rests on, when the run knows them without citations
    #: (the chain strategies: the elements their contexts came from); None: read citations
    evidence_ids: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PromptInputs:
    """Run settings a benchmark may need to lay out an example's context."""

    #: WikiTables-WithLinks folder (``tables_tok/``, ``request_tok/``) for HybridQA
    tables_dir: Path | None = None
    #: rough budget, in tokens, for long contexts (HybridQA tables and passages)
    context_tokens: int = 3000
    #: a file of the documents the examples link to (``--documents``), for a benchmark whose
    #: prompts show them (an oracle setting)
    documents: Path | None = None


@dataclass(frozen=True, slots=True)
class SuiteFiles:
    """Where ``hopscore suite mcr`` looks for a benchmark's gold: the first of ``folders``
    under the data folder that holds one of ``files`` (tried in order)."""

    #: the benchmark's place in the suite's table (MCR's order)
    position: int
    folders: tuple[str, ...]
    files: tuple[str, ...]
    #: further files :meth:`Benchmark.suite_gold` reads with the first of ``files``
    companions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SuiteDataset:
    """One dataset of a named suite (:class:`SuitePreset`): its name in the table and where its
    gold lies under the data folder (the first of ``folders`` holding one of ``files``; the
    folder ``""`` is the data folder itself)."""

    label: str
    folders: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SuitePreset:
    """A named suite a benchmark declares (``hopscore suite preset NAME``): its datasets, each
    run like ``hopscore run`` on the benchmark, and the metrics of its table."""

    name: str
    title: str
    datasets: tuple[SuiteDataset, ...]
    #: the columns of its table, after the dataset and its count
    metrics: tuple[str, ...]


class Wiki(Protocol):
    """A benchmark's wiki database (``--wiki-db``)."""

    def describe(self) -> dict[str, Any]:
        """What the run records about the database (path, size, hash)."""

    def shown(self, question: str, pages: int, elements: int) -> list[dict[str, Any]]:
        """The open-book template variable ``wiki``: the best ``elements`` elements of the best
        ``pages`` pages for the question, by page (each ``{"title", "lines", "ids"}``)."""

    def evidence(self, query: str, question: str) -> tuple[str, str, str] | None:
        """A chain strategy's context for a follow-up ``query`` over the pages of it and of
        the example's ``question``: ``(page title, text, element id)``; None: nothing found."""


E = TypeVar("E", bound=Example)
P = TypeVar("P", bound=Prediction)
P_co = TypeVar("P_co", bound=Prediction, covariant=True)


@dataclass(slots=True)
class Predictions(Generic[P]):
    """Predictions keyed by example id, with what the loader noticed on the way."""

    by_id: dict[str, P]
    source: str
    format: str
    warnings: list[str] = field(default_factory=list)
    #: The file has no ids: ``by_id`` is keyed by 0-based position ("0", "1", ...) and the
    #: i-th prediction belongs to the i-th gold example (FEVEROUS ``prepare_submission.py``).
    by_position: bool = False
    #: Predictions held compactly for one scoring pass instead of in ``by_id`` (which is then
    #: empty): :meth:`Benchmark.predictions_for_scoring` of a benchmark whose files can be large.
    stream: PredictionStream[P] | None = None


class PredictionStream(Protocol[P_co]):
    """Predictions that scoring takes one gold id at a time (each id asked for once)."""

    def __len__(self) -> int:
        """How many ids the file predicts."""

    def take(self, example_id: str) -> P_co | None:
        """The prediction of this id (None: not predicted); it is not kept afterwards."""

    def unmatched(self) -> list[str]:
        """The predicted ids never taken, in the file's order."""
