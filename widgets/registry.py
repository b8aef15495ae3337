"""The registries of views and docks: each is declared once, here.

The main window builds its tabs, grid, View menu and docks from these lists; the
``screenshot --view`` choices, the report view record and the finding jumps read
the view names from here too. This module imports no Qt, so the headless command
line can read it; each widget class is imported only when the window builds it.

To add a view: write the widget (it takes the Session in its constructor) and add a
``ViewSpec`` to ``VIEWS``. To add a dock: add a ``DockSpec`` to ``DOCKS``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


def _load(factory: str):
    module, _, name = factory.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class ViewSpec:
    """A central view: a tab, a cell of the all-views grid, a View menu entry (Ctrl+N).

    Attributes:
        name: the id used in reports, ``--view`` and finding jumps (a contract).
        title: the tab and menu text.
        factory: ``"module:Class"``; the class takes the Session.
        min_size: (width, height) in pixels below which the view scrolls instead of
            shrinking (in tabs and in the all-views grid).
        prepare: optional ``"module:function"``: work the view would do on ``loaded``
            that grows with the save, run by the loader off the GUI thread (see
            ``preparers``); the view reads its result from ``session.prepared``.
    """

    name: str
    title: str
    factory: str
    # 288 px high: with the tick bar and the tab bar, what a 1040 x 700 window leaves
    # above bottom docks that keep three rows of theirs (the Snapshot table).
    min_size: tuple[int, int] = (480, 288)
    prepare: str | None = None

    def create(self, session):
        return _load(self.factory)(session)


@dataclass(frozen=True)
class DockSpec:
    """A dock panel around the views.

    Attributes:
        name: the dock's id; its objectName is ``dock-<name>`` (saved layouts rely on it).
        title: the dock title and View menu text.
        area: ``"left"``, ``"right"`` or ``"bottom"``.
        factory: ``"module:Class"``; the class takes the Session.
        tab_with: the name of an earlier dock this one is tabbed with, if any.
        below: the name of an earlier dock this one is stacked under, if any.
        beside: the name of an earlier dock this one sits to the right of, if any.
        min_size: (width, height) in pixels the dock's widget never shrinks below, so
            a resize cannot collapse it to a strip.
        hidden: starts hidden (shown when asked for: the Explain dock on "Why?", the
            Differences dock while comparing).
        prepare: optional ``"module:function"`` run by the loader off the GUI thread,
            as for ``ViewSpec``.
        prepare_reads_findings: its ``prepare`` reads the findings, so the loader runs
            it once the save is checked (``preparers(checked=True)``), after the
            window has shown the replayed save.
    """

    name: str
    title: str
    area: str
    factory: str
    tab_with: str | None = None
    below: str | None = None
    beside: str | None = None
    min_size: tuple[int, int] = (280, 120)
    hidden: bool = False
    prepare: str | None = None
    prepare_reads_findings: bool = False

    def create(self, session):
        return _load(self.factory)(session)


_W = "narrative_debugger.widgets."

#: The central views, in tab order (Ctrl+1, Ctrl+2, ...).
VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("knowledge", "Knowledge graph", _W + "knowledge.view:KnowledgeView", prepare=_W + "knowledge.fact_keys:prepare"),
    ViewSpec("interactions", "Interactions", _W + "interactions.view:InteractionView"),
    ViewSpec("timelines", "Timelines", _W + "timelines.view:TimelinesView", prepare=_W + "timelines.tracks:prepare"),
    ViewSpec("prompt", "Prompt preview", _W + "prompt.view:PromptView"),
)

#: The dock panels, in the order they are added.
DOCKS: tuple[DockSpec, ...] = (
    DockSpec("npcs", "NPCs", "left", _W + "docks.npc_list:NpcList", min_size=(300, 150), prepare=_W + "docks.npc_list:prepare"),
    DockSpec("monologues", "Monologues", "left", _W + "docks.monologues:MonologueView", below="npcs", min_size=(300, 150),
             prepare=_W + "docks.monologues:prepare"),
    DockSpec("findings", "Findings", "bottom", _W + "docks.findings:FindingsView", min_size=(420, 110)),
    # Findings and Journal sit side by side, so a finding's jump to its culprit (which
    # raises Journal, Snapshot or Content, tabbed together) never hides the Findings.
    DockSpec("journal", "Journal", "bottom", _W + "docks.journal:JournalView", beside="findings", min_size=(420, 110),
             prepare=_W + "docks.journal:prepare"),
    DockSpec("snapshot", "Snapshot vs replay", "bottom", _W + "docks.snapshot:SnapshotView", tab_with="journal", min_size=(420, 110),
             prepare=_W + "docks.snapshot:prepare", prepare_reads_findings=True),
    DockSpec("content", "Content", "bottom", _W + "docks.content:ContentView", tab_with="journal", min_size=(420, 110)),
    # Differences exists only while comparing (the compare controller shows and hides it).
    DockSpec("differences", "Differences", "bottom", _W + "docks.differences:DifferencesView", tab_with="journal",
             min_size=(420, 110), hidden=True),
    # Explain is tabbed with the culprit docks, beside the Findings: a side dock squeezed
    # the central view and cut the knowledge filters, tick bar and prompt header.
    DockSpec("explain", "Explain", "bottom", _W + "docks.explain:ExplainView", tab_with="journal", min_size=(420, 110),
             hidden=True),
    # What if… (issue 38): tuning values to set; shown by Tools › What if… or a Journal edit.
    # Tabbed with the Monologues: as a right dock it needed 340 px beside the NPC dock's
    # and the views' minimums, which at 1040x700 already fill the width, so the central
    # views slid under the NPC dock and were cut on the right.
    DockSpec("whatif", "What if", "left", _W + "docks.whatif:WhatIfPanel", tab_with="monologues", min_size=(300, 150),
             hidden=True),
    # Coverage of a corpus of playtests: shown by File › Open corpus… (issue 39). Tabbed
    # with the Monologues, a list of lines too: a line's nearest miss opens with the
    # Explain dock (bottom) and, with error findings, the Findings (bottom) in front, and
    # neither covers the list (tabbed with the Journal, each next line needed a click on
    # the Coverage tab first).
    DockSpec("coverage", "Coverage", "left", _W + "docks.coverage:CoverageView", tab_with="monologues", min_size=(300, 150),
             hidden=True),
)

#: Work on a newly read playthrough that the session does on load (event ticks), the
#: NPC names several views list, the interaction tables of NPCs with long histories
#: (the interactions view and the prompt read them), and the tick bar's marker lanes.
SESSION_PREPARES = (_W + "session:prepare", _W + "session:prepare_names", _W + "session:prepare_long_npc_tables", _W + "tickbar.bar:prepare")
#: Work the first paint does without, run once the window shows the save (with the
#: checks): the other NPCs' interaction tables, the journal's NPC filter rows.
PREPARES_AFTER = (_W + "session:prepare_npc_tables", _W + "docks.journal:prepare_npc_rows")


#: What a what-if's child process prepares for the window's comparison (issue 38), so
#: that its hand-over does no work that grows with the save on the GUI thread: the
#: ``prepare`` functions of the open run on side B (``prepare(b, prepared_b)``, the same
#: functions), then those of the comparison (``prepare(comparison, tick, prepared_b)``,
#: ``tick`` the one the window shows).
SIDE_B_PREPARES = (_W + "knowledge.fact_keys:prepare",)
COMPARISON_PREPARES = (_W + "knowledge.fact_keys:prepare_comparison",)


def comparison_preparers() -> tuple[list, list]:
    """``(SIDE_B_PREPARES, COMPARISON_PREPARES)`` as functions: what a what-if's child
    runs, in that order, into one ``kit.prepared.Prepared`` (``Session.prepared_b``)."""
    return [_load(name) for name in SIDE_B_PREPARES], [_load(name) for name in COMPARISON_PREPARES]


def preparers(checked: bool | None = None) -> list:
    """The functions the loader runs on a new Playthrough off the GUI thread, in order:
    ``SESSION_PREPARES``, then each view's and dock's ``prepare`` (see ``ViewSpec``).

    Each is called as ``prepare(playthrough, prepared)``, ``prepared`` being the
    ``kit.prepared.Prepared`` of what the ones before it made, and returns a frozen
    dataclass of its own module (or a tuple of them, or None) that the loader adds to it.

    ``checked`` False: those to run before the window shows the replayed save; True:
    those run once it is shown and checked (those that read the findings, and
    ``PREPARES_AFTER``); None: all of them."""
    return [_load(name) for name in _preparer_names(checked)]


def _preparer_names(checked: bool | None) -> list[str]:
    specs = [spec for spec in (*VIEWS, *DOCKS) if spec.prepare]
    if checked is not None:
        specs = [spec for spec in specs if getattr(spec, "prepare_reads_findings", False) == checked]
    names = ([*SESSION_PREPARES] if not checked else []) + [spec.prepare for spec in specs]
    return names + ([*PREPARES_AFTER] if checked is not False else [])


def preparer_modules() -> list[str]:
    """The modules that hold the ``preparers``: what the open's child process imports
    ahead (``app/workers/engine.py``)."""
    names = (*_preparer_names(None), *SIDE_B_PREPARES, *COMPARISON_PREPARES)
    return sorted({name.partition(":")[0] for name in names})


#: View names, in tab order.
VIEW_NAMES: tuple[str, ...] = tuple(v.name for v in VIEWS)
#: What a report or ``screenshot --view`` may name: a view, or ``all`` (the grid).
VIEW_CHOICES: tuple[str, ...] = (*VIEW_NAMES, "all")
