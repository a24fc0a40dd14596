"""Judge presets: the prompt and verdict reader a benchmark declares by name
(:attr:`hopscore.benchmarks.base.Benchmark.judge_presets`), resolved for ``--judge-preset``.

Which prompt a judge gets (:func:`judge_prompt`):

* ``--judge-preset NAME``: the preset NAME of the benchmark being scored (``score --judge``),
  ``BENCHMARK/NAME`` of any benchmark, ``BENCHMARK`` for that benchmark's default preset, or
  ``builtin`` for the built-in prompt;
* no preset named: the benchmark's default preset (:attr:`Benchmark.judge_preset`) under
  ``score --judge``, the built-in prompt under ``hopscore judge``;
* ``--prompt-file FILE`` replaces the template (the user's override): alone, its replies are
  read by the four-field reader and no preset is recorded; with a preset named, the preset's
  reader reads them.

The preset's name (``BENCHMARK/NAME``) and the template's sha256 are recorded in every judged
row and summary, and are part of the rows' resume key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark
from hopscore.benchmarks.judge_presets import JudgePresetSpec
from hopscore.errors import HopscoreError
from hopscore.judge.prompt import BUILTIN, JudgePrompt


def known_presets(bench: Benchmark[Any, Any] | None = None) -> list[str]:
    """Every preset name ``--judge-preset`` takes: ``builtin``, then each benchmark's as
    ``BENCHMARK/NAME`` (with ``bench``: its own first, also by their bare names)."""
    names = [BUILTIN]
    if bench is not None:
        names += list(bench.judge_presets)
    for name in benchmarks.names():
        other = benchmarks.get(name)
        names += [f"{other.name}/{preset}" for preset in other.judge_presets]
    return names


def _unknown(name: str, bench: Benchmark[Any, Any] | None) -> HopscoreError:
    return HopscoreError(f"unknown judge preset {name!r}; known presets: "
                         + ", ".join(known_presets(bench)))


def find_preset(name: str, bench: Benchmark[Any, Any] | None = None
                ) -> tuple[Benchmark[Any, Any], str, JudgePresetSpec] | None:
    """``(benchmark, preset name, spec)`` of ``name``; None for ``builtin``."""
    if name == BUILTIN:
        return None
    if bench is not None and name in bench.judge_presets:
        return bench, name, bench.judge_presets[name]
    owner_name, _, preset = name.partition("/")
    if owner_name.lower() not in {n.lower() for n in benchmarks.names()}:
        raise _unknown(name, bench)
    owner = benchmarks.get(owner_name)
    preset = preset or owner.judge_preset
    if not preset:
        raise HopscoreError(f"benchmark {owner.name!r} declares no default judge preset; "
                            "known presets: " + ", ".join(known_presets(bench)))
    if preset not in owner.judge_presets:
        raise _unknown(name, bench)
    return owner, preset, owner.judge_presets[preset]


def preset_prompt(owner: Benchmark[Any, Any], name: str, spec: JudgePresetSpec) -> JudgePrompt:
    """The checked prompt of one declared preset, read from the benchmark's package data."""
    resource = owner.resource(spec.template)
    source = f"{owner.name}/{name} ({spec.template})"
    try:
        text = resource.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HopscoreError(f"judge preset {owner.name}/{name}: cannot read its template "
                            f"{spec.template!r} beside {owner.__module__}: {exc}") from None
    if spec.reader is not None:
        import importlib

        try:
            reader = getattr(importlib.import_module(spec.reader), "read_verdict", None)
        except ImportError as exc:
            reader, problem = None, f"cannot import {spec.reader!r}: {exc}"
        else:
            problem = f"module {spec.reader!r} has no function read_verdict"
        if not callable(reader):
            raise HopscoreError(f"judge preset {owner.name}/{name}: its verdict reader: "
                                f"{problem}")
    return JudgePrompt.from_text(text, source, preset=f"{owner.name}/{name}", reader=spec.reader)


def judge_prompt(preset: str | None, prompt_file: Path | None = None,
                 bench: Benchmark[Any, Any] | None = None) -> JudgePrompt:
    """The prompt a judge gets for ``--judge-preset`` (None: the default) and
    ``--prompt-file``, scoring ``bench`` (None: ``hopscore judge``); see the module docstring."""
    if preset is None and prompt_file is not None:
        return JudgePrompt.from_file(prompt_file)
    if preset is None:
        preset = (bench.judge_preset if bench is not None else "") or BUILTIN
    found = find_preset(preset, bench)
    if found is None:
        if prompt_file is not None:
            return JudgePrompt.from_file(prompt_file)
        return JudgePrompt.builtin()
    prompt = preset_prompt(*found)
    if prompt_file is None:
        return prompt
    user = JudgePrompt.from_file(prompt_file)
    return JudgePrompt(user.template, user.source, user.sha256, prompt.preset, prompt.reader)
