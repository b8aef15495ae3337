"""Tests never read outside the repository (issue 35): the guard of tests/conftest.py
fails a test that opens or lists a path outside it, and lets the usual places be."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from tests.conftest import OPEN_GUARD, ROOT
from tests.support.open_guard import OpenGuard

#: No machine has it, and it is outside every allowed place.
OUTSIDE = "/nonexistent-outside-the-repository/docs/checks.md"


def test_the_allowed_places():
    guard = OpenGuard(ROOT)
    assert guard.allows(str(ROOT / "tests" / "data" / "checks.md"))
    assert guard.allows(str(ROOT / "sample_saves" / ".." / "README.md"))
    assert guard.allows(os.path.join(tempfile.gettempdir(), "pytest-of-someone", "x.json"))
    assert guard.allows(os.path.join(sysconfig.get_paths()["stdlib"], "json", "__init__.py"))
    assert guard.allows("/proc/self/status") and guard.allows("/dev/null") and guard.allows("/etc/fonts/fonts.conf")
    assert not guard.allows(OUTSIDE)
    # A sibling of the repository is outside it. The checkout may itself sit in an allowed
    # place (a clone under /tmp), so this is asked of a repository where nothing else is allowed.
    elsewhere = OpenGuard(Path("/nonexistent-checkouts/repo"))
    assert elsewhere.allows("/nonexistent-checkouts/repo/tests/data/checks.md")
    assert not elsewhere.allows("/nonexistent-checkouts/repo-other/README.md")
    assert not elsewhere.allows("/nonexistent-checkouts/repo/../shared/docs/checks.md")


def test_the_running_guard_notes_a_read_outside_and_not_one_inside():
    assert OPEN_GUARD.armed
    (ROOT / "README.md").read_bytes()
    os.listdir(ROOT / "tests")
    assert OPEN_GUARD.outside == []
    try:
        open(OUTSIDE, encoding="utf-8")  # noqa: SIM115 (the open itself is what is watched)
    except OSError:
        pass
    assert OPEN_GUARD.take() == [OUTSIDE]  # taken back here, so this test passes


def test_a_test_that_reads_outside_fails(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_reader.py").write_text(
        "import os\n\n"
        "def test_inside():\n"
        f"    os.listdir({str(ROOT)!r})\n\n"
        "def test_outside():\n"
        "    try:\n"
        f"        open({OUTSIDE!r}).close()\n"
        "    except OSError:\n"
        "        pass\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "test_reader.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 failed, 1 passed" in run.stdout
    assert "test_reader.py::test_outside" in run.stdout and "outside the repository" in run.stdout and OUTSIDE in run.stdout
