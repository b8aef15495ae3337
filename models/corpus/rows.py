"""One save as the corpus's rows (issue 39): what ``corpus`` stores of each playtest.

The save is opened by ``Playthrough.open``, the reader, replay and checks ``check``
runs, so a save's findings here are the ones ``check`` lists. Nothing is judged
again: the firings are the replay's (``TimelineIndex.monologues_fired``,
``transitions``), the near misses ``explain.lines``'s, the prompts
``PromptBuilder``'s plans (their counts, never their text). Pure Python: the tables are plain column lists, written by
``models.corpus.store``.

Tables (the README's contract; ticks are u64, ``save`` is the save's path as indexed):

- ``saves``: path, sha256, readable, events, saved_at_tick, content, content_stamp,
  errors, warnings, findings, prompts (whether its prompts were built: ``corpus
  --no-prompts`` leaves them out).
- ``npcs``: save, slug, stable_id, score, level, stress, walk_aways, conversations
  (final state: the replay at the save's last tick).
- ``firings``: save, tick, kind (``monologue_line`` | ``story_card`` | ``transition`` |
  ``finding``), id, npc, journal_index, message and location (a finding's, as ``check``
  prints them; location NULL when it has none; both NULL for the other kinds).
- ``firing_counts``: save, kind, id, count: the save's firings counted by kind and id
  (what coverage sums: one row per item a save fired, not one per firing).
- ``near_misses``: save, tick, line_id, failing_count, failing (list of clauses in
  words), distance (``Eligibility.distance``: the sum of how far each failing clause is
  from holding, confidence steps or interactions); one row per content line with
  prerequisites that never fired in the save.
- ``prompts``: save, tick, npc, tokens, cards_included, cards_dropped, included,
  dropped (card ids), prefix_unchanged (tokens shared with the NPC's previous prompt
  in this table, NULL for its first); one row per conversation, at its start.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from narrative_debugger.models.content.loader import load_content
from narrative_debugger.models.content.reuse import keep_content, kept_content
from narrative_debugger.models.explain.lines import nearest_miss_in_save
from narrative_debugger.models.fileio import FileRefused, iter_regular_file
from narrative_debugger.models.playthrough import Playthrough, default_content_dir
from narrative_debugger.models.prompt.builder import PromptBuilder, common_prefix_tokens, encoding_of
from narrative_debugger.models.prompt.tokens import get_encoder
from narrative_debugger.models.rules.findings import Severity
from narrative_debugger.models.save.jsonio import MAX_DOCUMENT_BYTES

#: Column names and DuckDB types of each table, in order (the README's contract).
SCHEMA: dict[str, tuple[tuple[str, str], ...]] = {
    "saves": (("path", "VARCHAR"), ("sha256", "VARCHAR"), ("readable", "BOOLEAN"), ("events", "UBIGINT"),
              ("saved_at_tick", "UBIGINT"), ("content", "VARCHAR"), ("content_stamp", "VARCHAR"),
              ("errors", "UBIGINT"), ("warnings", "UBIGINT"), ("findings", "UBIGINT"), ("prompts", "BOOLEAN")),
    "npcs": (("save", "VARCHAR"), ("slug", "VARCHAR"), ("stable_id", "UBIGINT"), ("score", "DOUBLE"), ("level", "VARCHAR"),
             ("stress", "INTEGER"), ("walk_aways", "UBIGINT"), ("conversations", "UBIGINT")),
    "firings": (("save", "VARCHAR"), ("tick", "UBIGINT"), ("kind", "VARCHAR"), ("id", "VARCHAR"), ("npc", "VARCHAR"),
                ("journal_index", "UBIGINT"), ("message", "VARCHAR"), ("location", "VARCHAR")),
    "firing_counts": (("save", "VARCHAR"), ("kind", "VARCHAR"), ("id", "VARCHAR"), ("count", "UBIGINT")),
    "near_misses": (("save", "VARCHAR"), ("tick", "UBIGINT"), ("line_id", "VARCHAR"), ("failing_count", "UBIGINT"),
                    ("failing", "VARCHAR[]"), ("distance", "UBIGINT")),
    "prompts": (("save", "VARCHAR"), ("tick", "UBIGINT"), ("npc", "VARCHAR"), ("tokens", "UBIGINT"), ("cards_included", "UBIGINT"),
                ("cards_dropped", "UBIGINT"), ("included", "VARCHAR[]"), ("dropped", "VARCHAR[]"), ("prefix_unchanged", "UBIGINT")),
}

#: The per-content table: every monologue line and story card a content folder holds.
CONTENT_SCHEMA = (("content_stamp", "VARCHAR"), ("content", "VARCHAR"), ("kind", "VARCHAR"), ("id", "VARCHAR"), ("file", "VARCHAR"))

#: How a conversation's start is named in a transition id (``Start->Active``).
START = "Start"

KINDS = ("monologue_line", "story_card", "transition", "finding")


def empty_tables() -> dict[str, dict[str, list]]:
    """Every table with its columns and no rows."""
    return {name: {column: [] for column, _ in columns} for name, columns in SCHEMA.items()}


def transition_id(source, target) -> str:
    """``From->To`` of an interaction state move (``Start->Active`` for a new conversation)."""
    return f"{source.value if source is not None else START}->{target.value}"


def file_sha256(path: Path) -> str | None:
    """The SHA-256 of the file's bytes (hex), None when it is not read: not a regular
    file (a FIFO would block, a device such as /dev/zero never end), over the save
    size cap, or not readable. The open that follows says why (F001)."""
    digest = hashlib.sha256()
    try:
        for block in iter_regular_file(path, MAX_DOCUMENT_BYTES, stage=None):
            digest.update(block)
    except (OSError, FileRefused):
        return None
    return digest.hexdigest()


def content_stamp(root: Path) -> str:
    """A hex digest of ``folder_stamp(root)``: equal stamps, same content bytes."""
    from narrative_debugger.models.content.reuse import folder_stamp

    return hashlib.sha256(repr(folder_stamp(root)).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def content_rows(root: Path, stamp: str) -> dict[str, list]:
    """The ``content`` table's rows of one folder: its lines and cards with their files."""
    from narrative_debugger.models.content.loader import load_content

    content = load_content(root)
    out = {column: [] for column, _ in CONTENT_SCHEMA}
    items = [("monologue_line", line.id, f"monologues/{line.pool}.yaml" if line.pool else line.location) for line in content.monologues.values()]
    seen = set()
    for card in content.cards:
        if card.id not in seen:
            seen.add(card.id)
            items.append(("story_card", card.id, card.file))
    for kind, item_id, file in items:
        for column, value in zip(("content_stamp", "content", "kind", "id", "file"), (stamp, str(root), kind, item_id, file)):
            out[column].append(value)
    return out


def save_tables(path: str, content_dir: Path | None, sha256: str | None, stamp: str, prompts: bool = True) -> dict[str, dict[str, list]]:
    """Open one save and return its rows of every table (``SCHEMA``). ``prompts``
    False leaves the ``prompts`` table and the ``story_card`` firings empty: building
    each conversation's prompt is most of the time of indexing a save (tokenizing).

    Never raises on bad input: an unreadable save gives its ``saves`` row (readable
    False) and its findings as ``finding`` firings, as ``check`` lists them.
    """
    if prompts:
        load_encoder(content_dir if content_dir is not None else default_content_dir(Path(path)))
    play = Playthrough.open(Path(path), content_dir)
    tables = empty_tables()
    errors = sum(f.severity is Severity.ERROR for f in play.findings)
    add(tables["saves"], path=path, sha256=sha256, readable=play.readable, events=len(play.save.journal),
        saved_at_tick=saved_at_tick(play), content=str(play.content.root),
        content_stamp=stamp, errors=errors, warnings=len(play.findings) - errors, findings=len(play.findings),
        prompts=prompts and play.readable)
    firings = tables["firings"]
    for f in play.findings:
        add(firings, save=path, tick=f.tick, kind="finding", id=f.code, npc=f.target.npc if f.target is not None else None,
            journal_index=f.target.journal_index if f.target is not None else None, message=f.message, location=f.location or None)
    index = play.index
    if index is None:
        _count_firings(tables)
        return tables
    state = play.state_at(play.last_tick)
    for sid, npc in state.npcs.items():
        add(tables["npcs"], save=path, slug=npc.slug, stable_id=sid, score=float(npc.relationship.score), level=npc.level.value,
            stress=npc.tolerance.current_stress, walk_aways=npc.walk_aways, conversations=state.knowledge.interaction_count_with(sid))
    fired = set()
    for i, tick, line_id in index.monologues_fired:
        fired.add(line_id)
        add(firings, save=path, tick=tick, kind="monologue_line", id=line_id, npc=None, journal_index=i, message=None, location=None)
    for move in index.transitions:
        add(firings, save=path, tick=move.tick, kind="transition", id=transition_id(move.source, move.target),
            npc=index.slugs.get(move.npc), journal_index=move.index, message=None, location=None)
    for line_id in play.content.monologues:
        if line_id in fired:
            continue
        miss = nearest_miss_in_save(play, line_id)
        if miss is not None:
            tick, there = miss
            add(tables["near_misses"], save=path, tick=tick, line_id=line_id, failing_count=len(there.failing),
                failing=list(there.failing), distance=there.distance)
    if prompts:
        _prompts(play, path, tables)
    _count_firings(tables)
    return tables


def saved_at_tick(play: Playthrough) -> int | None:
    """The save's ``saved_at_tick`` as its file holds it; None when it was not read: an
    unreadable save, or one whose value is missing or not a u64 (the reader's F002 at
    ``saved_at_tick``: the reader stands the last journal tick in for it, which the
    corpus does not store as the save's)."""
    if not play.readable or any(f.code == "F002" and f.location == "saved_at_tick" for f in play.save.findings):
        return None
    return play.save.saved_at_tick


def load_encoder(folder: Path) -> None:
    """Build the token encoding of ``folder``'s prompts (once a process) before a save is
    opened: its table (~40 MB while tiktoken builds it, ~26 MB kept) is then made while
    the worker holds little, not on top of what the replay holds; ``corpus`` also calls
    it before forking its workers, which then share it. The folder's content is kept
    for the open (``models.content.reuse``). A failure is left to the builder, which
    meets the same one."""
    try:
        content, stamp = kept_content(folder)
        if content is None:
            content = load_content(folder)
            keep_content(folder, stamp, content)
        get_encoder(encoding_of(content))
    except Exception:  # the builder raises it again, where indexing reports it
        pass


def _count_firings(tables: dict) -> None:
    firings = tables["firings"]
    counts: dict[tuple[str, str], int] = {}
    for kind, item in zip(firings["kind"], firings["id"]):
        counts[kind, item] = counts.get((kind, item), 0) + 1
    save = tables["saves"]["path"][0]
    for (kind, item), count in sorted(counts.items()):
        add(tables["firing_counts"], save=save, kind=kind, id=item, count=count)


def _prompts(play: Playthrough, path: str, tables: dict) -> None:
    """Each conversation's first prompt (at the tick it started), its cards as firings:
    read from the builder's plans, whose counts are its previews' without their text."""
    index = play.index
    builder = PromptBuilder(play)
    previous = {}
    for move in index.transitions:
        if move.source is not None:
            continue
        slug = index.slugs.get(move.npc)
        if slug is None or play.save.npc_by_slug(slug) is None:
            continue
        plan = builder.plan(slug, move.tick)
        included = [c.id for c in plan.cards if c.included]
        dropped = [c.id for c in plan.cards if not c.included]
        before = previous.get(slug)
        add(tables["prompts"], save=path, tick=move.tick, npc=slug, tokens=plan.total_tokens, cards_included=len(included),
            cards_dropped=len(dropped), included=included, dropped=dropped,
            prefix_unchanged=common_prefix_tokens(before, plan) if before is not None else None)
        previous[slug] = plan
        for card_id in included:
            add(tables["firings"], save=path, tick=move.tick, kind="story_card", id=card_id, npc=slug, journal_index=move.index,
                message=None, location=None)


def add(table: dict[str, list], **row) -> None:
    """Append one row (every column named)."""
    for column, values in table.items():
        values.append(row[column])
