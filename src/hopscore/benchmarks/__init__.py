"""The benchmark registry: name -> module, imported on first use.

The built-in benchmarks are listed in :data:`REGISTRY`; a third-party package adds one through
an entry point in the ``hopscore.benchmarks`` group (name = benchmark name, value =
``"module:Class"``). Entry points are read on the first call of :func:`names`, :func:`registry`
or :func:`get`, never at package import, and a plugin's module is imported only when its
benchmark is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

from hopscore.benchmarks.base import Benchmark
from hopscore.errors import HopscoreError

#: name -> "module:ClassName"; adding a benchmark is one module plus one line here.
REGISTRY: dict[str, str] = {
    "hotpotqa": "hopscore.benchmarks.hotpotqa:HotpotQA",
    "hybridqa": "hopscore.benchmarks.hybridqa:HybridQA",
    "2wikimultihopqa": "hopscore.benchmarks.twowiki:TwoWikiMultihopQA",
    "strategyqa": "hopscore.benchmarks.strategyqa:StrategyQA",
    "fermi": "hopscore.benchmarks.fermi:Fermi",
    "feverous": "hopscore.benchmarks.feverous:FEVEROUS",
    "quartz": "hopscore.benchmarks.quartz:QuaRTz",
    "bamboogle": "hopscore.benchmarks.bamboogle:Bamboogle",
    "musique": "hopscore.benchmarks.musique:MuSiQue",
    "frames": "hopscore.benchmarks.frames:Frames",
    "openqa": "hopscore.benchmarks.openqa:OpenQA",
    "hybrid-deep-research": "hopscore.benchmarks.hybrid_deep_research:HybridDeepResearch",
    "browsecomp-plus": "hopscore.benchmarks.browsecomp_plus:BrowseCompPlus",
}


#: the entry point group a third-party benchmark registers in
ENTRY_POINT_GROUP = "hopscore.benchmarks"

#: plugin name -> (target "module:Class", distribution name), read once
_plugins: dict[str, tuple[str, str]] | None = None


def _distribution(entry: Any) -> str:
    dist = getattr(entry, "dist", None)
    return str(getattr(dist, "name", None) or "an unknown distribution")


def plugins() -> dict[str, tuple[str, str]]:
    """The benchmarks third-party packages declare: name -> (``module:Class``, distribution).

    A plugin may not take a built-in benchmark's name, nor one another plugin already took:
    either is a :class:`HopscoreError` naming both distributions.
    """
    global _plugins
    if _plugins is None:
        from importlib.metadata import entry_points

        found: dict[str, tuple[str, str]] = {}
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            key, dist = entry.name.lower(), _distribution(entry)
            if key in REGISTRY:
                raise HopscoreError(
                    f"benchmark plugin {entry.name!r} (entry point {entry.name} = {entry.value} "
                    f"in distribution {dist!r}, group {ENTRY_POINT_GROUP!r}) takes the name of "
                    "a built-in benchmark; rename its entry point")
            if key in found and found[key][0] != entry.value:
                raise HopscoreError(
                    f"benchmark plugin {entry.name!r} is declared twice: by distribution "
                    f"{found[key][1]!r} ({found[key][0]}) and by {dist!r} ({entry.value}); "
                    "uninstall one of them")
            found[key] = (entry.value, dist)
        _plugins = found
    return _plugins


def registry() -> dict[str, str]:
    """Every benchmark: the built-ins, then the plugins, name -> ``module:Class``."""
    return {**REGISTRY, **{name: target for name, (target, _) in plugins().items()}}


def is_known(name: str) -> bool:
    """Whether ``name`` is a registered benchmark (a built-in's name reads no entry point)."""
    return name in REGISTRY or name in registry()


def names() -> list[str]:
    return list(registry())


#: other spellings people type, for "did you mean" (never accepted as names themselves)
_SPELLINGS = {"hotpot": "hotpotqa", "2wiki": "2wikimultihopqa", "twowiki": "2wikimultihopqa",
              "2wikimultihop": "2wikimultihopqa", "hybrid": "hybridqa", "strategy": "strategyqa",
              "fever": "feverous", "hdr": "hybrid-deep-research"}


def get(name: str) -> Benchmark[Any, Any]:
    """Instantiate a benchmark by name (case-insensitive)."""
    key = name.lower()
    if key in REGISTRY:  # a built-in: the plugins' entry points are not read (a plugin may not
        module_name, class_name = REGISTRY[key].split(":")  # take a built-in's name anyway)
        instance: Benchmark[Any, Any] = getattr(importlib.import_module(module_name),
                                                class_name)()
        return instance
    known = registry()
    if key not in known:
        import difflib

        close = difflib.get_close_matches(key, [*known, *_SPELLINGS], n=1, cutoff=0.6)
        hint = f"did you mean {_SPELLINGS.get(close[0], close[0])!r}? " if close else ""
        raise HopscoreError(f"unknown benchmark {name!r}; {hint}choose one of: "
                            f"{', '.join(known)}")
    cls = _load_plugin(key, *plugins()[key])
    instance = cls()
    return instance


def _load_plugin(name: str, target: str, dist: str) -> Any:
    """Import a plugin's class; any failure is a user error naming the distribution."""
    where = (f"benchmark plugin {name!r} (entry point {name} = {target} in distribution "
             f"{dist!r}, group {ENTRY_POINT_GROUP!r})")
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise HopscoreError(f"{where}: the value must be 'module:Class'")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a broken plugin is the user's to fix, not our bug
        raise HopscoreError(f"{where} could not be imported: "
                            f"{type(exc).__name__}: {exc}") from exc
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, Benchmark):
        raise HopscoreError(f"{where}: {module_name} has no Benchmark subclass {class_name!r}")
    return cls
