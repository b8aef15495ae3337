"""The import graph of app/, widgets/ and models/: acyclic (function-level imports included)
and layered (models imports neither widgets nor app; widgets does not import app).

Every ``import`` and ``from ... import`` in a module counts, wherever it sits (module top
or inside a function), so a cycle cannot hide behind a lazy import. ``from pkg import
name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``; importing
``a.b.c`` also runs ``a/b/__init__.py``, so it is an edge to each package on the way
that does not already contain the importer (a package's ``__init__`` listing its own
modules, like the command registry, is not a cycle). Imports under ``if TYPE_CHECKING:``
never run: the layer rule covers them, the cycle check does not.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "narrative_debugger"
LAYERS = ("models", "widgets", "app")  # lower first: a layer imports only itself and lower ones


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every .py under the three layers."""
    out = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST, type_only: bool = False):
    """(import node, whether it sits under ``if TYPE_CHECKING:``) for every import in ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_only
        elif isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.body:
                yield from _import_nodes(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _import_nodes(ast.Module(body=[child], type_ignores=[]), type_only)
        else:
            yield from _import_nodes(node, type_only)


def _imports(name: str, path: Path) -> tuple[set[str], set[str]]:
    """The project modules ``name`` imports when it runs, and those it imports for type checking only."""
    is_package = path.name == "__init__.py"
    own_packages = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 2 - (not is_package))}
    runtime, type_only = set(), set()
    for node, for_types in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:  # relative: resolve against this module's package
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module for alias in node.names]
        for target in targets:
            while target and target not in MODULES:  # import a.b.c of a name: the nearest module
                target = target.rpartition(".")[0]
            parts = target.split(".")
            ran = {".".join(parts[:k]) for k in range(1, len(parts) + 1)} & set(MODULES)
            (type_only if for_types else runtime).update(ran - own_packages - {name})
    return runtime, type_only - runtime


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}
GRAPH = {name: runtime for name, (runtime, _) in IMPORTS.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One concrete cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for component in components:  # the shortest way from one member back to itself (BFS)
        members = set(component)
        start = min(component)
        came_from: dict[str, str] = {}
        frontier = [start]
        while start not in came_from:
            reached = []
            for v in frontier:
                for w in sorted(graph[v] & members):
                    if w not in came_from:
                        came_from[w] = v
                        reached.append(w)
            frontier = reached
        path = [start]
        while (prev := came_from[path[-1]]) != start:
            path.append(prev)
        cycles.append([start, *reversed(path)])
    return cycles


def _short(module: str) -> str:
    return module.removeprefix(PACKAGE + ".")


def test_the_graph_sees_lazy_imports_packages_and_type_only_imports():
    assert len(MODULES) > 50
    screenshot = f"{PACKAGE}.app.commands.screenshot"
    assert f"{PACKAGE}.app.main_window" in GRAPH[screenshot]  # inside run()
    assert f"{PACKAGE}.app.commands" not in GRAPH[screenshot]  # its own package
    assert f"{PACKAGE}.app.commands" in GRAPH[f"{PACKAGE}.app.cli"]  # the registry runs on import
    assert f"{PACKAGE}.models.timeline.index" in IMPORTS[f"{PACKAGE}.models.timeline.state_view"][1]


def test_no_import_cycles_even_at_function_level():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(map(_short, c)) for c in cycles)


def test_layers_import_downwards_only():
    """models never imports widgets or app; widgets never imports app."""
    wrong = []
    for name, (runtime, type_only) in IMPORTS.items():
        targets = runtime | type_only
        layer = LAYERS.index(_short(name).split(".")[0])
        for target in sorted(targets):
            if LAYERS.index(_short(target).split(".")[0]) > layer:
                wrong.append(f"{_short(name)} imports {_short(target)}")
    assert not wrong, "\n".join(wrong)
