"""The Content dock: a content file as written, the line a finding names selected.

Follows ``culpritChanged``: a finding with a content position (C001-C005, C007, C008, and the
monologue line of C004) opens its file from the content folder, read-only, and
selects, centres and highlights the line. The file is shown as plain text.
"""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.models.rules.findings import Finding
from narrative_debugger.widgets.kit.culprit import CULPRIT_BG
from narrative_debugger.widgets.session import Session
from narrative_debugger.widgets.kit.state_colors import row_tint
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

#: Content files larger than this are shown cut (the loader refuses far smaller ones).
MAX_SHOWN_BYTES = 4 * 1024 * 1024


class ContentView(QWidget):
    """The Content dock (registry name ``content``).

    Attributes:
        caption: the file and position shown; text: the file (read-only);
        path: the file shown (None before any content finding); line: the culprit line (1-based).
    """

    def __init__(self, session: Session, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contentView")
        self.session = session
        self.path: Path | None = None
        self.line: int | None = None
        self.caption = QLabel("Double-click a content finding (C001-C005, C007, C008) to see its file here", self)
        self.caption.setObjectName("contentCaption")
        self.caption.setTextFormat(Qt.PlainText)
        self.caption.setWordWrap(True)
        self.text = QPlainTextEdit(self)
        self.text.setObjectName("contentText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.caption)
        layout.addWidget(self.text)
        session.loaded.connect(self._on_loaded)
        session.culpritChanged.connect(self._on_culprit)

    def _on_loaded(self) -> None:
        self.path, self.line = None, None
        self.text.clear()
        self.text.setExtraSelections([])

    def _on_culprit(self, finding: Finding | None) -> None:
        t = finding.target if finding is not None else None
        play = self.session.playthrough
        if t is None or not t.file or t.kind not in ("content", "line") or play is None:
            return
        root = play.content.root
        path = Path(t.file) if Path(t.file).is_absolute() or root is None else Path(root) / t.file
        self.show_file(path, t.line or 1, t.col or 1, f"{finding.code}: {finding.message}")

    def show_file(self, path: Path, line: int, col: int, why: str) -> None:
        """Show ``path`` with ``line`` (1-based) selected, centred and highlighted."""
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_SHOWN_BYTES + 1)
            text = data[:MAX_SHOWN_BYTES].decode("utf-8", errors="replace")
            cut = len(data) > MAX_SHOWN_BYTES
        except OSError as exc:
            text, cut = "", False
            why = f"{why}\n(cannot show the file: {exc.strerror or exc})"
        if path != self.path or self.text.toPlainText() != text:
            self.text.setPlainText(text)
        self.path, self.line = path, line
        self.caption.setText(f"{path}:{line}:{col}{' (shown cut)' if cut else ''} — {why}")
        block = self.text.document().findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            self.text.setExtraSelections([])
            return
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.EndOfBlock, QTextCursor.KeepAnchor)
        self.text.setTextCursor(cursor)
        mark = QTextEdit.ExtraSelection()
        mark.format.setBackground(row_tint(CULPRIT_BG, self.text.palette()))  # a dark shade on a dark palette
        mark.format.setProperty(QTextFormat.FullWidthSelection, True)
        mark.cursor = QTextCursor(block)
        self.text.setExtraSelections([mark])
        self.text.centerCursor()

    def selected_line(self) -> int | None:
        """The 1-based line the text cursor is on (None when nothing is shown)."""
        if self.path is None:
            return None
        return self.text.textCursor().blockNumber() + 1
