"""The main window end to end (pytest-qt, offscreen): one tick bar drives every view,
selection is shared, findings move the tick, broken saves do not close the app, and
bug reports reopen the moment they show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from narrative_debugger.app.window.report import open_report, write_report
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.models.report.meta import read_record
from narrative_debugger.widgets.registry import VIEWS
from PySide6.QtGui import QImage

from tests.conftest import ROOT, SAMPLES

pytestmark = pytest.mark.usefixtures("message_boxes")  # modal boxes recorded, never shown


def wait_prompt(qtbot, window):
    view = window.views["prompt"]
    s = window.session
    slug = s.playthrough.save.npcs[s.npc].slug
    qtbot.waitUntil(lambda: view.current_preview is not None and view.current_preview.tick == s.tick and view.current_preview.npc == slug, timeout=30000)
    return view.current_preview


def distinct_colours(image: QImage, step: int = 17) -> int:
    colours = set()
    for x in range(0, image.width(), step):
        for y in range(0, image.height(), step):
            colours.add(image.pixel(x, y))
    return len(colours)


def test_tick_bar_drives_every_view(qtbot, window):
    s = window.session
    window.tickbar.first_action.trigger()
    assert s.tick == 0
    window.tickbar.next_action.trigger()
    first_event = s.playthrough.index.ticks[0]
    assert s.tick == first_event
    for _ in range(40):
        window.tickbar.next_action.trigger()
    tick = s.tick
    assert tick > first_event
    state = s.playthrough.state_at(tick)
    knowledge = window.views["knowledge"]
    assert knowledge.model.rowCount() == len(state.knowledge.facts)
    s.set_view("timelines")  # a view behind another tab catches up when it is shown
    assert all(abs(line.value() - tick) < 1e-6 for line in window.views["timelines"].cursors)
    preview = wait_prompt(qtbot, window)
    assert preview.tick == tick
    assert f"tick {tick:,} / " in window.status_tick.text()


def test_selecting_an_npc_in_one_view_selects_it_everywhere(qtbot, window):
    s = window.session
    npc_list = window.panels["npcs"][0]
    target_row = next(r for r in range(npc_list.model.rowCount()) if npc_list.model.sid_at(r) != s.npc)
    target = npc_list.model.sid_at(target_row)
    npc_list.view.selectRow(npc_list.proxy.mapFromSource(npc_list.model.index(target_row, 0)).row())
    assert s.npc == target
    name = s.playthrough.npc_name(target)
    s.set_view("interactions")  # behind the Knowledge tab: it catches up when shown
    assert name in window.views["interactions"].heading.text()
    assert window.views["interactions"].npc_choice.currentData() == target
    preview = wait_prompt(qtbot, window)
    assert preview.npc == s.playthrough.save.npcs[target].slug


def test_prompt_view_totals_match_the_model(qtbot, window):
    preview = wait_prompt(qtbot, window)
    s = window.session
    expected = PromptBuilder(s.playthrough).build(preview.npc, s.tick)
    assert (preview.total_tokens, preview.section_sum) == (expected.total_tokens, expected.section_sum)


def test_activating_a_finding_moves_tick_and_npc(qtbot, window):
    window.open_save(SAMPLES / "qa-faults.json", wait=True)
    s = window.session
    findings = window.panels["findings"][0]
    play = s.playthrough
    from narrative_debugger.widgets.docks.findings import FindingsModel

    shown = [findings.proxy.index(r, 0).data(FindingsModel.FINDING_ROLE) for r in range(findings.proxy.rowCount())]
    row = next(r for r, f in enumerate(shown) if f.code == "T004" and f.tick not in (None, s.tick))
    finding = shown[row]
    findings.activate_row(row)
    assert s.tick == finding.tick
    npc_slug = play.save.npcs[s.npc].slug
    assert npc_slug in finding.message


def test_broken_save_keeps_the_window_and_what_it_showed(qtbot, window, tmp_path, message_boxes):
    before = window.session.playthrough
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "settled-reach.save", "format_version": 1, "npcs": {')
    window.open_save(bad, wait=True)
    assert window.isVisible() and window.session.playthrough is before
    assert message_boxes and "broken.json" in message_boxes[-1][2]


def test_reload_when_the_save_changes_keeps_last_good_state(qtbot, window, tmp_path):
    path = tmp_path / "live.json"
    path.write_bytes((SAMPLES / "walkaway-spiral.json").read_bytes())
    window.open_save(path, wait=True)
    good = window.session.playthrough
    path.write_text("{ not json")
    window.reload()
    window.wait_for_load()
    assert window.session.playthrough is good
    assert "cannot be read" in window.statusBar().currentMessage()


def test_grab_is_not_blank_and_all_views_grid(qtbot, window):
    wait_prompt(qtbot, window)
    image = window.grab().toImage()
    assert distinct_colours(image) > 20
    window.set_grid(True)
    assert all(v.isVisible() for v in window.views.values())
    window.set_grid(False)
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [spec.title for spec in VIEWS]


def test_ctrl_and_a_number_in_all_views_shows_that_view_in_front(qtbot, window):
    """In All views, Ctrl+2 changed the session's view and nothing on screen (carried
    bug): it now leaves the grid with that view in front; Ctrl+0 brings the grid back."""
    from PySide6.QtGui import QAction

    window.set_grid(True)
    window.findChild(QAction, "action-view-interactions").trigger()
    assert not window.grid_mode and not window.grid_action.isChecked()
    assert window.stack.currentWidget() is window.tabs
    assert window.tabs.currentWidget() is window.frames["interactions"]
    assert window.session.view == "interactions"
    window.grid_action.trigger()
    assert window.grid_mode and all(v.isVisible() for v in window.views.values())


def test_report_then_drop_reopens_same_moment(qtbot, open_window, window, tmp_path):
    s = window.session
    window.tickbar.first_action.trigger()
    for _ in range(25):
        window.tickbar.next_action.trigger()
    other = next(sid for sid in s.playthrough.save.npcs if sid != s.npc)
    s.set_npc(other)
    s.set_view("timelines")
    wait_prompt(qtbot, window)
    png, md, summary = write_report(window, tmp_path)
    record = read_record(png.read_bytes())
    assert (record.tick, record.npc, record.view) == (s.tick, s.playthrough.save.npcs[other].slug, "timelines")
    image = QImage(str(png))
    dpr = window.devicePixelRatioF()
    assert (image.width(), image.height()) == (round(window.width() * dpr), round(window.height() * dpr))
    assert distinct_colours(image) > 20
    assert f"tick {s.tick}" in summary and s.playthrough.save.sha256 in md.read_text()
    png2, _, _ = write_report(window, tmp_path)
    assert png2 != png and png.exists()  # never overwritten

    second = open_window(size=None)
    assert open_report(second, png, ask=False)
    second.wait_for_load()
    t = second.session
    assert (t.tick, t.npc, t.view) == (s.tick, other, "timelines")
    assert second.tabs.currentWidget() is second.frames["timelines"]


def test_report_with_moved_save_and_changed_bytes(qtbot, open_window, window, tmp_path, message_boxes):
    save = tmp_path / "copy.json"
    save.write_bytes((SAMPLES / "walkaway-spiral.json").read_bytes())
    window.open_save(save, wait=True)
    png, _, _ = write_report(window, tmp_path / "reports")
    moved = tmp_path / "reports" / "copy.json"
    save.rename(moved)
    moved.write_bytes(moved.read_bytes().replace(b'"game_version":"', b'"game_version":"x', 1))
    second = open_window(size=None, shown=False)
    assert open_report(second, png, ask=False)  # found beside the PNG
    second.wait_for_load()
    assert second.save_path == moved
    assert "changed" in second.statusBar().currentMessage()


def test_screenshot_command_headless(tmp_path):
    out = tmp_path / "shot.png"
    env = {"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "app", "screenshot", str(SAMPLES / "abandoned-confrontation.json"), "--out", str(out), "--npc", "sera-venn", "--view", "interactions", "--tick", "500"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    record = read_record(out.read_bytes())
    assert (record.tick, record.npc, record.view) == (500, "sera-venn", "interactions")
    image = QImage(str(out))
    assert image.width() >= 1280 and image.height() >= 800 and distinct_colours(image) > 20
    assert out.with_suffix(".md").read_text().startswith("# Narrative bug report")
    again = subprocess.run(done.args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert again.returncode == 0 and (tmp_path / "shot-2.png").exists()
    assert json.loads(read_record(out.read_bytes()).to_json())["save_name"] == "abandoned-confrontation.json"


def test_screenshot_of_a_save_whose_name_is_not_utf8(tmp_path):
    """A file name with the byte 0xff: the PNG and the .md are written, no traceback."""
    save = Path(os.fsdecode(bytes(tmp_path) + b"/\xffbad.json"))
    save.write_bytes((SAMPLES / "walkaway-spiral.json").read_bytes())
    env = {"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "app", "screenshot", str(save), "--out", str(tmp_path / "shot.png")], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    record = read_record((tmp_path / "shot.png").read_bytes())
    assert Path(record.save_path) == save.resolve()
    # The Markdown sink escapes the backslash of the \udcff that stands for the byte: it
    # renders as \udcffbad.json.
    assert "# Narrative bug report: \\\\udcffbad.json" in (tmp_path / "shot.md").read_text(encoding="utf-8")


def test_snapshot_findings_jump_to_saved_at_tick(qtbot, window):
    from narrative_debugger.widgets.landing import landing

    window.open_save(SAMPLES / "qa-faults.json", wait=True)
    play = window.session.playthrough
    snapshot_only = [f for f in play.findings if f.tick is None and f.target.snapshot]
    assert snapshot_only
    for f in snapshot_only:
        assert landing(play, f).tick == play.save.saved_at_tick


def test_reload_after_the_save_is_deleted_and_written_again(qtbot, window, tmp_path):
    path = tmp_path / "live.json"
    data = (SAMPLES / "walkaway-spiral.json").read_bytes()
    path.write_bytes(data)
    window.open_save(path, wait=True)
    first = window.session.playthrough
    with qtbot.waitSignal(window.save_watch.gone, timeout=10000):  # the watch has seen it gone
        path.unlink()
    path.write_bytes(data)
    qtbot.waitUntil(lambda: window.session.playthrough is not first, timeout=10000)
    assert "Reloaded" in window.statusBar().currentMessage() or window.session.playthrough.save.label == "live.json"
    second = window.session.playthrough
    path.write_bytes(data.replace(b'"game_version":"', b'"game_version":"y', 1))
    qtbot.waitUntil(lambda: window.session.playthrough is not second, timeout=10000)  # still watched
