"""Golden files: every output byte of hopscore's commands on the bundled samples.

Each case runs the real CLI (``python -m hopscore``, a subprocess, as a user would) in a
temporary directory holding a copy of the samples, with relative paths, and compares the
printed output, the exit status and every file the command wrote with tests/golden/<case>/
byte for byte: ``score`` (plain, --json) and ``run`` on every sample; on outputs made once
per module, ``score --judge``, ``judge`` (also in shards, merged), ``analyze``, ``compare``,
``report``, ``export`` (a Parquet table as its schema and rows read back: its bytes name the
writer's version), ``run --strategy`` self-ask/sc/mcr, ``run --shard`` and ``merge``,
``sql-match``, ``plan``, ``demo --scores-only``, and ``run hybrid-deep-research`` with
``validate-predictions`` and ``hdr-tasks``. One stand-in server (tests/openai_server.FakeOpenAI)
answers every model, judge and agent request (:func:`_reply`).

Normalized (:func:`_normalize`), each value replaced by a placeholder: ISO timestamps
(``updated``: when the run was written; the report's "generated" line), durations
(``elapsed_s``-style fields, per-call ``latency_s``, the "wall time" row of the tables printed,
the seconds in "wrote report.html (..., 2.5 s)", a progress bar's clock), the stand-in
server's URL port (a free port each time) and the hashes that cover it or a temporary path
(``run_key``, ``cache_key``, ``fingerprint``, a judge row's ``key``, a verdict's
``settings``), versions (``versions``, ``hopscore_version``, ``platform``, SQLite's), and
absolute paths of the temporary directory and of src/ (config.json's ``command`` starts with
__main__'s path). The adaptive concurrency limit follows the measured throughput (its trace in
config.json), so the cases with many requests run with --fixed-concurrency.

Interval bounds in JSON (``"low"``, ``"high"``) may differ from the expected ones by a relative
1e-11: scipy finds the exact ones as roots, whose last digits move between its releases
(:func:`_same_up_to_root_finding`); every other byte must be equal.

``HOPSCORE_GOLDEN_UPDATE=1 pytest tests/test_golden.py`` rewrites the expected files; without it
a difference fails with the case's command, the file name and the first differing lines.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopscore.benchmarks import sample_files
from tests.conftest import SRC, run_cli
from tests.hdr.world import SCRIPTS, build_world, is_agent_request, scripted
from tests.openai_server import FakeOpenAI, Reply
from tests.sql.dbs import build_shop

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("HOPSCORE_GOLDEN_UPDATE") == "1"


_VOLATILE = [
    # when the run was written
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[0-9.:+Z-]*"), "<TIME>"),
    # how long a call took (also in JSON held in a JSON string, quotes escaped: a trajectory
    # in the report's data)
    (re.compile(r'(\\?)"(elapsed_s|latency_s|mean_latency_s|duration_s|wall_s|seconds|t_s)\1": '
                r"[0-9.e+-]+"),
     r'\1"\2\1": \1"<SECONDS>\1"'),
    # hashes over the run's settings, which include the server's URL (its port varies)
    # (a judge row's ``key``, a sql-match verdict's ``settings``, which covers the database
    # folder's absolute path, and the settings part of an HDR attempt's run_key too)
    (re.compile(r'(\\?)"(run_key|cache_key|fingerprint|key|settings)\1": \1"[0-9a-f]+\1"'),
     r'\1"\2\1": \1"<KEY>\1"'),
    (re.compile(r'("run_key": "[^"#]*#\d+@)[0-9a-f]+:'), r"\1<KEY>:"),
    # the stand-in server's port, a free one each time
    (re.compile(r"http://127\.0\.0\.1:\d+"), "http://127.0.0.1:<PORT>"),
    # versions of hopscore, Python and packages, and the machine's platform
    (re.compile(r'"versions": \{[^}]*\}'), '"versions": "<VERSIONS>"'),
    (re.compile(r'"(hopscore_version|platform|sqlite_version)": "[^"]*"'), r'"\1": "<VERSION>"'),
    (re.compile(r"SQLite \d+\.\d+\.\d+"), "SQLite <VERSION>"),
    # the same in tables on the terminal: a wall time or latency cell (its padding too)
    (re.compile(r"(│ (?:wall time(?: \([a-z]+\))?|latency_s|elapsed_s|wall_s|duration_s))"
                r" *│ *[0-9.]+(?: s)? *│"), r"\1 │ <SECONDS> │"),
    # a progress bar's elapsed time and estimate: "5/5 100% failed 0 0:00:00 eta 0:00:00"
    (re.compile(r"\b\d+:\d{2}:\d{2}\b"), "<H:MM:SS>"),
    # "wrote report.html (0.1 MB, 10 samples, 2.5 s)"
    (re.compile(r"(wrote \S+ \([^)]*, )[0-9.]+ s\)"), r"\1<SECONDS> s)"),
    # the HTML report's header and its table of what was run (installed packages)
    (re.compile(r"generated \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC"), "generated <TIME>"),
    (re.compile(r'(<p class="meta">hopscore )\S+'), r"\1<VERSION>"),
    (re.compile(r'[ \t]*<tr[^>]*data-key="versions\.[^"]*">.*?</tr>\n'), ""),
    (re.compile(r'(<tr[^>]*data-key="(?:hopscore_version|platform)"><th>[^<]*</th>)'
                r"(?:<td>[^<]*</td>)+"), r"\1<td><VERSION></td>"),
    (re.compile(r'(<tr[^>]*data-key="[^"]*fingerprint"><th>[^<]*</th>)(?:<td>[^<]*</td>)+'),
     r"\1<td><KEY></td>"),
]


#: for a table whose cells hold durations (the HDR run's tool calls: "run_sql 1 (0 errors,
#: 410 ms)"): the milliseconds, and the padding they change (column widths), ignored
_LOOSE = [
    (re.compile(r"\d+ ms\)"), "<MS> ms)"),
    (re.compile(r"│ +"), "│ "),
    (re.compile(r" +│"), " │"),
    (re.compile(r"([─━])[─━]+"), r"\1"),
]


def _normalize(text: str, tmp: Path, loose: bool = False) -> str:
    text = text.replace(str(tmp.resolve()), "<TMP>").replace(str(tmp), "<TMP>")
    text = text.replace(str(SRC), "<SRC>")
    for pattern, placeholder in _VOLATILE + (_LOOSE if loose else []):
        text = pattern.sub(placeholder, text)
    return text


#: an interval bound in JSON; the exact-conditional and Clopper-Pearson bounds are roots scipy
#: finds (``binomtest(...).proportion_ci``), whose last digits move between scipy releases
#: (1.17 and 1.18 differ by 2e-14 in tests/golden/compare)
_BOUND = re.compile(r'("(?:low|high)": )(-?[0-9][0-9.e+-]*)')
#: how far two such roots may lie apart, relative to their size
_ROOT_RTOL = 1e-11


def _same_up_to_root_finding(want: str, got: str) -> bool:
    """Whether two outputs differ only in interval bounds, each within :data:`_ROOT_RTOL`
    (every other byte, every mean included, equal)."""
    want_parts, got_parts = _BOUND.split(want), _BOUND.split(got)
    if len(want_parts) != len(got_parts):
        return False
    for index, (a, b) in enumerate(zip(want_parts, got_parts, strict=True)):
        if index % 3 != 2:  # text between the bounds, and the key before each
            if a != b:
                return False
        elif a != b and abs(float(a) - float(b)) > _ROOT_RTOL * max(abs(float(a)), 1e-300):
            return False
    return True


def _compare(case: str, command: str, outputs: dict[str, str]) -> None:
    folder = GOLDEN / case
    if UPDATE:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, text in outputs.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
        return
    expected_names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                            if p.is_file()) if folder.is_dir() else []
    problems: list[str] = []
    if expected_names != sorted(outputs):
        problems.append(f"files differ: expected {expected_names}, got {sorted(outputs)}")
    for name in sorted(set(expected_names) & set(outputs)):
        want = (folder / name).read_text(encoding="utf-8")
        if want != outputs[name] and not _same_up_to_root_finding(want, outputs[name]):
            diff = list(difflib.unified_diff(want.splitlines(), outputs[name].splitlines(),
                                             f"expected/{name}", f"actual/{name}", lineterm=""))
            problems.append("\n".join(line[:400] for line in diff[:40]))
    if problems:
        pytest.fail(f"golden case {case} ({command}) differs; HOPSCORE_GOLDEN_UPDATE=1 rewrites "
                    f"tests/golden/{case}/\n" + "\n".join(problems), pytrace=False)


def _score_cases() -> list[str]:
    return sorted(s.benchmark for s in sample_files.samples())


@pytest.mark.parametrize("json_flag", [False, True])
@pytest.mark.parametrize("bench", _score_cases())
def test_score_sample(bench: str, json_flag: bool, tmp_path: Path) -> None:
    source = sample_files.require(bench).folder
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    shutil.copytree(str(source), tmp_path / "s")
    args = [bench, "--gold", f"s/{manifest['gold']}", "--predictions",
            f"s/{manifest['predictions']}"]
    if manifest.get("aliases"):
        args += ["--aliases", f"s/{manifest['aliases']}"]
    args += ["-o", "out", *(["--json"] if json_flag else [])]
    result = run_cli("score", *args, cwd=tmp_path)
    outputs = {"exit_code.txt": f"{result.returncode}\n", "stdout.txt": result.stdout,
               "stderr.txt": result.stderr}
    for path in sorted((tmp_path / "out").iterdir()):
        outputs[path.name] = path.read_text(encoding="utf-8")
    outputs = {name: _normalize(text, tmp_path) for name, text in outputs.items()}
    _compare(f"score-{bench}" + ("-json" if json_flag else ""),
             "hopscore score " + " ".join(args), outputs)


RUN_BENCHMARKS = _score_cases()


#: a chain's final answer by its request's seed (--seed 7: chain 0, the greedy one, has 7), so
#: that SA, SC (3 votes to 2) and oracle@k differ, whatever order the chains are answered in
CHAIN_ANSWERS = {7: "Lake Miren", 8: "Lake Tollin", 9: "Lake Miren", 10: "lake tollin",
                 11: "Lake Tollin"}


def _chain_reply(body: dict[str, Any]) -> Reply | None:
    """A self-ask chain's next step (one follow-up, then the final answer), or the
    meta-reasoner's answer; None for other requests (told apart by their stop sequences)."""
    stop = body.get("stop") or []
    if "\nIntermediate answer:" in stop:
        chain = str(body["messages"][-1]["content"]).rsplit("\n#\n", 1)[-1]
        if "Follow up:" not in chain:
            return Reply("Follow up: In which town was this person born?\n"
                         "Intermediate answer: Tollin.")
        seed = body.get("seed") or 7
        # the later chains answer first: what a chain gave must not depend on when it came
        return Reply(f"Intermediate answer: Tollin.\nSo the final answer is: "
                     f"{CHAIN_ANSWERS.get(seed, 'Lake Miren')}", delay=0.01 * max(0, 12 - seed))
    if "\nContext:" in stop:
        return Reply("The town is Tollin. So the answer is: Lake Tollin")
    return None


def _reply(body: dict[str, Any], attempt: int) -> Reply:
    """The stand-in model: the HDR agent's script and judge (tests/hdr/world.py) for agent and
    judge prompts, chains and the meta-reasoner for --strategy, the same answer to every other
    prompt; never by ``attempt``, which counts across the cases sharing the server."""
    if is_agent_request(body) or "Answer to grade:" in str(body["messages"][-1]["content"]):
        return _AGENT(body, attempt)
    return _chain_reply(body) or Reply("Answer: Lake Miren")


_AGENT = scripted(SCRIPTS)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(body_responder=_reply) as fake:
        yield fake


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*")) if p.is_file()}


# the chain strategies: test_run_strategy
RUN_CASES = [(bench, "") for bench in RUN_BENCHMARKS]


@pytest.mark.parametrize(("bench", "extra"), RUN_CASES)
def test_run_sample(bench: str, extra: str, server: FakeOpenAI, tmp_path: Path) -> None:
    source = sample_files.require(bench).folder
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    shutil.copytree(str(source), tmp_path / "s")
    args = [bench, "--gold", f"s/{manifest['gold']}", "--model", "m", "--base-url",
            server.base_url, "-o", "run", "--no-cache", "--no-progress"]
    if manifest.get("aliases"):
        args += ["--aliases", f"s/{manifest['aliases']}"]
    args += extra.split()
    result = run_cli("run", *args, cwd=tmp_path)
    outputs = {"exit_code.txt": f"{result.returncode}\n", "stdout.txt": result.stdout,
               "stderr.txt": result.stderr, **_files(tmp_path / "run")}
    outputs = {name: _normalize(text, tmp_path) for name, text in outputs.items()}
    case = "-".join(["run", bench, *[word for word in extra.split() if "--" not in word]])
    _compare(case, "hopscore run " + " ".join(args), outputs)


# --- the other commands ----------------------------------------------------------------------


def _sample(bench: str, key: str = "gold") -> str:
    """The path of the bundled sample's gold (or ``key``: predictions, aliases) file in a
    copy at s/<bench>/, relative to where the commands run."""
    source = sample_files.require(bench).folder
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    return f"s/{bench}/{manifest[key]}" if manifest.get(key) else ""


def _table(path: Path) -> str:
    """A Parquet file as text: its schema and rows (its bytes embed the writer's version)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return f"{table.schema}\n" + "".join(json.dumps(row, sort_keys=True) + "\n"
                                          for row in table.to_pylist())


def _check(case: str, cwd: Path, *args: str, outputs: tuple[str, ...] = (),
           loose: bool = False) -> None:
    """Run ``hopscore ARGS`` in ``cwd`` and compare what it printed and the files or folders
    ``outputs`` (relative to ``cwd``) with tests/golden/<case>/ (``loose``: printed tables
    hold durations, see :data:`_LOOSE`; the terminal is then wide enough for no cell to wrap)."""
    result = run_cli(*args, cwd=cwd, env={"COLUMNS": "1000"} if loose else None)
    found = {"exit_code.txt": f"{result.returncode}\n", "stdout.txt": result.stdout,
             "stderr.txt": result.stderr}
    for name in outputs:
        path = cwd / name
        if path.is_dir():
            found.update({f"{name}/{key}": text for key, text in _files(path).items()})
        elif path.suffix == ".parquet":
            found[f"{name}.txt"] = _table(path)
        elif path.exists():
            found[name] = path.read_text(encoding="utf-8")
    _compare(case, "hopscore " + " ".join(args),
             {name: _normalize(text, cwd, loose and name == "stdout.txt")
              for name, text in found.items()})


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, server: FakeOpenAI) -> Path:
    """A folder made once for the cases that read outputs: every bundled sample (s/<bench>/)
    with its score directory (score-<bench>/), and a default run of hotpotqa (run-hotpotqa/)."""
    root = tmp_path_factory.mktemp("made")
    for bench in RUN_BENCHMARKS:
        shutil.copytree(str(sample_files.require(bench).folder), root / "s" / bench)
        aliases = ["--aliases", _sample(bench, "aliases")] if _sample(bench, "aliases") else []
        result = run_cli("score", bench, "--gold", _sample(bench), "--predictions",
                         _sample(bench, "predictions"), *aliases, "-o", f"score-{bench}",
                         cwd=root)
        assert result.returncode == 0, result.stderr
    result = run_cli("run", "hotpotqa", "--gold", "s/hotpotqa/gold.json", "--model", "m",
                     "--base-url", server.base_url, "-o", "run-hotpotqa", "--no-cache",
                     "--no-progress", cwd=root)
    assert result.returncode == 0, result.stderr
    return root


@pytest.mark.parametrize("bench", RUN_BENCHMARKS)
def test_analyze(bench: str, made: Path) -> None:
    _check(f"analyze-{bench}", made, "analyze", f"score-{bench}", "--gold", _sample(bench),
           "-o", f"analyze-{bench}.json", outputs=(f"analyze-{bench}.json",))


def test_analyze_run(made: Path) -> None:
    _check("analyze-run-hotpotqa", made, "analyze", "run-hotpotqa", "--gold",
           "s/hotpotqa/gold.json", "--id", "sample-hp-1")


@pytest.mark.parametrize("json_flag", [False, True])
def test_compare(made: Path, json_flag: bool) -> None:
    name = "compare-json" if json_flag else "compare"
    _check(name, made, "compare", "score-hotpotqa", "run-hotpotqa", "-o", f"{name}.json",
           *(["--json"] if json_flag else []), outputs=(f"{name}.json",))


def test_report(made: Path) -> None:
    _check("report", made, "report", "score-hotpotqa", "run-hotpotqa", "--gold",
           "s/hotpotqa/gold.json", "-o", "report.html", "--title", "golden",
           outputs=("report.html",))


@pytest.mark.parametrize("suffix", ["csv", "jsonl", "parquet"])
def test_export(made: Path, suffix: str) -> None:
    _check(f"export-{suffix}", made, "export", "score-hotpotqa", "run-hotpotqa",
           "-o", f"export.{suffix}", outputs=(f"export.{suffix}",))


JUDGE_ROWS = [
    {"id": "q1", "question": "Which lake feeds the Tolle?", "response": "Lake Miren",
     "correct_answer": "lake miren"},
    {"id": "q2", "question": "Who founded Arden Mills?", "response": "It was Jonas Arden.",
     "correct_answer": "Jonas Arden"},
    {"id": "q3", "question": "How many bridges cross the Tolle?", "response": "4",
     "correct_answer": "4"},
]


def test_judge(made: Path, server: FakeOpenAI) -> None:
    (made / "judge-in.jsonl").write_text("".join(json.dumps(row) + "\n" for row in JUDGE_ROWS),
                                         encoding="utf-8")
    _check("judge", made, "judge", "-i", "judge-in.jsonl", "-o", "judged.jsonl", "--model", "j",
           "--base-url", server.base_url, "--no-cache", "--no-progress", "--summary-json",
           "judge-summary.json", outputs=("judged.jsonl", "judge-summary.json"))
    for index in range(2):
        _check(f"judge-shard-{index}of2", made, "judge", "-i", "judge-in.jsonl", "-o",
               f"judged.{index}.jsonl", "--model", "j", "--base-url", server.base_url,
               "--no-cache", "--no-progress", "--shard", f"{index}/2",
               outputs=(f"judged.{index}.jsonl",))
    _check("merge-judge", made, "merge", "judged.0.jsonl", "judged.1.jsonl", "-o",
           "judged-merged.jsonl", outputs=("judged-merged.jsonl", "judged-merged.jsonl.merge.json"))


def test_score_judge(made: Path, server: FakeOpenAI) -> None:
    _check("score-judge-bamboogle", made, "score", "bamboogle", "--gold", "s/bamboogle/gold.csv",
           "--predictions", "s/bamboogle/predictions.jsonl", "-o", "score-judge", "--judge",
           "--judge-model", "j", "--judge-base-url", server.base_url, outputs=("score-judge",))


# --strategy: --seed gives each chain its own answer (CHAIN_ANSWERS); --fixed-concurrency, as the
# adaptive limit follows the measured throughput (config.json's requests.concurrency trace)
@pytest.mark.parametrize("strategy", ["self-ask", "sc", "mcr"])
def test_run_strategy(made: Path, server: FakeOpenAI, strategy: str) -> None:
    _check(f"run-hotpotqa-{strategy}", made, "run", "hotpotqa", "--gold", "s/hotpotqa/gold.json",
           "--model", "m", "--base-url", server.base_url, "-o", f"run-{strategy}", "--no-cache",
           "--no-progress", "--strategy", strategy, "--seed", "7", "--fixed-concurrency",
           outputs=(f"run-{strategy}",))


def test_shard_and_merge(made: Path, server: FakeOpenAI) -> None:
    for index in range(2):
        _check(f"run-hotpotqa-shard-{index}of2", made, "run", "hotpotqa", "--gold",
               "s/hotpotqa/gold.json", "--model", "m", "--base-url", server.base_url, "-o",
               f"shard-{index}", "--no-cache", "--no-progress", "--shard", f"{index}/2",
               outputs=(f"shard-{index}",))
    _check("merge-hotpotqa", made, "merge", "shard-0", "shard-1", "-o", "merged",
           outputs=("merged",))
    # the merged run is the unsharded one (config.json apart: it records the shards)
    for name in ("metrics.json", "predictions.json", "samples.jsonl", "scores.jsonl"):
        merged, whole = made / "merged" / name, made / "run-hotpotqa" / name
        assert _normalize(merged.read_text(encoding="utf-8"), made) == _normalize(
            whole.read_text(encoding="utf-8"), made), name


def test_sql_match(made: Path) -> None:
    build_shop(made / "dbs" / "shop" / "shop_template.sqlite")
    # every case of the parity corpus but the one that waits for --timeout (30 s)
    cases = (Path(__file__).parent / "fixtures" / "sql_parity" / "cases.jsonl").read_text(
        encoding="utf-8").splitlines(keepends=True)
    (made / "sql-cases.jsonl").write_text(
        "".join(line for line in cases if '"agent_timeout"' not in line), encoding="utf-8")
    _check("sql-match", made, "sql-match", "-i", "sql-cases.jsonl", "-o", "verdicts.jsonl",
           "--db-root", "dbs", "--workers", "2", outputs=("verdicts.jsonl",))
    _check("analyze-sql-match", made, "analyze", "verdicts.jsonl")


@pytest.mark.parametrize("args", [["--baseline-acc", "0.62"],
                                  ["--baseline-acc", "0.45", "--n", "500", "--discordance",
                                   "0.2", "--sd", "0.3", "--delta", "0.05", "--comparisons", "3"]])
def test_plan(made: Path, args: list[str]) -> None:
    _check("plan" + ("-n" if "--n" in args else ""), made, "plan", *args)


def test_demo_scores_only(made: Path) -> None:
    _check("demo-scores-only", made, "demo", "--scores-only", "-o", "demo", outputs=("demo",))


def test_run_hybrid_deep_research(made: Path, server: FakeOpenAI) -> None:
    build_world(made / "hdr")
    _check("run-hybrid-deep-research", made, "run", "hybrid-deep-research", "--tasks",
           "hdr/tasks.jsonl", "--db-root", "hdr/dbs", "--corpus", "hdr/corpus.jsonl",
           "--model", "openai/scripted-agent", "--base-url", server.base_url,
           "--judge-model", "scripted-judge", "--judge-base-url", server.base_url,
           "--output-dir", "run-hdr", "--no-cache", "--no-progress", "--concurrency", "3",
           "--fixed-concurrency", outputs=("run-hdr",), loose=True)
    _check("validate-predictions", made, "validate-predictions", "run-hdr/predictions.jsonl",
           "--tasks", "hdr/tasks.jsonl", "--json", "findings.json", outputs=("findings.json",))
    _check("report-hybrid-deep-research", made, "report", "run-hdr", "-o", "report-hdr.html",
           "--title", "golden", outputs=("report-hdr.html",))
    _check("hdr-tasks", made, "hdr-tasks", "hdr/tasks.jsonl", "-o", "hdr-tasks.jsonl",
           outputs=("hdr-tasks.jsonl",))
