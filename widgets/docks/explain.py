"""The Explain dock: the answer to "Why?" for one target, following the tick (issue 11).

It shows the target's summary sentence; for numbers, a waterfall of the chain (one
pyqtgraph bar per step from its value before to its value after, coloured by rule;
folded older steps as one grey bar from 0); and the list of steps. Selecting a step
moves the session to that entry (its tick, its NPC, its own journal row). When the
tick moves, the same target is explained again at the new tick.

Explanations are computed on a worker thread (a ``kit.jobs`` job of the view, one
at a time): the first question about an NPC value on a large save reads its
track once, which can take longer than a frame. Stale answers are dropped.
"""

from __future__ import annotations

import zlib

import pyqtgraph as pg
from narrative_debugger.models.explain import Explanation, UnknownTarget, explain
from narrative_debugger.models.explain.chain import fmt_signed, fmt_value
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.widgets.kit.plain_text import WrappedLabel
from narrative_debugger.widgets.kit.plot_palette import PlotPalette
from narrative_debugger.widgets.kit.state_colors import ink_tint
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.jobs import Jobs
from narrative_debugger.widgets.kit.tables import HeaderedTableModel, ShareColumns, read_only_table
from narrative_debugger.widgets.kit.roles import DECORATION as _DECORATION, DISPLAY as _DISPLAY, FOREGROUND as _FOREGROUND, TOOLTIP as _TOOLTIP
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QFrame, QHBoxLayout, QLabel, QScrollArea, QSplitter, QToolButton,
                               QVBoxLayout, QWidget)

#: Colours of the rules the chains use most; any other rule gets one from PALETTE.
RULE_COLOURS = {
    "delta formula": "#43a047",
    "walk-away penalty": "#e53935",
    "stress walk_away": "#fb8c00",
    "stress argument": "#f4511e",
    "stress rest": "#1e88e5",
    "walk-away": "#8e24aa",
    "interaction counters": "#00897b",
    "reference added": "#43a047",
    "oldest dropped past 10": "#fb8c00",
    "duplicate ignored": "#9e9e9e",
    "story cards ≤ 40 % of available": "#6d4c41",
    "history newest first within its budget": "#3949ab",
}
PALETTE = ("#5e35b1", "#00acc1", "#c0ca33", "#d81b60", "#6d4c41", "#546e7a", "#7cb342", "#fdd835")
FOLDED_COLOUR = "#b0b0b0"
#: Outline of a refused step's bar (a dropped card's would-be tokens).
REFUSED_COLOUR = "#d32f2f"
#: Room kept above the lore budget line for its label, as a share of the chart's span.
BUDGET_LABEL_ROOM = 0.3


def rule_colour(rule: str) -> QColor:
    """The colour of a rule (by its name before the seed reference), stable across runs."""
    short = rule.split(" (")[0]
    hexa = RULE_COLOURS.get(short) or PALETTE[zlib.crc32(short.encode()) % len(PALETTE)]
    return QColor(hexa)


def _show(value) -> str:
    """A value for the dock: scalars as ``why`` prints them (``fmt_value``: score points
    with 2 decimals), a dict as ``key: value, ...``, a list as its length."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_show(v)}" for k, v in value.items())
    if isinstance(value, list):
        return f"{len(value)} items"
    return fmt_value(value)


class StepsModel(HeaderedTableModel):
    """The steps of one explanation, one row each, oldest first (a folded row first when any)."""

    HEADERS = ("#", "Tick", "Event", "Rule", "Before → after", "Detail")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.explanation: Explanation | None = None

    def set_explanation(self, exp: Explanation | None) -> None:
        self.beginResetModel()
        self.explanation = exp
        self.endResetModel()

    @property
    def _offset(self) -> int:
        return 1 if self.explanation is not None and self.explanation.folded is not None else 0

    def step_at(self, row: int):
        """The Step at ``row`` (None for the folded row or outside)."""
        k = row - self._offset
        steps = self.explanation.steps if self.explanation is not None else []
        return steps[k] if 0 <= k < len(steps) else None

    def row_of(self, journal_index: int | None) -> int:
        """The row of the step with this journal index, or -1."""
        if self.explanation is None or journal_index is None:
            return -1
        for k, s in enumerate(self.explanation.steps):
            if s.journal_index == journal_index:
                return k + self._offset
        return -1

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 (Qt override)
        if parent.isValid() or self.explanation is None:
            return 0
        return len(self.explanation.steps) + self._offset

    def data(self, index: QModelIndex, role=Qt.DisplayRole):
        if not index.isValid() or self.explanation is None:
            return None
        role = int(role)
        step = self.step_at(index.row())
        col = index.column()
        if step is None:  # the folded row
            folded = self.explanation.folded
            if role == _DISPLAY:
                if col == 0:
                    return "…"
                if col == 2:
                    return f"{folded.count} older"
                if col == 5:
                    parts = [f"{n} × {rule.split(' (')[0]}" + (f" (Σ {fmt_signed(s)})" if self.explanation.numeric else "") for rule, (n, s) in folded.by_rule.items()]
                    return "folded: " + "; ".join(parts)
            if role == _FOREGROUND:
                return QBrush(QColor("#757575"))
            return None
        if role == _DISPLAY:
            if col == 0:
                return str(step.journal_index) if step.journal_index >= 0 else ""
            if col == 1:
                return f"{step.tick:,}"
            if col == 2:
                return step.event
            if col == 3:
                return step.rule.split(" (")[0]
            if col == 4:
                return f"{_show(step.before)} → {_show(step.after)}"
            if col == 5:
                return step.detail
        if role == _DECORATION and col == 3:
            return rule_colour(step.rule)
        if role == _TOOLTIP:
            return f"{step.rule}\n{step.detail}"
        return None


class Waterfall(pg.PlotWidget):
    """Bars from each step's value before to its value after, coloured by rule."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent, background="w")
        self.setObjectName("explainWaterfall")
        self.setMenuEnabled(False)
        self.hideButtons()
        self.showGrid(x=False, y=True, alpha=0.3)
        self.getPlotItem().getAxis("bottom").setLabel("step (oldest first)")
        self.bars: pg.BarGraphItem | None = None
        self.step_ticks: list[int] = []
        self._step_count = 0
        self.refused_bars: list[int] = []  # x of the hatched bars of refused steps
        self.setMinimumSize(160, 100)  # beside the steps in a dock half of a 1040-pixel window
        self.plot_palette = PlotPalette(self, (self.getPlotItem(),))  # light or dark, as the palette

    def set_explanation(self, exp: Explanation | None) -> None:
        """Draw the chain of a numeric explanation (clears for anything else)."""
        self.clear()
        self.bars = None
        self.refused_bars = []
        self.threshold_line: pg.InfiniteLine | None = None
        self.budget_line: pg.InfiniteLine | None = None
        self.set_step_ticks(0)
        if exp is None or not exp.numeric or not exp.steps:
            return
        x, y0, heights, brushes, pens = [], [], [], [], []
        outline = pg.mkPen("#424242", width=0.5)
        k = 0
        if exp.folded is not None:
            x.append(k)
            y0.append(0)
            heights.append(exp.folded.total)
            brushes.append(pg.mkBrush(FOLDED_COLOUR))
            pens.append(outline)
            k += 1
        for n, step in enumerate(exp.steps):
            x.append(k)
            y0.append(step.before)
            reach = exp.refused.get(n)
            if reach is not None:  # refused (a dropped card): the change it asked for, hatched, crossing the limit
                heights.append(reach - step.before)
                brushes.append(QBrush(rule_colour(step.rule), Qt.BDiagPattern))
                pens.append(pg.mkPen(REFUSED_COLOUR, width=1.5))
                self.refused_bars.append(k)
            else:
                change = step.after - step.before
                heights.append(change if change else 1e-9)
                brushes.append(pg.mkBrush(rule_colour(step.rule)))
                pens.append(outline)
            k += 1
        self.bars = pg.BarGraphItem(x=x, y0=y0, height=heights, width=0.8, brushes=brushes, pens=pens)
        self.addItem(self.bars)
        self.set_step_ticks(k)
        lore_budget = exp.extra.get("lore_budget")
        if lore_budget is None:
            # The value reached; a card's chart has one line, its budget (the value line
            # ran through the budget's label and read as a second budget).
            self.addItem(pg.InfiniteLine(pos=exp.steps[-1].after, angle=0, pen=pg.mkPen("#424242", style=Qt.DashLine)))
        threshold = exp.extra.get("threshold")
        if threshold is not None:
            # The label's left edge sits near the plot's left edge (pyqtgraph centres it on
            # its position, which cut it to "eshold 30"); on the side of the line towards the
            # plot's middle, as pyqtgraph picks it.
            line = pg.InfiniteLine(pos=threshold, angle=0, pen=pg.mkPen("#d32f2f", style=Qt.DotLine), label=f"threshold {threshold}",
                                   labelOpts={"position": 0.02, "color": "#d32f2f", "anchors": [(0, 0), (0, 1)]})
            self.threshold_line = line
            self.addItem(line)
        if lore_budget is not None:  # a story card: the share of available tokens the cards may use
            # Its label sits above the line, at the left: only a refused card's bar rises
            # past the budget, and the last step (the card asked about) is at the right.
            colour = ink_tint(QColor(RULE_COLOURS["story cards ≤ 40 % of available"]), self.palette()).name()
            line = pg.InfiniteLine(pos=lore_budget, angle=0, pen=pg.mkPen(colour, width=1.5, style=Qt.DotLine),
                                   label=f"lore budget {lore_budget}",
                                   labelOpts={"position": 0.02, "color": colour, "anchors": [(0, 1), (0, 1)]})
            line.setZValue(20)  # over the bars: a bar hid the end of its label
            self.budget_line = line
            self.addItem(line)
        self.getPlotItem().enableAutoRange()
        lines = [line.value() for line in (self.threshold_line, self.budget_line) if line is not None]
        if lines:  # an InfiniteLine is not part of the auto range: a budget above every bar was off the plot
            tops = [v for a, h in zip(y0, heights) for v in (a, a + h)]
            low, high = min(0, *tops, *lines), max(*tops, *lines)
            if self.budget_line is not None:  # room above the budget line for its label
                high = max(high, lore_budget + BUDGET_LABEL_ROOM * (high - low))
            self.getPlotItem().setYRange(low, high, padding=0.12)


    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        # A resize comes during pg.PlotWidget's own __init__, and after its close (no plot item).
        count = self.__dict__.get("_step_count", 0)
        if count and self.getPlotItem() is not None:
            self.set_step_ticks(count)  # as many labels as the new width holds

    def set_step_ticks(self, count: int) -> None:
        """Label the x axis with whole step numbers only (0 … ``count`` - 1), at most ~12
        labels, fewer on a narrow chart (one per 28 pixels: "10121416" ran together).

        pyqtgraph's automatic ticks would put 0.5 steps on a short chain; ``count`` 0 clears.
        """
        axis = self.getPlotItem().getAxis("bottom")
        self._step_count = count
        if count <= 0:
            self.step_ticks: list[int] = []
            axis.setTicks(None)
            return
        most = max(2, min(12, self.width() // 28))
        stride = max(1, -(-count // most))
        self.step_ticks = list(range(0, count, stride))
        axis.setTicks([[(i, str(i)) for i in self.step_ticks], []])


def _answer(play, target: str, tick: int, builders: dict[int, PromptBuilder]) -> Explanation:
    """Explain ``target`` at ``tick`` (a worker thread); one PromptBuilder per playthrough is kept."""
    builder = builders.get(id(play))
    if builder is None:
        if len(builders) >= 2:  # A and B of a comparison are kept; an older one goes
            builders.clear()
        builder = builders[id(play)] = PromptBuilder(play)
    return explain(play, target, tick, builder=builder)


class ExplainView(QWidget):
    """The Explain dock's widget: summary, waterfall and steps of the session's "Why?" target.

    Attributes:
        target: the target explained (``models.explain`` form) or None.
        explanation: the last answer shown.
        title, summary: labels (plain text: saves hold plain text).
        chart: the Waterfall.
        model, table: the steps.
        detail: the selected (else the latest) step's rule and arithmetic, under the steps.
        scroll: holds the summary, chart, steps and detail; a dock too short for them scrolls.
    """

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("explainView")
        self.session = session
        self.target: str | None = None
        self.explanation: Explanation | None = None
        self._closed = False
        self._selecting = False
        self._builders: dict[int, PromptBuilder] = {}
        self._signature: tuple | None = None
        # One question at a time; a newer one supersedes the one waiting its turn.
        self._jobs = Jobs(self)

        self.title = QLabel("Nothing asked yet", self)
        self.title.setObjectName("explainTitle")
        self.title.setTextFormat(Qt.PlainText)
        body = QWidget()  # in a scroll area: a short dock scrolls rather than cut a line (1040x700)
        self.summary = WrappedLabel("Select a value in any view and press F1 (or right-click › Why?).", body)
        self.summary.setObjectName("explainSummary")
        self.summary.setTextFormat(Qt.PlainText)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.chart = Waterfall(body)
        self.model = StepsModel(self)
        self.table = read_only_table(self.model, "explainSteps", body)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.verticalHeader().hide()
        # The long arithmetic and rule text is shown whole, wrapped, in a pane under the
        # steps (the selected step, else the latest) instead of a column needing a
        # horizontal scroll; the row's tooltip carries it too.
        self.table.setWordWrap(False)
        self.table.setColumnHidden(StepsModel.HEADERS.index("Detail"), True)
        # Event and Rule (whole in the detail pane and the tooltip) give way, so Before →
        # after stays in view without a horizontal scroll bar, also beside the chart in a
        # dock half of a 1040-pixel window.
        self.columns = ShareColumns(self.table, (StepsModel.HEADERS.index("Event"), StepsModel.HEADERS.index("Rule")),
                                    stretch=StepsModel.HEADERS.index("Rule"))
        # Never only the header: two steps at least (at 1040x700 the detail's lines took them all).
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height()
                                    + 2 * self.table.verticalHeader().defaultSectionSize() + 2 * self.table.frameWidth())
        self.detail = WrappedLabel("", body)
        self.detail.setObjectName("explainDetail")
        self.detail.setTextFormat(Qt.PlainText)
        self.detail.setTextInteractionFlags(Qt.TextSelectableByMouse)
        # The dock is wide and short (tabbed with the Journal): chart beside the steps, the
        # step's arithmetic under both, as wide as the dock (fewer lines than under the steps).
        split = QSplitter(Qt.Horizontal, body)
        split.addWidget(self.chart)
        split.addWidget(self.table)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        # In a comparison or what-if, which side is explained: A (the open save, as
        # recorded) or B (the compared save, or the what-if with its tuning, issue 38).
        self.side_a = QToolButton(self)
        self.side_a.setObjectName("explainSideA")
        self.side_a.setText("A")
        self.side_a.setToolTip("Explain side A: the open save, as recorded")
        self.side_b = QToolButton(self)
        self.side_b.setObjectName("explainSideB")
        self.side_b.setText("B")
        self.side_b.setToolTip("Explain side B: the compared save, or the what-if with its edits and tuning")
        self.sides = QButtonGroup(self)
        for button in (self.side_a, self.side_b):
            button.setCheckable(True)
            button.setAutoRaise(True)
            self.sides.addButton(button)
        self.side_a.setChecked(True)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.title, 1)
        head.addWidget(self.side_a)
        head.addWidget(self.side_b)
        self._show_sides()
        layout.addLayout(head)
        column = QVBoxLayout(body)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.summary)
        column.addWidget(split, 1)
        column.addWidget(self.detail)
        # The summary and the arithmetic keep every line (WrappedLabel) and the steps two
        # rows: a dock shorter than that scrolls (the trial's cut the arithmetic mid-line).
        self.scroll = QScrollArea(self)
        self.scroll.setObjectName("explainScroll")
        self.scroll.setWidget(body)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        layout.addWidget(self.scroll, 1)

        self.table.selectionModel().selectionChanged.connect(self._on_step_selected)
        session.explainRequested.connect(self.set_target)
        session.tickChanged.connect(self._on_tick)
        session.loaded.connect(self._on_loaded)
        session.comparisonChanged.connect(self._on_comparison)
        self.sides.buttonToggled.connect(self._on_side)

    @property
    def side(self) -> str:
        """``"a"`` or ``"b"``: the side explained (always A outside a comparison)."""
        return "b" if self.side_b.isChecked() and self.session.comparison is not None else "a"

    def set_side(self, side: str) -> None:
        """Explain side ``"a"`` or ``"b"`` (B only in a comparison); asks again."""
        (self.side_b if side == "b" else self.side_a).setChecked(True)

    def _show_sides(self) -> None:
        shown = self.session.comparison is not None
        self.side_a.setVisible(shown)
        self.side_b.setVisible(shown)
        if not shown:
            self.side_a.setChecked(True)

    def _on_comparison(self) -> None:
        self._show_sides()
        if self.target is not None:
            self._request()

    def _on_side(self, _button, checked: bool) -> None:
        if checked and self.target is not None:
            self._request()

    def _play(self):
        return self.session.comparison.b if self.side == "b" else self.session.playthrough

    # ----- session -> view -----
    def set_target(self, target: str | None) -> None:
        """Explain ``target`` at the session tick (and keep explaining it as the tick moves)."""
        self.target = target
        self._request()

    def _on_tick(self, _tick) -> None:
        if self.target is not None:
            self._request()

    def _on_loaded(self) -> None:
        self._builders.clear()
        if self.target is not None:
            self._request()

    def _request(self) -> None:
        if self._closed or not self.session.ready or self.target is None:
            return
        self.title.setText(f"{self._side_prefix()}{self.target} at tick {self.session.tick:,} …")
        self._jobs.run(
            _answer, self._play(), self.target, self.session.tick, self._builders, latest="explain", on_done=self._on_finished, on_error=self._on_failed
        )

    def _on_finished(self, exp: Explanation) -> None:
        self.explanation = exp
        self.title.setText(f"{self._side_prefix()}{exp.target} at tick {exp.tick:,}: {_show(exp.value)}")
        self.summary.setText(exp.summary)
        signature = (self.side, exp.target, repr(exp.value), tuple((st.journal_index, st.detail) for st in exp.steps), repr(exp.folded))
        if signature == self._signature:
            return  # the tick moved past entries that do not touch this value: same chain, nothing to redraw
        self._signature = signature
        self.chart.setVisible(exp.numeric and bool(exp.steps))
        self.chart.set_explanation(exp)
        self._selecting = True
        try:
            self.model.set_explanation(exp)
            row = self.model.row_of(self.session.journal_index)
            if row >= 0:
                self.table.selectRow(row)
                self.table.scrollTo(self.model.index(row, 0))
            else:
                self.table.scrollToBottom()
        finally:
            self._selecting = False
        self._show_detail()

    def _side_prefix(self) -> str:
        if self.session.comparison is None:
            return ""
        return "B: " if self.side == "b" else "A: "

    def _on_failed(self, exc: Exception) -> None:
        message = str(exc) if isinstance(exc, UnknownTarget) else f"{type(exc).__name__}: {exc}"
        self.explanation = None
        self._signature = None
        self.title.setText(f"{self.target}: cannot explain")
        self.summary.setText(message)
        self.chart.set_explanation(None)
        self.model.set_explanation(None)
        self.detail.setText("")

    def _show_detail(self) -> None:
        """The detail pane: the selected step's rule and arithmetic, else the latest step's."""
        rows = self.table.selectionModel().selectedRows()
        row = rows[0].row() if rows else self.model.rowCount() - 1
        step = self.model.step_at(row) if row >= 0 else None
        if step is None:
            text = self.model.index(row, 5).data() if row >= 0 else ""
        else:
            text = f"#{step.journal_index} at tick {step.tick:,} · {step.rule}: {step.detail}" if step.journal_index >= 0 else f"{step.rule}: {step.detail}"
        self.detail.setText(text or "")

    # ----- view -> session -----
    def _on_step_selected(self, *_args) -> None:
        self._show_detail()
        if self._selecting:
            return
        rows = self.table.selectionModel().selectedRows()
        step = self.model.step_at(rows[0].row()) if rows else None
        if step is not None and step.journal_index >= 0:
            self.session.select_entry(step.journal_index)

    def wait(self) -> None:
        """Block until the pending explanation is computed (tests, screenshots); it is
        shown at the next pass of the event loop."""
        self._jobs.wait()

    def shutdown(self) -> None:
        """Stop explaining and wait for the job in hand (window close)."""
        self._closed = True
        self._jobs.shutdown()
