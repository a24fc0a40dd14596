"""Shared pieces of the model-run tests: what a prompt asks, gold answers, CLI arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hopscore import benchmarks
from tests.run.test_prompts import GOLDS

MODEL = "openai/test-model"


def asked(prompt: str) -> str:
    """The question (or claim) a prompt ends with: its last "Question:"/"Claim:" line."""
    for line in reversed(prompt.splitlines()):
        for label in ("Question: ", "Claim: "):
            if line.startswith(label):
                return line[len(label):].strip()
    raise AssertionError(f"no question in prompt: {prompt[-300:]!r}")


def gold_replies(name: str) -> dict[str, str]:
    """question -> a correct answer text, in the form the default prompt asks for."""
    bench = benchmarks.get(name)
    out = {}
    for example in bench.load_gold(GOLDS[name][0]):
        answer: Any = example.gold_answers()[0]
        if name == "strategyqa":
            answer = "yes" if example.answer else "no"  # type: ignore[attr-defined]
        elif name == "quartz":
            answer = example.answer_key  # type: ignore[attr-defined]
        out[example.question.strip()] = answer
    return out


def run_args(name: str, base_url: str, out: Path, cache: Path, *extra: str | Path) -> list[Any]:
    gold, options = GOLDS[name]
    args: list[Any] = ["run", name, "--gold", gold, "--model", MODEL, "--base-url", base_url,
                       "-o", out, "--cache-dir", cache, "--no-progress", "--resamples", "50"]
    for key, value in options.items():
        args += [f"--{key.replace('_', '-')}", value]
    return [*args, *extra]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
