"""The SQL worker processes: no bytecode written, gone with their parent, Ctrl-C honoured."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import SRC
from tests.sql.dbs import build_shop


def test_workers_write_no_bytecode_into_the_package(tmp_path: Path) -> None:
    installed = tmp_path / "site"
    shutil.copytree(SRC / "hopscore", installed / "hopscore",
                    ignore=shutil.ignore_patterns("__pycache__"))
    db = build_shop(tmp_path / "shop.sqlite")
    script = ("from hopscore.sql.sandbox import SqlExecutor\n"
              "with SqlExecutor(1) as ex:\n"
              f"    assert ex.execute({str(db)!r}, 'SELECT count(*) FROM people').rows == [(6,)]\n")
    env = {**os.environ, "PYTHONPATH": str(installed), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    assert not list(installed.rglob("*.pyc")), list(installed.rglob("*.pyc"))
