"""PromptView: the prompt preview widget, driven through the session (pytest-qt, offscreen)."""

from __future__ import annotations

import threading
import time

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.widgets.prompt import parts as prompt_parts
from narrative_debugger.widgets.prompt.parts import BudgetBar, SectionTableModel
from narrative_debugger.widgets.prompt.view import PromptView
from narrative_debugger.widgets.session import Session
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from tests.conftest import CONTENT, DATA

WAIT_MS = 10_000


@pytest.fixture(scope="module")
def minimal():
    """The tiny save: one NPC (kael-davan), one dialogue line at tick 131, saved at 170."""
    return Playthrough.open(DATA / "minimal.json", CONTENT)


@pytest.fixture()
def session(qtbot):
    return Session()


@pytest.fixture()
def view(qtbot, session):
    widget = PromptView(session)
    qtbot.addWidget(widget)
    widget.show()  # a hidden view defers filling its text until shown
    return widget


@pytest.fixture()
def loaded(qtbot, view, session, minimal):
    """The view after the session loaded the minimal save and the first preview arrived."""
    with qtbot.waitSignal(view.previewReady, timeout=WAIT_MS):
        session.load(minimal)
    return view


class HeldBuilds(list):
    """The ``(tick, on the GUI thread)`` of every build asked for; each build waits until
    the test sets ``go`` (set for good once set)."""

    go: threading.Event


@pytest.fixture()
def slow_build(monkeypatch):
    """Every PromptBuilder.build is held until the test sets ``slow_build.go``: a build
    that is in flight for as long as the test needs, whatever the machine's speed."""
    calls = HeldBuilds()
    calls.go = threading.Event()
    real = PromptBuilder.build

    def build(self, npc_slug, tick):
        calls.append((tick, threading.current_thread() is threading.main_thread()))
        assert calls.go.wait(WAIT_MS / 1000), "the test never let the build go on"
        return real(self, npc_slug, tick)

    monkeypatch.setattr(prompt_parts.PromptBuilder, "build", build)
    yield calls
    calls.go.set()  # never leave a worker held


def cell(model, row, col):
    return model.data(model.index(row, col))


def test_first_preview_totals_match_the_table(loaded, session):
    p = loaded.current_preview
    assert p is not None and p.npc == "kael-davan" and p.tick == session.tick == 170
    model = loaded.section_model
    rows = model.rowCount()
    assert rows == len(p.sections) + 2
    assert [cell(model, r, 0) for r in range(len(p.sections))] == [s.label for s in p.sections]
    assert cell(model, rows - 2, 0) == SectionTableModel.SUM_LABEL
    assert cell(model, rows - 2, 1) == sum(s.tokens for s in p.sections) == p.section_sum
    assert cell(model, rows - 1, 0) == SectionTableModel.TOTAL_LABEL
    assert cell(model, rows - 1, 1) == p.total_tokens
    assert p.history.included == 1 and p.history.total == 1
    assert "Kael Davan: Cargo's late again." in loaded.text_view.toPlainText()


def test_encoding_defaults_to_the_content_setting(loaded, minimal):
    assert loaded.encoding == minimal.content.prompt.encoding
    assert loaded.current_preview.encoding == loaded.encoding


def test_committed_tick_builds_a_new_preview(qtbot, loaded, session):
    with qtbot.waitSignal(loaded.previewReady, timeout=WAIT_MS) as blocker:
        session.set_tick(125)
    assert blocker.args[0] is loaded.current_preview
    assert loaded.current_preview.tick == session.tick == 125
    assert loaded.current_preview.history.total == 0  # the only line is at tick 131


def test_dragging_the_tick_builds_nothing(qtbot, loaded, session):
    seen = []
    loaded.previewReady.connect(seen.append)
    session.set_tick(125, live=True)
    assert not loaded.busy and loaded.current_preview.tick == 170
    # The commit that ends the drag builds one preview: the drag's frame built none before it.
    with qtbot.waitSignal(loaded.previewReady, timeout=WAIT_MS):
        session.set_tick(150)
    assert [p.tick for p in seen] == [150]


def test_switching_encoding(qtbot, loaded):
    with qtbot.waitSignal(loaded.previewReady, timeout=WAIT_MS):
        loaded.set_encoding("o200k_base")
    assert loaded.current_preview.encoding == "o200k_base"
    model = loaded.section_model
    assert cell(model, model.rowCount() - 1, 1) == loaded.current_preview.total_tokens


def test_copy_puts_the_prompt_on_the_clipboard(qtbot, loaded):
    QGuiApplication.clipboard().setText("")
    qtbot.mouseClick(loaded.copy_button, Qt.LeftButton)
    assert QGuiApplication.clipboard().text() == loaded.current_preview.text


def test_changed_since_the_previous_tick(qtbot, loaded, session):
    with qtbot.waitSignal(loaded.previewReady, timeout=WAIT_MS):
        session.set_tick(125)
    with qtbot.waitSignal(loaded.previewReady, timeout=WAIT_MS):
        session.set_tick(170)
    diff = loaded.current_diff
    assert loaded.compared_tick == 125
    assert "history" in diff.changed
    assert 0 < diff.common_prefix_tokens < diff.total_tokens == loaded.current_preview.total_tokens
    assert "leading tokens reusable by a prompt cache" in loaded.changes_label.text()


def test_changed_since_the_npcs_previous_line(qtbot, loaded):
    with qtbot.waitSignal(loaded.previewReady, timeout=WAIT_MS):
        loaded.set_compare_mode("turn")
    assert loaded.compared_tick == 131  # Kael's line before tick 170
    assert loaded.current_diff is not None


def test_no_comparison_right_after_loading(loaded):
    assert loaded.current_diff is None and loaded.compared_tick is None
    assert "No earlier tick" in loaded.changes_label.text()


def test_no_npc_selected_clears_the_view(qtbot, loaded, session):
    session.set_npc(None)
    qtbot.waitUntil(lambda: loaded.current_preview is None, timeout=WAIT_MS)
    assert "Select an NPC" in loaded.title_label.full_text()
    assert loaded.section_model.rowCount() == 0


def distinct_colours(image, step=3):
    return {image.pixel(x, y) for x in range(0, image.width(), step) for y in range(0, image.height(), step)}


def test_budget_bar_and_text_render(loaded):
    loaded.resize(1100, 750)
    loaded.show()
    bar = loaded.budget_bar.grab().toImage()
    text = loaded.text_view.grab().toImage()
    assert bar.width() > 100 and len(distinct_colours(bar)) > 5
    assert len(distinct_colours(text)) > 5
    segments = loaded.budget_bar.segments()
    assert [label for label, _, _ in segments] == [s.label for s in loaded.current_preview.sections]


def test_budget_bar_marks_overflow(qtbot, minimal):
    preview = PromptBuilder(minimal, budget=300).build("kael-davan", 170)
    assert preview.total_tokens > preview.budget
    bar = BudgetBar()
    qtbot.addWidget(bar)
    bar.resize(600, bar.sizeHint().height())
    bar.set_preview(preview)
    image = bar.grab().toImage()
    budget_x = int(bar.width() * preview.budget / preview.total_tokens)
    column = {image.pixelColor(budget_x, y).name() for y in range(image.height())}
    assert "#d32f2f" in column  # the red budget line


def test_gui_thread_not_blocked_while_counting(qtbot, loaded, session, slow_build):
    ticks = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    with qtbot.waitSignal(loaded.previewReady, timeout=WAIT_MS):
        session.set_tick(150)
        assert loaded.busy
        qtbot.waitUntil(lambda: "counting" in loaded.status_label.text(), timeout=1000)
        qtbot.waitUntil(lambda: len(slow_build) >= 1, timeout=WAIT_MS)  # the build is held in its worker ...
        held_at = len(ticks)
        qtbot.waitUntil(lambda: len(ticks) >= held_at + 5, timeout=WAIT_MS)  # ... and the event loop runs on
        assert loaded.current_preview.tick == 170  # still the preview from before
        slow_build.go.set()
    timer.stop()
    assert slow_build and not any(on_main for _, on_main in slow_build)
    assert loaded.current_preview.tick == 150


def test_requests_are_coalesced_and_stale_results_dropped(qtbot, loaded, session, slow_build):
    seen = []
    loaded.previewReady.connect(seen.append)
    session.set_tick(100)
    qtbot.waitUntil(lambda: len(slow_build) >= 1, timeout=WAIT_MS)  # tick 100 is in flight
    for tick in (110, 120, 130, 140):
        session.set_tick(tick)
        QApplication.processEvents()  # the zero-interval kick: each tick is a request of its own
    slow_build.go.set()
    qtbot.waitUntil(lambda: not loaded.busy, timeout=WAIT_MS)  # not busy: every job has reported
    built = [tick for tick, _ in slow_build]
    assert built == [100, 170, 140, 130]  # each job: the tick, then the previous tick for the diff
    assert [p.tick for p in seen] == [140]  # the tick-100 result was stale and dropped
    assert loaded.current_preview.tick == session.tick == 140


def test_failure_is_shown_to_the_user(qtbot, loaded, session, monkeypatch):
    def broken(self, npc_slug, tick):
        raise RuntimeError("boom")

    monkeypatch.setattr(prompt_parts.PromptBuilder, "build", broken)
    session.set_tick(150)
    qtbot.waitUntil(lambda: "Could not build the prompt" in loaded.title_label.full_text(), timeout=WAIT_MS)
    assert "boom" in loaded.title_label.full_text() and loaded.current_preview is None


def test_clearing_the_npc_mid_count_leaves_no_stale_status(qtbot, loaded, session, slow_build):
    session.set_tick(150)
    qtbot.waitUntil(lambda: len(slow_build) >= 1, timeout=WAIT_MS)  # tick 150 is in flight
    session.set_npc(None)
    # The clear has been taken (its message shows) while tick 150 is still held: only then
    # may that build end, so its result comes stale.
    qtbot.waitUntil(lambda: "Select an NPC" in loaded.title_label.full_text(), timeout=WAIT_MS)
    slow_build.go.set()
    qtbot.waitUntil(lambda: not loaded.busy, timeout=WAIT_MS)  # not busy: the stale job has reported
    assert loaded.current_preview is None and "Select an NPC" in loaded.title_label.full_text()
    assert "counting" not in loaded.status_label.text()


def test_hidden_view_fills_its_text_when_shown(qtbot, session, minimal):
    hidden = PromptView(session)
    qtbot.addWidget(hidden)
    with qtbot.waitSignal(hidden.previewReady, timeout=WAIT_MS):
        session.load(minimal)
    assert hidden.current_preview is not None and hidden.text_view.toPlainText() == ""
    hidden.show()
    assert "Kael Davan: Cargo's late again." in hidden.text_view.toPlainText()
