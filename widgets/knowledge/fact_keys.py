"""The FactIds that exist at a journal position, in BTreeMap order, moved step by step.

A fact exists from its creation on (``TimelineIndex.fact_created``), so the facts of
position ``p`` are the first ``len(KnowledgeAtTick.facts)`` facts in creation order.
Sorting them anew costs O(N log N) per tick step (tens of milliseconds for 100 000
facts); ``FactKeysAt`` keeps one sorted list and adds or removes only the facts
created between the last position and the new one: O(K log N) for K new facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sortedcontainers import SortedList

from narrative_debugger.models.domain.types import FactId
from narrative_debugger.widgets.kit.prepared import Prepared


@dataclass(frozen=True)
class FactOrder:
    """``order``: every FactId of a playthrough, in creation order (``prepare``)."""

    order: list[FactId]


@dataclass(frozen=True)
class SavedFactKeys:
    """``tracker``: a ``FactKeysAt`` holding the sorted keys at ``saved_at_tick``, where
    the window opens a save (``prepare``). Mutable, so only its first reader owns it
    (``take_prepared``)."""

    tracker: "FactKeysAt"


def prepare(playthrough, prepared=None) -> tuple[FactOrder, SavedFactKeys] | FactOrder:
    """The ``FactOrder`` of a playthrough (O(N) facts), made by the loader off the GUI
    thread, and with it the ``SavedFactKeys`` (none for an unreadable save).

    When every fact exists at the saved tick (the usual case), its keys are the
    replay's ``index.fact_keys``, already sorted; else they are sorted here."""
    index = playthrough.index
    order = FactOrder(list(index.facts) if index is not None else [])
    if index is None:
        return order
    count = len(playthrough.state_at(playthrough.save.saved_at_tick).knowledge.facts)
    tracker = FactKeysAt(order.order)
    index.finish()
    every = count == len(order.order) == len(index.fact_keys)
    tracker.set_sorted(count, list(index.fact_keys) if every else sorted(order.order[:count]))
    return order, SavedFactKeys(tracker)


def take_prepared(prepared: Prepared | None) -> "FactKeysAt | None":
    """The loader's ``SavedFactKeys`` tracker in ``prepared`` (the container of the
    playthrough being shown), once: later calls get None."""
    saved = prepared.take(SavedFactKeys) if prepared is not None else None
    return saved.tracker if saved is not None else None


def only_in_b(keys_a: Sequence[FactId], keys_b: Sequence[FactId]) -> tuple[Sequence[FactId], set[FactId]]:
    """The rows of a comparison's knowledge table: the FactIds of A (``keys_a``) and
    those only B knows (of ``keys_b``), both in BTreeMap order. Returns ``(rows, the
    FactIds only B knows)``; ``rows`` is ``keys_a`` itself when B knows none A does not."""
    extra = set(keys_b).difference(keys_a)
    return (sorted([*keys_a, *extra]) if extra else keys_a), extra


class BothKeysAt:
    """The rows of a comparison's knowledge table (``only_in_b``) that follow a position
    of each side, moved step by step as ``FactKeysAt`` moves one side's keys.

    ``move(count_a, count_b)`` moves the trackers ``a`` and ``b`` and returns ``(rows, how
    many only B knows)``: ``rows`` a SortedList that is the same object each time and
    changes on the next ``move``. A step looks at the K facts created between the two
    positions of either side, O(K log N); a far move (more than an eighth of the rows)
    takes ``only_in_b`` anew, O(N log N)."""

    def __init__(self, a: FactKeysAt, b: FactKeysAt) -> None:
        self.a, self.b = a, b
        self.counts: tuple[int, int] | None = None
        self.rows: SortedList = SortedList()
        self.extra: set[FactId] = set()

    def start_at(self, made: "ComparedFacts") -> None:
        """Start from the rows a what-if's child made (``prepare_comparison``): the next
        ``move`` steps from its counts instead of making the rows anew (O(N), in C)."""
        self.counts = (made.count_a, made.count_b)
        self.rows = SortedList(made.rows[:])  # a slice of a mapped column is one list, chunk by chunk
        self.extra = set(made.only_b)

    def move(self, count_a: int, count_b: int) -> tuple[SortedList, int]:
        keys_a, keys_b = self.a.move(count_a), self.b.move(count_b)
        count_a, count_b = self.a.count, self.b.count
        old = self.counts
        changed = None if old is None else (
            self.a.order[min(old[0], count_a): max(old[0], count_a)], self.b.order[min(old[1], count_b): max(old[1], count_b)])
        if changed is None or (len(changed[0]) + len(changed[1])) * 8 > len(self.rows):
            rows, self.extra = only_in_b(keys_a, keys_b)
            self.rows = SortedList(rows)
        else:
            rows, extra = self.rows, self.extra
            for fact_id in {*changed[0], *changed[1]}:
                in_a, in_b = fact_id in keys_a, fact_id in keys_b
                if in_a or in_b:
                    if fact_id not in rows:
                        rows.add(fact_id)
                else:
                    rows.discard(fact_id)
                if in_b and not in_a:
                    extra.add(fact_id)
                else:
                    extra.discard(fact_id)
        self.counts = (count_a, count_b)
        return self.rows, len(self.extra)


@dataclass(frozen=True)
class ComparedFacts:
    """What the knowledge table of a comparison shows at one tick, made ahead by the
    what-if's child process (``prepare_comparison``) for the tick the window showed
    when the what-if started. Read-only: the view only reads it.

    Attributes:
        tick: that tick (u64).
        position_a, position_b: each side's journal position at ``tick``.
        count_a, count_b: how many facts each side knows there.
        rows: ``only_in_b``'s rows (A's FactIds and B's own, BTreeMap order).
        only_b: the FactIds of them only B knows.
        facts_b: B's FactId -> FactKnowledge at ``position_b``, in BTreeMap order (rows
            next to each other in the table are next to each other here, so a paint
            reads one or two chunks of the what-if's file, not one a row).
    """

    tick: int
    position_a: int
    position_b: int
    count_a: int
    count_b: int
    rows: Sequence[FactId]
    only_b: frozenset[FactId]
    facts_b: Mapping


def prepare_comparison(comparison, tick: int, prepared: Prepared | None = None) -> ComparedFacts | None:
    """The ``ComparedFacts`` of ``comparison`` at ``tick`` (O(N log N) for N facts), made
    by the what-if's child process; ``prepared``: what B's own ``prepare`` made for it
    (its ``FactOrder``). None when a side has no timeline."""
    a, b = comparison.a, comparison.b
    if a.index is None or b.index is None:
        return None
    state_a, state_b = a.state_at(tick), b.state_at(tick)
    count_a, count_b = len(state_a.knowledge.facts), len(state_b.knowledge.facts)
    keys_a = FactKeysAt(creation_order(a, a.index)).move(count_a)
    keys_b = FactKeysAt(creation_order(b, b.index, prepared)).move(count_b)
    rows, only_b = only_in_b(keys_a, keys_b)
    facts = state_b.knowledge.facts.as_dict()
    return ComparedFacts(tick, state_a.position, state_b.position, count_a, count_b, list(rows), frozenset(only_b),
                         {key: facts[key] for key in keys_b})


def compared_at(prepared: Prepared | None, state_a, state_b) -> ComparedFacts | None:
    """The ``ComparedFacts`` of ``prepared`` (the comparison's, ``Session.prepared_b``)
    when it was made for the positions of ``state_a`` and ``state_b``, else None."""
    made = prepared.get(ComparedFacts) if prepared is not None else None
    if made is None or (made.position_a, made.position_b) != (state_a.position, state_b.position):
        return None
    return made


def creation_order(playthrough, index, prepared: Prepared | None = None) -> list[FactId]:
    """The creation-ordered FactIds of ``index`` (the prepared ``FactOrder`` when
    ``prepared`` has one of as many facts: the container of ``playthrough``, whose index
    ``index`` then is)."""
    if playthrough is not None and playthrough.index is index:
        made = prepared.get(FactOrder) if prepared is not None else None
        if made is not None and len(made.order) == len(index.facts):
            return made.order
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
        self._spare: list[FactId] | None = None  # ``keys`` as a plain list, at ``_spare_count``
        self._spare_count = -1

    def set_sorted(self, count: int, keys: list[FactId]) -> None:
        """Hold the first ``count`` facts, given already sorted as ``keys`` (a list this
        tracker then owns: ``take_list`` hands it out once)."""
        self.keys = SortedList(keys)  # a sorted list sorts in one pass, into lists of its own
        self.count = count
        self._spare, self._spare_count = keys, count

    def take_list(self) -> list[FactId]:
        """``keys`` as a plain list of the caller's own (it may change it).

        The first call after ``set_sorted`` at the same count returns that list: the
        loader sorted it off the GUI thread, and a copy of a large save's keys would
        weigh on the pass that opens it. Other calls copy ``keys``."""
        spare, self._spare = self._spare, None
        return spare if spare is not None and self._spare_count == self.count else list(self.keys)

    def move(self, count: int) -> SortedList:
        count = max(0, min(count, len(self.order)))
        delta = abs(count - self.count)
        if delta == 0:
            return self.keys
        if delta * 8 > count:  # far away: sorting the prefix anew is cheaper
            self.keys = SortedList(self.order[:count])
            self.count = count
            return self.keys
        if not isinstance(self.keys, SortedList):
            # Handed over by a child process (``prepare``), the keys are a read-only mapped
            # column: the first move near them makes them a SortedList of ours (O(N):
            # one slice, chunk by chunk, already sorted).
            self.keys = SortedList(self.keys[:])
        if count > self.count:
            self.keys.update(self.order[self.count : count])
        else:
            for fact_id in self.order[count : self.count]:
                self.keys.remove(fact_id)
        self.count = count
        return self.keys
