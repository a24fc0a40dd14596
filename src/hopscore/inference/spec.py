"""How intervals are made: the settings of ``--ci``, ``--ci-level``, ``--resamples``, ``--seed``
and the clustering, recorded in every ``metrics.json`` (``ci_settings``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hopscore.defaults import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED
from hopscore.inference.ci import check_choice


@dataclass(frozen=True, slots=True)
class IntervalSpec:
    """How intervals are made (``--ci``, ``--ci-level``, ``--resamples``, ``--seed``)."""

    method: str = "auto"
    level: float = DEFAULT_LEVEL
    #: Monte Carlo replicates of the methods that resample; 0 turns intervals off
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    #: the name of the clustering (``--cluster FIELD`` or the cluster file), when clustered
    cluster: str | None = None

    def __post_init__(self) -> None:
        check_choice(self.method, self.level)

    @property
    def enabled(self) -> bool:
        return self.method != "none" and self.resamples > 0

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "level": self.level, "resamples": self.resamples,
                "seed": self.seed, "cluster": self.cluster}
