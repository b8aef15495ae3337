"""Standard streams (issue 35, pattern 4): the command line with stdout or stderr closed,
on a full device, or read by a pipe that closes early. One clear line and exit 2 when
stdout cannot take the output; quiet and the computed status when the reader left;
silent with the same status when stderr is unavailable. Never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QA = str(ROOT / "sample_saves" / "qa-faults.json")  # has error findings: check exits 1
EVENING = str(ROOT / "sample_saves" / "evening.json")
CLI = [sys.executable, "-m", "narrative_debugger.app"]
STDOUT_MESSAGE = b"narrative-debugger: cannot write the output to stdout: "

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
needs_sh = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh to close descriptors")

#: (arguments, exit status when every stream works)
COMMANDS = [
    (["check", QA], 1),
    (["check", QA, "--format", "json"], 1),
    (["check", QA, "--format", "sarif"], 1),
    (["rules"], 0),
    (["state", EVENING, "--format", "text"], 0),
    (["--version"], 0),
    (["check", "--help"], 0),
]
IDS = [" ".join(Path(a).name for a in args) for args, _ in COMMANDS]
#: A smaller set for the combinations of both streams: a report, a listing, argparse.
FEW = [COMMANDS[0], COMMANDS[3], COMMANDS[5]]
FEW_IDS = [IDS[0], IDS[3], IDS[5]]


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}


def _sh(redirects: str, args: list[str]) -> subprocess.CompletedProcess:
    """Run the command line under sh with ``redirects`` applied to it (``>&-``, ``2>&-``, ...);
    what it writes to a stream left open comes back in ``stdout``/``stderr``."""
    return subprocess.run(["sh", "-c", f'exec "$@" {redirects}', "sh", *CLI, *args], capture_output=True, timeout=120, env=_env())


@pytest.mark.parametrize(("args", "status"), COMMANDS, ids=IDS)
def test_every_stream_working(args, status):
    """The baseline the other tests compare with."""
    result = subprocess.run([*CLI, *args], capture_output=True, timeout=120, env=_env())
    assert result.returncode == status, result.stderr
    assert result.stdout and b"Traceback" not in result.stderr


@needs_dev_full
@pytest.mark.parametrize(("args", "status"), COMMANDS, ids=IDS)
def test_stdout_on_a_full_device(args, status):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([*CLI, *args], stdout=full, stderr=subprocess.PIPE, timeout=120, env=_env())
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith(b"narrative-debugger: warning:")]
    assert lines == [STDOUT_MESSAGE + os.strerror(28).encode()], result.stderr  # ENOSPC


@needs_sh
@pytest.mark.parametrize(("args", "status"), COMMANDS, ids=IDS)
def test_stdout_closed(args, status):
    result = _sh(">&-", args)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith(b"narrative-debugger: warning:")]
    assert lines == [STDOUT_MESSAGE + b"it is closed"], result.stderr


@needs_sh
@needs_dev_full
@pytest.mark.parametrize(("args", "status"), FEW, ids=FEW_IDS)
@pytest.mark.parametrize("redirects", ["2>&- >/dev/full", "2>/dev/full >/dev/full", "2>&- >&-"])
def test_stderr_unavailable_too_is_silent_with_the_same_status(args, status, redirects):
    result = _sh(redirects, args)
    assert (result.returncode, result.stdout, result.stderr) == (2, b"", b"")


@needs_sh
@needs_dev_full
@pytest.mark.parametrize(("args", "status"), FEW, ids=FEW_IDS)
@pytest.mark.parametrize("redirects", ["2>&-", "2>/dev/full"])
def test_stderr_unavailable_alone_keeps_the_status(args, status, redirects):
    result = _sh(redirects, args)
    assert result.returncode == status and result.stdout, result.stderr
    assert result.stderr == b""


@pytest.mark.parametrize(("args", "status"), COMMANDS, ids=IDS)
def test_a_reader_that_left_before_the_output(args, status):
    """``| true``: the pipe's reader is gone before the first write. Quiet, and the
    status the command computed (README: "Standard streams")."""
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == status, err
    assert b"Traceback" not in err and b"Broken pipe" not in err and b"Exception ignored" not in err, err
    assert [line for line in err.splitlines() if not line.startswith(b"narrative-debugger: warning:")] == []


def test_a_reader_that_leaves_after_one_line():
    """``| head -1`` on output larger than a pipe holds: the rest is dropped quietly and
    ``check`` still exits 1 for its findings."""
    proc = subprocess.Popen([*CLI, "check", QA, EVENING, "--format", "sarif"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert first == b"{\n"
    assert proc.wait(timeout=120) == 1, err
    assert err == b"", err
