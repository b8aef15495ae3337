"""File › Compare with…: comparing the open save with another save or content folder (issue 13).

``CompareController`` belongs to the main window. It offers the menu actions, runs
``open_and_compare`` in a worker thread (``SaveLoader`` with a job; the GUI thread
never waits), and hands the result to the session, whose views then show side B.
File › Stop comparing gives the single-save views back.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from narrative_debugger.app.workers.progress import WorkProgress
from narrative_debugger.app.workers.loader import SaveLoader
from narrative_debugger.models.compare.comparison import Comparison, open_and_compare
from narrative_debugger.models.report.plain_text import one_line, terminal_safe
from narrative_debugger.widgets.kit.plain_text import show_message
from narrative_debugger.widgets.timelines.compare import prebuild_tracks
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog


def _compare_job(a, path, content, *, progress=None, cancelled=None):
    """What the worker thread runs: open B and compare, then build B's timeline tracks
    (seconds on a large save) so that the GUI thread only draws them."""
    outcome = open_and_compare(a, path, content, progress=progress, cancelled=cancelled)
    if isinstance(outcome, Comparison):
        prebuild_tracks(outcome)
    return outcome


class CompareController(QObject):
    """Compare actions and their worker, for one main window.

    Attributes:
        loader: the ``SaveLoader`` that runs comparisons.
        compare_save_action, compare_content_action, stop_action: the File menu actions.
    """

    def __init__(self, window, save_filter: str) -> None:
        super().__init__(window)  # the window is only ever reached as the Qt parent: no reference cycle
        self.session = window.session
        self.save_filter = save_filter
        self.loader = SaveLoader(self)
        self.loader.progress.connect(self._on_progress)
        self.loader.loaded.connect(self._on_compared)
        self.loader.cancelled.connect(self._on_cancelled)
        self.loader.failed.connect(self._on_failed)
        self._progress = WorkProgress()
        self.last_error: str | None = None
        self._front_before = None  # the bottom tab in front when comparing began
        self.compare_save_action = window._action("Another &save…", self.choose_save, "Ctrl+Shift+D", "action-compare-save")
        self.compare_content_action = window._action("Another &content folder…", self.choose_content, None, "action-compare-content")
        self.stop_action = window._action("Stop &comparing", self.stop, None, "action-stop-comparing")
        #: Callables that say another comparison is being made (the What if's run, whose
        #: own handler of ``stop_action`` stops it): Stop comparing is offered then too.
        self.others_running: list = []
        self.session.loaded.connect(self.update_actions)
        self.session.comparisonChanged.connect(self.update_actions)
        self.session.comparisonChanged.connect(self.sync_dock)
        self.update_actions()

    @property
    def window(self):
        """The main window (the Qt parent)."""
        return self.parent()

    def _on_cancelled(self) -> None:
        self._close_progress()
        self.window.statusBar().showMessage("Comparison cancelled.", 6000)

    def add_to_menu(self, menu) -> None:
        """Add ``Compare with`` (a save, or a content folder) and ``Stop comparing`` to ``menu``."""
        sub = menu.addMenu("Co&mpare with")
        sub.setObjectName("menu-compare")
        sub.addAction(self.compare_save_action)
        sub.addAction(self.compare_content_action)
        menu.addAction(self.stop_action)

    def update_actions(self) -> None:
        """Enable the menu's actions for the session as it is: Stop comparing while a
        comparison is shown or another one is being made (``others_running``)."""
        ready = self.session.ready
        self.compare_save_action.setEnabled(ready)
        self.compare_content_action.setEnabled(ready)
        self.stop_action.setEnabled(self.session.comparison is not None or any(running() for running in self.others_running))

    def sync_dock(self) -> None:
        """Show the Differences dock while comparing and hide it otherwise (README: the
        Differences panel lists them "while comparing"); called on every comparison change,
        after Reset layout and after a saved layout is restored."""
        dock = self.window.docks.get("differences")
        comparing = self.session.comparison is not None
        # isHidden, not isVisible: before the window is first shown every dock reads
        # "not visible", so a restored layout's visible Differences dock was kept.
        if dock is not None and dock.isHidden() == comparing:
            if comparing:
                self._front_before = self._front_tab()
            dock.setVisible(comparing)
            if not comparing:
                # Qt puts the next tab in front (an empty Content): the one that was in
                # front before comparing comes back, else the Journal.
                front, self._front_before = self._front_before, None
                journal = self.window.docks.get("journal")
                front = front if front is not None and not front.isHidden() else journal
                if front is not None:
                    front.raise_()

    def _front_tab(self):
        """The dock in front of the Journal's tab group (None when none shows: a window
        not yet shown)."""
        journal = self.window.docks.get("journal")
        if journal is None:
            return None
        group = [journal, *self.window.tabifiedDockWidgets(journal)]
        return next((d for d in group if d.isVisible() and not d.visibleRegion().isEmpty()), None)

    # ----- choosing -----
    def choose_save(self) -> None:
        folder = str(self.window.save_path.parent) if self.window.save_path else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self.window, "Compare with another save", folder, self.save_filter)
        if path:
            self.compare_with(Path(path), self.window.content_dir)

    def choose_content(self) -> None:
        start = str(self.window.content_dir or (self.window.save_path.parent if self.window.save_path else Path.home()))
        folder = QFileDialog.getExistingDirectory(self.window, "Compare with another content folder", start)
        if folder:
            self.compare_with(self.window.save_path, Path(folder))

    def compare_with(self, path: Path | None, content: Path | None = None, *, wait: bool = False, quiet: bool = False) -> None:
        """Open ``path`` (with ``content``) as side B and compare, in the worker thread.

        For one save under two content folders, ``path`` is the open save. ``wait``
        processes events until done (tests, screenshots); ``quiet`` puts why B could
        not be read in ``last_error`` instead of a message box (headless use).
        """
        self.last_error = None
        play = self.session.playthrough
        if path is None or play is None or not self.session.ready:
            return
        self._close_progress()
        self._progress.start(self.window, "Comparing", f"Comparing with {one_line(Path(path).name)}…", self.loader.cancel)
        job = partial(_compare_job, play)
        self.loader.start(Path(path), content, context={"a": play, "path": Path(path), "quiet": quiet}, job=job)
        if wait:
            self.window.wait_for_load(loader=self.loader)

    def stop(self) -> None:
        """Leave comparison: the views show the open save alone again."""
        if self.loader.busy:
            self.loader.cancel()
        if self.session.comparison is not None:
            self.session.set_comparison(None)
            self.window._update_status()  # the last tick is A's again, even when the tick did not move
            self.window.statusBar().showMessage("Stopped comparing.", 4000)

    # ----- worker results -----
    def _on_progress(self, fraction: float, message: str) -> None:
        self._progress.update(fraction, message)

    def _close_progress(self) -> None:
        self._progress.close()

    def _on_failed(self, message: str) -> None:
        self._close_progress()
        show_message(self.window, "critical", "Could not compare", f"An unexpected error stopped the comparison:\n{message}")

    def _on_compared(self, outcome, context: dict) -> None:
        self._close_progress()
        if context["a"] is not self.session.playthrough:
            return  # another save was opened meanwhile: this comparison is about the old one
        if not isinstance(outcome, Comparison):
            reasons = "\n".join(f"• {f.code} at {f.location}: {f.message}" for f in outcome.findings[:5])
            self.last_error = f"{context['path']} could not be read: {reasons}"
            if context["quiet"]:
                return
            show_message(self.window, "warning", "Cannot compare", terminal_safe(f"{context['path']} could not be read:\n\n{reasons}"))
            return
        self.session.set_comparison(outcome)
        self.window._update_status()
        count = len(outcome.differences())
        what = "agrees with A on everything compared" if count == 0 else f"differs from A in {count:,} ways: see the Differences panel"
        self.window.statusBar().showMessage(f"B ({outcome.b.save.label}, {outcome.b.content.root}) {what}.", 10000)
        dock = self.window.docks.get("differences")
        if dock is not None:
            dock.raise_()  # sync_dock has shown it

    def shutdown(self) -> None:
        """Cancel a comparison in progress and wait for its thread (window close)."""
        self._close_progress()
        self.loader.shutdown()
