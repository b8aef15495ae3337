"""Small things from the first-use trial (issue 8 item 7, GUI): counts in the right
number, the save's name in the status bar whole (or elided with a tooltip), the
prompt encoding the user chose kept across saves, gone files out of Open recent."""

from __future__ import annotations

import shutil

import pytest
from narrative_debugger.models.prompt.tokens import ENCODINGS
from narrative_debugger.models.report.plain_text import counted

from tests.conftest import DATA, SAMPLES

# Modal boxes recorded, never shown; the window opens no save until a test does.
pytestmark = [pytest.mark.usefixtures("message_boxes"), pytest.mark.window(save=None, size=(1440, 900))]


def test_counts_are_in_the_right_number(qtbot, window):
    assert counted(1, "fact") == "1 fact" and counted(0, "fact") == "0 facts"
    assert counted(1_234, "entry", "entries") == "1,234 entries" and counted(1, "entry", "entries") == "1 entry"
    window.open_save(DATA / "minimal.json", SAMPLES / "content", wait=True)
    knowledge = window.views["knowledge"]
    assert knowledge.count.full_text() == "1 fact"
    assert "1 fact," in knowledge.heading.text()
    assert window.status_findings.text() == "0 errors, 0 warnings"
    journal = window.panels["journal"][0]
    assert "of 4 applied" in journal.caption.text() and "of 4 entries applied at tick" in journal.caption.toolTip()


def test_status_bar_shows_the_save_name_whole_or_elided_with_a_tooltip(qtbot, window, tmp_path):
    window.open_save(SAMPLES / "evening.json", wait=True)
    label = window.status_save
    assert label.full_text() == "evening.json"
    assert label.text() == "evening.json"  # whole at the default size (was cut to "evening.jsc")
    assert label.width() >= label.fontMetrics().horizontalAdvance("evening.json")
    long = tmp_path / ("a-very-long-save-name-" * 8 + "evening.json")
    shutil.copy(SAMPLES / "walkaway-spiral.json", long)
    window.open_save(long, SAMPLES / "content", wait=True)  # content given: no "sample content" after the name
    window.resize(900, 700)
    qtbot.waitUntil(lambda: "…" in label.text(), timeout=5000)
    assert label.full_text() == long.name
    assert "…" in label.text() and label.text().endswith("evening.json")
    assert str(long) in label.toolTip()


def test_a_long_status_message_is_shown_whole(qtbot, open_window):
    """At 1040 px the save, tick and findings fields cut a what-if's message off after
    "at tick 4,520:"; a message too long to sit beside them hides them while it shows."""
    w = open_window(SAMPLES / "qa-faults.json", size=(1040, 700))
    bar = w.statusBar()
    fields = [w.status_save, w.status_tick, w.status_findings]
    assert all(f.isVisible() for f in fields)
    bar.showMessage("Saved.")  # a short one sits beside them
    assert all(f.isVisible() for f in fields)
    long = "What if: B differs from the recorded run in 1,234 ways, the first at tick 4,520: see Differences and the dashed curves."
    bar.showMessage(long)
    assert not any(f.isVisible() for f in fields)
    assert bar.fontMetrics().horizontalAdvance(long) < bar.width()  # so it shows whole
    bar.clearMessage()
    assert all(f.isVisible() for f in fields)


def test_the_chosen_prompt_encoding_outlives_the_save(qtbot, window):
    window.open_save(SAMPLES / "evening.json", wait=True)
    prompt = window.views["prompt"]
    default = prompt.encoding
    other = next(name for name in ENCODINGS if name != default)
    prompt.set_encoding(other)
    window.open_save(SAMPLES / "walkaway-spiral.json", wait=True)
    assert prompt.encoding == other
    qtbot.waitUntil(lambda: prompt.current_preview is not None and prompt.current_preview.encoding == other, timeout=30_000)


def test_open_recent_drops_files_that_are_gone(qtbot, window, open_window, tmp_path):
    kept, gone = tmp_path / "kept&co.json", tmp_path / "gone.json"
    for path in (kept, gone):
        shutil.copy(SAMPLES / "walkaway-spiral.json", path)
        window.open_save(path, wait=True)
    assert [a.data() for a in window.recent_menu.actions()] == [str(gone), str(kept)]
    gone.unlink()
    window.recent_menu.aboutToShow.emit()
    actions = window.recent_menu.actions()
    assert [a.data() for a in actions] == [str(kept)]
    assert actions[0].text() == str(kept).replace("&", "&&")  # shown as the path, not a mnemonic
    fresh = open_window()  # a restart: reads the same settings, forgotten there too
    assert [a.data() for a in fresh.recent_menu.actions()] == [str(kept)]


def test_f5_reload_says_reloaded_and_only_a_watched_change_says_changed_on_disk(qtbot, window, tmp_path):
    path = tmp_path / "evening.json"
    data = (SAMPLES / "evening.json").read_bytes()
    path.write_bytes(data)
    window.open_save(path, wait=True)
    first = window.session.playthrough
    window.findChild(type(window.actions()[0]), "action-reload").trigger()  # F5, file unchanged
    qtbot.waitUntil(lambda: window.session.playthrough is not first, timeout=30_000)
    assert window.statusBar().currentMessage() == "Reloaded evening.json."
    second = window.session.playthrough
    path.write_bytes(data.replace(b'"game_version":"', b'"game_version":"y', 1))  # the watcher sees it
    qtbot.waitUntil(lambda: window.session.playthrough is not second, timeout=30_000)
    assert window.statusBar().currentMessage() == "Reloaded evening.json: it changed on disk."


def test_a_hostile_file_name_shows_escaped_and_a_long_one_elided(qtbot, window, tmp_path):
    """File names are text from the user's disk: a newline, an escape sequence or a bidi
    override (U+202E reverses what follows) showed raw in the title, the status bar and
    Open recent, and a long name made Open recent as wide as the screen (trial, issue 10)."""
    from narrative_debugger.app.window.main_window import RECENT_MAX_PX

    hostile = tmp_path / "nl\nx\x1b[31mred \u202eabc.json"
    long = tmp_path / ("L" * 240 + ".json")
    for path in (hostile, long):
        shutil.copy(SAMPLES / "walkaway-spiral.json", path)
    window.open_save(hostile, wait=True)
    shown = [window.windowTitle(), window.status_save.full_text(), window.status_save.toolTip()]
    window.open_save(long, wait=True)
    window.recent_menu.aboutToShow.emit()
    shown += [a.text() for a in window.recent_menu.actions()]
    for text in shown:
        assert not any(ch in text for ch in "\n\x1b\u202e"), text
    assert "nl\\u000ax\\u001b[31mred \\u202eabc.json" in window.recent_menu.actions()[1].text()
    metrics = window.recent_menu.fontMetrics()
    assert all(metrics.horizontalAdvance(a.text()) <= RECENT_MAX_PX + 20 for a in window.recent_menu.actions())
    assert [a.data() for a in window.recent_menu.actions()] == [str(long), str(hostile)]  # opened as they are


def test_opening_a_save_that_takes_another_content_folder_says_so(qtbot, window, tmp_path, monkeypatch):
    """File › Open reads a save with the content folder beside it, else the bundled one:
    a save opened from another folder switched what every check and prompt is judged
    against without a word (carried bug). The status bar now names the new folder and
    the old one, and File › Open content folder reads the save again with a chosen one."""
    from PySide6.QtGui import QAction

    mine = tmp_path / "mine"
    shutil.copytree(SAMPLES / "content", mine)
    window.open_save(SAMPLES / "evening.json", mine, wait=True)
    assert window.session.playthrough.content.root == mine
    assert str(mine) in window.status_save.toolTip()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(SAMPLES / "walkaway-spiral.json", elsewhere / "spiral.json")
    window.open_save(elsewhere / "spiral.json", wait=True)  # as File › Open does: no content given
    bundled = window.session.playthrough.content.root
    assert bundled.resolve() == (SAMPLES / "content").resolve()
    # No content/ beside it (issue 35): said in the status bar and after the save's name, not only in a tooltip.
    sample = "Opened spiral.json with the bundled sample content: there is no content/ folder beside it (C010)."
    assert window.statusBar().currentMessage() == f"{sample} Content folder: {bundled} (was {mine})."
    assert window.status_save.full_text() == "spiral.json  ·  sample content"
    assert "C010" in window.status_save.toolTip()
    assert [f.code for f in window.session.playthrough.findings if f.code == "C010"] == ["C010"]
    window.statusBar().clearMessage()
    window.open_save(elsewhere / "spiral.json", wait=True)  # the same folder again: no switch to name
    assert window.statusBar().currentMessage() == sample

    tick = window.session.last_tick // 2
    window.session.set_tick(tick)
    monkeypatch.setattr("narrative_debugger.app.window.main_window.QFileDialog.getExistingDirectory", lambda *a, **k: str(mine))
    window.findChild(QAction, "action-open-content").trigger()
    window.wait_for_load()
    assert window.session.playthrough.content.root == mine and window.save_path == elsewhere / "spiral.json"
    assert window.session.tick == tick  # the same moment, judged against the other folder
    assert window.statusBar().currentMessage() == f"Opened spiral.json. Content folder: {mine} (was {bundled})."


def test_a_content_folder_with_no_content_is_named_in_the_status_bar(qtbot, window, tmp_path):
    """An empty folder (or a save's own) taken as content gave M002s and a default
    budget without a word (new-user trial)."""
    empty = tmp_path / "empty"
    empty.mkdir()
    window.open_save(SAMPLES / "evening.json", empty, wait=True)
    assert window.statusBar().currentMessage().startswith("Warning: empty/ is not a content folder")
    assert f"warning: {empty} has none of prompt.yaml, npcs, monologues, lore, global: is it a content folder?" in window.status_save.toolTip()
    window.open_save(SAMPLES / "evening.json", SAMPLES / "content", wait=True)
    assert "content folder" not in window.statusBar().currentMessage() and "warning" not in window.status_save.toolTip()


def test_screenshot_names_the_save_in_the_status_bar(qtbot, tmp_path, monkeypatch, isolated_settings):
    """``screenshot`` showed "no save" in the status bar of a picture of a save (trial)."""
    from narrative_debugger.app.window import report
    from narrative_debugger.app.cli.main import main

    seen = []
    write = report.write_report

    def spy(window, folder, stem=None):
        seen.append((window.status_save.full_text(), window.status_save.toolTip()))
        return write(window, folder, stem)

    monkeypatch.setattr(report, "write_report", spy)
    save = SAMPLES / "walkaway-spiral.json"
    assert main(["screenshot", str(save), "--out", str(tmp_path / "shot.png"), "--view", "timelines"]) == 0
    ((name, tip),) = seen
    assert name == "walkaway-spiral.json"
    assert str(save) in tip and "content folder:" in tip


def test_a_launch_tick_or_npc_the_save_lacks_is_said_not_ignored(qtbot, window):
    # New-user trial (stop 44): `narrative-debugger SAVE --npc nobody --tick 999999999`
    # opened at the last tick with the first NPC and said nothing (the commands exit 2).
    window.open_save(SAMPLES / "evening.json", npc="nobody", tick=999_999_999, wait=True)
    qtbot.waitUntil(lambda: not window.session.playthrough.checks_pending)
    last = window.session.last_tick
    message = window.statusBar().currentMessage()
    first = next(iter(window.session.playthrough.save.npcs.values())).slug
    assert message.startswith(f"No NPC 'nobody' in this save: showing {first}. Tick 999,999,999")
    assert f"Tick 999,999,999 is outside 0 – {last:,} (past the save's end): went to the end, tick {last:,}." in message
    assert window.session.tick == last and window.session.npc == next(iter(window.session.playthrough.save.npcs))
    window.open_save(SAMPLES / "evening.json", npc="kael-davan", tick=100, wait=True)
    qtbot.waitUntil(lambda: not window.session.playthrough.checks_pending)
    assert "No NPC" not in window.statusBar().currentMessage() and "outside" not in window.statusBar().currentMessage()


def _rich_text_fits(label) -> bool:
    """Whether ``label``'s rich text, laid out at the label's width in its font, is shown
    whole: no line wider than the label (a run that cannot wrap) and no line below its bottom."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(label.font())
    doc.setHtml(label.text())
    room = label.contentsRect()
    doc.setTextWidth(room.width())
    return doc.idealWidth() <= room.width() and doc.size().height() <= room.height()


def test_the_interactions_heading_wraps_beside_the_npc_box(qtbot, open_window):
    """At 1040x700 the heading's second line ("… stress 78/30 · walk") was cut off on the
    right by the NPC box: it wraps between its parts, each whole, below its first line."""
    from PySide6.QtWidgets import QLabel

    w = open_window(SAMPLES / "walkaway-spiral.json", size=(1040, 700))
    s = w.session
    s.set_view("interactions")
    view = w.views["interactions"]
    heading, box = view.heading, view.npc_choice
    holder = heading.parentWidget()
    npc_label = next(label for label in view.findChildren(QLabel) if label.text() == "NPC:")
    for npc in s.playthrough.save.npcs:
        s.set_npc(npc)
        w.finish_background()
        assert "conversation" in heading.text()
        # The layout pass the holder asks for when a text needs another height comes in a later pass.
        qtbot.waitUntil(lambda: heading.geometry() == holder.rect() and _rich_text_fits(heading), timeout=2000)
        assert not holder.geometry().intersects(npc_label.geometry()) and not holder.geometry().intersects(box.geometry())
    s.set_npc(s.playthrough.save.npc_by_slug("kael-davan").stable_id)
    for size in ((1440, 900), (1040, 700)):  # narrowed by hand: the holder follows the lines the new width needs
        w.resize(*size)
        qtbot.waitUntil(lambda: heading.geometry() == holder.rect() and _rich_text_fits(heading), timeout=2000)
        assert not holder.geometry().intersects(npc_label.geometry())
