"""widgets.session.Session: the Qt adapter sends each models.session event as its signal, in order."""

from __future__ import annotations

from narrative_debugger.models import session as ev
from narrative_debugger.widgets.session import SIGNALS, Session

U64_MAX = 2**64 - 1
LAST = 302_029  # the evening sample's saved_at_tick and last tick


def test_every_model_event_has_a_signal():
    events = {cls for cls in vars(ev).values() if isinstance(cls, type) and cls.__module__ == ev.__name__ and cls not in (ev.Session, ev.Stepping, ev.TickOutOfRange, ev.UnknownNpc)}
    assert set(SIGNALS) == events
    assert all(hasattr(Session, name) for name in SIGNALS.values())


def test_signals_follow_the_model_in_order(qtbot, evening_playthrough):
    s = Session()
    seen: list = []
    for name in ("loaded", "culpritChanged", "npcChanged", "tickChanged", "tickPreview", "viewChanged"):
        getattr(s, name).connect(lambda *args, name=name: seen.append((name, *args)))
    s.load(evening_playthrough, tick=U64_MAX)
    s.set_tick(U64_MAX, live=True)
    s.model.set_tick(253)  # a change made on the model itself reaches the signals too
    s.view = "prompt"  # following a tab: no viewChanged
    assert seen == [("loaded",), ("culpritChanged", None), ("npcChanged", 9), ("tickChanged", LAST), ("tickPreview", LAST), ("tickChanged", 253)]
    assert (s.tick, s.previous_tick, s.view, s.model.view) == (253, LAST, "prompt", "prompt")
