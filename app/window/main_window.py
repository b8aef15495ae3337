"""The main window: the four views, the tick bar and the panels, wired to one session.

This is the only place that knows all the pieces (style.md). Widgets display the
session and call its ``set_*`` methods; the window opens saves (in a worker thread),
keeps layout and recent files in QSettings, watches the open save for changes and
makes bug reports.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from narrative_debugger.app.workers.progress import WorkProgress
from narrative_debugger.app.window import accessibility
from narrative_debugger.app.window import layout
from narrative_debugger.app.window import report
from narrative_debugger.app.window.compare import CompareController
from narrative_debugger.app.window.whatif import WhatIfController
from narrative_debugger.app.window.corpus import CorpusController
from narrative_debugger.app.workers.loader import OPEN, RELOAD, SaveLoader
from narrative_debugger.app.workers.save_watch import SaveWatch
from narrative_debugger.models.playthrough import BUNDLED_SAVE, Playthrough
from narrative_debugger.models.prompt.tokens import DEFAULT_ENCODING, get_encoder
from narrative_debugger.models.content.loader import not_content_reason
from narrative_debugger.models.report.plain_text import counted, one_line, terminal_safe
from narrative_debugger.models.rules.findings import Severity
from narrative_debugger.widgets.tickbar.field import past_end
from narrative_debugger.widgets.kit import slices
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.kit.steady import SteadyLabel
from narrative_debugger.widgets.kit.plain_text import ElidedLabel, plain_label, show_message
from narrative_debugger.widgets.registry import DOCKS as DOCK_SPECS
from narrative_debugger.widgets.registry import VIEW_NAMES
from narrative_debugger.widgets.registry import VIEWS as VIEW_SPECS
from narrative_debugger.widgets.session import Session
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QPixmapCache
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QFrame,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

VIEWS = VIEW_NAMES
VIEW_TITLES = {spec.name: spec.title for spec in VIEW_SPECS}
VIEW_MIN_SIZES = {spec.name: spec.min_size for spec in VIEW_SPECS}
#: The views never get narrower than the widest view's minimum (pixels), so docks cannot
#: squeeze them; the central area's own width is what its layout asks for (this and the tick
#: bar's row). An explicit 440 px on the central area let a window shrunk to 1040 x 700
#: squeeze the views under their 480 px, so the Knowledge view scrolled and hid its Fit button.
VIEWS_MIN_WIDTH = max(w for w, _ in VIEW_MIN_SIZES.values())
#: Nor lower than the highest view's minimum: a window shrunk to 1040 x 700 from a larger
#: size kept its bottom docks' height and left the views 260 px of their 300, so the
#: Prompt preview scrolled its story cards out of sight.
VIEWS_MIN_HEIGHT = max(h for _, h in VIEW_MIN_SIZES.values())
#: The central area (views and tick bar) is never lower than this (pixels).
CENTRAL_MIN_HEIGHT = 300
MAX_RECENT = 10
RECENT_MAX_PX = 720  # File › Open recent entries are elided in the middle past this width
SAVE_FILTER = "Settled Reach saves (*.json *.json.gz);;All files (*)"


def _let_paint(widgets: list):
    """The job that lets held widgets (the central area, then each shown dock) paint
    again, one a pass (``SlicedWork``: from a timer, after the pass that held them).

    It holds the widgets, never the window, so a window closed before it runs is not
    kept alive. A dock's content that put its refresh off while held
    (``visibility.held``) catches up first, in the pass that paints it."""
    for widget in widgets:
        content = widget.widget() if isinstance(widget, QDockWidget) else None
        catch_up = getattr(content, "catch_up", None)
        widget.setUpdatesEnabled(True)  # and repaints it
        if catch_up is not None:
            catch_up()
        yield slices.END_SLICE


class MainWindow(QMainWindow):
    """The narrative debugger's window.

    Args:
        session: the session to show (a new one when None).
        persist: restore and keep the layout in QSettings (False for headless screenshots,
            which always use the default layout).
    """

    def __init__(self, session: Session | None = None, *, persist: bool = True) -> None:
        super().__init__()
        self._persist = persist
        self.setObjectName("narrativeDebuggerMain")
        self.setWindowTitle("Narrative debugger")
        self.session = session or Session(self)
        self.settings = QSettings()
        self.save_path: Path | None = None
        self.content_dir: Path | None = None
        self._content_warning: str | None = None  # not_content_reason of the open save's content folder
        self._asked_said: str | None = None  # the status message that said a launch tick or NPC was not as asked
        self.loader = SaveLoader(self)
        self.loader.progress.connect(self._on_progress)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.checked.connect(self._on_checked)
        self.loader.cancelled.connect(self._on_cancelled)
        self.loader.failed.connect(self._on_failed)
        self._progress = WorkProgress()
        # The central area and the shown docks paint in the passes after the one that
        # hands a save to the views, one a pass (``_hold_paint``); a sliced job, so
        # ``finish_background`` ends it too.
        # Owned by the status bar: a SlicedWork keeps its owner's wrapper, and one that
        # kept the window's would keep a closed window alive (collected objects are frozen).
        self._held_paint = slices.SlicedWork(self.statusBar())
        self._held: list = []
        self._closed = False
        # The shown save on disk: a change reloads it (``_on_save_changed``).
        self.save_watch = SaveWatch(self)
        self.save_watch.changed.connect(self._on_save_changed)
        self.save_watch.gone.connect(self._on_save_gone)
        self._request = None  # the latest LoadRequest this window made (its kind words the cancel)
        self._reload_changed = False  # that request, a reload, was for a change on disk
        # A reload an open held back (None: none), True when for a change on disk: read
        # if the open ends without showing its save (cancelled, failed, unreadable).
        self._reload_after_open: bool | None = None
        # The default encoding's tables, built before the window is usable: tiktoken's
        # CoreBPE constructor holds the GIL long enough to stall the GUI thread when the
        # first prompt preview is built after a load.
        get_encoder(DEFAULT_ENCODING)
        self._build_views()
        self._build_docks()
        self._build_menus()
        self._build_status()
        self._progress.attach(self)  # the status bar's height never changes with an open
        accessibility.name_controls(self)
        self.setAcceptDrops(True)
        self.session.tickChanged.connect(lambda _tick: self._update_status())
        self.session.tickPreview.connect(lambda tick: self._update_status(tick))
        self.session.npcChanged.connect(lambda _: self._update_status())
        self.session.viewChanged.connect(self._show_view)
        self.session.dockRequested.connect(self._show_view)
        self.session.notice.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.setMinimumSize(*layout.MIN_WINDOW)
        self.session.explainRequested.connect(self._show_explain)
        self.resize(1440, 900)
        self._layout_restored = persist and layout.restore_layout(self, self.settings)
        self.compare.sync_dock()

    # ----- construction -----
    def _build_views(self) -> None:
        from narrative_debugger.widgets.tickbar.bar import TickBar

        s = self.session
        self.views = {spec.name: spec.create(s) for spec in VIEW_SPECS}
        self.tabs = QTabWidget()
        self.tabs.setObjectName("views")
        self.tabs.setDocumentMode(True)
        # Each view sits in a scroll area: on a small screen it scrolls instead of
        # forcing the window to the largest view's minimum size.
        self.frames: dict[str, QScrollArea] = {}
        for name in VIEWS:
            self.views[name].setObjectName(f"view-{name}")
            self.views[name].setMinimumSize(*VIEW_MIN_SIZES[name])
            frame = QScrollArea()
            frame.setObjectName(f"frame-{name}")
            frame.setWidgetResizable(True)
            frame.setFrameShape(QFrame.NoFrame)
            frame.setWidget(self.views[name])
            self.frames[name] = frame
            self.tabs.addTab(frame, VIEW_TITLES[name])
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.tabs.tabBar().setFocusPolicy(Qt.NoFocus)
        self.grid = QSplitter(Qt.Vertical)
        self.grid.setObjectName("views-grid")
        self.grid_columns = max(1, math.ceil(math.sqrt(len(VIEWS))))
        self.grid_rows = [QSplitter(Qt.Horizontal) for _ in range(math.ceil(len(VIEWS) / self.grid_columns))]
        for row in self.grid_rows:
            self.grid.addWidget(row)
        self.grid_mode = False
        self.stack = QStackedWidget()
        self.stack.addWidget(self.tabs)
        self.stack.addWidget(self.grid)
        self.tickbar = TickBar(s)
        self.tickbar.setObjectName("tickbar")
        central = QWidget()
        box = QVBoxLayout(central)
        box.setContentsMargins(4, 4, 4, 0)
        box.addWidget(self.stack, 1)
        box.addWidget(self.tickbar)
        # Room for a vertical scroll bar too: a short window scrolls a view up and down, and
        # the bar then took its width from the view (the Knowledge view got 466 px). The
        # central area's width is left to its layout, so it also grows with the tick bar's
        # row (ticks near 2^64 need a wider tick field).
        self.stack.setMinimumWidth(VIEWS_MIN_WIDTH + self.style().pixelMetric(QStyle.PM_ScrollBarExtent))
        self.stack.setMinimumHeight(VIEWS_MIN_HEIGHT + self.tabs.tabBar().sizeHint().height())
        # An explicit minimum overrides the layout's own: at 300 px the window kept its bottom
        # docks' height when shrunk, and the views and the tick bar were squeezed under theirs.
        central.setMinimumHeight(max(CENTRAL_MIN_HEIGHT, box.minimumSize().height()))
        self.setCentralWidget(central)

    def _on_tab_changed(self, index: int) -> None:
        if 0 <= index < len(VIEWS):
            self.session.view = VIEWS[index]
        # Keep the tick keys working: a new tab would hand focus to its first combo box.
        self.tickbar.setFocus()

    def set_grid(self, on: bool) -> None:
        """Show every view at once in a grid (True; 2x2 for four views) or one at a time in tabs."""
        if on == self.grid_mode:
            return
        self.grid_mode = on
        if on:
            for i, name in enumerate(VIEWS):
                self.grid_rows[i // self.grid_columns].addWidget(self.frames[name])
                self.frames[name].show()  # the tab widget had hidden the ones not in front
            width = max(2, self.stack.width())
            height = max(2, self.stack.height())
            for row in self.grid_rows:
                for k in range(row.count()):
                    row.setStretchFactor(k, 1)
                row.setSizes(_even_split(width, row.count()))
            self.grid.setSizes(_even_split(height, len(self.grid_rows)))
            self.stack.setCurrentWidget(self.grid)
        else:
            current = VIEWS.index(self.session.view) if self.session.view in VIEWS else 0
            for name in VIEWS:
                self.tabs.addTab(self.frames[name], VIEW_TITLES[name])
            self.tabs.setCurrentIndex(current)
            self.stack.setCurrentWidget(self.tabs)
        self.grid_action.setChecked(on)

    def _build_docks(self) -> None:
        s = self.session
        self.panels = {spec.name: (spec.create(s), spec.title, layout.DOCK_AREAS[spec.area]) for spec in DOCK_SPECS}
        self.docks: dict[str, QDockWidget] = {}
        for spec in DOCK_SPECS:
            widget, title, _area = self.panels[spec.name]
            dock = QDockWidget(title, self)
            dock.setObjectName(f"dock-{spec.name}")
            dock.setWidget(widget)
            self.docks[spec.name] = dock
        layout.place_docks(self, self.docks)
        self._docks_sized = False
        # A window shrunk and grown again gives its docks back their sizes.
        self.kept_dock_sizes = layout.KeptDockSizes(self, self.docks)

    def reset_layout(self) -> None:
        """View › Reset layout: every dock back in its default place and size, views in tabs."""
        self.set_grid(False)
        layout.place_docks(self, self.docks)
        self.compare.sync_dock()
        layout.default_sizes(self, self.docks)
        # Re-docked floating or moved docks settle in the next layout pass, which can
        # undo the sizes just set (leaving the bottom docks a strip): set them again then.
        QTimer.singleShot(0, self, lambda: layout.default_sizes(self, self.docks))
        self._docks_sized = True

    def _show_explain(self, _target) -> None:
        """"Why?" was asked: bring the Explain dock forward (it answers the session itself)."""
        dock = self.docks.get("explain")
        if dock is not None:
            if not dock.isVisible():
                dock.show()
            dock.raise_()

    def _action(self, text: str, slot, shortcut=None, name: str | None = None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setObjectName(name or "action-" + text.lower().strip(".…").replace(" ", "-"))
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self._action("&Open save…", self.choose_save, QKeySequence.Open, "action-open"))
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.setObjectName("menu-recent")
        self.recent_menu.aboutToShow.connect(self._refresh_recent)  # files may have gone since
        file_menu.addAction(self._action("Open &content folder…", self.choose_content, None, "action-open-content"))
        file_menu.addAction(self._action("Open &report…", lambda: report.choose_and_open_report(self), "Ctrl+Shift+O", "action-open-report"))
        file_menu.addAction(self._action("Re&load", lambda: self.reload(), QKeySequence.Refresh, "action-reload"))
        file_menu.addSeparator()
        self.compare = CompareController(self, SAVE_FILTER)
        self.compare.add_to_menu(file_menu)
        self.corpus = CorpusController(self)
        self.corpus.add_to_menu(file_menu)
        file_menu.addSeparator()
        file_menu.addAction(self._action("Report &bug…", lambda: report.report_bug(self), "Ctrl+B", "action-report-bug"))
        file_menu.addSeparator()
        file_menu.addAction(self._action("&Quit", self.close, QKeySequence.Quit, "action-quit"))
        view_menu = bar.addMenu("&View")
        for i, name in enumerate(VIEWS):
            view_menu.addAction(self._action(VIEW_TITLES[name], lambda _=False, n=name: self.show_view_alone(n), f"Ctrl+{i + 1}", f"action-view-{name}"))
        self.grid_action = self._action("All views", lambda checked: self.set_grid(checked), "Ctrl+0", "action-view-all")
        self.grid_action.setCheckable(True)
        view_menu.addAction(self.grid_action)
        view_menu.addSeparator()
        for dock in self.docks.values():
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addSeparator()
        view_menu.addAction(self._action("&Reset layout", self.reset_layout, None, "action-reset-layout"))
        self.whatif = WhatIfController(self)
        tools_menu = bar.addMenu("&Tools")
        tools_menu.setObjectName("menu-tools")
        tools_menu.addAction(self.whatif.open_action)
        go_menu = bar.addMenu("&Go")
        for action in self.tickbar.actions():
            go_menu.addAction(action)
        go_menu.addSeparator()
        findings = self.panels["findings"][0]
        for action in (findings.next_action, findings.previous_action):
            go_menu.addAction(action)
            self.addAction(action)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self._action("&About", self._about, None, "action-about"))
        self._refresh_recent()

    def _build_status(self) -> None:
        # The save's name is data (plain text) and the first to give way: elided in the
        # middle with the whole path as tooltip, never cut off.
        self.status_save = ElidedLabel("no save")
        self.status_save.setObjectName("statusSave")
        self.status_tick = plain_label("")
        self.status_findings = plain_label("")
        self.statusBar().addPermanentWidget(self.status_save)
        self.status_fields = [self.status_save]
        for label in (self.status_tick, self.status_findings):
            holder = SteadyLabel(label)  # the tick's text changes at every step
            self.statusBar().addPermanentWidget(holder)
            self.status_fields.append(holder)
        self.statusBar().messageChanged.connect(self._make_room_for_message)

    def _make_room_for_message(self, text: str) -> None:
        """A message too long to sit beside the save, tick and findings fields hides them
        while it shows (at 1040 px they cut it off mid-sentence); they come back with it gone."""
        bar = self.statusBar()
        fields = sum(field.sizeHint().width() + 8 for field in self.status_fields)
        room = not text or bar.fontMetrics().horizontalAdvance(text) + 24 + fields <= bar.width()
        for field in self.status_fields:
            field.setVisible(room)

    # ----- opening -----
    def choose_save(self) -> None:
        folder = self.settings.value("last_folder", str(Path.home()))
        path, _ = QFileDialog.getOpenFileName(self, "Open a save", folder, SAVE_FILTER)
        if path:
            self.open_save(Path(path))

    def choose_content(self) -> None:
        """File › Open content folder: read the open save again with another content folder."""
        if self.save_path is None:
            return
        play = self.session.playthrough
        start = str(play.content.root if play is not None and play.content.root else self.save_path.parent)
        folder = QFileDialog.getExistingDirectory(self, "Open a content folder for this save", start)
        if folder:
            self.open_save(self.save_path, Path(folder), tick=self.session.tick)

    def open_save(self, path: Path, content: Path | None = None, *, tick: int | None = None, npc: str | None = None, view: str | None = None,
                  wait: bool = False, explain: str | None = None) -> None:
        """Load a save in the worker thread, with its progress (and Cancel) in the status bar.
        ``explain``: a "Why?" target asked once it shows (the Coverage dock's nearest miss).

        The window keeps what it shows until the new save has loaded; an unreadable
        save leaves it as it was and says why. ``wait`` blocks until done (tests, CLI).
        """
        path = Path(path)
        if self._closed:
            return
        pending = self.loader.pending
        if pending is not None and pending.kind == RELOAD:  # the open wins; the reload waits for its end
            self._reload_after_open = bool(self._reload_after_open) or self._reload_changed
        # start() ends the progress of a request still opening (the loader drops that request)
        self._progress.start(self, "Opening save", f"Opening {one_line(path.name)}…", self.loader.cancel)
        context = {"path": path, "content": content, "tick": tick, "npc": npc, "view": view, "reload": False, "explain": explain}
        self._request = self.loader.start(path, content, context=context, kind=OPEN)
        if wait:
            self.wait_for_load()

    def wait_for_load(self, timeout_ms: int = 600_000, loader: SaveLoader | None = None) -> None:
        """Process events until the current load (or ``loader``'s job) has finished (for tests and headless use)."""
        from PySide6.QtCore import QDeadlineTimer, QEventLoop

        loader = loader or self.loader
        deadline = QDeadlineTimer(timeout_ms)
        # The loop sleeps between events (the worker's signals wake it; the timer looks
        # at the deadline): a loop that only spun kept the GUI thread busy.
        wake = QTimer()
        wake.start(50)
        while loader.busy and not deadline.hasExpired():
            QApplication.processEvents(QEventLoop.AllEvents | QEventLoop.WaitForMoreEvents)
        wake.stop()
        QApplication.processEvents()
        self.finish_background()

    def background_busy(self) -> bool:
        """True while the views still do work of a load in slices on the GUI thread (``widgets.kit.slices``)."""
        return slices.any_busy(self)

    def finish_background(self) -> None:
        """Run the views' sliced work to its end now (headless use, screenshots, reports, tests)."""
        slices.finish_all(self)

    def _on_progress(self, fraction: float, message: str) -> None:
        self._progress.update(fraction, message)

    def _close_progress(self) -> None:
        self._progress.close()

    def _on_cancelled(self) -> None:
        self._close_progress()
        if self._request is not None and self._request.kind == RELOAD:
            self.statusBar().showMessage("Reload cancelled; still showing the save as it was read before.", 6000)
            return
        self.statusBar().showMessage("Opening cancelled; still showing the previous save.", 6000)
        self._open_ended_unshown()

    def _on_failed(self, message: str) -> None:
        self._close_progress()
        show_message(self, "critical", "Could not open the save", f"An unexpected error stopped the load:\n{message}")
        if self._request is not None and self._request.kind == OPEN:
            self._open_ended_unshown()

    def _open_ended_unshown(self) -> None:
        """An open ended without showing its save: the reload it held back runs now."""
        waiting, self._reload_after_open = self._reload_after_open, None
        if waiting is not None:
            self.reload(changed=waiting)

    def _on_loaded(self, play: Playthrough, context: dict, prepared: Prepared | None = None) -> None:
        self._close_progress()
        path = context["path"]
        if context.get("reload") and path != self.save_path:
            return  # a reload of a save no longer shown (the loader reports only its latest request)
        if not play.readable:
            reasons = "\n".join(f"• {f.code} at {f.location}: {f.message}" for f in play.findings[:5])
            if context.get("reload"):  # where it broke, as an open says it (README, "Opening saves"), first so 1040 px show it
                first = next((f for f in play.findings if f.code.startswith("F")), play.findings[0] if play.findings else None)
                where = f": {first.code} at {first.location}" if first is not None else ""
                why = f" ({first.message.removeprefix(path.name + ': ')})" if first is not None else ""
                self.statusBar().showMessage(one_line(f"{path.name} changed on disk and cannot be read now{where}; keeping the last good state{why}."), 10000)
                return
            show_message(self, "warning", "Cannot read this save", terminal_safe(f"{path} could not be read:\n\n{reasons}\n\nThe window keeps what it was showing."))
            self._open_ended_unshown()
            return
        keep_tick = self.session.tick if context.get("reload") else context.get("tick")
        keep_npc = self.session.npc if context.get("reload") else (self._npc_id(play, context.get("npc") or self._line_npc(play, context.get("explain"))))
        if not context.get("reload"):
            context["asked"] = self._not_as_asked(play, context.get("tick"), context.get("npc"), keep_npc)
        previous = self.session.playthrough
        previous_content = previous.content.root if previous is not None else None
        del previous  # its large parts are a mapped file: letting go of it unmaps the file
        self._hold_paint()
        # Once a load: the save name's tooltip and the warning look at the folder on disk.
        self.show_playthrough(play, path, context.get("content"), tick=keep_tick, npc=keep_npc, prepared=prepared)
        if context.get("view") in VIEWS:
            self.session.set_view(context["view"])
        if context.get("explain") and not context.get("reload"):
            self.session.explain(context["explain"])
        if not context.get("reload"):
            self._reload_after_open = None  # this save was read just now
            self._remember(path)
            context["switched"] = content_switch(previous_content, play.content.root)
            if not play.checks_pending:  # else once checked (``_on_checked``); the findings' count says "checking…"
                self._say_opened(play, context)
        else:
            changed = ": it changed on disk" if context.get("changed") else ""
            self.statusBar().showMessage(f"Reloaded {one_line(path.name)}{changed}.", 6000)
        self.save_watch.watch(path)  # a change of the save shown before is forgotten
        self.setWindowTitle(f"{one_line(path.name)} — Narrative debugger")
        self._update_status()
        self.tickbar.setFocus()
        self._held_paint.start(_let_paint(self._held))

    def _on_checked(self, play: Playthrough, context: dict, _prepared: Prepared | None = None) -> None:
        """The save shown is checked now (``SaveLoader.checked``): its whole findings."""
        if play is not self.session.playthrough:
            return
        # Checked before the first paint ended (a small save): the views and docks that
        # still wait to paint do now, so the findings come after them, as they would.
        self._held_paint.finish()
        self.session.refresh_findings()
        if not context.get("reload"):
            self._say_opened(play, context)
        self._update_status()

    def _say_opened(self, play: Playthrough, context: dict) -> None:
        """The status bar's word on a save opened and checked: its error findings (the
        Findings panel then comes to the front), a content folder switched, a folder
        that is not content."""
        name = one_line(context["path"].name)
        switched = context.get("switched", "")
        errors = sum(f.severity is Severity.ERROR for f in play.findings)
        if errors:
            self.statusBar().showMessage(f"Opened {name} with {counted(errors, 'error finding')}: see the Findings panel.{switched}", 10000)
            self.docks["findings"].show()
            self.docks["findings"].raise_()
        elif switched:
            self.statusBar().showMessage(f"Opened {name}.{switched}", 10000)
        elif self.statusBar().currentMessage().startswith("Opened ") or self.statusBar().currentMessage() == self._asked_said:
            self.statusBar().clearMessage()  # the word on the save opened before
        if uses_sample_content(play) and not errors:
            self.statusBar().showMessage(f"Opened {name} with the bundled sample content: there is no content/ folder beside it (C010).{switched}", 20000)
        if self._content_warning is not None:
            # Short and first: a long form is cut off behind the status bar's own labels;
            # the save name's tooltip keeps the whole reason.
            self.statusBar().showMessage(f"Warning: {one_line(Path(play.content.root).name)}/ is not a content folder (no prompt.yaml, npcs/, …): "
                                         "see the save name's tooltip.", 20000)
        if context.get("asked"):  # the tick or NPC asked for at launch, not shown as asked: said first
            shown = self.statusBar().currentMessage()
            self._asked_said = context["asked"] + (f" {shown}" if shown else "")
            self.statusBar().showMessage(self._asked_said, 20000)

    def _hold_paint(self) -> None:
        """Keep the central area and the shown docks from painting in this pass; they
        paint in the passes after it, the central area first, then a dock a pass.

        The pass that receives a new save refreshes every view and dock; repainting the
        whole window in that pass too would make one stall past the 50 ms an open may
        block the GUI thread (issue 10), even on a small save. Qt sends the paint that
        a slot asks for in the same pass as the slot, with no timer between, so the
        paint must wait for a timer; apart, the central area and each dock fit the
        budget. The models are filled now; until its pass, a widget shows the previous
        save's pixels."""
        self._held_paint.finish()  # widgets a previous load still holds
        self._held = []
        if self.isVisible():
            shown = [self.centralWidget()] + [d for d in self.docks.values() if d.isVisible()]
            self._held = [w for w in shown if w.updatesEnabled()]
            for widget in self._held:
                widget.setUpdatesEnabled(False)

    def with_paint_held(self, change) -> None:
        """Call ``change()``, which hands the views new data (a what-if's comparison), with
        the central area and the shown docks held from painting in this pass; they paint
        in the passes after it, one a pass (``_hold_paint``): at 1 000 000 events the
        views' refresh (~90 ms) and their paint (~80 ms) were one 166 ms stall together."""
        self._hold_paint()
        try:
            change()
        finally:
            self._held_paint.start(_let_paint(self._held))

    @staticmethod
    def _not_as_asked(play: Playthrough, tick: int | None, slug: str | None, npc: int | None) -> str:
        """What of an open's tick and NPC (``--tick``, ``--npc``) could not be shown as
        asked, said in a sentence or two; "" when all could."""
        said = []
        if slug and npc is None:  # short: a save may have thousands of NPCs (the NPC dock lists them)
            first = next(iter(play.save.npcs.values()), None)
            said.append(one_line(f"No NPC '{slug}' in this save: showing {first.slug if first is not None else 'none'}."))
        if tick is not None and tick > play.last_tick:
            said.append(past_end(tick, play.last_tick, went=True))
        return " ".join(said)

    @staticmethod
    def _line_npc(play: Playthrough, target: str | None) -> str | None:
        """The slug of the NPC a ``line:ID`` target's interaction clause names: the
        Coverage dock's nearest miss opens with that NPC chosen (the trial's opened with
        the first NPC, not the one the failing clause is about)."""
        if not target or not target.startswith("line:"):
            return None
        line = play.content.monologues.get(target.removeprefix("line:"))
        return line.interaction.target_slug if line is not None and line.interaction is not None else None

    @staticmethod
    def _npc_id(play: Playthrough, slug: str | None) -> int | None:
        if not slug:
            return None
        npc = play.save.npc_by_slug(slug)
        return npc.stable_id if npc else None

    def reload(self, changed: bool = False) -> None:
        """Read the open save again, keeping tick and NPC, with its progress (and Cancel)
        in the status bar as an open has.

        ``changed`` is True when the file watcher saw the file change (the status bar then
        says so); a manual reload (F5) only says it reloaded. A reload never cancels an
        open the user asked for (issue 35): while one runs, the reload waits, and runs
        only if the open ends without showing its save.
        """
        if self.save_path is None or self._closed:
            return
        pending = self.loader.pending
        if pending is not None and pending.kind == OPEN:
            self._reload_after_open = bool(self._reload_after_open) or changed
            if not changed:  # F5: say why nothing happens (the progress panel shows this in its place)
                self.statusBar().showMessage(f"Not reloading {one_line(self.save_path.name)}: {one_line(pending.path.name)} is being opened.", 6000)
            return
        self._progress.start(self, "Reloading save", f"Reloading {one_line(self.save_path.name)}…", self.loader.cancel)
        context = {"path": self.save_path, "content": self.content_dir, "reload": True, "changed": changed}
        self._reload_changed = changed
        self._request = self.loader.start(self.save_path, self.content_dir, context=context, kind=RELOAD)

    def _on_save_changed(self, path: Path) -> None:
        """The watched save changed on disk and is quiet again: read it again."""
        if not self._closed and path == self.save_path:
            self.reload(changed=True)

    def _on_save_gone(self, path: Path) -> None:
        if not self._closed and path == self.save_path:
            self.statusBar().showMessage(f"{one_line(path.name)} is gone from disk; waiting for it to come back.", 5000)

    # ----- recent files and settings -----
    def _remember(self, path: Path) -> None:
        recent = [p for p in self._recent() if p != str(path)]
        recent.insert(0, str(path))
        self.settings.setValue("recent_files", recent[:MAX_RECENT])
        self.settings.setValue("last_folder", str(path.parent))
        self._refresh_recent()

    def _recent(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _refresh_recent(self) -> None:
        """Rebuild File › Open recent from the files that still exist; gone ones are forgotten."""
        self.recent_menu.clear()
        known = self._recent()
        recent = [p for p in known if Path(p).is_file()]
        if recent != known:
            self.settings.setValue("recent_files", recent)
        for path in recent:
            # Escaped (a name may hold controls or a bidi override), elided in the middle (a
            # long one made the menu as wide as the screen), "&" a path's, not a mnemonic.
            shown = self.recent_menu.fontMetrics().elidedText(one_line(path), Qt.ElideMiddle, RECENT_MAX_PX)
            action = self.recent_menu.addAction(shown.replace("&", "&&"))
            action.setData(path)
            action.triggered.connect(lambda _=False, p=path: self.open_save(Path(p)))
        self.recent_menu.setEnabled(bool(recent))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._docks_sized and not self._layout_restored:
            # Default proportions, once the window has its real size.
            self._docks_sized = True
            layout.default_sizes(self, self.docks)

    def closeEvent(self, event) -> None:
        if self._persist:
            layout.save_layout(self, self.settings)
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop everything that could still call back (style.md rule 12); called by close.

        In order: the watch on the save (so no change on disk starts a load), the
        playback timer, every view's and dock's own workers (their ``shutdown``), then
        the loader, which cancels and waits for its threads. Idempotent; the window
        opens no save afterwards.
        """
        self._closed = True
        self.save_watch.stop()
        self.tickbar.set_playing(False)
        self._close_progress()
        for widget in [*self.views.values(), *(panel for panel, _, _ in self.panels.values())]:
            stop = getattr(widget, "shutdown", None)
            if callable(stop):
                stop()
        self.compare.shutdown()
        self.whatif.shutdown()
        self.loader.shutdown()

    # ----- drag and drop -----
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        for url in event.mimeData().urls():
            path = Path(url.toLocalFile())
            if path.suffix.lower() == ".png":
                report.open_report(self, path)
            else:
                self.open_save(path)
            break

    # ----- status and views -----
    def show_view_alone(self, view: str) -> None:
        """View › a view (Ctrl+1 to Ctrl+4): that view in front, leaving All views if it is
        on (there the shortcut changed nothing to see). Ctrl+0 shows all four again."""
        self.set_grid(False)
        self.session.set_view(view)
        self._show_view(view)

    def _show_view(self, view: str) -> None:
        if view in VIEWS and not self.grid_mode:
            self.tabs.setCurrentIndex(VIEWS.index(view))
        elif view in self.docks:
            self.docks[view].show()
            self.docks[view].raise_()

    def _update_status(self, tick: int | None = None) -> None:
        """Status bar: save, tick (the dragged one while dragging), game time, finding counts."""
        play = self.session.playthrough
        if play is None:
            return
        tick = self.session.tick if not isinstance(tick, int) else tick
        self.status_tick.setText(f"tick {tick:,} / {self.session.last_tick:,}  ·  {play.save.game_time(tick)}")  # grouped, as every view writes ticks
        errors = sum(f.severity is Severity.ERROR for f in play.findings)
        warnings = len(play.findings) - errors
        checking = " so far, checking…" if play.checks_pending else ""
        self.status_findings.setText(f"{counted(errors, 'error')}, {counted(warnings, 'warning')}{checking}")

    def show_playthrough(self, play: Playthrough, path: Path, content=None, tick: int | None = None, npc=None,
                         prepared: Prepared | None = None) -> None:
        """Shows ``play``, read from ``path`` with ``content`` elsewhere (the command
        line's ``screenshot``), at ``tick`` (u64) with ``npc`` (a StableId) selected, with
        the save's name in the status bar as an open through the loader writes it.
        ``prepared``: what the loader's ``prepare`` functions made for ``play``."""
        self.save_path = path
        self.content_dir = content
        self.session.load(play, tick=tick, npc=npc, prepared=prepared)
        self._content_warning = not_content_reason(play.content.root) if play.content.root is not None else None
        self._show_save_name()

    def _show_save_name(self) -> None:
        """Status bar: the save's name, its path, content folder and any content warning in
        the tooltip. Once a load (``_update_status`` runs at every step and drag frame)."""
        play = self.session.playthrough
        if play is None:
            return
        tip = None
        sample = uses_sample_content(play)
        if self.save_path is not None:
            tip = f"{one_line(self.save_path)}  ·  content folder: {one_line(play.content.root or 'none')}"
            if sample:
                tip += "  ·  warning (C010): no content/ folder beside the save, so the bundled sample content is used"
            if self._content_warning is not None:
                tip += f"  ·  warning: {one_line(self._content_warning)}"
        self.status_save.setText(one_line(play.save.label) + ("  ·  sample content" if sample else ""), tip)

    def _about(self) -> None:
        QMessageBox.about(self, "Narrative debugger", "Steps through Settled Reach saves: knowledge, interactions, relationships and NPC prompts.")


def uses_sample_content(play: Playthrough) -> bool:
    """Whether ``play`` was opened against the bundled sample content for want of a
    ``content/`` folder beside it (its C010 warning, ``Playthrough.open``)."""
    return any(f.code == "C010" for f in play.findings)


def content_switch(before: Path | None, now: Path | None) -> str:
    """What the status bar adds when a newly opened save is read with another content
    folder than the save shown before it ("" when it is the same, or nothing was open).

    File › Open takes the ``content/`` folder beside the new save, else the bundled
    sample content (README, "Content folder"), so opening a save from another folder
    can change what every check and prompt is judged against: this says so."""
    if before is None or now is None or _same_folder(before, now):
        return ""
    return f" Content folder: {one_line(now)} (was {one_line(before)})."


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (OSError, RuntimeError):
        return Path(a) == Path(b)


def _even_split(total: int, parts: int) -> list[int]:
    """``total`` pixels in ``parts`` near-equal sizes that add up exactly."""
    return [total * (k + 1) // parts - total * k // parts for k in range(parts)]


#: Bounds of the pixmap cache (KB). The timelines keep what each plot item draws as a
#: pixmap (``timelines.cache_drawing``), each up to a plot's size, and Qt keeps them in
#: QPixmapCache, 10 MB by default. With many NPCs (more curves and marker sets) they
#: do not fit: every step draws every curve, the grid and the bands again, about twice
#: the step of a cache that holds them.
PIXMAP_CACHE_MIN_KB = 64 * 1024
PIXMAP_CACHE_MAX_KB = 256 * 1024
#: Screenfuls of pixels the pixmap cache holds between those bounds.
PIXMAP_CACHE_SCREENS = 12


def pixmap_cache_kb(width: int, height: int, ratio: float = 1.0) -> int:
    """The QPixmapCache limit in KB for a screen of ``width`` x ``height`` device-independent
    pixels at device pixel ratio ``ratio``: ``PIXMAP_CACHE_SCREENS`` screenfuls of 32-bit
    pixels, within ``PIXMAP_CACHE_MIN_KB`` .. ``PIXMAP_CACHE_MAX_KB``."""
    screen_kb = max(0, width) * max(0, height) * ratio * ratio * 4 / 1024
    return int(min(PIXMAP_CACHE_MAX_KB, max(PIXMAP_CACHE_MIN_KB, PIXMAP_CACHE_SCREENS * screen_kb)))


def make_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication with the names QSettings uses and the pixmap cache's limit
    (``pixmap_cache_kb`` of the primary screen)."""
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setOrganizationName("SettledReach")
    app.setApplicationName("narrative-debugger")
    screen = app.primaryScreen()
    size = screen.size() if screen is not None else None
    ratio = screen.devicePixelRatio() if screen is not None else 1.0
    wanted = pixmap_cache_kb(size.width(), size.height(), ratio) if size is not None else PIXMAP_CACHE_MIN_KB
    QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), wanted))
    return app


def run_app(save: Path | None, content: Path | None, tick: int | None, npc: str | None) -> int:
    """Open the window on ``save`` (default: the bundled sample) and run the event loop."""
    app = make_app()
    window = MainWindow()
    layout.fit_to_screen(window)
    window.show()
    window.open_save(Path(save) if save else BUNDLED_SAVE, content, tick=tick, npc=npc)
    return app.exec()
