"""The command line against hostile inputs and signals (issue 8 §3, §7): no traceback,
no hang, the documented exit status and a message naming the file once."""

from __future__ import annotations

import contextlib
import copy
import gzip
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.app.cli.desktop import EXIT_INTERRUPTED, SigintQuit, no_display_reason

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
RAW = (DATA / "minimal.json").read_bytes()
SAMPLES = ROOT / "sample_saves"


def _env(**changes):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def _run(*args, env=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "narrative_debugger.app", *args], capture_output=True, text=True, timeout=timeout, env=env)


def _hostile_files(tmp_path: Path) -> dict[str, Path]:
    """Every kind of bad save we could think of, by name."""
    files: dict[str, bytes] = {
        "empty.json": b"",
        "null.json": b"null",
        "list.json": b"[]",
        "number.json": b"1e400",
        "string.json": b'"settled-reach.save"',
        "truncated.json": RAW[:300],
        "bom.json": b"\xef\xbb\xbf" + RAW,
        "latin1.json": RAW.replace(b"Cargo", b"Carg\xf6"),
        "nan.json": RAW.replace(b'"score": 0.0', b'"score": NaN'),
        "deep.json": b"[" * 200_000 + b"]" * 200_000,
        "bigint.json": RAW.replace(b'"world_seed": 8812', b'"world_seed": ' + b"9" * 100_000),
        "lone.json": RAW.replace(b"Cargo's late again.", b"\\\\\\ud800"),
        "dup.json": RAW.replace(b'"game_version": "0.7.2"', b'"game_version": "0.7.2", "game_version": "0.7.3"'),
        "nul.json": RAW.replace(b"Cargo", b"Car\x00go"),
        "notgz.json.gz": RAW,
        "cutgz.json.gz": gzip.compress(RAW)[:-10],
        "twogz.json.gz": gzip.compress(RAW[:500]) + gzip.compress(RAW[500:]),
        "trailgz.json.gz": gzip.compress(RAW) + b"junk",
        "wrongformat.json": RAW.replace(b"settled-reach.save", b"other.save"),
        "newer.json": RAW.replace(b'"format_version": 1', b'"format_version": 99'),
        "bad-shapes.json": json.dumps({**json.loads(RAW), "npcs": [], "journal": {}, "player": None}).encode(),
        "u64-overflow.json": RAW.replace(b'"saved_at_tick": 170', b'"saved_at_tick": 18446744073709551616'),
        "huge-tick.json": RAW.replace(b'"saved_at_tick": 170', b'"saved_at_tick": 18446744073709551615'),
        # issue 35, pattern 1: conversions at trust boundaries
        "long-sequence.json": RAW.replace(b"kael-davan_001", b"kael-davan_" + b"1" * 5000),
        "long-npc-keys.json": RAW.replace(b'"17": {"slug"', b'"' + b"2" * 5000 + b'": {"slug": "b", "x": 1}, "' + b"1" * 5000 + b'": {"slug"'),
        "long-entity-key.json": RAW.replace(b'"entities": {}', b'"entities": {"' + b"3" * 5000 + b'": {}}'),
        "fullwidth-key.json": RAW.replace(b'"17": {"slug"', '"１７": {"slug"'.encode()),
        "utf16.json": RAW.decode("utf-8").encode("utf-16-le"),
        "utf32.json": RAW.decode("utf-8").encode("utf-32-be"),
        "u8.json": RAW.replace(b'"walk_away_threshold": 2', b'"walk_away_threshold": 300'),
        "i16.json": RAW.replace(b'"current_stress": 6, "threshold"', b'"current_stress": 60000, "threshold"'),
        "penalty-f32.json": RAW.replace(b'"walk_away_penalty": 0.3', b'"walk_away_penalty": 1e39'),
        "overflow.json": RAW.replace(b'"score": 0.0', b'"score": -1e400'),
    }
    out = {}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        out[name] = tmp_path / name
    folder = tmp_path / "folder.json"
    folder.mkdir()
    out["folder.json"] = folder
    out["missing.json"] = tmp_path / "missing.json"
    (tmp_path / "loop.json").symlink_to("loop.json")
    out["loop.json"] = tmp_path / "loop.json"
    escape = tmp_path / "esc\x1b[2Jape\u202e.json"
    escape.write_bytes(RAW.replace(b"kael-davan", b"kael\\u001b[31m"))
    out[escape.name] = escape
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.json")
        out["fifo.json"] = tmp_path / "fifo.json"
    if os.path.exists("/dev/zero"):
        (tmp_path / "zero.json").symlink_to("/dev/zero")
        out["zero.json"] = tmp_path / "zero.json"
    if os.path.exists("/dev/urandom"):
        (tmp_path / "random.json.gz").symlink_to("/dev/urandom")
        out["random.json.gz"] = tmp_path / "random.json.gz"
    return out


def test_check_on_every_hostile_file_in_one_run(tmp_path):
    """One subprocess checks them all: exit 2 (some unreadable), no traceback, each file
    reported with codes from checks.md, within the timeout (no hang)."""
    files = _hostile_files(tmp_path)
    result = _run("check", "--format", "json", *map(str, files.values()), timeout=120)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert [Path(f["path"]).name for f in report["files"]] == list(files)
    by_name = {Path(f["path"]).name: f["findings"] for f in report["files"]}
    codes = {name: {f["code"] for f in findings} for name, findings in by_name.items()}
    for name in ("loop.json", "empty.json", "truncated.json", "latin1.json", "nan.json", "deep.json", "bigint.json", "lone.json", "notgz.json.gz", "cutgz.json.gz", "trailgz.json.gz", "folder.json", "missing.json", "fifo.json", "zero.json", "random.json.gz"):
        if name in codes:
            assert codes[name] == {"F001"}, (name, by_name[name])
    for name in ("null.json", "list.json", "string.json"):
        assert codes[name] == {"F002"} and by_name[name][0]["location"] == "$"
    assert codes["wrongformat.json"] == {"F003"} and codes["newer.json"] == {"F003"}
    assert "F001" in codes["dup.json"] and "F002" in codes["bad-shapes.json"] and "F002" in codes["u64-overflow.json"]
    assert not any(f["code"] == "F001" for f in by_name["twogz.json.gz"])
    for name in ("utf16.json", "utf32.json"):
        assert codes[name] == {"F001"} and "not UTF-8" in by_name[name][0]["message"], by_name[name]
    assert "K003" in codes["long-sequence.json"]
    for name, path in (("long-npc-keys.json", "npcs."), ("long-entity-key.json", "player.knowledge.entities."), ("fullwidth-key.json", "npcs.")):
        assert any(f["code"] == "F002" and f["location"].startswith(path) and len(f["location"]) < 100 for f in by_name[name]), by_name[name]
    for name, path in (("u8.json", "npcs.17.interaction_tolerance.walk_away_threshold"), ("i16.json", "npcs.17.tolerance.current_stress"),
                       ("penalty-f32.json", "npcs.17.interaction_tolerance.walk_away_penalty"), ("overflow.json", "npcs.17.relationship.score")):
        assert any(f["code"] == "F002" and f["location"] == path for f in by_name[name]), by_name[name]
    for findings in by_name.values():
        for f in findings:
            assert set(f) >= {"code", "severity", "message", "location"}
            assert f["location"], f


EXTRA_ARGS = {"state": [], "prompt": ["--npc", "kael-davan"], "why": ["npc:kael-davan.stress"], "diff": []}


@pytest.mark.parametrize("command", sorted(EXTRA_ARGS))
def test_query_commands_on_every_hostile_file(tmp_path, capsys, command):
    """In-process (no interpreter start per file): never an exception, exit 0, 1 (diff
    found differences) or 2, an unreadable save said once on stderr, and no control
    character from a name or file name reaches the terminal."""
    for name, path in _hostile_files(tmp_path).items():
        status = main([command, str(path), *EXTRA_ARGS[command]])
        out, err = capsys.readouterr()
        assert status in (0, 1, 2), (name, status, err)
        if status == 2:
            assert err.splitlines()[-1].startswith(f"narrative-debugger {command}: "), (name, err)
            assert f"{path.name}: {path.name}" not in err and "Traceback" not in err, err
        assert "\x1b" not in err and "\u202e" not in err, (name, err)
        if command == "state" and status == 0:  # JSON by default: strict, never NaN or Infinity
            json.loads(out, parse_constant=lambda constant: pytest.fail(f"{name}: {constant} in state output"))


def test_whatif_reads_a_patch_file_as_guardedly_as_a_save(tmp_path, capsys):
    """New-user trial, stop 44: ``--patch /dev/zero`` read until the machine ran out of
    memory, a FIFO blocked for ever, a deeply nested patch gave a traceback. Every
    hostile file is now refused with its name and line:col (exit 2), or is a patch."""
    save = str(SAMPLES / "evening.json")
    refused = {"empty.json", "truncated.json", "deep.json", "latin1.json", "nan.json", "dup.json", "utf16.json", "fifo.json",
               "zero.json", "folder.json", "missing.json", "loop.json", "bigint.json", "notgz.json.gz", "random.json.gz"}
    for name, path in _hostile_files(tmp_path).items():
        status = main(["whatif", save, "--patch", str(path)])
        out, err = capsys.readouterr()
        assert "Traceback" not in err, (name, err)
        if name in refused:
            assert status == 2, (name, status, err)
            line = err.strip().splitlines()[-1]
            assert line.startswith("narrative-debugger whatif: --patch ") and " (at " in line and path.name in line, (name, line)
        else:  # valid JSON: a list is a patch (the empty one changes nothing), anything else is not
            assert status in (0, 2), (name, status, err)


def test_terminal_safe_output():
    from narrative_debugger.app.cli.terminal import terminal_safe

    assert terminal_safe("a\x1b[2Jb\rc\u202ed\te\nf\x85") == "a\\u001b[2Jb\\u000dc\\u202ed\te\nf\\u0085"
    assert json.loads(terminal_safe(json.dumps({"k": "x\u202e\x85"}, ensure_ascii=False))) == {"k": "x\u202e\x85"}


def test_unreadable_save_message_names_the_file_once(tmp_path):
    result = _run("state", str(tmp_path / "evening.json"))
    assert result.returncode == 2
    assert result.stderr.strip() == f"narrative-debugger state: F001 at 1:1: {tmp_path / 'evening.json'}: cannot be read (No such file or directory)"
    check = _run("check", str(tmp_path / "evening.json"))
    assert check.stdout.count("evening.json") == 2  # the header and the message, never "evening.json: evening.json"
    assert "evening.json: evening.json" not in check.stdout


@pytest.mark.parametrize("path, kind", [("/dev/zero", "is a character device"), (".", "is a folder")])
def test_refused_save_message_names_the_path_as_given(path, kind):
    """Defect 6: the bare name of /dev/zero ("zero") or of "." ("") does not say which file."""
    result = _run("check", path)
    assert result.returncode == 2
    assert f"{path}: {kind}, not a regular file; not read" in result.stdout, result.stdout
    assert f"\n          {path}: {kind}" in result.stdout


@pytest.fixture(scope="module")
def big_save(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("big") / "big.json"
    subprocess.run(
        [sys.executable, "-m", "tests.support.savegen", "--scenario", "large", "--events", "50000", "--seed", "11", "--out", str(out)],
        check=True, cwd=ROOT, capture_output=True, timeout=300,
    )
    return out


@contextlib.contextmanager
def _sigint_not_ignored():
    """While in it, children start with SIGINT at its default, as a terminal's foreground job.

    A handler never survives ``exec`` (the child starts with the default) but an ignored
    SIGINT does: pytest run as a background job of a script (``make test &``, nohup, some
    CI runners) has SIGINT ignored, and so would every command it starts, which then
    (rightly) keeps running on Ctrl+C. Our own disposition comes back on exit.
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _popen(args: list[str], **kwargs) -> subprocess.Popen:
    """A child that Ctrl+C reaches, whatever SIGINT disposition pytest was started with;
    its output unbuffered, so each result line arrives as it is printed."""
    env = {**kwargs.pop("env", os.environ), "PYTHONUNBUFFERED": "1"}
    with _sigint_not_ignored():
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kwargs)


def _checking(proc: subprocess.Popen) -> None:
    """Return once the command has printed its first file's result: it is checking, with
    the other files of the 200 still ahead."""
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    assert ready and proc.stdout.readline(), "the command printed no result"
    assert proc.poll() is None, "the command ended before it could be interrupted"


def _interrupt(proc: subprocess.Popen) -> tuple[str, str]:
    assert proc.poll() is None, "the command ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()  # never leave it running (and loading the machine) after the test
        proc.communicate()
        pytest.fail("the command kept running after Ctrl+C")


def test_children_start_with_sigint_delivered_even_when_pytest_ignores_it():
    """The Ctrl+C tests hold wherever pytest runs: with SIGINT ignored here (a background
    job), a child still starts with SIGINT delivered, and ours stays ignored."""
    probe = [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        out, _ = _popen(probe).communicate(timeout=60)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    assert out.strip() == "False"


def test_ctrl_c_during_check_exits_130_without_traceback(big_save):
    """check reads the big save 200 times over; Ctrl+C once the first is checked ends it at once."""
    proc = _popen([sys.executable, "-m", "narrative_debugger.app", "check", *[str(big_save)] * 200])
    _checking(proc)
    _, err = _interrupt(proc)
    assert proc.returncode == EXIT_INTERRUPTED
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip() == "narrative-debugger: interrupted"


@pytest.mark.parametrize("when", ["starting", "checking"])
def test_ctrl_c_at_a_terminal_stops_check_jobs_and_its_workers(big_save, when):
    """Ctrl+C at a terminal signals the whole process group: while starting (imports)
    or while two workers check. Exit 130 at once, no traceback from any process, and
    no worker left running (the pipes close, so communicate returns)."""
    proc = _popen([sys.executable, "-m", "narrative_debugger.app", "check", "--jobs", "2", *[str(big_save)] * 200], start_new_session=True)
    if when == "checking":
        _checking(proc)
    else:
        time.sleep(0.2)  # no sign marks "importing": the one moment only a clock can pick
    assert proc.poll() is None
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("check --jobs (or a worker) kept running after Ctrl+C")
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err and err.strip() == "narrative-debugger: interrupted"


def test_ctrl_c_twice_during_check_jobs_prints_one_line(big_save):
    """Defect 7: a second Ctrl+C while the workers stop (or threading's shutdown joins the
    executor's thread) must not print "Exception ignored in: <module 'threading'>"."""
    for _ in range(3):
        proc = _popen([sys.executable, "-m", "narrative_debugger.app", "check", "--jobs", "2", *[str(big_save)] * 200], start_new_session=True)
        _checking(proc)
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.05)  # the second Ctrl+C lands while the first one stops the workers
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail("check --jobs kept running after Ctrl+C")
        assert proc.returncode == EXIT_INTERRUPTED, err
        assert err == "narrative-debugger: interrupted\n", err


def test_ctrl_c_closes_the_app_cleanly(qtbot, tmp_path):
    """The window runs (offscreen); Ctrl+C closes it: exit 130, no traceback, no Qt abort."""
    env = _env(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = _popen([sys.executable, "-m", "narrative_debugger.app", str(SAMPLES / "evening.json")], env=env)
    # The window has shown the save once it is in the recent files of its settings.
    settings = tmp_path / "config" / "SettledReach" / "narrative-debugger.conf"
    qtbot.waitUntil(lambda: proc.poll() is not None or (settings.exists() and "evening.json" in settings.read_text(encoding="utf-8")), timeout=120_000)
    _, err = _interrupt(proc)
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err and "QThread: Destroyed" not in err, err


def test_sigint_quit_closes_windows_then_quits(qtbot):
    calls = []

    class App:
        def closeAllWindows(self):
            calls.append("close")

        def quit(self):
            calls.append("quit")

    before = signal.getsignal(signal.SIGINT)
    with SigintQuit(App(), poll_ms=20) as guard:
        assert not guard.interrupted
        os.kill(os.getpid(), signal.SIGINT)
        qtbot.waitUntil(lambda: calls == ["close", "quit"], timeout=3000)
        assert guard.interrupted
    assert signal.getsignal(signal.SIGINT) is before


def test_no_display_reason():
    if sys.platform.startswith(("win", "darwin", "cygwin")):
        pytest.skip("always has a display platform")
    assert "no display" in no_display_reason({})
    for key in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        assert no_display_reason({key: "x"}) is None


@pytest.mark.skipif(sys.platform.startswith(("win", "darwin", "cygwin")), reason="always has a display platform")
def test_open_report_and_app_without_display_say_so(tmp_path):
    from narrative_debugger.models.report.meta import REPORT_FORMAT_VERSION, ViewRecord, embed_record
    from tests.test_report_meta import tiny_png

    png = tmp_path / "report.png"
    save = SAMPLES / "evening.json"
    png.write_bytes(embed_record(tiny_png(), ViewRecord(REPORT_FORMAT_VERSION, save.name, "", str(save), "", 10, "", "knowledge")))
    result = _run("open-report", str(png), env=_env())
    assert result.returncode == 2 and "Traceback" not in result.stderr and "Aborted" not in result.stderr
    assert result.stderr.startswith("narrative-debugger open-report: no display to open a window on"), result.stderr
    app = _run(str(save), env=_env())
    assert app.returncode == 2 and app.stderr.startswith("narrative-debugger: no display"), app.stderr


def test_u64_ticks_in_state_and_prompt(tmp_path):
    doc = json.loads(RAW)
    doc = copy.deepcopy(doc)
    big = 2**64 - 1
    doc["saved_at_tick"] = big
    path = tmp_path / "late.json"
    path.write_text(json.dumps(doc))
    result = _run("state", str(path), "--tick", str(big))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_control_and_bidi_characters_from_a_save_never_reach_text_output_raw(tmp_path):
    """A fact id with U+202E, a newline and BEL: every text format writes them as \\uXXXX
    (or %0A for GitHub), on stdout and in the stderr warning, even when not a terminal."""
    doc = json.loads(RAW)
    facts = doc["player"]["knowledge"]["facts"]
    facts["interaction.ev\u202eil\n\x07_001"] = next(iter(facts.values()))
    save = tmp_path / "hostile.json"
    save.write_text(json.dumps(doc), encoding="utf-8")
    raw = ("\u202e", "\x07")
    for args in (["check", str(save)], ["check", str(save), "--format", "github"], ["state", str(save), "--format", "text"]):
        out = _run(*args)
        assert "\\u202e" in out.stdout + out.stderr, args
        for text in (out.stdout, out.stderr):
            assert not any(c in text for c in raw), (args, text)
            assert all("\\u202e" not in line or line.startswith(("  ", "::", "narrative-debugger")) for line in text.splitlines()), (args, text)
    check = _run("check", str(save))
    location = next(line for line in check.stdout.splitlines() if "\\u202e" in line and "K001" in line)
    assert location.endswith("\\u000a\\u0007_001")  # the newline does not split the location line
    state = _run("state", str(save), "--format", "text")
    assert "\\u000a\\u0007_001" in state.stderr and state.stderr.count("\n") == 1


def test_prompt_header_and_cards_escape_a_hostile_slug_even_when_piped(tmp_path):
    """The prompt text's header named the slug raw: a newline split it and ESC and
    U+202E reached a pager or log that way; now they read as \\uXXXX, as in ``state``."""
    doc = json.loads(RAW)
    slug = "kael\n\x1b[2J\u202edavan"
    doc["npcs"]["17"]["slug"] = slug
    save = tmp_path / "hostile-slug.json"
    save.write_text(json.dumps(doc), encoding="utf-8")
    out = _run("prompt", str(save), "--npc", slug)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    header = out.stdout.splitlines()[0]
    assert header == "hostile-slug.json: prompt for kael\\u000a\\u001b[2J\\u202edavan at tick 170 (cl100k_base)", header
    assert not any(c in out.stdout.split("\n\n", 1)[0] for c in "\x1b\u202e"), out.stdout


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads the command's CPU time from /proc")
def test_ctrl_c_during_a_long_query_exits_130(tmp_path):
    """New-user trial, stop 45: DuckDB runs a query in C, so Ctrl+C waited for its end (a
    cross join ran on for 14 minutes of CPU after two SIGINTs). The query is cancelled."""
    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, "-m", "narrative_debugger.app", "corpus", str(ROOT / "sample_saves" / "evening.json"),
                    "--out", str(corpus), "--no-prompts"], check=True, cwd=tmp_path, capture_output=True, timeout=300)
    proc = _popen([sys.executable, "-m", "narrative_debugger.app", "query", str(corpus),
                   "SELECT count(*) FROM range(100000000) t, range(100000000) u"], cwd=tmp_path)
    ticks = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until it has run the query a while: 4 s of CPU (the start takes ~1.5)
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / ticks >= 4.0:
            break
        try:  # its end (a failure, asserted below) or a tenth of a second, then read its CPU again
            proc.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            pass
    started = time.monotonic()
    _, err = _interrupt(proc)
    assert time.monotonic() - started < 10
    assert proc.returncode == EXIT_INTERRUPTED
    assert err.strip() == "narrative-debugger: interrupted"
