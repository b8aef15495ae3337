"""The prompt preview: what the game would send the LLM for the selected NPC at the tick.

Shows the assembled prompt (shared/docs/prompt-preview.md) with each section on its
own colour, the tokens per section against the budget, the story cards that matched,
how much history fit, and what changed since the previous tick viewed or the NPC's
previous line, with how many leading tokens a prompt cache could reuse.

Previews are built off the GUI thread (``parts.build_result``, a ``kit.jobs`` job);
requests are coalesced so only the latest tick / NPC / encoding is built, and a
superseded request's result is dropped. Dragging the tick (``tickPreview``) does nothing; the committed
tick, a new NPC or a new encoding asks for a new preview.
"""

from __future__ import annotations

from narrative_debugger.models.prompt.builder import PromptDiff, PromptPreview
from narrative_debugger.models.prompt.tokens import DEFAULT_ENCODING, ENCODINGS
from narrative_debugger.widgets.prompt.parts import (
    BudgetBar,
    BuilderCache,
    CardTableModel,
    PreviewRequest,
    PreviewResult,
    SectionTableModel,
    build_result,
    legend_html,
    section_colour,
    section_tint,
)
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.state_colors import palette_colors, row_tint, text_on
from narrative_debugger.models.report.plain_text import counted
from narrative_debugger.widgets.kit.plain_text import ElidedLabel, WrappedLabel, esc, name_text
from narrative_debugger.widgets.kit.tables import ShareColumns, hot_table
from narrative_debugger.widgets.kit.jobs import Jobs
from narrative_debugger.widgets.kit.visibility import obscured
from narrative_debugger.widgets.kit.why import add_why_action
from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QGuiApplication, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

#: Story-card rows the card table always has room for (its minimum height), 1040x700 included.
CARD_ROWS_SHOWN = 3
#: Below this view width (pixels) the card and section tables get CARDS_SHARE_NARROW of it.
NARROW_VIEW = 720
CARDS_SHARE_NARROW = 0.62
#: The card table's columns that give way when narrow (Card, Name, Key), and below NARROW_VIEW
#: (Card, Key, Status; the Name is hidden there).
CARD_ELASTIC = (0, 1, 2)
CARD_ELASTIC_NARROW = (0, 2, 4)
#: Comparison modes offered in the "compare with" selector: (key, menu text).
COMPARE_MODES = (("tick", "previous tick viewed"), ("turn", "NPC's previous line"))


def _units(text: str) -> int:
    """The length of ``text`` in a QTextDocument: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (slice compares, in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _text_edits(old: str, new: str) -> list[tuple[int, int, str]]:
    """Edits ``(start, end, replacement)`` of ``old``, last first, that make ``new``.

    A history that slides (its oldest lines leave, a new line comes at the end) is two
    edits: the lines that left and the lines that came. Otherwise one edit replaces
    what lies between the common prefix and the common suffix. A QTextDocument then
    lays out the blocks edited, not the whole 25 000-character history of each step.
    """
    cut = new.find("\n")
    if cut > 0 and not new.startswith(old[: cut + 1]):
        head = new[: cut + 1]
        at = old.find(head)
        for _ in range(8):  # the first line of ``new`` again and again in ``old``: give up
            if at <= 0:
                break
            if old[at - 1] == "\n" and new.startswith(old[at:]):
                return [(len(old), len(old), new[len(old) - at :]), (0, at, "")]
            at = old.find(head, at + 1)
    first = _common_prefix(old, new)
    last = _common_prefix(old[first:][::-1], new[first:][::-1])
    return [(first, len(old) - last, new[first : len(new) - last])]


class PromptView(QWidget):
    """The NPC dialogue prompt at the session tick, section by section, against the budget.

    Args:
        session: the session to follow; intents go back through it.
        parent: the Qt parent.

    Signals:
        previewReady(object): a new ``PromptPreview`` is shown (after ``current_preview`` is set).

    Attributes:
        current_preview: the ``PromptPreview`` shown, or None.
        current_diff: its ``PromptDiff`` against the compared preview, or None.
        compared_tick: the tick it was compared with, or None.
        section_model: tokens per section (``SectionTableModel``).
        card_model: the matched story cards (``CardTableModel``).
        budget_bar: the stacked budget bar (``BudgetBar``).
        text_view: the prompt, section by section (read-only ``QTextEdit``).
        title_label, status_label, budget_label, legend_label, history_label (with the
        story cards' count), changes_label: the texts shown (read them in tests, never write).
        encoding_box, compare_box, copy_button: the controls.
    """

    previewReady = Signal(object)

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text_key: tuple | None = None
        self._doc_parts: list[tuple[str, str, str]] | None = None  # (label, header, text) the document holds
        self._doc_style: tuple | None = None  # (font, dark palette) it was built with
        self._last_text: tuple | None = None
        self._text_stale: tuple | None = None
        # A result that came while the view was behind another: shown by showEvent.
        self._result_stale: PreviewResult | None = None
        self.setObjectName("promptView")
        self.session = session
        self.current_preview: PromptPreview | None = None
        self.current_diff: PromptDiff | None = None
        self.compared_tick: int | None = None
        self._request_id = 0
        self._builders = BuilderCache()
        self._closed = False
        self._chosen_encoding: str | None = None  # the user's choice outlives the save
        # One preview is built at a time; a newer request supersedes the one waiting.
        self._jobs = Jobs(self)
        self._kick = QTimer(self)
        self._kick.setSingleShot(True)
        self._kick.setInterval(0)
        self._kick.timeout.connect(self._dispatch)

        self._build_ui()
        session.loaded.connect(self._on_loaded)
        session.tickChanged.connect(self.request_preview)
        session.npcChanged.connect(self.request_preview)
        if session.playthrough is not None:
            self._on_loaded()

    # ----- layout -----
    def _build_ui(self) -> None:
        # Plain text (names an NPC), elided when narrow with the whole title as tooltip.
        self.title_label = ElidedLabel("No save open", mode=Qt.ElideRight)
        title_font = QFont(self.title_label.font())
        title_font.setPointSizeF(title_font.pointSizeF() * 1.2)
        title_font.setBold(True)
        self.title_label.setFont(title_font)
        self.status_label = QLabel("")
        self.status_label.setStyleSheet("color: #8a6d00;")
        self.status_label.setMinimumWidth(self.status_label.fontMetrics().horizontalAdvance("counted in 0000 ms") + 8)
        self.encoding_box = QComboBox()
        self.encoding_box.addItems(list(ENCODINGS))
        self.encoding_box.setToolTip("tiktoken encoding the tokens are counted in")
        self.encoding_box.currentTextChanged.connect(self._on_encoding_chosen)
        self.compare_box = QComboBox()
        for key, text in COMPARE_MODES:
            self.compare_box.addItem(text, key)
        self.compare_box.setToolTip("What “changed since” compares the prompt with")
        self.compare_box.currentIndexChanged.connect(self.request_preview)
        self.copy_button = QPushButton("Copy prompt")
        self.copy_button.setToolTip("Copy the whole assembled prompt (without the section headers)")
        self.copy_button.clicked.connect(self.copy_prompt)
        # Title row, then the controls: on the title row when the whole title fits
        # beside them, else on a row of their own (see _arrange_header).
        self.header_controls = QWidget()
        controls = QHBoxLayout(self.header_controls)
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addSpacing(12)
        controls.addWidget(QLabel("Encoding"))
        controls.addWidget(self.encoding_box)
        controls.addWidget(QLabel("Compare with"))
        controls.addWidget(self.compare_box)
        controls.addWidget(self.copy_button)
        self.header_controls.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Fixed)
        # In the narrowest view the two choosers give way (elided), never the Copy button.
        self.copy_button.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        for box in (self.encoding_box, self.compare_box):
            box.setMinimumWidth(box.fontMetrics().horizontalAdvance("previous") + 24)
        self._title_row = QHBoxLayout()
        self._title_row.addWidget(self.title_label, 1)
        self._title_row.addWidget(self.status_label)
        self._controls_row = QHBoxLayout()
        self._controls_row.addStretch(1)
        top = QVBoxLayout()
        top.addLayout(self._title_row)
        top.addLayout(self._controls_row)
        self._title_row.addWidget(self.header_controls)

        self.budget_bar = BudgetBar()
        # Wraps when narrow: on one line its end ("history and lore may use N") is cut at 1440x900.
        self.budget_label = WrappedLabel("")
        self.budget_label.setTextFormat(Qt.RichText)

        self.legend_label = QLabel("")
        self.legend_label.setWordWrap(True)
        self.text_view = QTextEdit()
        self.text_view.setReadOnly(True)
        self.text_view.setUndoRedoEnabled(False)
        self.text_view.setPlaceholderText("The assembled prompt appears here.")
        text_pane = QWidget()
        text_layout = QVBoxLayout(text_pane)
        text_layout.setContentsMargins(0, 0, 0, 0)
        text_layout.addWidget(self.legend_label)
        text_layout.addWidget(self.text_view, 1)

        self.section_model = SectionTableModel(self)
        # The budget bar draws the sections too: two rows of theirs are enough when the
        # height is short; the cards keep three (none showed at 1040x700).
        self.section_table = self._table(self.section_model, (0,), rows=2)
        self.history_label = QLabel("")
        self.history_label.setWordWrap(True)
        self.card_model = CardTableModel(self)
        self.card_table = self._table(self.card_model, CARD_ELASTIC, stretch=1, rows=CARD_ROWS_SHOWN)  # Card, Name, Key
        self.changes_label = QLabel("")
        self.changes_label.setWordWrap(True)
        self.changes_label.setMinimumHeight(3 * self.changes_label.fontMetrics().lineSpacing())
        self.changes_label.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.changes_label.setToolTip("The blue strip under the budget bar marks the reusable leading tokens.")

        tokens_box = self._box("Tokens per section", self.section_table)
        story_box = self._box("History and story cards", self.history_label, self.card_table)
        changes_box = self._box("Changed since previous turn", self.changes_label)
        # The two tables have the right column to themselves: with the changes box above
        # them they showed two rows (sections) and one (cards) at 1440x900. The cards get
        # the larger share (the budget bar draws the sections too); the changes box sits
        # under the prompt text, which scrolls anyway.
        left = QSplitter(Qt.Vertical)
        right = QSplitter(Qt.Vertical)
        for pane, boxes, sizes in ((left, (text_pane, changes_box), [400, 90]), (right, (tokens_box, story_box), [200, 300])):
            for i, box in enumerate(boxes):
                pane.addWidget(box)
                pane.setCollapsible(i, False)
            pane.setSizes(sizes)
        left.setStretchFactor(0, 1)
        left.setStretchFactor(1, 0)
        right.setStretchFactor(0, 2)
        right.setStretchFactor(1, 3)
        # Too short for both boxes (1040x700: 173 px for 260), the sections give way: the
        # budget bar and its legend show them too, and the cards showed no row at all.
        right.setCollapsible(0, True)
        right.installEventFilter(self)
        self.right_pane = right
        self._tokens_box, self._story_box = tokens_box, story_box
        self._sections_folded = False

        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([550, 550])
        # In a narrow view the tables' pane takes the larger share (CARDS_SHARE_NARROW) until
        # the user drags the divider: at half of 480 px the card table cut Card, Name and
        # Key to one to three letters, while the prompt text wraps and scrolls anyway.
        splitter.setChildrenCollapsible(False)
        splitter.splitterMoved.connect(self._on_divider_dragged)
        self.columns_splitter = splitter
        self._divider_dragged = False

        self.card_why_action = add_why_action(self.card_table, self.session, self.card_why_target)
        for widget in (self.budget_bar, self.budget_label, self.history_label):
            add_why_action(widget, self.session, self.history_why_target)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)  # each pixel of height is a card row's worth at 1040x700
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.budget_bar)
        layout.addWidget(self.budget_label)
        layout.addWidget(splitter, 1)

    def card_why_target(self) -> str | None:
        """``card:SLUG/CARD_ID`` of the current card row: matched key, included or dropped, budget arithmetic."""
        card = self.card_model.card_at(self.card_table.currentIndex().row())
        p = self.current_preview
        return f"card:{p.npc}/{card.id}" if card is not None and p is not None else None

    def history_why_target(self) -> str | None:
        """``history:SLUG``: the lines that fit, the first left out, and the budget from each reserved section."""
        p = self.current_preview
        return f"history:{p.npc}" if p is not None else None

    @staticmethod
    def _box(title: str, *widgets: QWidget) -> QGroupBox:
        """A titled group of ``widgets`` stacked, the last one taking the height left, on
        narrow margins (each pixel of height is a table row's worth here)."""
        box = QGroupBox(title)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        for i, widget in enumerate(widgets):
            layout.addWidget(widget, 1 if i == len(widgets) - 1 else 0)
        return box

    @staticmethod
    def _table(model, elastic: tuple[int, ...], stretch: int | None = None, rows: int = 4) -> QTableView:
        """A read-only table never shorter than its header, ``rows`` rows and a horizontal
        scroll bar (its minimum height counted 4 rows with neither, and showed one)."""
        table = QTableView()
        hot_table(table)
        table.setModel(model)
        table.setSelectionBehavior(QAbstractItemView.SelectRows)
        table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 3)
        # Every column as wide as its text when there is room (a stretched Section or Name
        # column would be cut to "na…", "The …"); when there is not, the ``elastic`` ones are
        # elided (their tooltips hold the whole text) so that the columns on their right,
        # the card's included / dropped status above all, stay in view.
        table.share_columns = ShareColumns(table, elastic, stretch)
        table.setAlternatingRowColors(True)
        table.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Ignored)  # height from the layout stretch
        frame = 2 * table.frameWidth()
        table.setMinimumHeight(table.horizontalHeader().sizeHint().height() + rows * table.verticalHeader().defaultSectionSize()
                               + table.horizontalScrollBar().sizeHint().height() + frame)
        return table

    # ----- public API -----
    @property
    def encoding(self) -> str:
        """The selected tiktoken encoding name."""
        return self.encoding_box.currentText()

    def set_encoding(self, name: str) -> None:
        """Select an encoding (one of ``models.tokens.ENCODINGS``); a new preview follows."""
        self.encoding_box.setCurrentText(name)

    @property
    def compare_mode(self) -> str:
        """``"tick"`` (previous tick viewed) or ``"turn"`` (the NPC's previous line)."""
        return self.compare_box.currentData()

    def set_compare_mode(self, mode: str) -> None:
        """Compare with the previous tick viewed (``"tick"``) or the NPC's previous line (``"turn"``)."""
        self.compare_box.setCurrentIndex(max(0, self.compare_box.findData(mode)))

    @property
    def busy(self) -> bool:
        """True while a preview is being counted or waiting to be."""
        return self._jobs.busy or self._kick.isActive()

    def copy_prompt(self) -> None:
        """Put the whole prompt text (as sent, without headers) on the clipboard."""
        if self.current_preview is None:
            return
        QGuiApplication.clipboard().setText(self.current_preview.text)
        self.status_label.setText(f"copied {self.current_preview.total_tokens:,} tokens")

    def request_preview(self, *_args) -> None:
        """Ask for a preview of the current tick / NPC / encoding (coalesced, built off-thread)."""
        if self._closed:
            return
        self.status_label.setText("counting…")
        self._kick.start()

    def shutdown(self) -> None:
        """Stop asking for previews and wait for the one being built (window close).

        After this no job runs and none will start, so nothing reports back once
        the view is gone.
        """
        self._closed = True
        self._kick.stop()
        self._jobs.shutdown()

    # ----- session events -----
    def _on_encoding_chosen(self, name: str) -> None:
        self._chosen_encoding = name
        self.request_preview()

    def _on_loaded(self) -> None:
        """A new save: the encoding the user chose stays; else the content's (or the default)."""
        play = self.session.playthrough
        encoding = self._chosen_encoding or (play.content.prompt.encoding if play is not None else None) or DEFAULT_ENCODING
        self.encoding_box.blockSignals(True)
        if self.encoding_box.findText(encoding) < 0:
            self.encoding_box.addItem(encoding)
        self.encoding_box.setCurrentText(encoding)
        self.encoding_box.blockSignals(False)
        self.request_preview()

    # ----- the worker round trip -----
    def _dispatch(self) -> None:
        self._request_id += 1
        session = self.session
        play = session.playthrough
        npc = session.npc
        message = None
        if play is None:
            message = "No save open"
        elif not session.ready:
            message = f"{play.save.label} could not be read"
        elif npc is None or npc not in play.save.npcs:
            message = "Select an NPC to see their prompt"
        if message is not None:
            self._jobs.cancel()
            self._show_message(message)
            return
        request = PreviewRequest(
            id=self._request_id,
            playthrough=play,
            npc=npc,
            npc_slug=play.save.npcs[npc].slug,
            tick=session.tick,
            encoding=self.encoding,
            compare=self.compare_mode,
            previous_tick=session.previous_tick,
        )
        if self._closed:
            return
        self.status_label.setText("counting…")
        # A newer request supersedes the older ones: only its result is shown.
        self._jobs.run(build_result, request, self._builders, latest="preview", on_done=self._on_finished, on_error=self._on_failed)

    def _on_finished(self, result: PreviewResult) -> None:
        self.status_label.setText(f"counted in {1000 * result.seconds:.0f} ms")
        self._show(result)

    def _on_failed(self, exc: Exception) -> None:
        self._show_message(f"Could not build the prompt: {type(exc).__name__}: {exc}")

    # ----- display -----
    def _show_message(self, message: str) -> None:
        self.current_preview = self.current_diff = self.compared_tick = None
        self.status_label.setText("" if not self.busy else "counting…")
        self.title_label.setText(message)
        self._arrange_header()
        self.budget_bar.set_preview(None)
        self.budget_label.setText("")
        self.legend_label.setText("")
        self.text_view.clear()
        self._text_key = self._text_stale = self._doc_parts = self._result_stale = None
        self.section_model.set_preview(None)
        self.card_model.set_cards([])
        self.history_label.setText("")
        self.changes_label.setText("")

    def _show_text(self, preview, changed: set) -> None:
        """Fill the colour-coded text now if it is on screen and different, else when shown.

        Rebuilding the document costs about a frame on a long history; a hidden tab need not pay
        it on every tick step.
        """
        self._last_text = (preview, changed)
        key = (preview.text, frozenset(changed), palette_colors(self.palette()).dark)
        if key == self._text_key:
            self._text_stale = None
            return
        if not self.text_view.isVisible():
            self._text_stale = (preview, changed)
            return
        self._text_stale = None
        self._text_key = key
        self._fill_text(preview, changed)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._arrange_header()
        self._share_width()

    def _on_divider_dragged(self, *_args) -> None:
        self._divider_dragged = True

    def _share_width(self) -> None:
        """The prompt text and the tables halve the width, or the tables get
        ``CARDS_SHARE_NARROW`` of it below ``NARROW_VIEW`` px, where the card table also
        hides its Name column; a dragged divider stays put."""
        narrow = self.width() < NARROW_VIEW
        name = CardTableModel.COLUMNS.index("Name")
        if self.card_table.isColumnHidden(name) != narrow:
            # The Name (the id in words; the row's tooltip has it) gives its width to Card and
            # Key, and the Status may be elided too ("dropped (b…", whole in the tooltip).
            self.card_table.setColumnHidden(name, narrow)
            self.card_table.share_columns.set_elastic(CARD_ELASTIC_NARROW if narrow else CARD_ELASTIC)
        if self._divider_dragged:
            return
        splitter = self.columns_splitter
        total = sum(splitter.sizes())
        if total <= 0:
            return
        right = int(total * CARDS_SHARE_NARROW) if narrow else total // 2
        if abs(splitter.sizes()[1] - right) > 1:
            splitter.setSizes([total - right, right])

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        if watched is self.right_pane and event.type() == QEvent.Resize:
            self._fit_right_pane(event.size().height())
        return False

    @property
    def sections_folded(self) -> bool:
        """True while the right pane is too short for the sections and the story cards
        both, and the "Tokens per section" box gives its height to the cards."""
        return self._sections_folded

    def _fit_right_pane(self, height: int) -> None:
        """Fold the sections' box when the cards' box would get less than its minimum
        (``CARD_ROWS_SHOWN`` rows), and bring it back at its share when there is room."""
        right = self.right_pane
        cards = self._story_box.minimumSizeHint().height()
        both = cards + self._tokens_box.minimumSizeHint().height() + right.handleWidth()
        fold = height < both
        if fold == self._sections_folded:
            return
        self._sections_folded = fold
        right.setSizes([0, height] if fold else [height * 2 // 5, height - height * 2 // 5])

    def _arrange_header(self) -> None:
        """Controls beside the title when the whole title fits, else on a second row."""
        spacing = self._title_row.spacing()
        needed = (self.title_label.sizeHint().width() + self.status_label.minimumWidth()
                  + self.header_controls.sizeHint().width() + 2 * spacing)
        margins = self.layout().contentsMargins()
        one_row = self.width() - margins.left() - margins.right() >= needed
        row = self._title_row if one_row else self._controls_row
        if row.indexOf(self.header_controls) < 0:
            (self._controls_row if one_row else self._title_row).removeWidget(self.header_controls)
            row.addWidget(self.header_controls)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self._result_stale is not None:
            result, self._result_stale = self._result_stale, None
            if result.request.playthrough is self.session.playthrough:  # else a newer request is under way
                self._fill(result)
        if self._text_stale is not None:
            preview, changed = self._text_stale
            self._text_stale = None
            self._text_key = (preview.text, frozenset(changed), palette_colors(self.palette()).dark)
            self._fill_text(preview, changed)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() in (QEvent.PaletteChange, QEvent.ApplicationPaletteChange) and self._last_text is not None:
            self._show_text(*self._last_text)  # section tints for the new palette

    def _show(self, result: PreviewResult) -> None:
        """Hold the preview (``current_preview``, ``previewReady``) and show it: at once
        when the view is on screen, else when it is shown. Behind another view, the
        labels' rich text and the tables cost an NPC change several milliseconds of
        the GUI thread for nothing to see."""
        p = result.preview
        self.current_preview, self.current_diff, self.compared_tick = p, result.diff, result.before_tick
        if obscured(self):
            self._result_stale = result
        else:
            self._result_stale = None
            self._fill(result)
        self.previewReady.emit(p)

    def _fill(self, result: PreviewResult) -> None:
        p, diff = result.preview, result.diff
        name = name_text(self.session.playthrough, result.request.npc)
        self.title_label.setText(f"Prompt for {name} at tick {p.tick:,}")
        self._arrange_header()
        self.budget_bar.set_preview(p, diff.common_prefix_tokens if diff else None)
        self.budget_label.setText(self._budget_html(p))
        self.legend_label.setText(legend_html([s.label for s in p.sections]))
        self._show_text(p, set(diff.changed) if diff else set())
        self.section_model.set_preview(p, result.before, diff)
        self.card_model.set_cards(p.cards)
        self.history_label.setText(self._history_html(p))
        self.changes_label.setText(self._changes_html(result))

    @staticmethod
    def _budget_html(p: PromptPreview) -> str:
        share = 100 * p.total_tokens / max(1, p.budget)
        head = f"<b>{p.total_tokens:,}</b> of {p.budget:,} tokens ({share:.0f} %) in {p.encoding}"
        if p.total_tokens > p.budget:
            state = f'<span style="color:#d32f2f"><b>over budget by {p.total_tokens - p.budget:,}</b></span>'
        else:
            state = f"{p.budget - p.total_tokens:,} free"
        joins = p.total_tokens - p.section_sum
        return (
            f"{head} · {state} · sections sum to {p.section_sum:,} ({joins:+d} at joins) · "
            f"system block {p.system_tokens:,} · history and lore may use {p.available:,}"
        )

    @staticmethod
    def _history_html(p: PromptPreview) -> str:
        h = p.history
        text = f"<b>History:</b> {h.included:,} of {counted(h.total, 'line')} included"
        if h.total > h.included:
            text += f" ({counted(h.total - h.included, 'older line')} left out for the budget)"
        if h.oldest_truncated:
            text += ' · <span style="color:#d32f2f"><b>oldest line cut</b></span> to its last tokens'
        # On the history's line, not a line of its own: each line here is a card row less.
        kept = sum(c.included for c in p.cards)
        text += (f" · <b>Story cards:</b> {len(p.cards)} matched, {kept} included" if p.cards
                 else " · <b>Story cards:</b> no card key occurs in the history that fits.")
        return text

    def _chip(self, label: str) -> str:
        """A section's name on its tint: a dark shade on a dark palette, its ink by contrast
        (light text on the light tint was unreadable there)."""
        fill = row_tint(section_tint(label, 0.45), self.palette())
        return f'<span style="background-color:{fill.name()}; color:{text_on(fill).name()}">&nbsp;{esc(label)}&nbsp;</span>'

    def _changes_html(self, result: PreviewResult) -> str:
        diff = result.diff
        if diff is None:
            if result.request.compare == "turn":
                return f"{esc(name_text(self.session.playthrough, result.request.npc))} has no earlier line to compare with."
            return "No earlier tick viewed yet: commit another tick to compare."
        what = "the NPC's previous line" if result.request.compare == "turn" else "the previous tick viewed"
        lines = [f"Compared with tick {result.before_tick:,} ({what})"]
        if diff.changed:
            chips = ", ".join(self._chip(label) for label in diff.changed)
            lines.append(f"<b>{len(diff.changed)} changed</b>: {chips}")
        else:
            lines.append("<b>no section changed</b>")
        share = 100 * diff.common_prefix_tokens / max(1, diff.total_tokens)
        lines.append(
            f"<b>{diff.common_prefix_tokens:,} of {diff.total_tokens:,}</b> leading tokens reusable "
            f"by a prompt cache ({share:.0f} %)"
        )
        return "<br>".join(lines)

    def _fill_text(self, p: PromptPreview, changed: set[str]) -> None:
        """Each section under a header line, on its colour; keeps the scroll position.

        When the sections are the same ones as in the document (a tick step, usually),
        only the headers and texts that differ are replaced: rebuilding the whole
        document would lay all of it out again at every step.
        """
        scroll = self.text_view.verticalScrollBar().value()
        parts = [(s.label, f"■ {s.label}  ·  {s.tokens:,} tokens{'  ·  changed' if s.label in changed else ''}", s.text)
                 for s in p.sections]
        style = (self.text_view.font().toString(), palette_colors(self.palette()).dark)
        shown = self._doc_parts
        if not (shown is not None and self._doc_style == style and [x[0] for x in shown] == [x[0] for x in parts]
                and self._patch_text(shown, parts)):
            self._build_text(parts)
        self._doc_parts, self._doc_style = parts, style
        self.text_view.verticalScrollBar().setValue(scroll)

    def _formats(self, i: int, label: str) -> tuple[QTextBlockFormat, QTextCharFormat, QTextBlockFormat, QTextCharFormat]:
        """(header block, header chars, body block, body chars) of section ``i``."""
        body_font = QFont(self.text_view.font())
        header_font = QFont(body_font)
        header_font.setBold(True)
        header_font.setPointSizeF(body_font.pointSizeF() * 0.9)
        header = QTextBlockFormat()
        header.setTopMargin(10 if i else 0)
        header.setBottomMargin(2)
        header_chars = QTextCharFormat()
        header_chars.setFont(header_font)
        header_chars.setForeground(section_colour(label).darker(140))
        body = QTextBlockFormat()
        body.setBackground(row_tint(section_tint(label)))  # a dark shade on a dark palette
        body.setLeftMargin(4)
        body_chars = QTextCharFormat()
        body_chars.setFont(body_font)
        return header, header_chars, body, body_chars

    def _build_text(self, parts: list[tuple[str, str, str]]) -> None:
        doc = self.text_view.document()
        doc.clear()
        cursor = QTextCursor(doc)
        cursor.beginEditBlock()
        for i, (label, head, text) in enumerate(parts):
            header, header_chars, body, body_chars = self._formats(i, label)
            if i:
                cursor.insertBlock(header, header_chars)
            else:
                cursor.setBlockFormat(header)
                cursor.setCharFormat(header_chars)
            cursor.insertText(head)
            # One call per section: each newline starts a block with the same formats.
            cursor.insertBlock(body, body_chars)
            cursor.insertText(text)
        cursor.endEditBlock()

    def _patch_text(self, shown: list[tuple[str, str, str]], parts: list[tuple[str, str, str]]) -> bool:
        """Replace the headers and texts of ``shown`` (the document) that differ in
        ``parts``, last section first so that earlier positions hold. False when the
        document is not what ``shown`` says (it is then rebuilt)."""
        doc = self.text_view.document()
        starts, at = [], 0
        for _, head, text in shown:
            starts.append(at)
            at += _units(head) + 1 + _units(text) + 1  # a block separator after each
        if doc.characterCount() != at:  # the end: the last block's separator counts once
            return False
        # Each edit is a change of its own: the document lays out the blocks it touched.
        # Edits in one edit block are laid out as one range, from the first to the last
        # (the history's first line and its new last one: the whole text).
        cursor = QTextCursor(doc)
        for i in range(len(parts) - 1, -1, -1):
            (label, old_head, old_text), (_, head, text) = shown[i], parts[i]
            if head == old_head and text == old_text:
                continue
            _, header_chars, _, body_chars = self._formats(i, label)
            body_at = starts[i] + _units(old_head) + 1
            if text != old_text:
                for start, end, replacement in _text_edits(old_text, text):
                    cursor.setPosition(body_at + _units(old_text[:start]))
                    cursor.setPosition(body_at + _units(old_text[:end]), QTextCursor.KeepAnchor)
                    cursor.insertText(replacement, body_chars)
            if head != old_head:
                cursor.setPosition(starts[i])
                cursor.setPosition(starts[i] + _units(old_head), QTextCursor.KeepAnchor)
                cursor.insertText(head, header_chars)
        return True
