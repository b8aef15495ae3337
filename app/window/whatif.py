"""Tools › What if…: an edited past replayed and shown as a comparison (issue 38).

``WhatIfController`` belongs to the main window. It keeps the list of edits (``(target,
value)`` pairs as ``whatif --set`` takes them: a JSON pointer into the save, or a tuning
name), takes new ones from the What if… panel and from the Journal dock's "What if…
edit this entry" and the Interactions and Knowledge views' "What if… this
conversation's sentiment", runs ``models.whatif.run.what_if`` (the command's engine) in a child
process (``app/workers/engine.py`` ``WhatIfProcess``, followed by a worker thread of
``Jobs``), and hands the result to the session as a comparison with A = as recorded
(the open playthrough itself) and B = what if: the views draw B dashed and the
Differences dock lists what differs. Undo removes the last edit; Revert drops them all
and stops comparing; either, or another save, ends a what-if still running (its process).
"""

from __future__ import annotations

from narrative_debugger.app.workers.engine import ChildFailed, WhatIfProcess
from narrative_debugger.models.report.plain_text import one_line
from narrative_debugger.models.whatif.patch import PatchError, split_edits
from narrative_debugger.models.whatif.result import WhatIf
from narrative_debugger.widgets.kit.jobs import Jobs
from narrative_debugger.widgets.kit.prepared import Prepared
from narrative_debugger.widgets.timelines.compare import prebuild_tracks
from PySide6.QtCore import QObject, QTimer


def _whatif_job(job, play, path, content, operations, tuning, sets, tick) -> tuple[WhatIf, Prepared] | None:
    """What the worker runs: the what-if against the open playthrough (side A) and B's
    timeline tracks, made by a child process (``WhatIfProcess``), so that the GUI thread
    only draws them. Its progress goes to ``job.report(fraction 0..1, stage)``.

    Returns:
        The ``WhatIf`` (its ``comparison.a`` is ``play``), B's tracks kept for the
        overlay (``prebuild_tracks``), and the ``Prepared`` of what the views read of
        the comparison at ``tick`` (``Session.prepared_b``); None once ``job`` is
        cancelled (the process ended).

    Raises:
        PatchError: the edits cannot be applied (the child's message).
        ChildFailed: the child stopped on an unexpected error.
        ProcessEnded: the child ended without a word (killed, out of memory).
    """
    with WhatIfProcess(play, path, content, operations, tuning, sets, tick) as child:
        for message in child.messages(job.stop):
            kind = message[0]
            if kind == "progress":
                job.report(*message[1:])
            elif kind == "whatif":
                result, tracks, prepared = message[1]
                prebuild_tracks(result.comparison, tracks)
                return result, prepared
            elif kind == "refused":
                raise PatchError(message[1])
            elif kind == "failed":
                raise ChildFailed(message[1])
    return None


class WhatIfController(QObject):
    """The what-if edits and their worker, for one main window.

    Attributes:
        edits: the ``(target, value)`` pairs applied, in order.
        result: the ``WhatIf`` the views show (None: the recorded run alone).
        open_action: Tools › What if… (Ctrl+Shift+W): shows the panel.
    """

    def __init__(self, window) -> None:
        super().__init__(window)
        self.session = window.session
        self.panel = window.panels["whatif"][0]
        self.edits: list[tuple[str, object]] = []
        self.result: WhatIf | None = None
        self._jobs = Jobs(self)
        self.open_action = window._action("&What if…", self.show_panel, "Ctrl+Shift+W", "action-whatif")
        self.panel.applyRequested.connect(self._on_apply)
        self.panel.undoRequested.connect(self.undo)
        self.panel.revertRequested.connect(self.revert)
        journal = window.panels["journal"][0]
        journal.whatIfRequested.connect(self._on_entry_edit)
        for view in ("interactions", "knowledge"):  # "What if… this conversation's sentiment"
            window.views[view].whatIfRequested.connect(self._on_entry_edit)
        self.session.loaded.connect(self._on_loaded)
        self.session.comparisonChanged.connect(self._on_comparison)
        # File > Stop comparing ends a what-if that runs too (a first run has nothing
        # compared yet: the trial found the action greyed while it ran).
        window.compare.others_running.append(lambda: self.busy)
        window.compare.stop_action.triggered.connect(self._on_stop_comparing)

    @property
    def window(self):
        """The main window (the Qt parent)."""
        return self.parent()

    def show_panel(self) -> None:
        """Show and raise the What if… panel."""
        dock = self.window.docks.get("whatif")
        if dock is not None:
            dock.show()
            dock.raise_()
            self.panel.focus_first()

    @property
    def busy(self) -> bool:
        """True while a what-if runs."""
        return self._jobs.busy

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait for the running what-if's thread (its result still arrives through the event loop)."""
        return self._jobs.wait(timeout_s)

    # ----- edits -----
    def add_edits(self, pairs: list) -> bool:
        """Add ``pairs`` to the edits and run the what-if; a bad one is refused with a
        message in the panel, the edits unchanged. True when they were taken."""
        if not self.session.ready:
            self.panel.show_error("Open a save first.")
            return False
        try:
            split_edits(self.edits + list(pairs), said="")
        except PatchError as exc:
            self._refused(str(exc), exc.target)
            return False
        self._run(self.edits + list(pairs))
        return True

    def _on_apply(self, pairs: list) -> None:
        """The panel's Apply: the values typed are emptied once taken; a refused one stays."""
        if self.add_edits(pairs):
            self.panel.clear_typed()

    def undo(self) -> None:
        """Remove the last edit (and replay; with none left, back to the recorded run).
        While a what-if runs, Undo stops it: the edits in force stay as they were (the
        trial's Undo during a run dropped the edit shown too)."""
        if self.busy:
            self._jobs.cancel()
            self.panel.show_edits(self.edits)
            shown = f"the what-if of {len(self.edits)} edit(s) stays" if self.edits else "the recorded run"
            self.panel.show_stopped(f"Stopped before it ended: {shown}.")
            self.window.compare.update_actions()
            return
        if not self.edits:
            return
        if len(self.edits) == 1:
            self.revert()
            return
        self._run(self.edits[:-1])

    def revert(self) -> None:
        """Drop every edit: the views show the recorded run alone."""
        self._jobs.cancel()
        self.edits = []
        self.panel.clear_typed()  # a refused value too: every later Apply said its message again (trial 47)
        self.panel.show_edits(self.edits)
        self._leave()
        self.window.compare.update_actions()
        self.panel.show_idle("Reverted: the recorded run.")
        self.window.statusBar().showMessage("What if: reverted: the recorded run.", 6000)  # not the outcome's any more (trial 47)

    def _on_entry_edit(self, pointer: str, value: object) -> None:
        dock = self.window.docks.get("whatif")
        if dock is not None:
            dock.show()
            dock.raise_()  # its tab in front of the Monologues'
        self.add_edits([(pointer, value)])

    # ----- running -----
    def _run(self, edits: list) -> None:
        play = self.session.playthrough
        path = self.window.save_path
        try:
            operations, tuning, sets = split_edits(edits, said="")
        except PatchError as exc:
            self.panel.show_error(str(exc))
            return
        self.panel.show_busy(f"Replaying with {len(edits)} edit(s)…")
        self._jobs.run(_whatif_job, play, path, self.window.content_dir, operations, tuning, sets, self.session.tick,
                       latest="whatif", takes_job=True, on_progress=self.panel.show_progress,
                       on_done=lambda done: self._on_done(done, play, edits),
                       on_error=lambda exc: self._on_error(exc, play, edits))
        self.window.compare.update_actions()  # Stop comparing stops it

    def _on_done(self, done: tuple[WhatIf, Prepared] | None, play, edits: list) -> None:
        QTimer.singleShot(0, self.window.compare.update_actions)  # once the job counts as delivered
        if done is None or play is not self.session.playthrough:
            return  # cancelled, or another save was opened meanwhile
        result, prepared = done
        self.edits = list(edits)
        self.result = result
        self.panel.show_edits(self.edits)
        self.window.with_paint_held(lambda: self.session.set_comparison(result.comparison, prepared))
        self.panel.show_result(result)
        self.window._update_status()
        self.window.statusBar().showMessage(one_line(f"What if: {self.panel.message.text()}"), 10000)
        dock = self.window.docks.get("differences")
        if dock is not None and result.changed:
            dock.raise_()

    def _on_error(self, exc: Exception, play, edits: list) -> None:
        QTimer.singleShot(0, self.window.compare.update_actions)  # once the job counts as delivered
        if play is not self.session.playthrough:
            return
        # The edits in force are as they were: Undo and Revert only while there are some
        # (show_busy enabled them to stop the run; the trial found them enabled after a
        # refused first edit, and Undo did nothing).
        self.panel.show_edits(self.edits)
        if isinstance(exc, PatchError):
            self._refused(str(exc))
        elif isinstance(exc, ChildFailed):
            self._refused(f"The what-if stopped on an unexpected error: {exc}")
        else:
            self._refused(f"The what-if stopped on an unexpected error: {type(exc).__name__}: {exc}")

    def _refused(self, text: str, about: str | None = None) -> None:
        """A refusal or a failure: in the panel's message line (brought to the front: the
        trial's was behind the Monologues or scrolled away) and in the status bar.
        ``about``: the tuning name refused, whose cell's next change clears the message."""
        self.panel.show_error(text, about)
        dock = self.window.docks.get("whatif")
        if dock is not None:
            dock.show()
            dock.raise_()
        self.window.statusBar().showMessage(one_line(f"What if: {text}"), 15000)

    def _on_stop_comparing(self) -> None:
        """File > Stop comparing: a what-if that runs is stopped and its edits dropped, as
        a shown one's are (``_on_comparison``)."""
        if self.busy:
            self.revert()
            self.panel.show_idle("Stopped comparing: the edits were dropped.")
        self.window.compare.update_actions()

    def _leave(self) -> None:
        shown, self.result = self.result, None
        if shown is not None and self.session.comparison is shown.comparison:
            self.session.set_comparison(None)
            self.window._update_status()

    def _on_loaded(self) -> None:
        """A save was (re)opened: its edits are gone with the old playthrough."""
        self._jobs.cancel()
        self.edits, self.result = [], None
        self.panel.show_edits(self.edits)

    def _on_comparison(self) -> None:
        """Stop comparing, or a comparison with another save, ends the what-if."""
        if self.result is not None and self.session.comparison is not self.result.comparison:
            self.result = None
            self.edits = []
            self.panel.show_edits(self.edits)
            self.panel.show_idle("Not comparing any more: the edits were dropped.")

    def shutdown(self) -> None:
        """Cancel a what-if in progress (its process ends) and wait for its thread (window close)."""
        self._jobs.shutdown()
