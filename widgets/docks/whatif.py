"""The What if… panel (issue 38): set tuning values, apply, undo, revert.

The panel lists every tuning value (``models/domain/tuning.py``: the relationship
formula's constants, the level bounds, the prompt budget, each NPC's thresholds) with
its recorded value and an editable "What if" cell. It emits intents only; the app's
``WhatIfController`` keeps the list of edits, runs the what-if off the GUI thread and
shows the result as a comparison (A = as recorded, B = what if), then hands the panel
what to show: the edits, the progress, a bad value's message, what would not happen
and which prompts need a new LLM response.
"""

from __future__ import annotations

from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, tuning_values
from narrative_debugger.models.report.plain_text import one_line
from narrative_debugger.models.whatif.outcome import outcome_lines
from narrative_debugger.models.whatif.patch import PatchError, parse_set
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.plain_text import WrappedLabel
from narrative_debugger.widgets.kit.roles import DISPLAY as _DISPLAY
from narrative_debugger.widgets.kit.tables import RowsTableModel
from PySide6.QtCore import QEvent, QModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QPalette, QTextCursor
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QListWidget, QPlainTextEdit, QProgressBar,
                               QPushButton, QStyledItemDelegate, QTableView, QTabWidget, QVBoxLayout, QWidget)

NAME, RECORDED, WHAT_IF = 0, 1, 2
#: The message line while no what-if runs or is shown: how to make one.
HINT = "Type a value in the What if column, then Enter; or right-click a conversation or a Journal entry › What if…"
TUNING_TAB, OUTCOME_TAB = 0, 1


def show_value(value: object) -> str:
    """A tuning or field value as the panel writes it (JSON-like: 0.5, 3, "text")."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).lower() if isinstance(value, bool) else str(value)


class TuningModel(RowsTableModel):
    """Rows ``(name, recorded value)`` of ``tuning_values``, and the text typed in each
    row's What if cell (the only editable column).

    A model, not a table of items: a save with 3 000 NPCs lists about 9 000 values, and
    making an item for each cell held the GUI thread ~0.5 s on every open.
    """

    HEADERS = ("Tuning value", "Recorded", "What if")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.typed: list[str] = []
        self.in_force: dict[str, object] = {}
        self._row_of: dict[str, int] = {}

    def set_rows(self, rows) -> None:
        """Show ``rows`` (``(name, value)`` pairs) with every What if cell empty."""
        rows = list(rows)
        self.typed = [""] * len(rows)
        self.in_force = {}
        self._row_of = {name: r for r, (name, _) in enumerate(rows)}
        super().set_rows(rows)

    def set_in_force(self, values: dict[str, object]) -> None:
        """The tuning values the what-if shown applies (name -> value): their What if
        cells show them while nothing is typed there (the trial's emptied on Apply)."""
        self.in_force = dict(values)
        if self.rows:
            self.dataChanged.emit(self.index(0, WHAT_IF), self.index(len(self.rows) - 1, WHAT_IF))

    def row_of(self, name: str) -> int:
        """The row of tuning value ``name`` (-1 if absent)."""
        return self._row_of.get(name, -1)

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid():
            return None
        name, value = self.rows[index.row()]
        role, col = int(role), index.column()
        typed = self.typed[index.row()]
        if role in (_DISPLAY, int(Qt.EditRole)):
            if col == WHAT_IF and not typed and name in self.in_force:
                return show_value(self.in_force[name])
            return (name, show_value(value), typed)[col]
        if role == int(Qt.ToolTipRole):
            if col != WHAT_IF:
                return f"{name}: {show_value(value)} as recorded"
            if name in self.in_force:
                return f"{name}: {show_value(self.in_force[name])} in the what-if shown (Undo or Revert to remove it)"
            return f"Type the value {name} should have had, then Enter"
        if role == int(Qt.FontRole) and col == WHAT_IF and not typed and name in self.in_force:
            font = QFont()
            font.setBold(True)
            return font
        return None

    def flags(self, index: QModelIndex):
        flags = super().flags(index)
        return flags | Qt.ItemIsEditable if index.isValid() and index.column() == WHAT_IF else flags

    def setData(self, index: QModelIndex, value, role=Qt.EditRole) -> bool:  # noqa: N802 (Qt override)
        if not index.isValid() or index.column() != WHAT_IF or int(role) != int(Qt.EditRole):
            return False
        self.typed[index.row()] = str(value)
        self.dataChanged.emit(index, index)
        return True

    def clear_typed(self) -> None:
        """Empty every What if cell."""
        if any(self.typed):
            self.typed = [""] * len(self.rows)
            self.dataChanged.emit(self.index(0, WHAT_IF), self.index(len(self.rows) - 1, WHAT_IF))


class _EnterApplies(QStyledItemDelegate):
    """The What if cells' editor: Enter commits the value typed and asks to apply
    (``entered``); Tab commits it and moves on (``moveRequested``) to the next What if
    cell, to type another before applying (Qt's own Tab went to the next row's Name, and
    what was typed next was lost: trial 49).

    Signals:
        entered(): Enter committed the cell: apply.
        moveRequested(int): Tab committed the cell: edit the next What if cell (+1) or,
            Shift+Tab, the previous one (-1). A direction, never a tick (ticks are u64 and
            go through ``Signal(object)``).
    """

    entered = Signal()
    moveRequested = Signal(int)

    def setEditorData(self, editor, index) -> None:  # noqa: N802 (Qt override)
        super().setEditorData(editor, index)
        editor.selectAll()  # typing replaces the value shown (it was appended to: "1e3080.75")

    def eventFilter(self, editor, event) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.KeyPress and event.key() in (Qt.Key_Return, Qt.Key_Enter) and not event.modifiers() & Qt.ControlModifier:
            self.commitData.emit(editor)
            self.closeEditor.emit(editor, QStyledItemDelegate.NoHint)
            self.entered.emit()
            return True
        if event.type() == QEvent.KeyPress and event.key() in (Qt.Key_Tab, Qt.Key_Backtab):
            self.commitData.emit(editor)
            self.closeEditor.emit(editor, QStyledItemDelegate.NoHint)
            self.moveRequested.emit(-1 if event.key() == Qt.Key_Backtab or event.modifiers() & Qt.ShiftModifier else 1)
            return True
        return super().eventFilter(editor, event)


class WhatIfPanel(QWidget):
    """Tuning values to set, the edits made, and what the what-if found.

    Signals:
        applyRequested(list): ``[(name, value), ...]`` typed in the What if column, to
            add to the edits and run (the value parsed as JSON, else text).
        undoRequested(): remove the last edit.
        revertRequested(): drop every edit and show the recorded run alone.

    Attributes:
        table: the tuning values' view; ``model`` (``TuningModel``) holds them (Name,
            Recorded, What if; only What if is editable).
        edits: the list of edits applied, in order.
        message: what went wrong (a bad value), or what is being done.
        progress: the running what-if's progress (percent; busy until its first report).
        outcome: what would not happen, what now would, and the prompts to regenerate.
        apply_button, undo_button, revert_button: the actions.
    """

    applyRequested = Signal(list)
    undoRequested = Signal()
    revertRequested = Signal()

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("whatIfPanel")
        self.session = session
        self.model = TuningModel(self)
        self.table = QTableView(self)
        self.table.setObjectName("whatIfTuning")
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        # No SelectedClicked: its editor opens after the double-click interval, and keys typed
        # meanwhile opened another (the trial's "1e308" became "308"). A What if cell edits as
        # soon as it is current, its text selected, so typing replaces it.
        self.table.setEditTriggers(QAbstractItemView.CurrentChanged | QAbstractItemView.DoubleClicked
                                   | QAbstractItemView.EditKeyPressed | QAbstractItemView.AnyKeyPressed)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME, QHeaderView.Stretch)
        header.setSectionResizeMode(RECORDED, QHeaderView.Interactive)
        self.table.setColumnWidth(RECORDED, self.fontMetrics().horizontalAdvance("Recorded") + 24)
        self.table.setTextElideMode(Qt.ElideMiddle)  # "relationship.…_weight": the ends tell the names apart
        header.setSectionResizeMode(WHAT_IF, QHeaderView.Fixed)
        self.table.setColumnWidth(WHAT_IF, self.fontMetrics().horizontalAdvance("What if: 0.000") + 8)
        # Never only the header: three values at least (at 1040x700 the edits, the message and
        # the buttons left it none). The panel is never shorter than its layout needs (the
        # edits and the message's lines counted, ``event``), so in a short window the
        # dock takes that height from the NPC list rather than cut the table.
        self.table.setMinimumHeight(header.sizeHint().height() + 3 * self.table.verticalHeader().defaultSectionSize()
                                    + 2 * self.table.frameWidth())
        self._enter = _EnterApplies(self.table)
        self._enter.entered.connect(self.apply)
        self._enter.moveRequested.connect(self._move)
        self.table.setItemDelegateForColumn(WHAT_IF, self._enter)
        self.apply_button = QPushButton("&Apply", self)
        self.apply_button.setObjectName("whatIfApply")
        self.apply_button.setToolTip("Replay the save with the values typed and compare it with the recorded run (Ctrl+Return)")
        self.apply_button.setShortcut("Ctrl+Return")
        self.undo_button = QPushButton("&Undo", self)
        self.undo_button.setObjectName("whatIfUndo")
        self.undo_button.setToolTip("Remove the last edit and replay; while a what-if runs, stop it (the edits in force stay)")
        self.revert_button = QPushButton("&Revert", self)
        self.revert_button.setObjectName("whatIfRevert")
        self.revert_button.setToolTip("Drop every edit (and stop a what-if running): back to the recorded run")
        buttons = QWidget(self)
        row = QHBoxLayout(buttons)
        row.setContentsMargins(0, 0, 2, 0)
        row.addWidget(self.apply_button)
        row.addWidget(self.undo_button)
        row.addWidget(self.revert_button)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("whatIfProgress")
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.message = WrappedLabel("", self)  # every line of a long refusal, never cut
        self.message.setObjectName("whatIfMessage")
        self.message.setTextFormat(Qt.PlainText)  # values and pointers come from the user and the save
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.edits = QListWidget(self)
        self.edits.setObjectName("whatIfEdits")
        self.edits.setWordWrap(True)  # a journal pointer is long
        self.outcome = QPlainTextEdit(self)
        self.outcome.setObjectName("whatIfOutcome")
        self.outcome.setReadOnly(True)
        self.outcome.setLineWrapMode(QPlainTextEdit.WidgetWidth)
        self.outcome.setPlaceholderText("The levels reached, what would not have happened, what now would, and the prompts "
                                        "that need a new LLM response show here.")
        # The edits beside the values they set; the outcome alone in its tab (at 1040x700
        # the edits' rows left it two lines).
        tuning = QWidget(self)
        tuning_layout = QVBoxLayout(tuning)
        tuning_layout.setContentsMargins(0, 2, 0, 0)
        tuning_layout.addWidget(self.table, 1)
        edits_row = QHBoxLayout()  # the label beside the list: a row more for the values at 1040x700
        self._edits_label = QLabel("Edits applied:", tuning)
        edits_row.addWidget(self._edits_label, 0, Qt.AlignTop)
        edits_row.addWidget(self.edits, 1)
        tuning_layout.addLayout(edits_row)
        # The buttons and the message never scroll away (the trial's panel was one scroll
        # area: after Apply the message or the results were out of sight); the tuning
        # values and the outcome share the rest, and a result brings its tab to the front.
        # The buttons sit beside the tabs (their own row left the table one value at 1040x700).
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("whatIfTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(tuning, "Tuning values")
        self.tabs.addTab(self.outcome, "Outcome")
        self.tabs.setCornerWidget(buttons, Qt.TopRightCorner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(self.tabs, 1)
        self.apply_button.clicked.connect(self.apply)
        self.undo_button.clicked.connect(self.undoRequested)
        self.revert_button.clicked.connect(self.revertRequested)
        session.loaded.connect(self._on_loaded)
        # The message line's text when no error shows, and the What if cell (row, text) the
        # error shown is about: once that cell holds another value the error goes (the
        # trial's "abc" was refused, the cell emptied, and the message stayed until Apply).
        self._resting = ""
        self._refused_cell: tuple[int, str] | None = None
        self.model.dataChanged.connect(self._on_cells_changed)
        self.show_edits([])
        if session.ready:
            self._on_loaded()

    def event(self, event) -> bool:  # noqa: N802 (Qt override)
        done = super().event(event)
        if event.type() == QEvent.LayoutRequest:  # the edits shown or hidden, the message's lines
            needed = self.layout().totalMinimumSize().height()
            if needed != self.minimumHeight():
                self.setMinimumHeight(needed)
        return done

    # ----- session -> panel -----
    def _on_loaded(self) -> None:
        play = self.session.playthrough
        rows = tuning_values(DEFAULT_TUNING, list(play.save.npcs.values()), play.content.prompt.context_token_budget) if play else []
        self.model.set_rows(rows)
        self.show_edits([])
        self.outcome.clear()
        self.show_idle()
        self.tabs.setCurrentIndex(TUNING_TAB)

    def row_of(self, name: str) -> int:
        """The table row of tuning value ``name`` (-1 if absent)."""
        return self.model.row_of(name)

    def set_value(self, name: str, text: str) -> None:
        """Type ``text`` in the What if cell of ``name`` (as the user would)."""
        r = self.row_of(name)
        if r < 0:
            raise KeyError(name)
        self.model.setData(self.model.index(r, WHAT_IF), text)

    def focus_first(self) -> None:
        """Put the keyboard in the first What if cell (the sentiment weight), its editor
        open: typing a value there and pressing Enter applies it. Also when that cell was
        current already, or another row's (trial 49: a second Ctrl+Shift+W left the
        keyboard on the Name of the row last used)."""
        if self.model.rowCount():
            self.tabs.setCurrentIndex(TUNING_TAB)
            self._edit_row(0)

    def _edit_row(self, row: int) -> None:
        """The What if cell of ``row`` current, focused and edited."""
        index = self.model.index(row, WHAT_IF)
        self.table.setFocus()
        self.table.setCurrentIndex(index)
        if self.table.state() != QAbstractItemView.EditingState:
            self.table.edit(index)

    def _move(self, direction: int) -> None:
        """Tab in a What if cell: the next (``direction`` +1) or the previous (-1) What if cell, around."""
        rows = self.model.rowCount()
        if rows:
            self._edit_row((self.table.currentIndex().row() + direction) % rows)

    # ----- panel -> app -----
    def pending(self) -> list[tuple[str, object]]:
        """The ``(name, value)`` pairs typed in the What if column, in table order."""
        out = []
        for (name, _), typed in zip(self.model.rows, self.model.typed):
            if typed.strip():
                pair = parse_set(f"{name}={typed.strip()}", said="")
                if name not in self.model.in_force or self.model.in_force[name] != pair[1]:  # the value shown, committed unchanged
                    out.append(pair)
        return out

    def apply(self) -> None:
        """Apply: ask for the values typed to be added to the edits and run."""
        if self.table.state() == QAbstractItemView.EditingState:  # a cell still being typed in counts
            self.table.setCurrentIndex(QModelIndex())  # commits the open editor
        try:
            pairs = self.pending()
        except PatchError as exc:
            self.show_error(str(exc), exc.target)
            return
        if not pairs:
            if any(t.strip() for t in self.model.typed):  # what was typed is what is in force
                self.show_error("Nothing to apply: the values typed are in force already (bold in the What if column).")
            else:
                self.show_error("Nothing to apply: type a value in the What if column first.")
            return
        self.applyRequested.emit(pairs)  # the app empties the column once it takes them

    def clear_typed(self) -> None:
        """The values typed were taken as edits: empty the What if column. (A value
        refused stays in its cell, beside the message, to be corrected.)"""
        self.model.clear_typed()

    # ----- app -> panel -----
    def show_edits(self, edits: list[tuple[str, object]]) -> None:
        """List ``edits`` (``(target, value)`` pairs, in order), show the tuning values
        among them in their What if cells, and enable Undo and Revert."""
        self.model.set_in_force({target: value for target, value in edits if not target.startswith("/")})
        self.edits.clear()
        later = [t for t, _ in edits]
        for k, (target, value) in enumerate(edits):
            replaced = target in later[k + 1:]  # set again below: Undo comes back to it, but it is not in force
            text = one_line(f"{target} = {show_value(value)}") + (" (replaced below)" if replaced else "")
            self.edits.addItem(text)
            item = self.edits.item(self.edits.count() - 1)
            item.setToolTip(text)
            if replaced:
                item.setForeground(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        # Shown with edits only (the table needs the rows in a short dock), as tall as they
        # are, up to three (then it scrolls); in a short dock down to one row, never cut
        # off below the dock's edge (at 1040x700 a fixed three rows were).
        self.edits.setVisible(bool(edits))
        self._edits_label.setVisible(bool(edits))
        rows = max(1, min(self.edits.count(), 3))
        row = max(self.edits.sizeHintForRow(0), self.fontMetrics().height())  # the style's row height
        frame = 2 * self.edits.frameWidth() + 2
        self.edits.setMinimumHeight(row + frame)
        self.edits.setMaximumHeight(rows * row + frame)
        self.undo_button.setEnabled(bool(edits))
        self.revert_button.setEnabled(bool(edits))

    def show_busy(self, text: str) -> None:
        """The what-if runs: the busy bar (until its first ``show_progress``) and ``text``.
        Undo (stop this run) and Revert (stop, and drop every edit) can end it, the
        first run too (with no edit in force they were greyed, and nothing stopped it)."""
        self.undo_button.setEnabled(True)
        self.revert_button.setEnabled(True)
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.show()
        self._say(text, lasting=False)

    def show_progress(self, fraction: float, stage: str) -> None:
        """The running what-if's progress: ``fraction`` 0.0 .. 1.0 on the bar, and its
        stage in the message line (e.g. "Replaying with the edits… 42 %")."""
        self.progress.setRange(0, 100)
        self.progress.setValue(round(100 * max(0.0, min(1.0, fraction))))
        self.progress.setTextVisible(True)
        self.progress.show()
        self._say(f"{stage[:1].upper()}{stage[1:]}… {self.progress.value()} %", lasting=False)

    def show_error(self, text: str, about: str | None = None) -> None:
        """A bad value or a failed run: ``text``, in the message line (no dialog).

        Args:
            about: the tuning name whose value was refused, if any: while its What if
                cell holds the text refused the message stays; once the cell holds
                another value (or none), the message line says again what it said before.
        """
        self.progress.hide()
        self.message.setStyleSheet("color: #b00020;")
        self.message.setText(one_line(text))
        row = self.row_of(about) if about else -1
        self._refused_cell = (row, self.model.typed[row]) if row >= 0 and self.model.typed[row].strip() else None

    def _say(self, text: str, lasting: bool = True) -> None:
        """``text`` in the message line, not an error. A ``lasting`` one (where things
        stand: the hint, the what-if shown, a stop) is what the line says again once an
        error about a cell goes; a run's progress is not (it ended, or says more soon)."""
        if lasting:
            self._resting = text
        self._refused_cell = None
        self.message.setStyleSheet("")
        self.message.setText(text)

    def _on_cells_changed(self, *_args) -> None:
        if self._refused_cell is None:
            return
        row, text = self._refused_cell
        if row >= len(self.model.typed) or self.model.typed[row] != text:
            self._say(self._resting)

    def show_stopped(self, text: str) -> None:
        """A run was stopped before it ended: ``text`` says what is shown; the outcome of
        the what-if still shown stays."""
        self.progress.hide()
        self._say(text)

    def show_idle(self, text: str = "") -> None:
        """Nothing runs and no what-if is shown (reverted, or the comparison ended):
        ``text`` says where things stand (default ``HINT``: how to make one), and the last
        what-if's outcome is cleared."""
        self.progress.hide()
        self._say(text or HINT)
        self.outcome.clear()

    def show_result(self, result) -> None:
        """A ``models.whatif.result.WhatIf``: a summary in the message line, and in the
        Outcome tab what changes (``models.whatif.outcome.outcome_lines``: the levels and
        scores reached, score curves that part mid-run, what would not happen, what now
        would, the prompts to regenerate; never blank)."""
        self.progress.hide()
        count = len(result.comparison.differences())
        if not result.changed:
            self._say("Nothing changes: B agrees with the recorded run.")
        else:
            d = result.comparison.divergence
            first = f", the first at tick {d.tick:,}" if d is not None and d.tick is not None else ""
            self._say(f"B differs from the recorded run in {count:,} way{'s' * (count != 1)}{first}: see Differences and the dashed curves.")
        # The levels, scores and prompts one paragraph each (wrapped), so that a designer's
        # answer fits the box: one line an NPC cut the prompts off at 1440x900 (trial, stop 46).
        # Never the placeholder once a what-if is shown (the trial's blank Outcome beside
        # "B differs … in 2 ways": a score that parted mid-run and ended the same).
        self.outcome.setPlainText("\n".join(outcome_lines(result)))
        self.tabs.setCurrentIndex(OUTCOME_TAB)  # the result in sight, from its first line
        self.outcome.moveCursor(QTextCursor.Start)
        self.outcome.verticalScrollBar().setValue(0)
