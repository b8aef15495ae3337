"""The JSON of ``check``, ``state``, ``why``, ``diff`` and ``prompt`` stays byte-identical
to the golden files captured before the columnar core (issue 37, "Correctness is not
traded").

Each case of ``tests/data/golden/cli/cases.json`` runs the command line in process, in a
workspace built in a temporary folder (``tests/support/golden_cli.py``: the sample saves
and their content, generated saves with fixed seeds, bad saves), and must give the same
stdout byte for byte, the same exit status and the same stderr. An output that is meant
to change is written again with ``make golden``, and its diff read before it is committed.
"""

from __future__ import annotations

import difflib
import json

import pytest

from tests.support.golden import REGENERATE
from tests.support.golden_cli import CLI_GOLDEN, MANIFEST, SAMPLE_SAVES, build_workspace, cli_cases, read_manifest, run_cli

CASES = read_manifest()
COMMANDS = ("check", "state", "why", "diff", "prompt")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """The saves and content folders the cases read (built once for the module)."""
    return build_workspace(tmp_path_factory.mktemp("golden-cli"))


def expected_stdout(case: dict) -> str:
    """A case's golden stdout: its file's text, or nothing."""
    return (CLI_GOLDEN / case["stdout"]).read_bytes().decode("utf-8") if case["stdout"] else ""


def difference(name: str, case: dict, status: int, stdout: str, stderr: str) -> str | None:
    """What differs between a run of case ``name`` and its golden, in words (None: nothing).

    The words name the case, the command (run in the workspace), the first lines that
    differ and how to write the goldens again.
    """
    command = "narrative-debugger " + " ".join(case["argv"])
    problems = []
    expected = expected_stdout(case)
    if stdout.encode("utf-8") != expected.encode("utf-8"):
        diff = difflib.unified_diff(expected.splitlines(), stdout.splitlines(), "golden", "now", n=1, lineterm="")
        lines = list(diff)
        shown = "\n".join(lines[:30]) + ("\n…" if len(lines) > 30 else "")
        where = f"tests/data/golden/cli/{case['stdout']}" if case["stdout"] else "no output"
        problems.append(f"stdout differs from {where}:\n{shown or '(only in bytes the lines do not show)'}")
    if status != case["status"]:
        problems.append(f"exit status {status}, golden {case['status']}")
    if stderr != case["stderr"]:
        problems.append(f"stderr {stderr!r}, golden {case['stderr']!r}")
    if not problems:
        return None
    return f"case {name} ({command}): " + "; ".join(problems) + f"\nIf the change is meant: {REGENERATE}."


@pytest.mark.parametrize("name", list(CASES))
def test_output_is_byte_identical_to_the_golden(workspace, name):
    case = CASES[name]
    status, stdout, stderr = run_cli(case["argv"], workspace)
    problem = difference(name, case, status, stdout, stderr)
    if problem:
        pytest.fail(problem, pytrace=False)


def test_the_golden_cases_are_the_ones_golden_cli_makes(workspace):
    """cases.json is not stale: the same names and arguments as ``cli_cases``, and one
    file for each output, no other."""
    made = cli_cases(workspace)
    assert [(name, case["argv"]) for name, case in CASES.items()] == [(name, argv) for name, argv in made], \
        f"tests/data/golden/cli/cases.json is not what tests/support/golden_cli.py makes: {REGENERATE}"
    files = {p.name for p in CLI_GOLDEN.glob("*.json")} - {MANIFEST.name}
    assert files == {case["stdout"] for case in CASES.values() if case["stdout"]}, f"stray or missing golden files: {REGENERATE}"


def test_the_goldens_cover_each_command_and_kind_of_input():
    """Every command, every sample save, the generated saves (a crowd, planted faults, a
    fork) and bad saves are held; each output kept is JSON; all three exit statuses occur."""
    by_command: dict[str, list[str]] = {}
    for case in CASES.values():
        by_command.setdefault(case["argv"][0], []).append(" ".join(case["argv"]))
        assert "--format" in case["argv"] and case["argv"][case["argv"].index("--format") + 1] == "json"
    assert set(by_command) == set(COMMANDS)
    every = " ".join(" ".join(case["argv"]) for case in CASES.values())
    for needed in (*(f"sample_saves/{n}" for n in SAMPLE_SAVES), "generated/crowd12", "generated/faults", "generated/fork-b", "bad/"):
        assert needed in every, needed
    for state in ("--tick 0 ", "npc:", "fact:", "line:", "card:", "history:", "--content-b"):
        assert state in every, state
    assert {case["status"] for case in CASES.values()} == {0, 1, 2}
    for case in CASES.values():
        if case["stdout"]:
            json.loads(expected_stdout(case))


def test_a_changed_number_is_caught():
    """The comparison sees one digit changed, and says which case and how to write it again."""
    name = "evening.state.t151014"
    case = CASES[name]
    golden = expected_stdout(case)
    at = next(i for i, c in enumerate(golden) if c.isdigit() and golden[i - 1] == " ")
    changed = golden[:at] + str((int(golden[at]) + 1) % 10) + golden[at + 1:]
    assert difference(name, case, case["status"], golden, case["stderr"]) is None
    problem = difference(name, case, case["status"], changed, case["stderr"])
    assert problem and name in problem and "make golden" in problem and "state sample_saves/evening.json" in problem
    assert difference(name, case, 2, golden, case["stderr"]) is not None
    assert difference(name, case, case["status"], golden, case["stderr"] + "x") is not None
