"""Run the CLI in-process for the many bad-input cases (a few cases also go through run_cli)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopscore.launch import main


def cli_error(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    """Run ``hopscore ARGS`` expecting exit status 2; return stderr with whitespace collapsed."""
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    return " ".join(err.split())
