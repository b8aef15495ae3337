"""SteadyLabel: a caption's new text lays the window out again only when it no longer fits (issue 10)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from narrative_debugger.widgets.kit.plain_text import WrappedLabel
from narrative_debugger.widgets.kit.steady import SteadyLabel


class _LayoutRequests(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.LayoutRequest:
            self.count += 1
        return False


def _window(qtbot, label: QLabel, width: int = 400):
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    row = QHBoxLayout()
    holder = SteadyLabel(label)
    row.addWidget(holder)
    row.addStretch(1)
    layout.addLayout(row)
    layout.addStretch(1)
    window.resize(width, 200)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    requests = _LayoutRequests()
    window.installEventFilter(requests)
    return window, holder, requests


def _two_passes() -> None:
    """The holder asks for a layout in the pass that brings the label's request; the
    window lays out in the next one."""
    QApplication.processEvents()
    QApplication.processEvents()


def test_a_new_text_that_fits_does_not_lay_the_window_out(qtbot):
    label = QLabel("tick 1,000 / 9,000")
    window, holder, requests = _window(qtbot, label)
    label.setText("tick 1,001 / 9,000")
    _two_passes()
    assert requests.count == 0 and label.text() == "tick 1,001 / 9,000"
    assert label.geometry() == holder.rect()
    # A plain QLabel in the same place lays the window out for the same change.
    plain = QLabel("tick 1,000 / 9,000", window)
    window.layout().addWidget(plain)
    QApplication.processEvents()
    requests.count = 0
    plain.setText("tick 1,001 / 9,000")
    QApplication.processEvents()
    assert requests.count > 0


def test_a_wider_text_widens_the_holder(qtbot):
    label = QLabel("short")
    window, holder, requests = _window(qtbot, label)
    narrow = holder.width()
    label.setText("a much longer caption than before, at tick 123,456")
    _two_passes()
    assert requests.count > 0
    assert holder.width() > narrow and holder.width() >= label.sizeHint().width()
    assert label.geometry() == holder.rect()


def test_a_wrapped_text_that_needs_more_lines_grows_the_holder(qtbot):
    label = QLabel("one line")
    label.setWordWrap(True)
    window, holder, _ = _window(qtbot, label, width=200)
    low = holder.height()
    label.setText("a caption long enough to wrap over several lines in a narrow dock, " * 3)
    _two_passes()
    assert holder.height() > low and holder.height() >= label.heightForWidth(holder.width())


def test_a_wrapped_label_without_height_for_width_grows_the_holder_when_narrowed(qtbot):
    """A WrappedLabel's height follows its width by its minimum height, not by height-for-width:
    narrowed by its holder, it needed three lines and the holder stayed one line high, the
    lines below the first cut off (the Interactions heading at 1040x700)."""
    label = WrappedLabel("a caption long enough to wrap over several lines once the window is narrow")
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    holder = SteadyLabel(label)
    layout.addWidget(holder)
    layout.addStretch(1)
    window.resize(900, 200)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: label.geometry() == holder.rect(), timeout=2000)
    assert holder.height() < 2 * label.fontMetrics().lineSpacing()
    window.resize(200, 200)
    qtbot.waitUntil(lambda: holder.height() >= label.heightForWidth(holder.width()), timeout=2000)
    assert holder.height() >= 3 * label.fontMetrics().lineSpacing() and label.geometry() == holder.rect()
