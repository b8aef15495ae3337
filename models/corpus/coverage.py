"""Coverage over a corpus (issue 39): what of the content fired, how often, in how many saves.

``coverage(con)`` answers from the corpus's views (``models.corpus.store.connect``)
with the JSON shape of ``narrative-debugger coverage --format json``::

    {"saves": N,
     "lines": {line_id: {"fired", "saves", "nearest_miss": {"save", "tick", "failing", "distance"} | null}},
     "cards": {card_id: {"included", "dropped", "saves"}},
     "transitions": {"From->To": {"count", "saves"}},
     "codes": {code: {"count", "saves"}},
     "cards_counted_in": N,
     "missing_saves": [path, ...]}

- ``lines``: every monologue line of the corpus's content folders (and any id a
  journal fired that the content lacks); ``fired`` counts MonologueFired entries,
  ``saves`` the saves holding one. A line that never fired gets its nearest miss
  across the corpus: the save and tick where the fewest of its clauses failed, then
  the least ``distance`` (``near_misses.distance``: how far they were from holding;
  ties: the first save by path, then the latest tick), null when it has no prerequisites
  or no readable save. A save no longer at its path (``missing_saves``) is the nearest
  miss only when no save still there has one for the line.
- ``cards``: every story card; ``included``/``dropped`` count the prompts of the
  ``prompts`` table that matched it and kept or dropped it (budget); ``saves`` the
  saves where it was included at least once. All three are null (unknown, not 0)
  when no readable save's cards were counted: every one was indexed with ``--no-prompts``.
- ``cards_counted_in``: the readable saves whose story cards were counted (indexed
  without ``--no-prompts``); the cards' counts are over these saves only.
- ``missing_saves``: the saves of the corpus whose file is no longer at its path
  (sorted); their rows still count everywhere else.
- ``transitions``: every legal interaction move (schema §3.2) and any other seen;
  ``count`` moves, ``saves`` the saves with one. A new conversation is ``Start->Active``.
- ``codes``: every rule of the catalogue (and any other code found): ``count`` its
  findings and ``saves`` the files having it, as ``check`` reports them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from narrative_debugger.models.corpus.rows import transition_id
from narrative_debugger.models.domain.types import TRANSITIONS
from narrative_debugger.models.report.plain_text import some_named
from narrative_debugger.models.rules.catalogue import RULES

_IN_CORPUS = "content_stamp IN (SELECT DISTINCT content_stamp FROM saves)"

#: The ids (``From->To``) of every move schema §3.2 allows, in its table's order.
LEGAL_TRANSITIONS = tuple(transition_id(source, target) for source, target in TRANSITIONS)


def _sorted_keys(mapping: dict) -> dict:
    return {key: mapping[key] for key in sorted(mapping)}


#: How many missing saves ``missing_note`` names (in text) before "and N more".
MISSING_NAMED = 5

#: How a save of the corpus whose file is gone (``missing_saves``) is marked where it is
#: named (a nearest miss in the text, the HTML page and the Coverage dock).
NO_LONGER_THERE = "no longer at this path"


def missing_note(paths: list[str], named: str | None = None) -> str:
    """The one line, for ``corpus``, ``coverage`` and its HTML page alike, on the saves of
    the corpus no longer at their path (``missing_saves``): how many, what happens to them,
    and which. ``named``: the paths as the caller shows them (HTML); by default the first
    ``MISSING_NAMED`` on one line each (``some_named``)."""
    if named is None:
        named = some_named(paths, MISSING_NAMED)
    return (f"{len(paths)} save(s) indexed before are no longer at their path (kept, still counted; run corpus with "
            f"the folder they were in to drop them): {named}")


def missing_saves(con) -> list[str]:
    """The saves of the corpus whose file no longer exists at its path, sorted (one stat a save)."""
    return sorted(path for (path,) in con.execute("SELECT path FROM saves").fetchall() if not os.path.exists(path))


def coverage(con) -> dict:
    """The coverage document of the corpus behind ``con`` (see the module docstring).
    Looks at the file system for ``missing_saves`` (one stat a save)."""
    saves = con.execute("SELECT count(*) FROM saves").fetchone()[0]
    gone = missing_saves(con)
    without, readable = saves_without_prompts(con)
    lines = {line_id: {"fired": 0, "saves": 0, "nearest_miss": None}
             for (line_id,) in con.execute(f"SELECT DISTINCT id FROM content WHERE kind = 'monologue_line' AND {_IN_CORPUS}").fetchall()}
    cards = {card_id: {"included": 0, "dropped": 0, "saves": 0}
             for (card_id,) in con.execute(f"SELECT DISTINCT id FROM content WHERE kind = 'story_card' AND {_IN_CORPUS}").fetchall()}
    transitions = {move: {"count": 0, "saves": 0} for move in LEGAL_TRANSITIONS}
    codes = {code: {"count": 0, "saves": 0} for code in RULES}
    # One scan of the per-save counts for every kind (a story card's firing is its
    # inclusion in a prompt): ~100 rows a save where firings has thousands.
    for kind, item, count, in_saves in con.execute(
            "SELECT kind, id, sum(count), count(*) FROM firing_counts GROUP BY kind, id").fetchall():
        if kind == "monologue_line":
            lines[item] = {"fired": count, "saves": in_saves, "nearest_miss": None}
        elif kind == "story_card":
            cards.setdefault(item, {"included": 0, "dropped": 0, "saves": 0}).update(included=count, saves=in_saves)
        elif kind == "transition":
            transitions[item] = {"count": count, "saves": in_saves}
        elif kind == "finding":
            codes[item] = {"count": count, "saves": in_saves}
    for line_id, save, tick, failing, distance in con.execute(
            "SELECT line_id, save, tick, failing, distance FROM near_misses QUALIFY row_number() OVER "
            "(PARTITION BY line_id ORDER BY list_contains(?::VARCHAR[], save), failing_count, distance, save, tick DESC) = 1",
            [gone]).fetchall():
        entry = lines.get(line_id)
        if entry is not None and entry["fired"] == 0:
            entry["nearest_miss"] = {"save": save, "tick": tick, "failing": list(failing), "distance": distance}
    for card_id, dropped in con.execute(
            "SELECT card, count(*) FROM (SELECT unnest(dropped) AS card FROM prompts WHERE cards_dropped > 0) GROUP BY card").fetchall():
        cards.setdefault(card_id, {"included": 0, "dropped": 0, "saves": 0})["dropped"] = dropped
    if readable and without == readable:  # no card was counted: 0 would say "never matched"
        cards = {card_id: {"included": None, "dropped": None, "saves": None} for card_id in cards}
    return {"saves": saves, "lines": _sorted_keys(lines), "cards": _sorted_keys(cards),
            "transitions": _sorted_keys(transitions), "codes": _sorted_keys(codes),
            "cards_counted_in": readable - without, "missing_saves": gone}


@dataclass(frozen=True)
class LineTally:
    """How the content's monologue lines fared across a corpus.

    Attributes:
        fired: content lines that fired at least once.
        total: the monologue lines of the corpus's content folders.
        not_in_content: ids that journals fired but no content folder defines (each is an
            M002 finding), sorted; counted in neither ``fired`` nor ``total``.
    """

    fired: int
    total: int
    not_in_content: tuple[str, ...]

    @property
    def never(self) -> int:
        """Content lines that never fired."""
        return self.total - self.fired


#: What a nearest miss with no failing clause says: the line could have fired there.
ELIGIBLE_UNCHOSEN = "none: every prerequisite held there, yet the game never chose the line"


def failing_clauses(miss: dict) -> str:
    """A nearest miss's failing clauses joined by "; ", or ``ELIGIBLE_UNCHOSEN`` when
    none failed (the trial read "0 failing: every prerequisite held" as a contradiction)."""
    return "; ".join(miss["failing"]) or ELIGIBLE_UNCHOSEN


def line_tally(doc: dict, content_ids) -> LineTally:
    """``doc``'s lines (``coverage()``) tallied against ``content_ids``, the line ids the
    content folders define (``line_files(con)``'s keys): a line a journal fired that the
    content lacks is listed apart, not counted as a content line."""
    content_ids = set(content_ids)
    lines = doc["lines"]
    fired = sum(1 for k, e in lines.items() if k in content_ids and e["fired"] > 0)
    total = sum(1 for k in lines if k in content_ids)
    return LineTally(fired, total, tuple(sorted(k for k in lines if k not in content_ids)))


def saves_without_prompts(con) -> tuple[int, int]:
    """``(without, readable)``: the readable saves indexed with ``--no-prompts`` (their
    story cards were not counted: a card's 0 there says nothing), and all readable saves."""
    without, readable = con.execute("SELECT count(*) FILTER (WHERE NOT prompts), count(*) FROM saves WHERE readable").fetchone()
    return int(without or 0), int(readable or 0)


def line_files(con) -> dict[str, str]:
    """line id -> the content file (pool) it is defined in."""
    return dict(con.execute(f"SELECT id, min(file) FROM content WHERE kind = 'monologue_line' AND {_IN_CORPUS} GROUP BY id").fetchall())


def card_files(con) -> dict[str, str]:
    """card id -> the lore file it is defined in."""
    return dict(con.execute(f"SELECT id, min(file) FROM content WHERE kind = 'story_card' AND {_IN_CORPUS} GROUP BY id").fetchall())


def final_scores(con) -> dict[str, list[float]]:
    """NPC slug -> the final relationship scores across the saves (0..100)."""
    out: dict[str, list[float]] = {}
    for slug, score in con.execute("SELECT slug, score FROM npcs ORDER BY slug, score").fetchall():
        out.setdefault(slug, []).append(score)
    return out


def save_contents(con) -> dict[str, str]:
    """save path -> the content folder it was indexed with."""
    return dict(con.execute("SELECT path, content FROM saves").fetchall())
