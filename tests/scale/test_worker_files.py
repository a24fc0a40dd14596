"""A Ray worker that prepares a run from other files than the driver (a node whose gold or
corpus differs) is told so as a user error, not a KeyError; checked here without Ray, on the
factory a worker builds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hopscore.engine import ChatBackend
from hopscore.errors import HopscoreError
from hopscore.run.run_job import RunWork
from hopscore.run.settings import RunSettings
from tests.conftest import FIXTURES


class Gate:
    def wrap(self, backend: ChatBackend) -> ChatBackend:
        return backend


def test_a_worker_without_the_drivers_example_says_its_files_differ() -> None:
    settings = RunSettings(benchmark="hotpotqa", gold=FIXTURES / "hotpotqa" / "dev_small.json",
                           model="openai/m", base_url="http://127.0.0.1:9/v1",
                           output_dir=Path("unused"), limit=2)

    async def go() -> None:
        built = await RunWork(settings).build(Gate())
        try:
            with pytest.raises(HopscoreError, match="other files than the driver"):
                await built.work(None, "a-key-this-worker-never-prepared")
        finally:
            await built.close()

    asyncio.run(go())
