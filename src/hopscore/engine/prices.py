"""What a ledger cost: the dated price table shipped with hopscore (``prices.json`` beside this
module), overridden by a user's file, applied to a usage ledger (:mod:`hopscore.engine.ledger`).

Prices are US dollars per million tokens. A reply's cost is its uncached prompt tokens at the
input price, its cached prompt tokens at the cached-input price (the input price where the
table gives none), and its completion tokens, reasoning included, at the output price; the
batch discount comes off all of it for a batch run. A model the table does not name costs
``"unknown"``, never 0, and so does any sum it is part of.

A user's price file (``--prices FILE`` of run, agent, judge, compare and report, or
``HOPSCORE_PRICES``) has the shipped file's form,
``{"models": {"NAME": {"input": ..., "output": ..., "cached_input": ..., "batch_discount":
..., "as_of": ..., "source": ...}}}``; its entries replace the shipped ones of the same name.
A model is looked up by its name without the ``openai/`` or ``anthropic/`` prefix.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hopscore.engine.ledger import Tally, base_role
from hopscore.errors import InputError

UNKNOWN = "unknown"
#: the environment variable naming a user's price file
PRICES_ENV = "HOPSCORE_PRICES"
PER = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """One model's list prices in dollars per million tokens, with where they come from."""

    input: float
    output: float
    cached_input: float | None = None
    batch_discount: float = 0.0
    as_of: str = ""
    source: str = ""

    def cost(self, tally: Tally, *, batch: bool = False) -> float:
        cached = min(tally.cached_tokens, tally.prompt_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        dollars = ((tally.prompt_tokens - cached) * self.input + cached * cached_price
                   + tally.completion_tokens * self.output) / PER
        return dollars * (1.0 - self.batch_discount) if batch else dollars

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "cached_input": self.cached_input, "output": self.output,
                "batch_discount": self.batch_discount, "as_of": self.as_of,
                "source": self.source}


def _read(text: str, where: str) -> dict[str, Price]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(where, f"not JSON: {exc}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise InputError(where, 'a price file is {"models": {NAME: {"input": ..., '
                         '"output": ...}}}', field="models")
    out: dict[str, Price] = {}
    for name, entry in models.items():
        field = f"models.{name}"
        if not isinstance(entry, dict):
            raise InputError(where, "each model's prices are an object", field=field)
        values: dict[str, Any] = {}
        for key in ("input", "output", "cached_input", "batch_discount"):
            value = entry.get(key)
            required = key in ("input", "output")
            if value is None and not required:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 \
                    or (key == "batch_discount" and value > 1):
                what = "a fraction from 0 to 1" if key == "batch_discount" else \
                    "a number of dollars per million tokens, 0 or more"
                raise InputError(where, f"{key} must be {what}", field=f"{field}.{key}")
            values[key] = float(value)
        out[str(name)] = Price(**values, as_of=str(entry.get("as_of") or ""),
                               source=str(entry.get("source") or ""))
    return out


def shipped() -> dict[str, Price]:
    """The table shipped with hopscore."""
    text = resources.files("hopscore.engine").joinpath("prices.json").read_text("utf-8")
    return _read(text, "hopscore/engine/prices.json")


#: the price file a command's ``--prices`` named (:func:`use_file`), for every later load
_USER_FILE: list[Path] = []


def use_file(path: Path | None) -> None:
    """``--prices FILE``: the user's price file for the rest of the command (None: keep
    ``$HOPSCORE_PRICES``)."""
    _USER_FILE.clear()
    if path is not None:
        load(path)  # a bad file is refused before any work
        _USER_FILE.append(path)


def load(path: Path | None = None) -> dict[str, Price]:
    """The shipped table with a user's file over it: ``path``, else the command's
    ``--prices`` (:func:`use_file`), else ``$HOPSCORE_PRICES``."""
    table = shipped()
    given = path if path is not None else _USER_FILE[0] if _USER_FILE else (
        Path(os.environ[PRICES_ENV]) if os.environ.get(PRICES_ENV) else None)
    if given is not None:
        try:
            text = given.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(given, f"cannot read the price file: {exc.strerror or exc}"
                             ) from None
        table.update(_read(text, str(given)))
    return table


def model_name(spec: str) -> str:
    """``openai/gpt-4o`` -> ``gpt-4o`` (the table's names carry no provider)."""
    for prefix in ("openai/", "anthropic/"):
        if spec.startswith(prefix):
            return spec[len(prefix):]
    return spec


def ledger_cost(usage: Mapping[str, Tally], models: Mapping[str, str],
                prices: Mapping[str, Price], *, batch: bool = False) -> dict[str, Any]:
    """The cost block of a summary: each role's dollars (``"unknown"`` for a model the table
    does not name), the total, and the prices used. ``models`` names each role's model
    (``{"model": "openai/gpt-4o"}``); roles without tokens (tools) are not priced. A role's
    batch answers (``judge:batch``) are priced as its model at the batch discount."""
    roles: dict[str, float | str] = {}
    used: dict[str, Any] = {}
    for role, tally in usage.items():
        if role == "total" or (not tally.total_tokens and role not in models):
            continue
        base, batched = base_role(role)
        spec = models.get(base)
        price = None if spec is None else prices.get(model_name(spec))
        if price is None:
            roles[role] = UNKNOWN
            continue
        roles[role] = round(price.cost(tally, batch=batch or batched), 6)
        used[model_name(spec or "")] = price.to_json()
    known = [v for v in roles.values() if not isinstance(v, str)]
    total: float | str = UNKNOWN if len(known) < len(roles) else round(sum(known), 6)
    return {"currency": "USD", "roles": roles, "total": total if roles else 0.0,
            "batch": batch, "prices": used}


def per(cost: Any, count: float | None) -> float | str | None:
    """``cost`` per ``count`` (a correct answer, a point of the metric): ``"unknown"`` for an
    unknown cost, None when there is nothing to divide by."""
    if isinstance(cost, str):
        return UNKNOWN
    if cost is None or not count:
        return None
    return float(cost) / count
