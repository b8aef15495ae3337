"""``widgets.kit.visibility.after_pause``: a dragged tick reaches a costly pane once, with
the last tick (a u64 kept exact), after the drag pauses."""

from __future__ import annotations

from PySide6.QtCore import QObject

from narrative_debugger.widgets.kit.visibility import after_pause

U64_MAX = 2**64 - 1


def test_after_pause_calls_once_with_the_last_value(qtbot):
    owner = QObject()
    calls = []
    later = after_pause(calls.append, owner)
    for tick in (0, 2**63, U64_MAX):
        later(tick)
    assert calls == []  # not on each call
    qtbot.waitUntil(lambda: calls == [U64_MAX])
    later(7)
    later(8)
    qtbot.waitUntil(lambda: len(calls) == 2)
    assert calls == [U64_MAX, 8]
    assert type(calls[0]) is int
