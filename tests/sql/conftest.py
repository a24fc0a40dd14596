"""Fixtures for the SQL tests: a database built here and a shared executor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore.sql.sandbox import SqlExecutor
from tests.sql.dbs import build_shop


@pytest.fixture(scope="session")
def shop_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding only ``shop.sqlite`` (tests check that no other file ever appears)."""
    root = tmp_path_factory.mktemp("dbroot")
    build_shop(root / "shop.sqlite")
    return root


@pytest.fixture(scope="session")
def shop_db(shop_root: Path) -> Path:
    return shop_root / "shop.sqlite"


@pytest.fixture(scope="session")
def executor() -> Iterator[SqlExecutor]:
    with SqlExecutor(2, kill_grace_s=1.0) as ex:
        yield ex
