"""Comparing two playthroughs, or one save under two content folders (issue 13).

``compare(a, b)`` reads both timeline indexes at the compared tick (each side's last
tick, or ``tick`` for both: ticks are aligned by value) and finds, in the game's own
terms: where the journals part, each NPC's score, level, stress and walk-aways with
the tick where the score curves part, the facts and interaction outcomes that
differ, the monologue lines fired or eligible on one side only, the findings of one
side only and what changed in each NPC's prompt. ``differences()`` lists them all
as one flat list, each with the tick, NPC and view where it shows.
"""

from __future__ import annotations

from collections.abc import Callable

from dataclasses import dataclass, field

from narrative_debugger.models.boundary import cut
from narrative_debugger.models.compare.journal import Divergence, first_divergence
from narrative_debugger.models.compare.knowledge import FactsDiff, InteractionChange, compare_knowledge
from narrative_debugger.models.compare.monologues import MonologuesDiff, compare_monologues
from narrative_debugger.models.compare.npcs import NpcDiff, compare_npc, score_meets_again, score_steps
from narrative_debugger.models.compare.prompts import PromptChange, compare_prompts
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder
from narrative_debugger.models.report.json_text import dumps_strict
from narrative_debugger.models.rules.findings import Finding
from narrative_debugger.models.timeline.state_view import KnowledgeAtTick


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference, as a line a person reads and a place to jump to.

    Attributes:
        kind: ``journal``, ``npc``, ``fact``, ``interaction``, ``monologue``, ``finding`` or ``prompt``.
        text: one line of plain text.
        tick: the tick where it shows (ticks are aligned by value), or None.
        npc: the NPC's slug, or None.
        view: the view that shows it (a name of widgets/registry.py VIEWS), or None.
        fact_id: the FactId it is about, or None.
        line_id: the monologue line it is about (monologue differences, and findings
            that name a line such as M001), or None.
    """

    kind: str
    text: str
    tick: int | None = None
    npc: str | None = None
    view: str | None = None
    fact_id: str | None = None
    line_id: str | None = None


@dataclass
class Comparison:
    """Everything compared between A and B.

    Attributes:
        a, b: the two playthroughs (for one save under two contents: the same save opened
            with each content folder).
        tick_a, tick_b: the compared ticks (each side's last tick, or the asked tick).
        same_save: both sides are the same save file (same SHA-256): a content comparison.
        divergence: where the journals part (None when equal up to the compared ticks).
        npcs: slug -> NpcDiff for every NPC of either save (slug order).
        facts: FactsDiff (interaction facts are in ``interactions``).
        interactions: interactions whose outcome differs, by NPC slug and sequence.
        monologues: MonologuesDiff.
        findings_only_a, findings_only_b: findings of one side only (matched by code,
            tick and message: locations move with the file, so they are not compared).
        prompts: slug -> PromptChange for every NPC of both saves.
    """

    a: Playthrough
    b: Playthrough
    tick_a: int
    tick_b: int
    same_save: bool
    divergence: Divergence | None
    npcs: dict[str, NpcDiff] = field(default_factory=dict)
    facts: FactsDiff = field(default_factory=FactsDiff)
    interactions: tuple[InteractionChange, ...] = ()
    monologues: MonologuesDiff = field(default_factory=MonologuesDiff)
    findings_only_a: tuple[Finding, ...] = ()
    findings_only_b: tuple[Finding, ...] = ()
    prompts: dict[str, PromptChange] = field(default_factory=dict)
    _differences: list[Difference] | None = field(default=None, repr=False, compare=False)

    @property
    def equal(self) -> bool:
        """True when A and B agree on everything compared (``diff`` exits 0)."""
        return not self.differences()

    def side_json(self, side: str) -> dict:
        """``{path, sha256, content}`` of side ``"a"`` or ``"b"``."""
        play = self.a if side == "a" else self.b
        return {
            "path": str(play.save.path) if play.save.path is not None else play.save.label,
            "sha256": play.save.sha256,
            "content": str(play.content.root) if play.content.root is not None else None,
        }

    def to_json(self) -> dict:
        """The ``diff --format json`` contract of issue 13 (levels by display name)."""
        return {
            "a": self.side_json("a"),
            "b": self.side_json("b"),
            "divergence": self.divergence.to_json() if self.divergence else None,
            "npcs": {slug: d.to_json() for slug, d in self.npcs.items()},
            "facts": self.facts.to_json(),
            "interactions": {"changed": [c.to_json() for c in self.interactions]},
            "monologues": self.monologues.to_json(),
            "findings": {
                "only_a": [f.to_json() for f in self.findings_only_a],
                "only_b": [f.to_json() for f in self.findings_only_b],
            },
            "prompts": {slug: p.to_json() for slug, p in self.prompts.items()},
        }

    def scores_at(self, slug: str, tick: int) -> tuple[float | None, float | None]:
        """NPC ``slug``'s relationship score (points) at ``tick`` in A and in B, the state
        after every entry of that tick (None on a side without that NPC). A bisection
        per side, no replay: e.g. where ``npcs[slug].score_first_differs_tick`` says its
        curves part."""
        def score(play: Playthrough) -> float | None:
            npc = play.save.npc_by_slug(slug)
            if npc is None:
                return None
            index = play.index
            return index.npcs[npc.stable_id].at(index.position_for_tick(tick)).relationship.score
        return score(self.a), score(self.b)

    def scores_meet_again(self, slug: str) -> int | None:
        """The tick from which NPC ``slug``'s score curves, once parted
        (``npcs[slug].score_first_differs_tick``), agree again up to the compared ticks
        (a score clamped at 100 in both); None when they never part, or still differ there."""
        parted = self.npcs[slug].score_first_differs_tick if slug in self.npcs else None
        if parted is None:
            return None
        curves = []
        for play, tick in ((self.a, self.tick_a), (self.b, self.tick_b)):
            index, sid = play.index, play.save.npc_by_slug(slug).stable_id
            limit = index.position_for_tick(tick)
            start = min(index.position_for_tick(parted - 1), limit) if parted > 0 else 0
            curves.append(score_steps(index, sid, start, limit))
        return score_meets_again(*curves)

    def differences(self) -> list[Difference]:
        """Every difference as one line with where it shows, in the order of the contract."""
        if self._differences is None:
            self._differences = _differences(self)
        return self._differences


def compare(a: Playthrough, b: Playthrough, tick: int | None = None, progress=None, parted_from: int | None = None,
            same_lines: bool = False, same_prompt: Callable[[str], bool] | None = None) -> Comparison:
    """Compare two readable playthroughs at ``tick`` (default: each side's last tick).

    Args:
        a, b: readable playthroughs (two saves, or one save opened with two contents).
        tick: compare the states at this tick in both (game ticks); the journals are then
            compared up to it.
        progress: optional callable(fraction 0..1, message).
        parted_from: a tick from which the replays may differ where the journals agree
            (a what-if's tuned rules: 0); the score curves are walked from there.
        same_lines: B's dialogue lines, their speakers' names and its content are A's (a
            what-if whose replay took A's lines): B's prompts share A's rendered lines
            (``PromptBuilder``'s ``lines_from``).
        same_prompt: ``same_prompt(slug)`` is True where B's prompt for that NPC is known
            to be A's (a what-if that changed only numbers, where the NPC's state at the
            compared tick is A's): A's is not built again for B.

    Raises:
        ValueError: when a side could not be read.
    """
    for play in (a, b):
        if not play.readable:
            raise ValueError(f"{play.save.label} could not be read")
    report = progress or (lambda fraction, message: None)
    ia, ib = a.index, b.index
    tick_a = a.last_tick if tick is None else tick
    tick_b = b.last_tick if tick is None else tick
    pos_a, pos_b = ia.position_for_tick(tick_a), ib.position_for_tick(tick_b)
    same_save = bool(a.save.sha256) and a.save.sha256 == b.save.sha256
    report(0.0, "comparing the journals")
    divergence = None if same_save else first_divergence(a.save, b.save, pos_a, pos_b)
    parted = divergence.tick if divergence is not None else None
    if parted_from is not None:
        parted = parted_from if parted is None else min(parted, parted_from)

    report(0.2, "comparing NPCs")
    slugs = sorted({n.slug for n in a.save.npcs.values()} | {n.slug for n in b.save.npcs.values()})
    npcs = {}
    for slug in slugs:
        na, nb = a.save.npc_by_slug(slug), b.save.npc_by_slug(slug)
        npcs[slug] = compare_npc(slug, ia, na.stable_id if na else None, pos_a, ib, nb.stable_id if nb else None, pos_b, parted)

    report(0.4, "comparing knowledge")
    facts, interactions = compare_knowledge(KnowledgeAtTick(ia, pos_a), KnowledgeAtTick(ib, pos_b))
    monologues = compare_monologues(ia, pos_a, a.content, ib, pos_b, b.content, same_save)

    key = lambda f: (f.code, f.tick, f.message)  # noqa: E731
    keys_a, keys_b = {key(f) for f in a.findings}, {key(f) for f in b.findings}
    only_a = tuple(f for f in a.findings if key(f) not in keys_b)
    only_b = tuple(f for f in b.findings if key(f) not in keys_a)

    report(0.6, "comparing prompts")
    builder_a = PromptBuilder(a)
    builder_b = PromptBuilder(b, lines_from=builder_a if same_lines else None)
    prompts = {}
    for slug in slugs:
        if npcs[slug].a is not None and npcs[slug].b is not None:
            preview_a = builder_a.build(slug, tick_a)
            as_a = same_prompt is not None and same_prompt(slug)
            prompts[slug] = compare_prompts(preview_a, preview_a if as_a else builder_b.build(slug, tick_b))
    report(1.0, "compared")
    return Comparison(a, b, tick_a, tick_b, same_save, divergence, npcs, facts, interactions, monologues, only_a, only_b, prompts)


def _event_words(event: dict | None) -> str:
    if event is None:
        return "(journal ends)"
    kind = next(iter(event["event"])) if event["event"] else "(invalid entry)"
    return f"tick {event['tick']} {kind}"


def _field_changes(a: dict | None, b: dict | None) -> str:
    """``": sentiment -0.63 → 0.8, delta 0.285 → 1.0"`` for two entries of one kind at one
    tick: the fields that differ (a what-if's edited conversation said only its kind:
    trial 47); "" otherwise."""
    if a is None or b is None or a.get("tick") != b.get("tick"):
        return ""
    ea, eb = a.get("event") or {}, b.get("event") or {}
    if len(ea) != 1 or ea.keys() != eb.keys():
        return ""
    kind = next(iter(ea))
    fa, fb = ea[kind], eb[kind]
    if not isinstance(fa, dict) or not isinstance(fb, dict):
        return ""
    changed = [f"{name} {_value_words(fa.get(name))} → {_value_words(fb.get(name))}" for name in dict.fromkeys([*fa, *fb]) if fa.get(name) != fb.get(name)]
    return ": " + ", ".join(changed[:6]) + (f" and {len(changed) - 6} more" if len(changed) > 6 else "") if changed else ""


def _value_words(value) -> str:
    return cut(value if isinstance(value, str) else dumps_strict(value))


def _npc_words(end) -> str:
    if end is None:
        return "absent"
    return f"{end.score:.2f} {end.level.display_name}, stress {end.stress}, walk-aways {end.walk_aways}"


def _differences(c: Comparison) -> list[Difference]:
    out: list[Difference] = []
    d = c.divergence
    if d is not None:
        out.append(Difference("journal", f"journals part at entry {d.a_index}: A {_event_words(d.a_event)} / B {_event_words(d.b_event)}"
                              f"{_field_changes(d.a_event, d.b_event)}", d.tick, None, "timelines"))
    for slug, n in c.npcs.items():
        if n.differs:
            tick = n.score_first_differs_tick
            parted = f"; scores part at tick {tick}" if tick is not None else ""
            out.append(Difference("npc", f"{slug}: A {_npc_words(n.a)} / B {_npc_words(n.b)}{parted}", tick, slug, "timelines"))
    for fact_id, fact in c.facts.only_a:
        out.append(Difference("fact", f"{fact_id} only in A ({fact.confidence.name}, {fact.state.name})", fact.acquired_tick, None, "knowledge", fact_id))
    for fact_id, fact in c.facts.only_b:
        out.append(Difference("fact", f"{fact_id} only in B ({fact.confidence.name}, {fact.state.name})", fact.acquired_tick, None, "knowledge", fact_id))
    for ch in c.facts.changed:
        text = f"{ch.fact_id}: A {ch.a.confidence.name}, {ch.a.state.name} / B {ch.b.confidence.name}, {ch.b.state.name}"
        out.append(Difference("fact", text, None, None, "knowledge", ch.fact_id))
    for ch in c.interactions:
        wa = ch.a.state if ch.a else "absent"
        wb = ch.b.state if ch.b else "absent"
        fact_id = (ch.a or ch.b).fact_id
        out.append(Difference("interaction", f"{fact_id}: A {wa} / B {wb}", ch.tick, ch.npc, "interactions", fact_id))
    for side, lines in (("A", c.monologues.only_a), ("B", c.monologues.only_b)):
        for line in lines:
            out.append(Difference("monologue", f"line {line.line_id} fired only in {side} (first at tick {line.first_tick}, {line.count}×)", line.first_tick,
                                  line_id=line.line_id))
    for e in c.monologues.eligibility_changed:
        words = {True: "eligible", False: "not eligible", None: "not defined"}
        spans = ""
        if e.spans:
            spans = "; differs at ticks " + ", ".join(f"{s}–{u if u is not None else 'end'}" for s, u in e.spans)
        out.append(Difference("monologue", f"line {e.line_id}: A {words[e.a]} / B {words[e.b]} at the end{spans}", e.tick, line_id=e.line_id))
    for side, findings in (("A", c.findings_only_a), ("B", c.findings_only_b)):
        for f in findings:
            target = f.target
            out.append(Difference("finding", f"{f.code} only in {side}: {f.message}", f.tick, target.npc if target else None,
                                  line_id=target.line_id if target else None))
    for slug, p in c.prompts.items():
        if p.differs:
            parts = []
            if p.sections_changed:
                parts.append("sections " + ", ".join(p.sections_changed))
            parts.append(f"tokens A {p.tokens_a} / B {p.tokens_b}")
            if p.cards_only_a:
                parts.append("cards only in A: " + ", ".join(p.cards_only_a))
            if p.cards_only_b:
                parts.append("cards only in B: " + ", ".join(p.cards_only_b))
            out.append(Difference("prompt", f"{slug} prompt: " + "; ".join(parts), min(p.tick_a, p.tick_b), slug, "prompt"))
    return out


def open_and_compare(a: Playthrough, path, content_dir=None, *, tick: int | None = None, progress=None, cancelled=None) -> Comparison | Playthrough:
    """Open side B and compare it with ``a`` (the app's File › Compare with…, run off the GUI thread).

    Args:
        a: side A, readable.
        path: B's save (``a``'s own save for a content comparison).
        content_dir: B's content folder (default: ``default_content_dir(path)``).
        tick, progress: as for ``compare``; ``cancelled`` as for ``Playthrough.open``.

    Returns:
        The Comparison, or B's Playthrough when B could not be read (its findings say why).

    Raises:
        Cancelled: when ``cancelled`` says so while B is opened.
    """
    report = progress or (lambda fraction, message: None)
    b = Playthrough.open(path, content_dir, progress=lambda f, m: report(0.8 * f, m), cancelled=cancelled)
    if not b.readable:
        return b
    return compare(a, b, tick, progress=lambda f, m: report(0.8 + 0.2 * f, m))
