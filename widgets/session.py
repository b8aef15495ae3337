"""The session as Qt signals: a thin adapter over ``models.session.Session``.

Data flows one way (style.md): a ``models.Playthrough`` is loaded into the session,
widgets read it and redraw when the session says something changed, and user intents
(a tick chosen, an NPC chosen, a fact selected) come back as calls to ``set_*``. No
widget talks to another widget.

The state and its rules (tick clamping, defaults, NPC by slug, comparison) live in
the plain-Python ``models.session.Session``, which the command line uses too; this
QObject owns one (``model``), forwards its attributes and methods, and re-emits each
of its events as the Qt signal of the same meaning. The ``prepare*`` functions below
make the data the views read, off the GUI thread; the adapter holds what they made for
the open playthrough (``prepared``, a ``kit.prepared.Prepared``).

Ticks are game ticks. ``tickPreview`` fires while a tick is being dragged (cheap
updates only); ``tickChanged`` fires when the tick is committed (full refresh).
"""

from __future__ import annotations

from dataclasses import dataclass

from narrative_debugger.widgets.kit.plain_text import name_text
from narrative_debugger.models import session as events
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.session import Stepping
from narrative_debugger.widgets.kit.prepared import Prepared
from PySide6.QtCore import QObject, Signal

#: Interaction changes from which an NPC's tables are made before the first paint: made
#: on a step instead, such an NPC's would take a third of a frame or more.
LONG_HISTORY = 5_000


def prepare(playthrough: Playthrough, prepared: Prepared | None = None) -> Stepping:
    """The session's stepping data (``models.session.prepare``), made by the loader off
    the GUI thread; ``Session.load`` hands it to the model session."""
    return events.prepare(playthrough)


def prepare_long_npc_tables(playthrough: Playthrough, prepared: Prepared | None = None) -> None:
    """The interaction aggregates and move tables (``TimelineIndex.prepare_npc_tables``)
    of the NPCs with long histories, made off the GUI thread before the window shows
    the save: a step to one of them would otherwise make them, several frames' work."""
    if playthrough.index is not None:
        playthrough.index.prepare_npc_tables(min_changes=LONG_HISTORY)


def prepare_npc_tables(playthrough: Playthrough, prepared: Prepared | None = None) -> None:
    """Every NPC's interaction aggregates and move tables, made off the GUI thread
    after the window shows the save: the views and the prompt read them at every step,
    and each made on a step would add to it."""
    if playthrough.index is not None:
        playthrough.index.prepare_npc_tables()


@dataclass(frozen=True)
class NpcNames:
    """``names``: StableId -> display name of every NPC of a save, in save order."""

    names: dict[int, str]


def prepare_names(playthrough: Playthrough, prepared: Prepared | None = None) -> NpcNames:
    """The ``NpcNames`` of a playthrough: O(NPCs), so the loader makes it off the GUI thread."""
    return NpcNames({sid: name_text(playthrough, sid) for sid in playthrough.save.npcs})


def npc_names(playthrough: Playthrough, prepared: Prepared | None = None) -> dict[int, str]:
    """StableId -> display name of the playthrough's NPCs: the loader's when ``prepared``
    (the container made for this playthrough) has them, else made now."""
    made = prepared.get(NpcNames) if prepared is not None else None
    return made.names if made is not None else prepare_names(playthrough).names


#: Each model event -> the name of the signal that carries it.
SIGNALS: dict[type, str] = {
    events.Loaded: "loaded",
    events.FindingsChanged: "findingsChanged",
    events.TickPreviewed: "tickPreview",
    events.TickChanged: "tickChanged",
    events.NpcChanged: "npcChanged",
    events.FactChanged: "factChanged",
    events.ViewChanged: "viewChanged",
    events.JournalIndexChanged: "journalIndexChanged",
    events.ExplainRequested: "explainRequested",
    events.ComparisonChanged: "comparisonChanged",
    events.DockRequested: "dockRequested",
    events.CulpritChanged: "culpritChanged",
    events.LineRequested: "lineRequested",
    events.Notice: "notice",
}

#: What the adapter reads from its model, as attributes (read-only but ``view``).
_READ = (
    "playthrough", "tick", "previous_tick", "npc", "fact", "journal_index", "explain_target", "culprit", "comparison",
    "ready", "state", "state_b", "first_tick", "last_tick", "view_start",
)
#: The model's methods the adapter offers as its own (their docstrings are the model's).
_CALLS = (
    "refresh_findings", "state_at", "clamp", "set_tick", "event_ticks", "next_event_tick", "step_event",
    "step_target", "neighbour_npcs", "npc_b", "go_to", "set_npc", "npc_by_slug", "require_npc",
    "set_fact", "set_journal_index", "select_entry", "explain", "set_view", "request_dock", "set_culprit",
    "select_line", "notify",
)


class Session(QObject):
    """Holds what is open and what is selected (in ``model``); every view follows it.

    Signals (one per ``models.session`` event, sent in the model's order):
        loaded(): a new playthrough replaced the old one.
        findingsChanged(): the open playthrough's findings are whole now (its checks
            ended after it was shown; ``refresh_findings``).
        tickPreview(object): the tick while dragging (cheap updates).
        tickChanged(object): the committed tick (full refresh).
        npcChanged(object): the selected NPC's StableId, or None.
        factChanged(object): the selected FactId, or None.
        viewChanged(str): the view asked for (knowledge, interactions, timelines, prompt).
        journalIndexChanged(object): the journal entry selected (its index), or None.
        explainRequested(object): "Why?" was asked of a target (``models.explain`` form,
            e.g. ``npc:kael-davan.score``); the Explain dock answers it.
        comparisonChanged(): a comparison was set or left (``comparison`` says which).
        dockRequested(str): a dock to bring to the front (a registry dock name).
        culpritChanged(object): the Finding whose culprit the views select, or None.
        lineRequested(str): a monologue line id to select and highlight (Differences).
        notice(str): a message for the status bar (a filter cleared to show a culprit).

    Ticks are u64 Python ``int`` s: the tick signals are ``Signal(object)``, since
    ``Signal(int)`` is a 32-bit int in PySide6.
    """

    loaded = Signal()
    findingsChanged = Signal()
    tickPreview = Signal(object)
    tickChanged = Signal(object)
    npcChanged = Signal(object)
    factChanged = Signal(object)
    viewChanged = Signal(str)
    journalIndexChanged = Signal(object)
    explainRequested = Signal(object)
    comparisonChanged = Signal()
    dockRequested = Signal(str)
    culpritChanged = Signal(object)
    lineRequested = Signal(str)
    notice = Signal(str)

    def __init__(self, parent: QObject | None = None, model: events.Session | None = None) -> None:
        super().__init__(parent)
        #: The plain-Python session this adapter shows as signals.
        self.model = model if model is not None else events.Session()
        #: What the loader prepared for the open playthrough (empty when nothing was).
        self.prepared = Prepared()
        #: What was prepared for the comparison's side B and the comparison itself, off
        #: the GUI thread (a what-if's child process: ``set_comparison``); empty when
        #: nothing was, or not comparing.
        self.prepared_b = Prepared()
        self._unsubscribe = self.model.subscribe(self._relay)
        self.destroyed.connect(self._unsubscribe)

    def _relay(self, event: events.Event) -> None:
        getattr(self, SIGNALS[type(event)]).emit(*vars(event).values())

    def load(self, playthrough: Playthrough, tick: int | None = None, npc: int | None = None, *, exact: bool = False,
             prepared: Prepared | None = None) -> None:
        """``models.session.Session.load``, with what the loader prepared for
        ``playthrough`` (views read their entries from ``prepared`` on ``loaded``)."""
        self.prepared = prepared if prepared is not None else Prepared()
        self.prepared_b = Prepared()
        self.model.load(playthrough, tick, npc, exact=exact, stepping=self.prepared.get(Stepping))

    def set_comparison(self, comparison, prepared: Prepared | None = None) -> None:
        """``models.session.Session.set_comparison``, with what was prepared for it
        (``prepared_b``: the views read their entries on ``comparisonChanged``)."""
        self.prepared_b = prepared if prepared is not None and comparison is not None else Prepared()
        try:
            self.model.set_comparison(comparison)
        except ValueError:
            self.prepared_b = Prepared()
            raise

    @property
    def view(self) -> str:
        """The view in front. Set it to follow a tab the user chose (no viewChanged);
        ``set_view`` asks for one (viewChanged)."""
        return self.model.view

    @view.setter
    def view(self, view: str) -> None:
        self.model.view = view


def _reader(name: str) -> property:
    return property(lambda self: getattr(self.model, name), doc=getattr(getattr(events.Session, name, None), "__doc__", None))


def _caller(name: str):
    def call(self, *args, **kwargs):
        return getattr(self.model, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = getattr(events.Session, name).__doc__
    return call


for _name in _READ:
    setattr(Session, _name, _reader(_name))
for _name in _CALLS:
    setattr(Session, _name, _caller(_name))
del _name
