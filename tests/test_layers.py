"""The package is layered: no import circles between modules, and none between packages.

Every import counts, wherever it stands (module top, inside a function, under
``TYPE_CHECKING``): a circle that only a deferred import closes is still a circle for the
reader. A *unit* is a top-level module (``hopscore.scores.scoring``) or a subpackage
(``hopscore.run``). ``hopscore/__init__.py`` is left out: it is the public face, which names the
API for type checkers and loads it lazily, and every module may read ``hopscore.__version__``.
docs/architecture.md describes the layers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import SRC

PACKAGE = SRC / "hopscore"


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imported(tree: ast.AST, known: dict[str, Path]) -> Iterator[str]:
    """The hopscore modules a file imports (``from a.b import c`` is ``a.b.c`` when that is a
    module, else ``a.b``)."""

    def owner(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "hopscore":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found = full if full in known else owner(node.module)
                if found:
                    yield found
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hopscore":
                    found = owner(alias.name)
                    if found:
                        yield found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(ast.parse(path.read_text(encoding="utf-8")), known)) - {name}
            for name, path in known.items()}


def unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def describe(found: list[list[str]], edges: dict[str, set[str]]) -> str:
    lines = []
    for component in found:
        members = set(component)
        ties = [f"{a} -> {b}" for a in component for b in sorted(edges.get(a, ())) if b in members]
        lines.append(", ".join(component) + ": " + "; ".join(ties))
    return "\n".join(lines)


def test_no_module_imports_itself_through_others() -> None:
    edges = {module: targets - {"hopscore"} for module, targets in graph().items()
             if module != "hopscore"}
    found = circles(edges)
    assert not found, "import circles:\n" + describe(found, edges)


def test_packages_form_layers() -> None:
    """A package never imports one that imports it back (through any of their modules)."""
    edges: dict[str, set[str]] = {}
    for module, targets in graph().items():
        if module == "hopscore":
            continue
        for target in targets:
            if target != "hopscore" and unit(target) != unit(module):
                edges.setdefault(unit(module), set()).add(unit(target))
    found = circles(edges)
    assert not found, "packages importing each other:\n" + describe(found, edges)


def test_the_checker_sees_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_reads_the_package_face() -> None:
    """``hopscore/__init__.py`` names the whole API, so it sits on top: a module that imported
    from it (``from hopscore import __version__``, ``import hopscore``) would import upwards.
    ``hopscore.version`` holds the version; ``from hopscore import benchmarks`` (a submodule)
    is fine."""
    known = modules()
    offenders = []
    for name, path in known.items():
        if name == "hopscore":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "hopscore":
                offenders += [f"{name}: from hopscore import {a.name}" for a in node.names
                              if f"hopscore.{a.name}" not in known]
            elif isinstance(node, ast.Import):
                offenders += [f"{name}: import hopscore" for a in node.names
                              if a.name == "hopscore"]
    assert not offenders, "\n".join(offenders)
