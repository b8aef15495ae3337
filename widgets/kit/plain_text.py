"""Text from saves and content is shown as text, never as markup (issue 8).

Qt guesses whether a label's or a tooltip's text is rich text (``Qt.mightBeRichText``:
a known tag before the first line break). A name such as ``<b>x</b>`` in a save
would then be rendered as HTML. Widgets showing data therefore either use
``Qt.PlainText`` labels (:func:`plain_label`), escape the data they put into rich
text (:func:`esc`), or pass tooltips through :func:`plain_tip`.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFontMetrics, QGuiApplication, QTextCursor, QTextDocument
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QComboBox, QLabel, QMessageBox, QStyle, QStyleOptionComboBox, QStylePainter, QWidget

from narrative_debugger.models.report.sinks import html, one_line

#: Pixels of a message box beside its text: the icon, its gap and the margins.
MESSAGE_ICON_ROOM_PX = 120

MESSAGE_ICONS = {"information": QMessageBox.Information, "warning": QMessageBox.Warning, "critical": QMessageBox.Critical}


def esc(value) -> str:
    """``str(value)`` escaped for insertion into rich text (``<``, ``>``, ``&``, quotes;
    invisible characters as ``\\uXXXX``): the HTML sink, ``models.report.sinks.html``."""
    return html(value)


def name_text(playthrough, stable_id) -> str:
    """The name of NPC (or player) ``stable_id`` as the window shows it: one line of
    visible text, a line break or an invisible character (a right-to-left override that
    showed ``\\u202emira`` as "arim") written ``\\uXXXX``, as the command line writes
    it (trial 47: a name's newline broke rows and headings in two)."""
    return one_line(playthrough.npc_name(stable_id))


def plain_tip(text: str) -> str:
    """Text for a place where Qt guesses the format (a tooltip, a message box), shown literally.

    Text Qt would not take for rich text is returned as it is; otherwise it is
    escaped and wrapped in a pre-wrap block, which Qt shows as the same characters.
    """
    if not text or not GuiQt.mightBeRichText(text):
        return text
    return f"<p style='white-space:pre-wrap'>{html(text)}</p>"


def shorten_long_words(text: str, metrics: QFontMetrics, width_px: int) -> str:
    """``text`` with each run of non-space characters wider than ``width_px`` pixels (in
    ``metrics``) elided in the middle to that width: its start and its end (``.json``) kept."""
    def fit(match: re.Match) -> str:
        word = match.group()
        return word if metrics.horizontalAdvance(word) <= width_px else metrics.elidedText(word, Qt.ElideMiddle, width_px)

    return re.sub(r"\S+", fit, text)


def show_message(parent: QWidget | None, kind: str, title: str, text: str) -> None:
    """A modal message box of ``kind`` (a key of ``MESSAGE_ICONS``) showing ``text`` literally.

    A box's label wraps at spaces only, and Qt lets a box grow to at most 1 000 pixels
    (less on a narrow screen), so a longer run of characters (a 240-character file name)
    would be cut off at the box's edge. Such a run is shown elided in the middle
    (:func:`shorten_long_words`), and then the whole text is the box's details
    (Show Details…), where it wraps anywhere and can be copied.
    Raises ``KeyError`` for an unknown ``kind``."""
    box = QMessageBox(MESSAGE_ICONS[kind], title, "", QMessageBox.Ok, parent)
    box.setTextFormat(Qt.PlainText)
    screen = (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
    # Qt's own limit for a box (QMessageBoxPrivate::updateSize: the screen's width less
    # 480, at most 1 000 pixels; the whole width on a screen up to 1 024), less the icon
    # and the margins beside the text.
    screen_px = screen.availableGeometry().width()
    box_px = screen_px if screen_px <= 1024 else min(screen_px - 480, 1000)
    width_px = max(200, box_px - MESSAGE_ICON_ROOM_PX)
    shown = shorten_long_words(text, box.fontMetrics(), width_px)
    box.setText(shown)
    if shown != text:
        box.setDetailedText(text)
    box.exec()


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A QLabel that shows its text literally (``Qt.PlainText``)."""
    label = QLabel(parent)
    label.setTextFormat(Qt.PlainText)
    label.setText(text)
    return label


class ElidedLabel(QLabel):
    """A one-line plain-text label that elides its text (in the middle) when narrow.

    The whole text is the tooltip whenever it does not fit; ``full_text`` returns it.
    Its size hint asks for the whole text, its minimum for a few characters.

    Not built on superqt's ``QElidingLabel``: that one elides to the widget's whole width
    (margins and frame ignored) and returns the full text from ``text()``; made to show the
    same text at every width, it took more code than this and a quarter longer per
    ``setText`` and resize.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None, mode=Qt.ElideMiddle) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.PlainText)
        self._mode = mode
        self._full = ""
        self._tip = ""
        self.setText(text)

    def full_text(self) -> str:
        """The text before eliding."""
        return self._full

    def setText(self, text: str, tooltip: str | None = None) -> None:  # noqa: N802 (Qt naming)
        """Show ``text`` (elided to fit); ``tooltip`` (default: the text) shows when it is cut."""
        self._full = text
        self._tip = text if tooltip is None else tooltip
        self.updateGeometry()
        self._elide()

    def sizeHint(self):  # noqa: N802 (Qt override)
        hint = super().sizeHint()
        hint.setWidth(self.fontMetrics().horizontalAdvance(self._full) + 2 * self.margin() + 4)
        return hint

    def minimumSizeHint(self):  # noqa: N802 (Qt override)
        hint = super().minimumSizeHint()
        hint.setWidth(min(self.sizeHint().width(), self.fontMetrics().horizontalAdvance("x" * 10)))
        return hint

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self._full, self._mode, max(0, width))
        super().setText(shown)
        cut = shown != self._full
        super().setToolTip(plain_tip(self._tip) if (cut or self._tip != self._full) else "")


class WrappedLabel(QLabel):
    """A word-wrapped label whose minimum height follows its width, so its lines are never cut.

    A word-wrapped QLabel asks its layout for height-for-width, which a view in a
    QScrollArea turns into the height of every widget's size hint (the view grew past
    its frame and scrolled). This one tells the layout it has no height-for-width and
    instead sets its minimum height to what its text needs at the width it was given.
    Set its text format (rich or plain) as for any label.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt override)
        return False

    def sizeHint(self):  # noqa: N802 (Qt override)
        hint = super().sizeHint()
        hint.setHeight(self.minimumHeight())  # QLabel guesses a narrow, tall block
        return hint

    def minimumSizeHint(self):  # noqa: N802 (Qt override)
        hint = super().minimumSizeHint()
        hint.setHeight(self.minimumHeight())
        return hint

    def setText(self, text: str) -> None:  # noqa: N802 (Qt naming)
        super().setText(text)
        self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        # QLabel's heightForWidth is never below the minimum height: measure without it.
        old = self.minimumHeight()
        self.setMinimumHeight(0)
        height = self.heightForWidth(max(1, self.width())) if self.text() else 0
        height = max(height, self.fontMetrics().lineSpacing())
        self.setMinimumHeight(old)
        if height != old:
            self.setMinimumHeight(height)


class LinesLabel(QLabel):
    """A word-wrapped rich-text label of at most ``max_lines`` lines that never cuts a line.

    A text that needs more lines at the label's width is shown cut after the last word
    that fits in them, ending in "…", and its whole text is the tooltip; ``full_text``
    returns it, ``text`` the text shown. Its height follows its width (height-for-width)
    up to ``max_lines`` lines, and is at least ``min_lines`` lines. A QLabel that wrapped
    to more lines than its layout could give showed the last one cut in half (the
    timelines' readout at 1040x700, comparing, at an 11 pt font: trial 50).

    The text is cut when its layout (or holder, ``SteadyLabel``) asks its height for its
    width, which it does after each new text: a text that fits costs no second layout (the
    readout is written at every tick step). A label not shown keeps the whole text.
    Give it rich text whose save text is escaped (``esc``), as for any rich label.
    """

    def __init__(self, parent: QWidget | None = None, min_lines: int = 1, max_lines: int = 2) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.RichText)
        self.setWordWrap(True)
        self.min_lines, self.max_lines = min_lines, max_lines
        self._full = ""
        self.setMinimumHeight(self._lines_height(min_lines))

    def full_text(self) -> str:
        """The text before it was cut."""
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 (Qt naming)
        self._full = text
        super().setText(text)
        if self.toolTip():
            self.setToolTip("")

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt override)
        most = self._lines_height(self.max_lines)
        needed = super().heightForWidth(width)
        if needed > most and width == self.width() and self.isVisible():
            if self.text() == self._full:
                self._cut()
                needed = super().heightForWidth(width)
            # At most max_lines lines now, counted by the layout: all of their height, which
            # a glyph from a taller fallback font (CJK fonts: "■", "╍") makes more than
            # max_lines of the label's own line spacing.
            return max(self.minimumHeight(), needed)
        return max(self.minimumHeight(), min(needed, most))

    def sizeHint(self):  # noqa: N802 (Qt override)
        hint = super().sizeHint()
        hint.setHeight(self.heightForWidth(self.width()))
        return hint

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._refit()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self._refit()

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.setMinimumHeight(self._lines_height(self.min_lines))

    def _lines_height(self, lines: int) -> int:
        return lines * self.fontMetrics().lineSpacing() + 2

    def _refit(self) -> None:
        """The whole text again, cut anew for the label's width when it needs more lines."""
        if self.text() != self._full:
            self.setText(self._full)
        self.heightForWidth(self.width())

    def _cut(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        if width > 0:
            shown = cut_rich_text(self._full, self.font(), width, self.max_lines)
            super().setText(shown)
            if shown != self._full:
                self.setToolTip(self._full)


#: A non-breaking space in rich text: ties a label to its value ("score 1.39") so that a
#: ``LinesLabel`` never wraps between them.
NBSP = "&nbsp;"

#: Characters a cut text does not end in before its "…" (the readouts' " · " between values).
SEPARATORS = "·,;:"


def cut_rich_text(text: str, font, width: int, lines: int) -> str:
    """Rich ``text`` laid out in ``font`` at ``width`` pixels, cut to its first ``lines``
    lines: after the last whole word that fits with "…" (the last characters, when no word
    does), which ends it. Returns HTML; ``text`` itself when it fits."""
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    doc.setHtml(text)
    doc.setTextWidth(width)

    def line_count() -> int:
        doc.documentLayout().documentSize()  # lays it out
        count, block = 0, doc.begin()
        while block.isValid():
            count += block.layout().lineCount()
            block = block.next()
        return count

    if line_count() <= lines:
        return text
    count, block = 0, doc.begin()
    while count + block.layout().lineCount() < lines:  # the block holding the last line kept
        count += block.layout().lineCount()
        block = block.next()
    line = block.layout().lineAt(lines - count - 1)
    cursor = QTextCursor(doc)
    cursor.setPosition(block.position() + line.textStart() + line.textLength())
    cursor.movePosition(QTextCursor.End, QTextCursor.KeepAnchor)
    cursor.removeSelectedText()
    _drop_separators(cursor)
    while True:
        cursor.movePosition(QTextCursor.End)
        cursor.insertText("…")
        if line_count() <= lines:
            return doc.toHtml()
        cursor.deletePreviousChar()  # the "…"
        if cursor.position() == 0:
            return doc.toHtml()
        # the last word (and the spaces before it) goes; a single long word loses characters
        end = cursor.position()
        cursor.movePosition(QTextCursor.PreviousWord, QTextCursor.KeepAnchor)
        if cursor.position() == end:
            cursor.movePosition(QTextCursor.PreviousCharacter, QTextCursor.KeepAnchor)
        cursor.removeSelectedText()
        _drop_separators(cursor)


def _drop_separators(cursor: QTextCursor) -> None:
    """Deletes the spaces and ``SEPARATORS`` before ``cursor`` (at the end of its document)."""
    doc = cursor.document()
    while cursor.position() > 0 and (doc.characterAt(cursor.position() - 1).isspace() or doc.characterAt(cursor.position() - 1) in SEPARATORS):
        cursor.deletePreviousChar()


class ElidingComboBox(QComboBox):
    """A combo box that may be narrower than its longest item, eliding the current one.

    Its size hint still fits every item (``AdjustToContents``); its minimum fits
    ``min_text`` in place of the widest item, so a small window squeezes it instead of
    cutting off the row it sits in. Qt's own combo clips a squeezed text at the frame
    ("Any eve"); this one ends it in "…". The popup lists the items whole.
    """

    def __init__(self, parent: QWidget | None = None, min_text: str = "Any…") -> None:
        super().__init__(parent)
        self.min_text = min_text
        self.setSizeAdjustPolicy(QComboBox.AdjustToContents)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        hint = self.sizeHint()
        if self.count() == 0:
            return hint
        metrics = self.fontMetrics()
        widest = max(metrics.horizontalAdvance(self.itemText(i)) for i in range(self.count()))
        return QSize(min(hint.width(), hint.width() - widest + metrics.horizontalAdvance(self.min_text)), hint.height())

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.CC_ComboBox, option)
        field = self.style().subControlRect(QStyle.CC_ComboBox, option, QStyle.SC_ComboBoxEditField, self)
        room = field.width() - (option.iconSize.width() + 4 if not option.currentIcon.isNull() else 0) - 2
        option.currentText = self.fontMetrics().elidedText(option.currentText, Qt.ElideRight, max(0, room))
        painter.drawControl(QStyle.CE_ComboBoxLabel, option)
