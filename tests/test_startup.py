"""Start-up stays light: what ``hopscore --help`` and a plain ``hopscore score`` import.

Timing is measured in ``bench/``; here only which heavy modules get loaded is checked.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURES, SRC

HEAVY = ("numpy", "scipy", "jinja2", "openai", "pint", "sqlglot")


def modules_after(code: str) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
        check=True,
    )
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def roots(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_the_command_line_application_loads_no_heavy_library() -> None:
    loaded = roots(modules_after("import hopscore.cli"))
    assert "typer" in loaded
    assert loaded.isdisjoint(HEAVY)


def test_a_plain_score_with_default_intervals_loads_no_numerical_library() -> None:
    """Default intervals (Wilson for binary metrics, BCa from cumulants for the others) are
    computed without numpy or scipy, whose import alone would cost more than the intervals."""
    gold = FIXTURES / "hybridqa" / "dev_reference_small.json"
    predictions = FIXTURES / "hybridqa" / "predictions_targeted.json"
    code = (
        "import contextlib, io\n"
        "from hopscore.launch import main\n"
        "out = io.StringIO()\n"
        "try:\n"
        "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):\n"
        f"        main(['score', 'hybridqa', '-g', {str(gold)!r}, '-p', {str(predictions)!r},"
        "])\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, out.getvalue()\n"
        "assert 'hybridqa' in out.getvalue(), out.getvalue()"
    )
    loaded = roots(modules_after(code))
    assert "hopscore" in loaded and "msgspec" in loaded and "typer" in loaded
    assert loaded.isdisjoint({"pydantic", *HEAVY})
