"""Which journal entry a what-if edits, from what a view shows (issue 38).

A designer looking at a conversation asks "what if the player had been kinder here":
the value to change is the ``sentiment`` of the RelationshipInteraction the game
recorded for that conversation. The journal does not name the interaction in that
entry; save-format §5 and the samples put it right after the interaction's
``InteractionCompleted``, at the same tick and about the same NPC. A conversation that
was walked away from was not scored, and has none.
"""

from __future__ import annotations

from narrative_debugger.models.domain.types import FactId, InteractionState
from narrative_debugger.models.playthrough import Playthrough

#: The RelationshipInteraction field a kinder (or harsher) conversation changes.
SENTIMENT = "sentiment"


def conversation_entry(play: Playthrough, fact_id: FactId | None) -> int | None:
    """The journal index of the RelationshipInteraction that scored interaction
    ``fact_id`` (``interaction.{slug}_{n}``), or None: not an interaction, not ended, or
    ended without one (a walk-away, a conversation abandoned).

    It is the first RelationshipInteraction about the interaction's NPC after the entry
    that completed it, at the same tick: a walk over that tick's entries only (the
    interaction's moves come from the index, not from the journal).
    """
    moves = play.index.moves_of_fact(fact_id)
    if not moves or moves[-1].target is not InteractionState.Completed:
        return None
    end, npc = moves[-1].index, moves[-1].npc
    journal = play.save.journal
    tick = journal.ticks[end]
    i = end + 1
    while i < len(journal) and journal.ticks[i] == tick:
        if journal.kinds[i] == "RelationshipInteraction" and getattr(journal.data[i], "target", None) == npc:
            return i
        i += 1
    return None

