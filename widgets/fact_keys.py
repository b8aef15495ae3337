"""The FactIds that exist at a journal position, in BTreeMap order, moved step by step.

A fact exists from its creation on (``TimelineIndex.fact_created``), so the facts of
position ``p`` are the first ``len(KnowledgeAtTick.facts)`` facts in creation order.
Sorting them anew costs O(N log N) per tick step (tens of milliseconds for 100 000
facts); ``FactKeysAt`` keeps one sorted list and adds or removes only the facts
created between the last position and the new one: O(K log N) for K new facts.
"""

from __future__ import annotations

from sortedcontainers import SortedList

from narrative_debugger.models.domain.types import FactId


def prepare(playthrough) -> list[FactId]:
    """Every FactId of the playthrough in creation order (O(N) facts), computed by the
    loader off the GUI thread; kept in ``playthrough.derived["fact_order"]``."""
    index = playthrough.index
    order = list(index.facts) if index is not None else []
    if hasattr(playthrough, "derived"):
        playthrough.derived["fact_order"] = order
    return order


def creation_order(playthrough, index) -> list[FactId]:
    """The creation-ordered FactIds of ``index`` (the prepared list when it is ``playthrough``'s)."""
    derived = getattr(playthrough, "derived", None)
    if playthrough is not None and playthrough.index is index and derived is not None:
        order = derived.get("fact_order")
        if order is None or len(order) != len(index.facts):
            order = prepare(playthrough)
        return order
    return list(index.facts)


class FactKeysAt:
    """One sorted key list that follows a position of one timeline.

    ``move(count)`` makes ``keys`` hold the first ``count`` facts in creation order, in
    BTreeMap order, and returns it. The returned SortedList is the same object each
    time and changes on the next ``move``: a holder must be reset along with it.
    """

    def __init__(self, order: list[FactId]) -> None:
        self.order = order
        self.count = 0
        self.keys: SortedList = SortedList()

    def move(self, count: int) -> SortedList:
        count = max(0, min(count, len(self.order)))
        delta = abs(count - self.count)
        if delta == 0:
            return self.keys
        if delta * 8 > count:  # far away: sorting the prefix anew is cheaper
            self.keys = SortedList(self.order[:count])
        elif count > self.count:
            self.keys.update(self.order[self.count : count])
        else:
            for fact_id in self.order[count : self.count]:
                self.keys.remove(fact_id)
        self.count = count
        return self.keys
