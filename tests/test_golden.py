"""Golden files: every output byte of ``hopscore score`` on every bundled sample.

Each case runs the real CLI (``python -m hopscore``, a subprocess, as a user would) in a
temporary directory holding a copy of the sample, with relative paths, and compares the printed
output and every file the command wrote with tests/golden/<case>/ byte for byte.

Normalized (one normalizer, :func:`_normalize`), each value replaced by a placeholder: ISO
timestamps (``updated``: when the run was written), ``elapsed_s``-style durations (wall time),
the stand-in server's URL port (a free port each time) and the hashes that cover it (samples'
``run_key``/``cache_key``, config's ``fingerprint``), per-call ``latency_s``,
``versions``/``hopscore_version``/
``platform`` (the installed packages and machine), and absolute paths of the temporary directory
and of src/ (the checkout's location; config.json's ``command`` starts with __main__'s path).
The commands run in their own temporary directory with relative paths, so nothing else varies.

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

import pytest

from hopscore.files import bundled
from tests.conftest import SRC, run_cli
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
    (re.compile(r'"(run_key|cache_key|fingerprint)": "[0-9a-f]+"'), r'"\1": "<KEY>"'),
    # the stand-in server's port, a free one each time
    (re.compile(r"http://127\.0\.0\.1:\d+"), "http://127.0.0.1:<PORT>"),
    # versions of hopscore, Python and packages, and the machine's platform
    (re.compile(r'"versions": \{[^}]*\}'), '"versions": "<VERSIONS>"'),
    (re.compile(r'"(hopscore_version|platform)": "[^"]*"'), r'"\1": "<VERSION>"'),
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


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: Lake Miren")) as fake:
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
