"""The rule registry is the one place a code is declared (issue 9, "One rule registry").

Every code emitted anywhere in the package is registered; every registered code is
emitted; every function that emits a code is the one its registry entry names, and
each named implementation exists and emits its code. The catalogue matches checks.md.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
from narrative_debugger.models.rules.catalogue import RULES, Severity

PACKAGE = Path(__file__).resolve().parent.parent
SOURCES = [p for folder in ("models", "app", "widgets") for p in (PACKAGE / folder).rglob("*.py")]
CODE_RE = re.compile(r"^[FKIRTJCM]\d{3}$")
EMITTERS = {"add", "finding", "bad"}
#: A copy of the shared docs' checks.md (tests read nothing outside the repository, issue 35):
#: a new code gets its row there, as in the docs.
CHECKS_MD = Path(__file__).resolve().parent / "data" / "checks.md"


def _emissions() -> list[tuple[str, str, str]]:
    """``(code, "module:qualname", file:line)`` for each call that emits a code literal."""
    found = []
    for path in SOURCES:
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        tree = ast.parse(path.read_text(), str(path))

        def visit(node, scope):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    # Nested functions belong to the function that defines them.
                    inner = scope if scope and not isinstance(node, ast.ClassDef) else [*scope, child.name]
                    visit(child, inner)
                    continue
                if isinstance(child, ast.Call) and child.args:
                    name = child.func.attr if isinstance(child.func, ast.Attribute) else getattr(child.func, "id", None)
                    first = child.args[0]
                    if name in EMITTERS and isinstance(first, ast.Constant) and isinstance(first.value, str) and CODE_RE.match(first.value):
                        found.append((first.value, f"{module}:{'.'.join(scope)}", f"{path.name}:{child.lineno}"))
                visit(child, scope)

        visit(tree, [])
    return found


EMISSIONS = _emissions()


def test_every_emitted_code_is_registered():
    assert EMISSIONS, "the scan found no emission at all"
    unknown = sorted({(code, where) for code, _, where in EMISSIONS if code not in RULES})
    assert not unknown


def test_every_registered_code_is_emitted_somewhere():
    emitted = {code for code, _, _ in EMISSIONS}
    assert sorted(set(RULES) - emitted) == []


def test_every_emitting_function_is_named_by_its_rule():
    """The entry leads to the code in one step: each function that emits a code is listed."""
    missing = sorted({(code, impl) for code, impl, _ in EMISSIONS if impl not in RULES[code].implementations})
    assert not missing


@pytest.mark.parametrize("code", sorted(RULES))
def test_each_implementation_exists_and_emits_its_code(code):
    rule = RULES[code]
    assert rule.implementations
    for k in range(len(rule.implementations)):
        source = inspect.getsource(rule.implementation(k))
        assert f'"{code}"' in source or (code == "F002" and "F002" in source), (code, rule.implementations[k])


def test_entries_are_complete():
    for rule in RULES.values():
        assert rule.title and rule.checks and rule.seed and rule.example and rule.lands, rule.code
        assert rule.example.startswith(rule.code), rule.code


def test_codes_and_severities_match_checks_md():
    rows = re.findall(r"^\| ([FKIRTJCM]\d{3}) \| (error|warning) \|", CHECKS_MD.read_text(encoding="utf-8"), re.M)
    documented = {code: Severity(sev) for code, sev in rows}
    registered = {code: rule.severity for code, rule in RULES.items()}
    missing = sorted(set(registered) - set(documented))
    assert not missing, (
        f"{missing} are in RULES but not in tests/data/checks.md (the copy of the shared checks.md): "
        "add a row `| CODE | severity | finds |` to its table"
    )
    assert documented == registered


def test_each_family_is_numbered_001_on_without_gaps():
    """New codes take the next number of their family (checks.md: codes never change meaning)."""
    families: dict[str, list[int]] = {}
    for code in RULES:
        families.setdefault(code[0], []).append(int(code[1:]))
    assert {f: sorted(n) for f, n in families.items()} == {f: list(range(1, len(n) + 1)) for f, n in families.items()}
