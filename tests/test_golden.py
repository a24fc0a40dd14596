"""Golden files: every output byte of hopscore's commands on the bundled samples.

Each case runs the real CLI (``python -m hopscore``, a subprocess, as a user would) in a
temporary directory holding a copy of the samples, with relative paths, and compares the
printed output, the exit status and every file the command wrote with tests/golden/<case>/
byte for byte: ``score`` (plain, --json, --judge) and ``run`` on every sample, and ``judge``,
``analyze``, ``compare``, ``report`` and ``export`` on outputs made once per module (a
Parquet table is compared as its schema and rows read back: its bytes name the writer's
version). One stand-in server (tests/openai_server.FakeOpenAI) answers every model and judge.

Normalized (one normalizer, :func:`_normalize`), each value replaced by a placeholder: ISO
timestamps (``updated``: when the run was written; the report's "generated" line), durations
(``elapsed_s``-style fields, per-call ``latency_s``, the "wall time" row of the tables printed,
the seconds in "wrote report.html (..., 2.5 s)", a progress bar's clock), the stand-in
server's URL port (a free port each time) and the hashes that cover it (samples'
``run_key``/``cache_key``, config's ``fingerprint``, a judge row's ``key``),
``versions``/``hopscore_version``/``platform`` (the installed packages and machine, also in
the report's table of settings), and absolute paths of the temporary directory and of src/
(the checkout's location; config.json's ``command`` starts with __main__'s path). The commands
run in their own temporary directory with relative paths, so nothing else varies.

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

from hopscore.files import bundled
from tests.conftest import SRC, run_cli
from tests.hdr.world import SCRIPTS, is_agent_request, scripted
from tests.openai_server import FakeOpenAI, Reply

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("HOPSCORE_GOLDEN_UPDATE") == "1"


_VOLATILE = [
    # when the run was written
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[0-9.:+Z-]*"), "<TIME>"),
    # how long a call took
    (re.compile(r'"(elapsed_s|latency_s|duration_s|wall_s|seconds)": [0-9.e+-]+'),
     r'"\1": "<SECONDS>"'),
    # hashes over the run's settings, which include the server's URL (its port varies)
    # (a judge row's ``key`` too)
    (re.compile(r'"(run_key|cache_key|fingerprint|key)": "[0-9a-f]+"'), r'"\1": "<KEY>"'),
    # the stand-in server's port, a free one each time
    (re.compile(r"http://127\.0\.0\.1:\d+"), "http://127.0.0.1:<PORT>"),
    # versions of hopscore, Python and packages, and the machine's platform
    (re.compile(r'"versions": \{[^}]*\}'), '"versions": "<VERSIONS>"'),
    (re.compile(r'"(hopscore_version|platform)": "[^"]*"'), r'"\1": "<VERSION>"'),
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
]


def _normalize(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp.resolve()), "<TMP>").replace(str(tmp), "<TMP>")
    text = text.replace(str(SRC), "<SRC>")
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


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
        if want != outputs[name]:
            diff = list(difflib.unified_diff(want.splitlines(), outputs[name].splitlines(),
                                             f"expected/{name}", f"actual/{name}", lineterm=""))
            problems.append("\n".join(line[:400] for line in diff[:40]))
    if problems:
        pytest.fail(f"golden case {case} ({command}) differs; HOPSCORE_GOLDEN_UPDATE=1 rewrites "
                    f"tests/golden/{case}/\n" + "\n".join(problems), pytrace=False)


def _score_cases() -> list[str]:
    return sorted(s.benchmark for s in bundled.discover())


@pytest.mark.parametrize("json_flag", [False, True])
@pytest.mark.parametrize("bench", _score_cases())
def test_score_sample(bench: str, json_flag: bool, tmp_path: Path) -> None:
    source = bundled.samples_root() / bench
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


def _reply(body: dict[str, Any], attempt: int) -> Reply:
    """The stand-in model: the HDR agent's script and judge (tests/hdr/world.py) for agent and
    judge prompts, the same answer to every other prompt (one that never depends on
    ``attempt``, which counts across the cases sharing the server)."""
    if is_agent_request(body) or "Answer to grade:" in str(body["messages"][-1]["content"]):
        return _AGENT(body, attempt)
    return Reply("Answer: Lake Miren")


_AGENT = scripted(SCRIPTS)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(body_responder=_reply) as fake:
        yield fake


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8")
            for p in sorted(folder.rglob("*")) if p.is_file()}


# --strategy sc is left out: its outputs differ from run to run (reported to the coordinator)
RUN_CASES = [(bench, "") for bench in RUN_BENCHMARKS]


@pytest.mark.parametrize(("bench", "extra"), RUN_CASES)
def test_run_sample(bench: str, extra: str, server: FakeOpenAI, tmp_path: Path) -> None:
    source = bundled.samples_root() / bench
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


def _sample(bench: str, root: Path) -> list[str]:
    """Copy the bundled sample of ``bench`` to root/s/<bench>/; its --gold (and --aliases)."""
    source = bundled.samples_root() / bench
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    shutil.copytree(str(source), root / "s" / bench)
    args = ["--gold", f"s/{bench}/{manifest['gold']}"]
    if manifest.get("aliases"):
        args += ["--aliases", f"s/{bench}/{manifest['aliases']}"]
    return args


def _predictions(bench: str) -> str:
    manifest = json.loads((bundled.samples_root() / bench / "manifest.json").read_text(
        encoding="utf-8"))
    return f"s/{bench}/{manifest['predictions']}"


def _table(path: Path) -> str:
    """A Parquet file as text: its schema and rows (its bytes embed the writer's version)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return f"{table.schema}\n" + "".join(json.dumps(row, sort_keys=True) + "\n"
                                          for row in table.to_pylist())


def _check(case: str, cwd: Path, *args: str, outputs: tuple[str, ...] = ()) -> None:
    """Run ``hopscore ARGS`` in ``cwd`` and compare what it printed and the files or folders
    ``outputs`` (relative to ``cwd``) with tests/golden/<case>/."""
    result = run_cli(*args, cwd=cwd)
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
             {name: _normalize(text, cwd) for name, text in found.items()})


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, server: FakeOpenAI) -> Path:
    """A folder made once for the cases that read outputs: every bundled sample (s/<bench>/)
    with its score directory (score-<bench>/), and a default run of hotpotqa (run-hotpotqa/)."""
    root = tmp_path_factory.mktemp("made")
    for bench in RUN_BENCHMARKS:
        result = run_cli("score", bench, *_sample(bench, root), "--predictions",
                         _predictions(bench), "-o", f"score-{bench}", cwd=root)
        assert result.returncode == 0, result.stderr
    result = run_cli("run", "hotpotqa", "--gold", "s/hotpotqa/gold.json", "--model", "m",
                     "--base-url", server.base_url, "-o", "run-hotpotqa", "--no-cache",
                     "--no-progress", cwd=root)
    assert result.returncode == 0, result.stderr
    return root


@pytest.mark.parametrize("bench", RUN_BENCHMARKS)
def test_analyze(bench: str, made: Path) -> None:
    gold = _sample_gold(bench)
    _check(f"analyze-{bench}", made, "analyze", f"score-{bench}", "--gold", gold,
           "-o", f"analyze-{bench}.json", outputs=(f"analyze-{bench}.json",))


def _sample_gold(bench: str) -> str:
    manifest = json.loads((bundled.samples_root() / bench / "manifest.json").read_text(
        encoding="utf-8"))
    return f"s/{bench}/{manifest['gold']}"


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


def test_score_judge(made: Path, server: FakeOpenAI) -> None:
    _check("score-judge-bamboogle", made, "score", "bamboogle", "--gold", "s/bamboogle/gold.csv",
           "--predictions", "s/bamboogle/predictions.jsonl", "-o", "score-judge", "--judge",
           "--judge-model", "j", "--judge-base-url", server.base_url, outputs=("score-judge",))
