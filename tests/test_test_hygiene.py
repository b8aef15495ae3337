"""The tests' own house rules (issue 36): they wait on signals and conditions, not on the
clock, and every main window comes from conftest's ``open_window`` (settings under the
test's tmp_path, restored afterwards)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: Issue 36's bound on fixed waits outside the benchmarks (25 when it was set; 2 now:
#: two Ctrl+C timings in test_cli_hostile).
MOST_FIXED_WAITS = 2


def fixed_waits(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, call)`` for each ``time.sleep``, ``sleep`` imported from time,
    ``qtbot.wait`` and ``qWait`` call in ``tree``."""
    from_time = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "time" for a in n.names}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (f.value.id, f.attr) in {("time", "sleep"), ("qtbot", "wait")}:
            found.append((node.lineno, f"{f.value.id}.{f.attr}"))
        elif isinstance(f, ast.Attribute) and f.attr == "qWait":
            found.append((node.lineno, "qWait"))
        elif isinstance(f, ast.Name) and f.id == "sleep" and "sleep" in from_time:
            found.append((node.lineno, "sleep"))
    return sorted(found)


def windows_made(tree: ast.AST) -> list[int]:
    """Lines that call ``MainWindow(...)``."""
    return sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
                  and ((isinstance(n.func, ast.Name) and n.func.id == "MainWindow")
                       or (isinstance(n.func, ast.Attribute) and n.func.attr == "MainWindow")))


def window_fixtures(tree: ast.AST) -> list[int]:
    """Lines of fixtures named ``window``."""
    def is_fixture(d: ast.expr) -> bool:
        d = d.func if isinstance(d, ast.Call) else d
        return isinstance(d, ast.Attribute) and d.attr == "fixture" or isinstance(d, ast.Name) and d.id == "fixture"

    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "window" and any(map(is_fixture, n.decorator_list))]


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "benchmarks" not in p.relative_to(TESTS).parts and p != Path(__file__).resolve())


def _parsed() -> dict[Path, ast.AST]:
    return {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in _test_files()}


def test_few_fixed_waits_outside_the_benchmarks():
    waits = [f"{p.name}:{line}: {call}" for p, tree in _parsed().items() for line, call in fixed_waits(tree)]
    assert len(waits) <= MOST_FIXED_WAITS, (
        f"{len(waits)} fixed waits in the tests (at most {MOST_FIXED_WAITS}): wait for what the wait is for "
        "(qtbot.waitSignal, qtbot.waitUntil on the state asserted, a held threading.Event):\n" + "\n".join(waits))


def test_main_windows_and_the_window_fixture_come_from_conftest():
    conftest = TESTS / "conftest.py"
    made = [f"{p.name}:{line}" for p, tree in _parsed().items() if p != conftest for line in windows_made(tree)]
    assert not made, "MainWindow made outside conftest (use the open_window or window fixture):\n" + "\n".join(made)
    fixtures = [f"{p.name}:{line}" for p, tree in _parsed().items() for line in window_fixtures(tree)]
    assert fixtures == [f"conftest.py:{window_fixtures(ast.parse(conftest.read_text(encoding='utf-8')))[0]}"], fixtures


def test_the_counts_see_what_they_look_for():
    tree = ast.parse(
        "import time\n"
        "from time import sleep\n"
        "import pytest\n"
        "@pytest.fixture()\n"
        "def window(qtbot):\n"
        "    w = MainWindow()\n"
        "    time.sleep(0.1)\n"
        "    sleep(1)\n"
        "    qtbot.wait(50)\n"
        "    QTest.qWait(5)\n"
        "    qtbot.waitUntil(lambda: True)\n"       # a condition: not counted
        "    qtbot.waitSignal(w.destroyed)\n"       # a signal: not counted
        "    return app.MainWindow(persist=False)\n"
        "def helper():\n"
        "    def window():\n        pass\n"          # not a fixture
    )
    assert fixed_waits(tree) == [(7, "time.sleep"), (8, "sleep"), (9, "qtbot.wait"), (10, "qWait")]
    assert windows_made(tree) == [6, 13]
    assert window_fixtures(tree) == [5]
