"""Where a finding lands: the tick, NPC, fact, view and docks that show its culprit.

A pure function of the finding's structured ``target`` (never of its location or
message text), so it is tested without a window and shared by the Findings dock, Go ›
Next finding, ``screenshot --finding`` and ``check --screenshots``. This module
imports no Qt.

The table (README "Where a finding lands"):

* ``journal`` targets: the Journal dock selects the entry (J001: both entries), the
  central view of the code family follows (I → Interactions, R/T → Timelines,
  K → Knowledge graph), at the entry's tick, with its NPC.
* snapshot targets (``fact``, ``interaction``, ``entity``, ``npc`` with ``snapshot``):
  the Snapshot dock selects the saved value beside the replayed one, at
  ``saved_at_tick``; facts are also selected in the Knowledge graph.
* ``line`` targets (M001, M002, C004): the Monologues dock selects the line (M002: the
  fired id no pool defines); the Journal dock selects the firing entry; C004 also
  opens its file in the Content dock.
* ``content`` targets (C001-C005, C007, C008): the Content dock shows the file, the line selected.
* ``file`` targets (F001-F003; C006, C009-C012, entries not read or missing): nothing but the Findings
  dock (the save cannot be shown; the Content dock never follows C009's link out of the folder),
  except a value read from a save that opens (F002 at a JSON path, ``snapshot`` True):
  the Snapshot dock selects that path's row, at ``saved_at_tick``. F002 inside a fact,
  an entity or an NPC has that snapshot target, inside the journal a ``journal`` one.
"""

from __future__ import annotations

from dataclasses import dataclass

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.findings import Finding, Target

#: The central view each code family is best seen in (registry view names).
VIEW_BY_FAMILY = {"I": "interactions", "R": "timelines", "T": "timelines", "K": "knowledge"}
SNAPSHOT_KINDS = ("fact", "interaction", "entity", "npc")


@dataclass(frozen=True)
class Landing:
    """Where the app goes for a finding.

    Attributes:
        tick: the tick to show (u64), or None to stay.
        npc: the NPC's StableId to select, or None.
        fact: the FactId to select, or None.
        view: the central view to bring to the front, or None.
        docks: the docks that show the culprit, front first (registry dock names).
        selection: ``(kind, id)`` of the culprit as selected: ``("journal", 12)``,
            ``("fact", "contraband.ring")``, ``("npc", "lera-sessik")``, ``("line", "x_m_s_001")``,
            ``("content", "monologues/a.yaml:3")``, ``("file", location)``.
    """

    tick: int | None
    npc: int | None
    fact: str | None
    view: str | None
    docks: tuple[str, ...]
    selection: tuple[str, object]

    def to_json(self) -> dict:
        """``{"kind", "id"}`` of the selection (the view record's ``selection``)."""
        kind, ident = self.selection
        return {"kind": kind, "id": ident}


def _npc_id(play: Playthrough, t: Target) -> int | None:
    if t.stable_id is not None and t.stable_id in play.save.npcs:
        return t.stable_id
    if t.npc:
        npc = play.save.npc_by_slug(t.npc)
        return npc.stable_id if npc is not None else None
    return None


def _entry_tick(play: Playthrough, i: int) -> int | None:
    index = play.index
    if index is not None and 0 <= i < len(index.ticks):
        return index.ticks[i]
    return None


def landing(play: Playthrough, finding: Finding) -> Landing:
    """Where ``finding`` lands in ``play`` (see the module doc for the table)."""
    t = finding.target or Target.from_location(finding.location)
    npc = _npc_id(play, t)
    view = VIEW_BY_FAMILY.get(finding.code[:1])
    tick = finding.tick
    if t.snapshot and t.kind in SNAPSHOT_KINDS:
        if tick is None:
            tick = play.save.saved_at_tick
        if t.kind in ("fact", "interaction"):
            selection = ("fact", t.fact_id)
            view = view or "knowledge"
        elif t.kind == "npc":
            selection = ("npc", t.npc if t.npc is not None else t.stable_id)
        else:
            selection = ("entity", t.stable_id)
        return Landing(tick, npc, t.fact_id, view, ("snapshot",), selection)
    if t.kind == "line":
        if tick is None and t.journal_index is not None:
            tick = _entry_tick(play, t.journal_index)
        docks = ("monologues",) + (("journal",) if t.journal_index is not None else ()) + (("content",) if t.file else ())
        return Landing(tick, npc, None, view, docks, ("line", t.line_id))
    if t.kind == "journal" and t.journal_index is not None:
        if tick is None:
            tick = _entry_tick(play, t.journal_index)
        return Landing(tick, npc, t.fact_id, view, ("journal",), ("journal", t.journal_index))
    if t.kind == "content" and t.file:
        return Landing(None, None, None, None, ("content",), ("content", f"{t.file}:{t.line or 1}"))
    if t.kind == "file" and t.snapshot and t.field:  # F002 of a top-level value the save opens despite
        return Landing(play.save.saved_at_tick if tick is None else tick, None, None, None, ("snapshot",), ("file", t.field))
    return Landing(tick, npc, t.fact_id, None, (), ("file", finding.location))
