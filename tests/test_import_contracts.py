"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and each kind can fail.

import-linter reads a package from disk by its import name; the tree keeps app/, widgets/
and models/ at the top level (the product card), so the tests build a ``narrative_debugger``
folder in a temporary directory whose parts link to the repository's (or copy them, where a
test adds a module that breaks a contract).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("app", "widgets", "models", "resources", "sample_saves")
LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]


def _tree(base: Path, copied: tuple[str, ...] = ()) -> Path:
    package = base / "narrative_debugger"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for part in PARTS:
        if part in copied:
            shutil.copytree(ROOT / part, package / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (package / part).symlink_to(ROOT / part, target_is_directory=True)
    shutil.copy(ROOT / "pyproject.toml", base / "pyproject.toml")
    return base


def _lint(base: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(base), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([*LINT, "--no-cache"], cwd=base, env=env, capture_output=True, text=True, timeout=120)


def test_every_contract_is_kept(tmp_path):
    result = _lint(_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert result.stdout.count("KEPT") == 7


def test_each_contract_breaks_when_an_import_crosses_it(tmp_path):
    base = _tree(tmp_path, copied=("app", "widgets", "models"))
    package = base / "narrative_debugger"
    # Each line below crosses one contract; the function-level import counts too.
    (package / "models" / "bad_qt.py").write_text("def f():\n    import PySide6.QtCore\n")
    (package / "models" / "bad_layer.py").write_text("from narrative_debugger.widgets.kit import tables\n")
    (package / "widgets" / "kit" / "bad_kit.py").write_text("from narrative_debugger.widgets.timelines import view\n")
    (package / "widgets" / "docks" / "bad_sibling.py").write_text("from narrative_debugger.widgets.prompt import parts\n")
    (package / "app" / "workers" / "bad_app.py").write_text("from narrative_debugger.app.window import layout\n")
    (package / "widgets" / "kit" / "roles.py").write_text(
        (package / "widgets" / "kit" / "roles.py").read_text() + "\ndef _cycle():\n    from narrative_debugger.widgets.kit import tables\n"
    )
    result = _lint(base)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = [line.removesuffix(" BROKEN") for line in result.stdout.splitlines() if line.endswith(" BROKEN")]
    assert sorted(broken) == sorted([
        "Layers: app above widgets above models",
        "The app's parts: the command line above the window above the workers",
        "models is pure Python: no Qt",
        "A view package never imports a sibling view package",
        "kit is shared: it imports no view package",
        "No import cycles in app or widgets, at any level",
    ])


def test_every_view_package_is_in_the_independence_contracts():
    """A new package under widgets/ (a view's) is held independent of its siblings, and
    kit may not import it: both lists of pyproject.toml name it."""
    import tomllib

    contracts = {c["name"]: c for c in tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]}
    views = {f"narrative_debugger.widgets.{init.parent.name}" for init in (ROOT / "widgets").glob("*/__init__.py") if init.parent.name != "kit"}
    for name, key in (("A view package never imports a sibling view package", "modules"), ("kit is shared: it imports no view package", "forbidden_modules")):
        missing = sorted(views - set(contracts[name][key]))
        assert not missing, f"add {missing} to `{key}` of the contract {name!r} in pyproject.toml [tool.importlinter]"
