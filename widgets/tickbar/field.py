"""Entering a tick: a line edit and a go-to dialog that hold any u64 tick exactly.

``QSpinBox`` and ``QInputDialog.getInt`` hold a 32-bit ``int``; save ticks are u64
(save-format.md: ticks may exceed 2^53 and are read exactly), so ticks are typed as
text, checked by a validator and kept as Python ``int``.

superqt's ``QLargeIntSpinBox`` holds a u64 exactly too (a Python ``int``, emitted as
``object``) but is not used: it shows no thousands separators and refuses them when
typed, emits ``valueChanged`` on ``setValue`` and on every keystroke, and raises
``ValueError`` on Enter for digits ``int()`` cannot read (``²``, which its validator accepts).
"""

from __future__ import annotations

import re

from narrative_debugger.models.boundary import MAX_NUMERAL_CHARS, U64, ConversionError, is_int_text, parse_int
from PySide6.QtCore import QRegularExpression, Qt, Signal
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

TICK_MAX = U64.high
"""The largest tick a save can hold (u64)."""
_TYPED = r"[0-9][0-9,_ ]{0,40}"  # digits, with the thousands separators the app writes
_TYPED_SIGNED = r"-?[0-9][0-9,_ ]{0,60}"  # the go-to dialog also takes a sign and overlong values, to refuse them in words
_SEPARATORS = re.compile(r"[,_ ]")


def judge_tick(text: str, last: int) -> tuple[int | None, str]:
    """Where the go-to dialog goes for ``text``, and what it says about it.

    Returns:
        (tick, message): ``tick`` is the tick typed when it lies in 0..``last``; a tick
        past ``last`` (but a u64) is clamped to ``last`` and the message says so; a
        negative value, one past u64 (2^64 − 1) or no digits give ``None`` and a message
        saying why it is refused. The message is "" for a tick in range.
    """
    shown = text.strip()
    digits = _SEPARATORS.sub("", shown)
    if not digits:
        return None, f"Type a tick in 0 – {last:,}."
    if re.fullmatch(r"-[0-9]+", digits):
        return None, f"{shown} is refused: ticks are never negative (u64, 0 – {TICK_MAX:,})."
    if not re.fullmatch(r"[0-9]+", digits):
        return None, f"{shown} is refused: type the tick in digits."
    try:
        value = parse_int(digits, U64)  # bounded before int(): 5 000 digits never reach it
    except ConversionError:
        said = f"{int(digits):,}" if len(digits) <= MAX_NUMERAL_CHARS else f"A number of {len(digits):,} digits"
        return None, f"{said} is refused: past the largest tick, 2^64 − 1 = {TICK_MAX:,} (ticks are u64)."
    if value > last:
        return last, past_end(value, last)
    return value, ""


def past_end(value: int, last: int, went: bool = False) -> str:
    """Says that tick ``value`` lies outside 0..``last`` and is clamped to ``last``."""
    return f"Tick {value:,} is outside 0 – {last:,} (past the save's end): {'went' if went else 'going'} to the end, tick {last:,}."


def parse_tick(text: str) -> int | None:
    """The tick typed in ``text`` (digits; ``,``, ``_`` and spaces ignored), or None.

    Returns None for empty text, anything but ASCII digits, or a value past u64.
    """
    digits = _SEPARATORS.sub("", text.strip())
    return parse_int(digits, U64) if is_int_text(digits, U64) else None


class TickField(QLineEdit):
    """A tick entry in 0..maximum (u64): type a tick and press Enter; Up/Down and the wheel step by 1.

    Signals:
        valueChanged(object): the tick the user committed (a Python ``int``; emitted on
            Enter, focus out or a step, never by ``setValue``).
        said(str): why a typed tick was refused (past u64) or moved (past the save's
            end), for the status bar: the go-to dialog says it; the field said nothing.
            "" when a tick taken as typed follows one of those (clears the message).
    """

    valueChanged = Signal(object)
    said = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._minimum = 0
        self._maximum = 0
        self._value = 0
        self._said = False  # the last commit said something (``said``)
        self.setValidator(QRegularExpressionValidator(QRegularExpression(_TYPED), self))
        self.setAlignment(Qt.AlignRight | Qt.AlignVCenter)
        self.editingFinished.connect(self._commit)  # a commit after Enter or focus out finds the tick shown: nothing more
        self._show()

    def value(self) -> int:
        """The tick shown."""
        return self._value

    def maximum(self) -> int:
        """The largest tick accepted."""
        return self._maximum

    def setRange(self, minimum: int, maximum: int) -> None:  # noqa: N802 (Qt naming)
        """Accept ticks in ``minimum..maximum``; the shown tick is clamped."""
        self._minimum, self._maximum = int(minimum), max(int(minimum), int(maximum))
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance(f"{self._maximum:,}") + 16)
        self.setValue(self._value)

    def setValue(self, tick: int) -> None:  # noqa: N802 (Qt naming)
        """Show ``tick`` (clamped to the range) without emitting ``valueChanged``."""
        self._value = min(max(int(tick), self._minimum), self._maximum)
        self._show()

    def stepBy(self, steps: int) -> None:  # noqa: N802 (Qt naming)
        """Move ``steps`` ticks (clamped) and commit."""
        self._commit_value(self._value + steps)

    def _show(self) -> None:
        self.setText(f"{self._value:,}")

    def _commit(self) -> None:
        """Enter or focus out: go to the tick typed. Text that is no tick (cleared, past
        u64) shows the current tick again, and ``said`` tells why when there was text; a
        tick past the end goes to the end, and ``said`` says so. Committed whatever the
        validator thinks of the text: ``editingFinished`` never came for an emptied box,
        which then stayed blank (trial 47)."""
        text = self.text()
        if text == f"{self._value:,}":
            return
        tick, message = judge_tick(text, self._maximum)
        if tick is None:
            self._show()
            if text.strip():
                self._say(f"{message} Still at tick {self._value:,}.")
            return
        # A tick taken as typed takes back what was said of an earlier one (trial 47: "went
        # to the end" stayed in the status bar after a move to tick 5 000).
        self._say(past_end(parse_tick(text), tick, went=True) if message else "")
        self._commit_value(tick)

    def _say(self, text: str) -> None:
        """``said`` ``text``; "" only when something was said before (it clears that)."""
        if text or self._said:
            self.said.emit(text)
        self._said = bool(text)

    def focusOutEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self._commit()
        super().focusOutEvent(event)

    def _commit_value(self, tick: int) -> None:
        tick = min(max(tick, self._minimum), self._maximum)
        changed = tick != self._value
        self._value = tick
        self._show()
        if changed:
            self.valueChanged.emit(tick)

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if event.key() in (Qt.Key_Return, Qt.Key_Enter):
            self._commit()
            event.accept()
            return
        steps = {Qt.Key_Up: 1, Qt.Key_Down: -1}.get(event.key())
        if steps is not None:
            self.stepBy(steps)
            event.accept()
            return
        super().keyPressEvent(event)

    def wheelEvent(self, event) -> None:  # noqa: N802 (Qt override)
        delta = event.angleDelta().y()
        if delta:
            self.stepBy(1 if delta > 0 else -1)
            event.accept()


class GoToTickDialog(QDialog):
    """Asks for a tick in 0..last (u64) and says where it will go.

    A tick past ``last`` is accepted and clamped to ``last`` (the message says so); a
    negative value or one past 2^64 − 1 is refused with a message and OK disabled.

    Args:
        current: the tick shown at first.
        last: the last tick of the save.
        parent: the Qt parent.

    Attributes:
        message: the label under the field saying why a value is clamped or refused.
    """

    def __init__(self, current: int, last: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Go to tick")
        self.last = int(last)
        self.field = QLineEdit(f"{int(current)}")
        self.field.setValidator(QRegularExpressionValidator(QRegularExpression(_TYPED_SIGNED), self.field))
        self.field.selectAll()
        self.hint = QLabel(f"Tick (0 – {self.last:,}):")
        self.hint.setTextFormat(Qt.PlainText)
        self.message = QLabel("")
        self.message.setObjectName("goToTickMessage")
        self.message.setTextFormat(Qt.PlainText)
        self.message.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.field.textChanged.connect(self._check)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.field)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        # Wide enough for the longest message in three lines (the refusal of a tick past
        # 2^64 − 1); _check grows the height when a message wraps further.
        self.setMinimumWidth(self.fontMetrics().averageCharWidth() * 44)
        self._check()

    def tick(self) -> int | None:
        """The tick to go to (a tick past last is clamped to last), or None when refused."""
        return judge_tick(self.field.text(), self.last)[0]

    def note(self) -> str:
        """What the message label says about the typed value ("" for a tick in range)."""
        return judge_tick(self.field.text(), self.last)[1]

    def _check(self) -> None:
        tick, note = judge_tick(self.field.text(), self.last)
        self.message.setText(note)
        self.message.setVisible(bool(note))
        self.buttons.button(QDialogButtonBox.Ok).setEnabled(tick is not None)
        self._fit_message()

    def _fit_message(self) -> None:
        """Size the dialog's height so the wrapped message is shown whole: a top-level layout
        does not follow a word-wrapped label's height for its width by itself, so a
        message shown after the dialog opened was squeezed into one line and cut."""
        layout = self.layout()
        layout.invalidate()
        layout.activate()
        needed = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else layout.sizeHint().height()
        if needed != self.height():
            self.resize(self.width(), needed)  # and shrinks back once the message is gone


def ask_tick(parent: QWidget | None, current: int, last: int, notify=None) -> int | None:
    """Show the go-to dialog; the tick chosen (clamped to ``last``), or None when cancelled.

    ``notify(text)``, when given, is told where a tick past ``last`` went (for the status bar).
    """
    dialog = GoToTickDialog(current, last, parent)
    try:
        if dialog.exec() != QDialog.Accepted:
            return None
        tick = dialog.tick()
        typed = parse_tick(dialog.field.text())
        if notify is not None and tick is not None and typed is not None and typed > tick:
            notify(past_end(typed, tick, went=True))
        return tick
    finally:
        dialog.deleteLater()
