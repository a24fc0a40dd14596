"""Golden files: every output byte of ``hopscore score`` on every bundled sample.

Each case runs the real CLI (``python -m hopscore``, a subprocess, as a user would) in a
temporary directory holding a copy of the sample, with relative paths, and compares the printed
output and every file the command wrote with tests/golden/<case>/ byte for byte.

Normalized (one normalizer, :func:`_normalize`): nothing volatile appears in these outputs today
because the command runs in its own temporary directory with relative paths; the normalizer only
replaces the temporary directory's absolute path, should one ever be printed, by ``<TMP>``.

``HOPSCORE_GOLDEN_UPDATE=1 pytest tests/test_golden.py`` rewrites the expected files; without it
a difference fails with the case's command, the file name and the first differing lines.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from pathlib import Path

import pytest

from hopscore import samples
from tests.conftest import run_cli

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("HOPSCORE_GOLDEN_UPDATE") == "1"


def _normalize(text: str, tmp: Path) -> str:
    return text.replace(str(tmp.resolve()), "<TMP>").replace(str(tmp), "<TMP>")


def _compare(case: str, command: str, outputs: dict[str, str]) -> None:
    folder = GOLDEN / case
    if UPDATE:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, text in outputs.items():
            (folder / name).write_text(text, encoding="utf-8")
        return
    expected_names = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    problems: list[str] = []
    if expected_names != sorted(outputs):
        problems.append(f"files differ: expected {expected_names}, got {sorted(outputs)}")
    for name in sorted(set(expected_names) & set(outputs)):
        want = (folder / name).read_text(encoding="utf-8")
        if want != outputs[name]:
            diff = list(difflib.unified_diff(want.splitlines(), outputs[name].splitlines(),
                                             f"expected/{name}", f"actual/{name}", lineterm=""))
            problems.append("\n".join(diff[:40]))
    if problems:
        pytest.fail(f"golden case {case} ({command}) differs; HOPSCORE_GOLDEN_UPDATE=1 rewrites "
                    f"tests/golden/{case}/\n" + "\n".join(problems), pytrace=False)


def _score_cases() -> list[str]:
    return sorted(s.benchmark for s in samples.discover())


@pytest.mark.parametrize("bench", _score_cases())
def test_score_sample(bench: str, tmp_path: Path) -> None:
    source = samples.samples_root() / bench
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    shutil.copytree(str(source), tmp_path / "s")
    args = [bench, "--gold", f"s/{manifest['gold']}", "--predictions",
            f"s/{manifest['predictions']}"]
    if manifest.get("aliases"):
        args += ["--aliases", f"s/{manifest['aliases']}"]
    args += ["-o", "out"]
    result = run_cli("score", *args, cwd=tmp_path)
    outputs = {"exit_code.txt": f"{result.returncode}\n", "stdout.txt": result.stdout,
               "stderr.txt": result.stderr}
    for path in sorted((tmp_path / "out").iterdir()):
        outputs[path.name] = path.read_text(encoding="utf-8")
    outputs = {name: _normalize(text, tmp_path) for name, text in outputs.items()}
    _compare(f"score-{bench}", "hopscore score " + " ".join(args), outputs)
