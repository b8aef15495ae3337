"""The command-line contract: commands, flags, JSON keys and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from narrative_debugger.models.rules.findings import TARGET_KINDS

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
CLEAN = ["evening.json", "walkaway-spiral.json", "abandoned-confrontation.json"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_check_clean_samples_exit_0_and_json_shape():
    out = cli("check", *(str(SAMPLES / n) for n in CLEAN), "--format", "json")
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert [Path(f["path"]).name for f in doc["files"]] == CLEAN
    assert all(f["findings"] == [] for f in doc["files"])


def test_check_qa_save_reports_at_least_8_codes_exit_1():
    out = cli("check", str(SAMPLES / "qa-faults.json"), "--format", "json")
    assert out.returncode == 1
    findings = json.loads(out.stdout)["files"][0]["findings"]
    assert set(findings[0]) == {"code", "severity", "message", "location", "tick", "target"}
    assert all(f["target"]["kind"] in TARGET_KINDS and isinstance(f["target"]["snapshot"], bool) for f in findings)
    assert len({f["code"] for f in findings}) >= 8
    text = cli("check", str(SAMPLES / "qa-faults.json"))
    assert text.returncode == 1 and "M002" in text.stdout and "error" in text.stdout


def test_check_unreadable_exit_2(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "settled-reach.save", "journal": [')
    out = cli("check", str(SAMPLES / "evening.json"), str(bad))
    assert out.returncode == 2
    assert "F001" in out.stdout and "broken.json" in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


def test_misuse_exit_2():
    assert cli("check").returncode == 2
    assert cli("state").returncode == 2


def test_state_json_contract():
    out = cli("state", str(SAMPLES / "walkaway-spiral.json"), "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) == {"tick", "npcs", "facts", "monologues"}
    kael = doc["npcs"]["kael-davan"]
    assert set(kael) == {"stable_id", "score", "level", "stress", "threshold", "walk_aways", "interactions"}
    assert kael["walk_aways"] > 0 and kael["level"] in {"Stranger", "Acquaintance", "Friend", "Good Friend", "Close Friend"}
    assert set(kael["interactions"][0]) == {"fact_id", "state", "started_tick", "ended_tick", "topics", "confrontation"}
    fact = next(iter(doc["facts"].values()))
    assert set(fact) == {"confidence", "source", "state", "acquired_tick"}
    line = next(iter(doc["monologues"].values()))
    assert set(line) == {"eligible", "failing"}


def test_state_at_earlier_tick_differs():
    late = json.loads(cli("state", str(SAMPLES / "walkaway-spiral.json")).stdout)
    early = json.loads(cli("state", str(SAMPLES / "walkaway-spiral.json"), "--tick", "0").stdout)
    assert early["tick"] == 0 and early["facts"] == {}
    assert len(late["facts"]) > 0


@pytest.mark.parametrize("args", [["--npc", "nobody"], ["--npc", "kael-davan", "--tick", "99999999999"], ["--npc", "kael-davan", "--encoding", "p50k_base"]])
def test_prompt_usage_errors_exit_2(args):
    out = cli("prompt", str(SAMPLES / "evening.json"), *args)
    assert out.returncode == 2
    assert out.stderr.startswith("narrative-debugger prompt:") and "Traceback" not in out.stderr


def test_prompt_json_contract_and_text():
    out = cli("prompt", str(SAMPLES / "evening.json"), "--npc", "lera-sessik", "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    for key in ("npc", "tick", "encoding", "budget", "total_tokens", "sections", "cards", "history"):
        assert key in doc
    assert doc["encoding"] == "cl100k_base"
    assert set(doc["history"]) == {"included", "total", "oldest_truncated"}
    text = cli("prompt", str(SAMPLES / "evening.json"), "--npc", "lera-sessik", "--encoding", "o200k_base")
    assert text.returncode == 0 and "whole prompt" in text.stdout and "o200k_base" in text.stdout


def test_unknown_command_exits_2_instead_of_opening_the_app():
    out = cli("chek", str(SAMPLES / "evening.json"))
    assert out.returncode == 2 and "unknown command" in out.stderr


@pytest.mark.parametrize("command", [["check", str(SAMPLES / "evening.json")], ["state", str(SAMPLES / "evening.json")], ["prompt", str(SAMPLES / "evening.json"), "--npc", "kael-davan"]])
def test_bad_content_folder_is_misuse(tmp_path, command):
    out = cli(*command, "--content", str(tmp_path / "nope"))
    assert out.returncode == 2 and "does not exist" in out.stderr
    afile = tmp_path / "f.yaml"
    afile.write_text("x: 1\n")
    out = cli(*command, "--content", str(afile))
    assert out.returncode == 2 and "is not a folder" in out.stderr


def test_text_output_survives_a_non_utf8_stdout():
    env = {"PYTHONIOENCODING": "ascii", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "app", "check", str(SAMPLES / "qa-faults.json")], capture_output=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 1 and b"Traceback" not in out.stderr


def test_state_warns_on_stderr_about_errors():
    out = cli("state", str(SAMPLES / "qa-faults.json"))
    assert out.returncode == 0 and "error finding" in out.stderr
    json.loads(out.stdout)


def test_screenshot_unwritable_out_is_a_message(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = cli("screenshot", str(SAMPLES / "walkaway-spiral.json"), "--out", str(blocker / "x.png"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    bad = cli("screenshot", str(SAMPLES / "walkaway-spiral.json"), "--out", str(tmp_path / "y.png"), "--size", "0x0")
    assert bad.returncode == 2 and "--size" in bad.stderr


@pytest.mark.parametrize("out, says", [
    ("/dev/null", "--out /dev/null: is a character device, not a PNG file or a folder"),
    ("/dev/full", "--out /dev/full: is a character device, not a PNG file or a folder"),
    ("/proc/x.png", "--out /proc/x.png: cannot write in the folder /proc"),
    ("", "argument --out: must name a PNG file or a folder"),
])
def test_screenshot_refuses_an_out_that_is_no_normal_file_or_folder(out, says):
    """Defect 10: /dev/null made /dev/null.png and .md; /proc named an internal temp file."""
    before = {p.name for p in Path("/dev").iterdir()}
    result = cli("screenshot", str(SAMPLES / "walkaway-spiral.json"), "--out", out)
    assert result.returncode == 2 and says in result.stderr, result.stderr
    assert ".tmp-" not in result.stderr and "Traceback" not in result.stderr
    assert {p.name for p in Path("/dev").iterdir()} == before


def test_screenshot_refuses_a_fifo_out(tmp_path):
    fifo = tmp_path / "shot.png"
    os.mkfifo(fifo)
    result = cli("screenshot", str(SAMPLES / "walkaway-spiral.json"), "--out", str(fifo))
    assert result.returncode == 2 and f"--out {fifo}: is a FIFO (named pipe)" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shot.png"]


def test_state_text_counts_interactions_in_the_right_number():
    """``1 interactions`` was printed for an NPC with one interaction."""
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.models.timeline.state_json import state_json

    play = Playthrough.open(SAMPLES / "walkaway-spiral.json")
    tick = next(t for t in play.index.ticks if any(len(n["interactions"]) == 1 for n in state_json(play, t)["npcs"].values()))
    out = cli("state", str(SAMPLES / "walkaway-spiral.json"), "--tick", str(tick), "--format", "text")
    assert out.returncode == 0, out.stderr
    assert ", 1 interaction\n" in out.stdout and "1 interactions" not in out.stdout
