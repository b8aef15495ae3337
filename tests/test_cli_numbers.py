"""Whole-number flags of the command line (issue 35, pattern 1): ``--tick``, ``--limit``
and ``--jobs`` take ASCII digits of their type through ``boundary.parse_int``. A bad one
is one line on stderr naming the flag, exit 2, never argparse's usage block, a
traceback, or a silently accepted '５' or '5_000'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from narrative_debugger.app.cli.main import main

SAMPLES = Path(__file__).resolve().parent.parent / "sample_saves"
EVENING = str(SAMPLES / "evening.json")

BAD_TICKS = [
    ("５", "'５' (U+FF15) is not an ASCII digit 0-9"),
    ("٣", "'٣' (U+0663) is not an ASCII digit 0-9"),
    ("5_000", "'_' is not an ASCII digit 0-9"),
    (" 5", "white space"),
    ("5 ", "white space"),
    ("+5", "the sign '+'"),
    ("-1", "it is negative"),
    ("0x10", "'x' (U+0078)"),
    ("", "it is empty"),
    ("9" * 5000, "5000 characters long"),
    ("18446744073709551616", "outside 0..18446744073709551615"),
]

COMMANDS = {
    "state": [EVENING],
    "prompt": [EVENING, "--npc", "kael-davan"],
    "why": [EVENING, "npc:kael-davan.stress"],
    "diff": [EVENING, EVENING],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("text, why", BAD_TICKS, ids=[repr(t[:8]) for t, _ in BAD_TICKS])
def test_a_bad_tick_is_one_line_and_exit_2(capsys, command, text, why):
    assert main([command, *COMMANDS[command], "--tick", text]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and "usage:" not in err and "Traceback" not in err, err
    assert err.startswith(f"narrative-debugger {command}: --tick: ") and why in err, err
    assert len(err) < 250


@pytest.mark.parametrize(
    "args, says",
    [
        (["why", EVENING, "npc:kael-davan.stress", "--limit", "-1"], "narrative-debugger why: --limit: '-1' is not a u32: it is negative"),
        (["why", EVENING, "npc:kael-davan.stress", "--limit", "１"], "narrative-debugger why: --limit: '１' is not a u32"),
        (["check", EVENING, "--jobs", "0"], "narrative-debugger check: --jobs must be 1 or more, not 0"),
        # Trial 50, 12: '-1' said "a u32 is 0 or more", and 0 is refused too.
        (["check", EVENING, "--jobs", "-1"], "narrative-debugger check: --jobs must be 1 or more, not -1"),
        (["corpus", EVENING, "--out", "never-made", "-j", "-1"], "narrative-debugger corpus: --jobs must be 1 or more, not -1"),
        (["corpus", EVENING, "--out", "never-made", "--jobs", "0"], "narrative-debugger corpus: --jobs must be 1 or more, not 0"),
        (["check", EVENING, "--jobs", "2_0"], "narrative-debugger check: --jobs: '2_0' is not a u32"),
        (["check", EVENING, "-j", "4294967296"], "narrative-debugger check: --jobs: '4294967296' is not a u32: it is outside 0..4294967295"),
    ],
)
def test_other_number_flags(capsys, args, says):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(says) and err.count("\n") == 1, err


def test_the_app_tick_flag_is_checked_before_any_window(capsys):
    assert main([EVENING, "--tick", "٣"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("narrative-debugger: --tick: '٣' is not a u64") and err.count("\n") == 1


def test_good_ticks_still_work(capsys):
    assert main(["state", EVENING, "--tick", "0100", "--format", "text"]) == 0
    assert "100" in capsys.readouterr().out
    assert main(["diff", EVENING, EVENING, "--tick", "18446744073709551615"]) == 2  # in type, past the save: its own message
    assert "--tick 18446744073709551615 is beyond the end of the save" in capsys.readouterr().err


def test_a_5000_digit_tick_from_the_console_script_has_no_traceback():
    result = subprocess.run([sys.executable, "-m", "narrative_debugger.app", "state", EVENING, "--tick", "9" * 5000], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("narrative-debugger state: --tick: ") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("size, said", [
    ("１２８０x800", "must look like 1280x800"), ("1_280x800", "must look like 1280x800"), ("1280x-800", "must look like 1280x800"),
    # Digits that look like a size but are out of its range say so (trial 47: "must look like 1280x800").
    ("9" * 5000 + "x800", "must be between 200x200 and 8000x8000"), ("18446744073709551615x10", "must be between 200x200 and 8000x8000"),
])
def test_screenshot_size_takes_ascii_digits(capsys, tmp_path, size, said):
    assert main(["screenshot", EVENING, "--out", str(tmp_path), "--size", size]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"narrative-debugger screenshot: --size {said}") and len(err) < 250, err
    assert not any(tmp_path.iterdir())
