"""What a benchmark module declares, and the typed records it works with.

A benchmark is one folder with one :class:`Benchmark` subclass, made of a few small parts:

* :class:`Loading` (required): how the official gold and prediction files become typed
  records (:meth:`Loading.load_gold`, :meth:`Loading.load_predictions`), and the paths for
  large files;
* :class:`Scoring` (required): which metrics and groups it reports and how to score one
  example (:meth:`Scoring.score`, a pure function). Joining, the missing-id policy,
  aggregation and output live in :mod:`hopscore.scores.scoring`, shared by all benchmarks;
* :class:`Prompting` (optional, for model runs: ``hopscore run``): the template variables of
  an example (:meth:`Prompting.prompt_variables`; the template and exemplars themselves are
  package data beside the benchmark's module, :meth:`Benchmark.resource`), the kind of answer
  expected, how an extracted answer becomes a prediction (:meth:`Prompting.make_prediction`),
  how predictions are written in the official format, and MCR's evaluator and gold for
  ``--protocol mcr``. A benchmark without it only scores, and the commands that run a model
  refuse it;
* :class:`Analysis` (optional): footnotes for numbers only its official semantics explain;

plus the facts :class:`Benchmark` declares (name, title, how a model runs on it, ...).

The records (:class:`Example`, :class:`Prediction`, :class:`Predictions`, ...) are defined in
:mod:`hopscore.benchmarks.typed_records` and named here too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic

# the records are defined in typed_records and named here too (``from hopscore.benchmarks.base
# import Example`` is how benchmarks and the rest of the package read them)
from hopscore.benchmarks.typed_records import E as E
from hopscore.benchmarks.typed_records import Example as Example
from hopscore.benchmarks.typed_records import ModelAnswer as ModelAnswer
from hopscore.benchmarks.typed_records import P as P
from hopscore.benchmarks.typed_records import Prediction as Prediction
from hopscore.benchmarks.typed_records import Predictions as Predictions
from hopscore.benchmarks.typed_records import PredictionStream as PredictionStream
from hopscore.benchmarks.typed_records import PromptInputs as PromptInputs
from hopscore.benchmarks.typed_records import SuiteDataset as SuiteDataset
from hopscore.benchmarks.typed_records import SuiteFiles as SuiteFiles
from hopscore.benchmarks.typed_records import SuitePreset as SuitePreset
from hopscore.benchmarks.typed_records import Wiki as Wiki
from hopscore.errors import HopscoreError, InputError
from hopscore.files.fields import Fields
from hopscore.files.io import iter_jsonl_numbered

if TYPE_CHECKING:
    from importlib.abc import Traversable

    from hopscore.benchmarks.agent_tasks import HdrTask, Overlay
    from hopscore.benchmarks.citations import CitedPart
    from hopscore.benchmarks.error_categories import Dimension
    from hopscore.benchmarks.error_categories import Inputs as CategoryInputs
    from hopscore.benchmarks.hub_layout import HubLayout
    from hopscore.benchmarks.judge_presets import JudgePresetSpec


class Loading(ABC, Generic[E, P]):
    """Reading a benchmark's files into typed records: the official gold, the predictions in
    the official format or the universal JSON Lines format. Every benchmark implements it."""

    #: Human descriptions of accepted files, for ``--help`` and the README.
    gold_formats: ClassVar[str] = ""
    prediction_formats: ClassVar[str] = ""
    #: The id field of the official gold record: Hugging Face rows without one are numbered by
    #: position (``hub/``); None when the official record has no id field to fill.
    hub_id_field: ClassVar[str | None] = None
    #: The official gold is a JSON list that a Hugging Face JSON list export can be told from.
    gold_is_json_list: ClassVar[bool] = False
    #: :meth:`iter_gold`'s examples depend on the gold file alone (the reading sets nothing on
    #: the benchmark and says nothing else), so scoring may keep them between runs
    #: (:mod:`hopscore.files.goldcache`).
    gold_examples_kept: ClassVar[bool] = False

    @abstractmethod
    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[E]:
        """Load an official gold file."""

    def iter_gold(self, path: Path, *, aliases: Path | None = None) -> Iterable[E]:
        """The gold examples for scoring, in file order.

        Scoring reads them once, so a benchmark whose gold files can be large may build the
        examples one at a time here, instead of holding them all (:meth:`load_gold`, the
        default, loads and checks the whole file first).
        """
        return self.load_gold(path, aliases=aliases)

    @abstractmethod
    def load_predictions(self, path: Path) -> Predictions[P]:
        """Load predictions in the official format or the universal JSON Lines format."""

    def predictions_for_scoring(self, path: Path) -> Predictions[P]:
        """The predictions for one scoring pass (:func:`hopscore.scores.scoring.score_files`): by
        default :meth:`load_predictions`; a benchmark whose files can be large may hold them
        compactly in :attr:`Predictions.stream` instead, with the same results and errors."""
        return self.load_predictions(path)


class Scoring(ABC, Generic[E, P]):
    """Scoring one example, and what the scores of all examples become. Every benchmark
    implements it; :func:`hopscore.scores.scoring.score_files` does the rest."""

    #: Metrics reported in ``metrics.json``, in display order.
    metrics: ClassVar[tuple[str, ...]]
    #: Group keys that :meth:`Example.groups` may return, in display order.
    group_keys: ClassVar[tuple[str, ...]] = ()
    #: The metrics whose per-example values the official scorer adds one by one (``total +=
    #: value``), not with Python's ``sum()``, which compensates its rounding from Python 3.12
    #: on; True: every metric. Their means are summed the same way, to the last digit
    #: (:func:`hopscore.scores.summaries.plain_sum`).
    adds_one_by_one: ClassVar[bool | frozenset[str]] = False

    @abstractmethod
    def score(self, example: E, prediction: P | None) -> dict[str, float]:
        """Score one example; ``prediction`` is None when the id was not predicted.

        Pure: no I/O. Returns every metric of :meth:`active_metrics` that is a per-example mean.
        """

    def active_metrics(self, predictions: Predictions[P]) -> tuple[str, ...]:
        """Metrics to report for these predictions (some only exist when a field was predicted)."""
        return self.metrics

    def finalize(self, means: Mapping[str, float]) -> dict[str, float]:
        """Turn per-example means into the reported metrics (override for derived metrics)."""
        return dict(means)

    #: What each of :meth:`run_figures` is (its binning, its convention), by name; printed
    #: with the figure under the score table.
    figure_texts: ClassVar[dict[str, str]] = {}

    def run_figures(self, examples: Sequence[E], predictions: Sequence[P | None]
                    ) -> dict[str, float | None]:
        """Figures of the whole run that no mean of per-example scores gives (a calibration
        error over bins of answers, a figure an official script computes its own way), by
        name, each described in :attr:`figure_texts`; None where the run cannot give one.

        Pure. ``examples`` are every gold example in gold order, ``predictions`` the
        prediction of each (None: not predicted). Written to ``metrics.json`` under
        ``figures`` and shown as a note under the score table. The default benchmark has
        none (and the scorer then keeps no examples in memory for it)."""
        return {}

    def is_missing(self, example: E, prediction: P | None) -> bool:
        """Whether this example counts as unpredicted (listed in ``missing_ids``)."""
        return prediction is None


class Prompting(Generic[E, P]):
    """Running a model on a benchmark (``hopscore run``): the template variables of an example,
    how an extracted answer becomes a prediction, the official predictions file, and MCR's
    evaluator and gold for ``--protocol mcr``. Optional: a benchmark that only scores leaves it
    out, and the commands that run a model refuse it (:meth:`require_prompting`)."""

    name: ClassVar[str]
    title: ClassVar[str]
    #: Kind of answer for flexible extraction: span, text (a span kept whole, explanations
    #: and all), yesno, choice, number or label.
    answer_kind: ClassVar[str] = "span"
    #: MCR's evaluator for this dataset (see :mod:`hopscore.run.mcr`); "" when MCR has none.
    mcr_evaluator: ClassVar[str] = ""
    #: The answer kind of MCR's question form (FEVEROUS asks yes/no there).
    mcr_answer_kind: ClassVar[str | None] = None
    #: Name of the official-format predictions file in a run directory.
    predictions_file: ClassVar[str] = "predictions.json"

    def prompt_variables(self, example: E, inputs: PromptInputs) -> dict[str, Any]:
        """Template variables of one example: ``question``, the context the task needs, and
        ``mcr_question`` (the question as MCR's dataset readers phrase it)."""
        raise HopscoreError(f"{self.title} has no prompt layout; it cannot be run by a model")

    def mcr_gold(self, example: E) -> str:
        """The gold answer MCR's evaluator compares with."""
        answers = example.gold_answers()
        return answers[0] if answers else ""

    def make_prediction(self, example: E, answer: ModelAnswer) -> P:
        """The prediction a model run made (``answer.text`` None: nothing was extracted)."""
        raise HopscoreError(f"{self.title} cannot turn model answers into predictions")

    def prediction_details(self, prediction: P) -> dict[str, Any]:
        """Predicted parts beyond the answer text, as JSON (for a run's samples.jsonl)."""
        return {}

    def write_predictions(self, predictions: Sequence[P], path: Path) -> None:
        """Write predictions in the benchmark's official format (read back by load_predictions)."""
        raise HopscoreError(f"{self.title} has no prediction writer")

    def prompts(self) -> bool:
        """Whether this benchmark can be run by a model: its class defines
        :meth:`prompt_variables` and :meth:`make_prediction` (a scoring-only one does not)."""
        cls = type(self)
        return (cls.prompt_variables is not Prompting.prompt_variables
                and cls.make_prediction is not Prompting.make_prediction)

    def require_prompting(self, command: str) -> None:
        """Refuse, before anything runs, a command that runs a model (``command``) on a
        benchmark that only scores."""
        if not self.prompts():
            raise HopscoreError(
                f"benchmark {self.name!r} has no prompt: it only scores predictions (hopscore "
                f"score), so {command} cannot run a model on it (a benchmark that runs defines "
                "prompt_variables and make_prediction, hopscore.benchmarks.base.Prompting)")


class Analysis(Generic[E, P]):
    """What the tables and reports say about a benchmark's numbers beyond the metrics. Optional:
    the defaults say nothing."""

    #: Footnotes for numbers only the official semantics explain, by key (:meth:`notes`).
    note_texts: ClassVar[dict[str, str]] = {}

    def notes(self, values: Mapping[str, float]) -> tuple[str, ...]:
        """Keys of :attr:`note_texts` that one example's scores call for (an exact answer
        with F1 below 1, a recall above 1, ...); shown under the score table when any example
        calls for them. The default benchmark has none."""
        return ()

    def summary_notes(self, metrics: Mapping[str, float]) -> tuple[str, ...]:
        """Keys of :attr:`note_texts` that the overall metrics call for (two accuracies far
        apart, ``judge_accuracy`` included when a judge ran); shown under the score table
        without a count. The default benchmark has none."""
        return ()


class Benchmark(Loading[E, P], Scoring[E, P], Prompting[E, P], Analysis[E, P]):
    """Declares one benchmark: its facts, and the parts it implements. :class:`Loading` and
    :class:`Scoring` it must (``load_gold``, ``load_predictions``, ``score``);
    :class:`Prompting` (model runs) and :class:`Analysis` are optional."""

    name: ClassVar[str]
    title: ClassVar[str]
    #: The few metrics a one-line summary shows (``hopscore demo``); empty means the first three.
    headline: ClassVar[tuple[str, ...]] = ()
    #: How ``hopscore`` runs a model on it: ``"qa"`` (one answer per question, ``hopscore run``)
    #: or ``"agent"`` (a tool-using agent per task, ``hopscore agent``).
    runner: ClassVar[str] = "qa"
    #: The module of its per-example functions on plain values (the names in its ``__all__``),
    #: which :mod:`hopscore.metrics` offers; None: it has none.
    metric_functions: ClassVar[str | None] = None
    #: Command lines using it, keyed by the command whose ``--help`` shows them among its
    #: examples (``"hopscore score"``; ``"hopscore"``: the overview of ``hopscore --help``).
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: Other names the command line takes for it (an abbreviation), beside :attr:`name`.
    also_called: ClassVar[tuple[str, ...]] = ()

    # --- declared by the run side (place-run) ---

    #: The metric a chain strategy's methods (SA, SC, oracle, MCR) are scored with under the
    #: default protocol; "" means the first of :attr:`metrics`.
    answer_metric: ClassVar[str] = ""
    #: Where a chain strategy's contexts come from when the run names no corpus and no search
    #: service (:mod:`hopscore.run.evidence`): ``"context"`` (BM25 over the sentences of the
    #: example's own ``context`` paragraphs), ``"wiki"`` (the pages of ``--wiki-db``, read
    #: through :meth:`open_wiki`), or ``""`` (none: the model answers from what it knows).
    evidence: ClassVar[str] = ""
    #: It reads a wiki database (``--wiki-db``, :meth:`open_wiki`): open-book prompts show the
    #: elements of the pages retrieved for the question, and the chain strategies draw on them.
    reads_wiki_db: ClassVar[bool] = False
    #: Its place among the benchmarks whose bundled questions ``hopscore demo`` has the local
    #: model answer (short prompts, quick on a CPU); None: the demo only scores its sample.
    demo_position: ClassVar[int | None] = None
    #: Where ``hopscore suite mcr`` finds its gold under the data folder (None: not in the suite).
    suite_files: ClassVar[SuiteFiles | None] = None

    def open_wiki(self, path: Path) -> Wiki:
        """The wiki database at ``path`` (``--wiki-db``), for a benchmark that
        :attr:`reads_wiki_db`."""
        raise HopscoreError(f"{self.title} reads no wiki database")

    def suite_gold(self, folder: Path, work_dir: Path) -> Path | None:
        """The gold file the suite reads from ``folder`` when it is built from several files
        (written under ``work_dir``); None: the first of :attr:`SuiteFiles.files` found."""
        return None

    def mcr_score(self, prediction: str, gold: str) -> float | None:
        """MCR's evaluator when it is the benchmark's own (:attr:`mcr_metric` set): the score
        of an extracted answer against :meth:`mcr_gold`; None counts as an abstention."""
        raise HopscoreError(f"{self.title} has no evaluator of its own")

    #: What :meth:`mcr_score` measures, for tables; "" when MCR's evaluator is a shared one
    #: (:attr:`mcr_evaluator`, :mod:`hopscore.run.mcr`).
    mcr_metric: ClassVar[str] = ""

    @classmethod
    def resource(cls, name: str) -> Traversable:
        """A file the benchmark ships beside its module (``template.jinja``, ``shots.json``):
        package data of the benchmark's own package, so a third-party one ships its own."""
        return resources.files(cls.__module__) / name

    # --- declared by the analysis side (analysis): error categories, notes, clusters ---

    #: The module of its error categories (``hopscore analyze``, the report), usually
    #: ``categories.py`` beside its own: its ``dimensions(inputs)`` returns the benchmark's
    #: dimensions (:mod:`hopscore.benchmarks.error_categories`), read by
    #: :meth:`error_dimensions`; None: only the generic dimensions apply.
    error_categories: ClassVar[str | None] = None
    #: Other names a score or run directory may record for it (an older or another tool's
    #: spelling), which error analysis reads as this benchmark.
    recorded_as: ClassVar[tuple[str, ...]] = ()

    def error_dimensions(self, inputs: CategoryInputs) -> list[Dimension]:
        """Its own error-analysis dimensions: those of :attr:`error_categories` (none without
        it). A benchmark may override this instead of naming a module."""
        if self.error_categories is None:
            return []
        import importlib

        found: list[Dimension] = importlib.import_module(self.error_categories).dimensions(inputs)
        return found

    # --- declared by the loading side (loading): hub layouts, samples, inspect task ---

    #: How the rows of its Hugging Face copies become its official records (``--gold
    #: hf:NAME``, parquet, arrow, ``save_to_disk``, JSON exports: :mod:`hopscore.hub`); by
    #: convention declared in its folder's ``hub.py``. None: only its official files are read.
    hub_layout: ClassVar[HubLayout | None] = None
    #: The Hub copies :attr:`hub_layout` was read from (their dataset cards), for the docs.
    hub_copies: ClassVar[tuple[str, ...]] = ()
    #: Gold file suffixes its own loader reads (``(".parquet",)``): such a file is given to
    #: :meth:`load_gold` as it is, never converted as a Hub export.
    official_gold_suffixes: ClassVar[tuple[str, ...]] = ()
    #: Prediction parts a reply gives as citations (supporting facts, evidence): ``score
    #: --from`` warns, naming what a reply should hold, when the replies cite none.
    cited_parts: ClassVar[tuple[CitedPart, ...]] = ()
    #: The folder of package data beside its module (:meth:`resource`) holding a small sample
    #: (gold, predictions, ``manifest.json``: :mod:`hopscore.benchmarks.sample_files`).
    sample_folder: ClassVar[str] = "samples"

    # --- declared by the judge side (judge presets) ---

    #: Its named judge presets (``--judge-preset NAME`` of ``hopscore score --judge`` and
    #: ``hopscore judge``): a prompt template among the package data beside its module and how
    #: a reply to it is read (:mod:`hopscore.benchmarks.judge_presets`); by convention the
    #: templates are ``judge_<name>.txt`` in its folder. Empty: only the built-in prompt.
    judge_presets: ClassVar[Mapping[str, JudgePresetSpec]] = {}
    #: The preset ``score --judge`` uses when none is named; "" means the built-in prompt.
    judge_preset: ClassVar[str] = ""

    # --- declared by the agent command (agent-cli): its own run options ---

    # --- declared by the agent machinery (agent-core): tasks, world, report ---

    #: The folder, among the package data beside its module (:meth:`resource`), of the world it
    #: bundles for its agent (a task file, ``dbs/<db>/<db>.sql`` and ``<db>_kb.jsonl``, a search
    #: corpus; :mod:`hopscore.agent.world`), which the agent command runs on when it is given no
    #: task files; None: it bundles none. For a benchmark whose :attr:`runner` is ``"agent"``.
    agent_world: ClassVar[str | None] = None
    #: The short key of its agent runs: the block of counts in their ``metrics.json``, the tag
    #: of their requests in the response cache, their progress line, and ``hopscore demo``'s
    #: option ``--<key>``; "" means its :attr:`name`.
    agent_key: ClassVar[str] = ""
    #: How the agent machinery's messages abbreviate it ("the built-in ... world is
    #: incomplete"); "" means its :attr:`title`.
    short_title: ClassVar[str] = ""

    def load_agent_tasks(self, path: Path, overlay: Path | None = None
                         ) -> tuple[list[HdrTask], Overlay | None]:
        """The tasks its agent runs on (the agent command's ``--tasks``, with ``--overlay``'s
        patch applied), for a benchmark whose :attr:`runner` is ``"agent"``; by default the
        agent task format of :mod:`hopscore.benchmarks.agent_tasks`."""
        from hopscore.benchmarks.agent_tasks import load_tasks

        return load_tasks(path, overlay)

    def task_example(self, task: HdrTask) -> E:
        """The gold example of one agent task, as :meth:`load_gold` reads it: an agent run
        scores its graded attempts against these."""
        raise HopscoreError(f"{self.title} cannot score an agent's tasks")

    # --- declared by the run command's options (runside) ---

    #: The options of ``hopscore run`` that only some benchmarks read and this one does, as
    #: typed (``("--tables-dir", "--context-tokens")``): ``hopscore run --help`` names the
    #: benchmarks reading each such option in its help, and a run of a benchmark given one it
    #: does not read warns that it is ignored. The wiki database's options
    #: (:data:`WIKI_OPTIONS`) come with :attr:`reads_wiki_db` and need not be listed.
    run_options: ClassVar[tuple[str, ...]] = ()

    def reads_run_option(self, option: str) -> bool:
        """Whether it reads this option of ``hopscore run`` that only some benchmarks read:
        one of its :attr:`run_options`, or of :data:`WIKI_OPTIONS` when it
        :attr:`reads_wiki_db`."""
        return option in self.run_options or (self.reads_wiki_db and option in WIKI_OPTIONS)

    # --- declared by the suite (cliside) ---

    #: How ``hopscore suite mcr --help`` names it in its list of datasets (``"2WikiMQA"``);
    #: "" means its :attr:`title`. For a benchmark in the suite (:attr:`suite_files`).
    suite_title: ClassVar[str] = ""
    #: How ``hopscore suite mcr --help`` tells where its gold lies in the data folder
    #: (``"strategyqa/dev.json"``, the join of :meth:`suite_gold` in words); "" means the first
    #: of :attr:`SuiteFiles.folders`, a slash and its :attr:`SuiteFiles.files` joined by "or".
    suite_layout: ClassVar[str] = ""
    #: Files :meth:`suite_gold` writes in the suite directory (``fermi_realfp.json``): the
    #: suite claims them as its outputs beside ``suite.json``.
    suite_writes: ClassVar[tuple[str, ...]] = ()
    #: Named suites of its own (``hopscore suite preset NAME``): several gold files of the
    #: data folder, each run on this benchmark, one table (:class:`SuitePreset`).
    suite_presets: ClassVar[tuple[SuitePreset, ...]] = ()


#: The options of ``hopscore run`` that a benchmark which :attr:`Benchmark.reads_wiki_db` reads.
WIKI_OPTIONS = ("--wiki-db", "--wiki-pages", "--wiki-elements")


def load_universal(
    path: Path,
    parse: Callable[[Fields, str], P],
    *,
    id_field: str = "id",
    quick: Callable[[dict[str, Any], str], P | None] | None = None,
) -> dict[str, P]:
    """Read the universal JSON Lines prediction format, one ``{"id", "answer", ...}`` per line.

    ``parse`` turns one located record into the benchmark's prediction type; ids must be unique.
    Streams the file and keeps only the parsed predictions (a million lines fit in memory).
    ``quick``, when given, builds the prediction of a plain, well-typed record from the raw
    object (or returns None), skipping the located checks that ``parse`` makes; both must
    give the same prediction for such a record.
    """
    out: dict[str, P] = {}
    where_path = str(path)
    for line, value in iter_jsonl_numbered(path):
        if quick is not None and type(value) is dict:
            example_id = value.get(id_field)
            if (
                type(example_id) is str
                and example_id
                and not example_id[0].isspace()
                and example_id not in out
            ):
                prediction = quick(value, example_id)
                if prediction is not None:
                    out[example_id] = prediction
                    continue
        record = Fields.at_line(value, where_path, line)
        example_id = record.id(id_field)
        if example_id in out:
            first = _first_line_with_id(path, example_id, id_field)
            raise InputError(
                record.where,
                f"duplicate id {example_id!r} (first seen at {where_path}:{first})",
                field=id_field,
            )
        out[example_id] = parse(record, example_id)
    return out


def quick_answer(value: dict[str, Any], example_id: str) -> Prediction | None:
    """``quick`` for a universal record whose only field is a string ``answer``."""
    answer = value.get("answer")
    return Prediction(id=example_id, answer=answer) if type(answer) is str else None


def _first_line_with_id(path: Path, example_id: str, id_field: str) -> int:
    """The line of the first record with this id (looked up again only to report a duplicate)."""
    for line, value in iter_jsonl_numbered(path):
        if not isinstance(value, dict):
            continue
        if Fields.at_line(value, str(path), line).id(id_field) == example_id:
            return line
    raise AssertionError("unreachable: the id was seen before")  # pragma: no cover


def check_unique_ids(examples: list[E], path: Path) -> list[E]:
    """Raise on duplicate gold ids, naming both records."""
    first: dict[str, int] = {}
    for index, example in enumerate(examples):
        if example.id in first:
            raise InputError(
                path,
                f"duplicate gold id {example.id!r} in records [{first[example.id]}] and [{index}]",
            )
        first[example.id] = index
    return examples
