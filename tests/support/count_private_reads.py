"""Count the tests' reads of private attributes (issue 36: tests assert public behaviour).

Run from the repository root::

    python -m tests.support.count_private_reads        # per file, then the total
    python -m tests.support.count_private_reads -v     # every read with its line

What counts as one read, in every ``tests/**/*.py`` outside ``tests/benchmarks/`` (benchmarks
time internals on purpose) and ``tests/support/savegen/`` (the save generator, not a test):

- an attribute loaded by name ``obj._name`` (one leading underscore; dunders are not private);
- a name passed as a string to ``getattr``, ``setattr``, ``hasattr``, ``delattr`` (also
  ``monkeypatch.setattr(obj, "_name", ...)``).

Not counted: the file's own classes reading their own names (``self._x``/``cls._x`` where the
file sets ``self._x`` or defines ``_x``), the public API that happens to start with an
underscore in the standard library (namedtuple's ``_replace``/``_asdict``/``_fields``/``_make``,
``sys._getframe``, ``os._exit``), and the few private names of pyqtgraph that the product
overrides or reads on purpose (``THIRD_PARTY``: not the project's objects; the test that
reads them guards the pyqtgraph cap in pyproject.toml). Writes (``obj._x = 1``) are not
reads and are not counted.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

#: Underscore names that are public API of the standard library.
STDLIB_PUBLIC = frozenset({"_replace", "_asdict", "_fields", "_make", "_getframe", "_exit"})
#: pyqtgraph's private names that widgets/timelines and the tests read on purpose
#: (``test_packaging.test_pyqtgraph_internals_the_timelines_override_still_exist``).
THIRD_PARTY = frozenset({"_getDisplayDataset", "_dataset", "_tickLevels"})
#: Functions whose second argument names an attribute.
BY_NAME = frozenset({"getattr", "setattr", "hasattr", "delattr"})
SKIPPED_DIRS = frozenset({"benchmarks", "savegen"})


def _is_private(name: str) -> bool:
    return (name.startswith("_") and not name.startswith("__") and name not in STDLIB_PUBLIC
            and name not in THIRD_PARTY)


def _own_names(tree: ast.AST) -> set[str]:
    """Names the file defines: functions, methods, classes, assigned names, ``self._x`` it sets."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
    return names


def private_reads(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` for each private read in one test module's ``source``, by line."""
    tree = ast.parse(source)
    own = _own_names(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            mine = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls") and node.attr in own
            if _is_private(node.attr) and not mine:
                found.append((node.lineno, node.attr))
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            name = node.args[1]
            if (
                called in BY_NAME
                and isinstance(name, ast.Constant)
                and isinstance(name.value, str)
                and _is_private(name.value)
                and name.value not in own
            ):
                found.append((node.lineno, f"{name.value} (by name)"))
    return sorted(found)


def count(tests: Path) -> dict[Path, list[tuple[int, str]]]:
    """Private reads per test file under ``tests`` (files without any are left out)."""
    per_file = {}
    for path in sorted(tests.rglob("*.py")):
        if SKIPPED_DIRS.intersection(path.relative_to(tests).parts):
            continue
        reads = private_reads(path.read_text(encoding="utf-8"))
        if reads:
            per_file[path] = reads
    return per_file


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    tests = Path(__file__).resolve().parent.parent
    per_file = count(tests)
    for path, reads in per_file.items():
        print(f"{len(reads):4d}  {path.relative_to(tests.parent)}")
        if verbose:
            for line, name in reads:
                print(f"          {line}: {name}")
    total = sum(len(reads) for reads in per_file.values())
    print(f"{total} private reads in {len(per_file)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
