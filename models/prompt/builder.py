"""Assembling the NPC dialogue prompt at a tick (shared/docs/prompt-preview.md).

The sections, their order and which of them count against the budget are declared
once in :mod:`narrative_debugger.models.prompt.sections` (``SECTIONS``); this module
fits history and lore into what the counted sections leave, and counts tokens. All
counts are tokens of one tiktoken encoding.
"""

from __future__ import annotations

import functools
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import accumulate, chain

from narrative_debugger.models.content.loader import Content, StoryCard
from narrative_debugger.models.domain.types import NpcState, StableId
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.card_keys import CardKeys
from narrative_debugger.models.prompt.sections import HISTORY_LABELS, LINE_SEPARATOR, SECTIONS, SYSTEM_LABELS, SectionContext, fill_with
from narrative_debugger.models.prompt.tokens import DEFAULT_ENCODING, TokenCounter, get_encoder

SEPARATOR = "\n\n"
CARD_BUDGET_SHARE = 0.4  # lore may take at most this share of the available budget
MIN_AVAILABLE = 256  # tokens the story always gets, whatever the fixed sections cost
#: History lines rendered forward to reach a later tick from an NPC's kept lines; a
#: tick further on starts afresh (its window rarely reaches back that far).
SPAN_GAP = 256
IDS_CACHE_ENTRIES = 4096  # pieces of sections (mostly history lines) whose token ids are kept, per generation
#: Token ids are kept as ``array("I")`` (uint32; every tiktoken id fits), not tuples of
#: ints: the collector walks a new tuple item by item until it sees only ints, and the
#: ids a few previews make would cost a collection inside a tick step. The collector
#: never walks an array's items.
TOKEN_ID_TYPECODE = "I"


def lore_budget(available: int, share: float) -> int:
    """Tokens story cards may take of ``available`` tokens: ``int(available × share)``
    (prompt-preview §8: at most 40 %), exact, with ``share`` the decimal it is written as:
    in floats a budget past 2^53 came out hundreds of tokens off, and the Explain dock's
    arithmetic was false (trial 47)."""
    return int(_exact(share) * available)


@functools.lru_cache(maxsize=64)
def _exact(share: float) -> Fraction:
    """``share`` as the decimal it is written as (``repr``), exactly: made once a share,
    not at every build."""
    return Fraction(repr(share))


@dataclass(frozen=True, slots=True)
class Section:
    """One labelled part of the prompt with its token count."""

    label: str
    text: str
    tokens: int


@dataclass(frozen=True, slots=True)
class CardRecord:
    """A story card that matched: its id, name, the key that matched, and whether it fit."""

    id: str
    name: str
    keyword: str
    included: bool
    tokens: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class HistoryReport:
    """Lines of history included out of those available; whether the oldest kept line was cut.

    ``budgeted`` (tokens) is what the fit spent of the history budget: each kept line
    counted alone with its separator (context builder seed, "newest first until the
    remaining budget is spent"), or the whole budget when the newest line was cut to it.
    The ``history`` and ``recent_history`` sections, counted as assembled, are usually a
    few tokens fewer: tokens merge where lines join."""

    included: int
    total: int
    oldest_truncated: bool
    budgeted: int = 0


@dataclass
class PromptPreview:
    """The assembled prompt for one NPC at one tick.

    Attributes:
        npc: the NPC's slug.
        tick: the tick (game ticks).
        encoding: tiktoken encoding name.
        budget: ``context_token_budget`` (tokens).
        available: tokens left for history and lore (at least 256).
        sections: non-empty sections in prompt order.
        cards: matched story cards, included or dropped (reason: budget).
        history: included / total lines, and the tokens the fit budgeted for them.
        text: the whole prompt, sections joined by a blank line.
        total_tokens: tokens of ``text`` (differs from the section sum at joins).
        system_tokens: tokens of the system block alone.
        chunks: the token ids of ``text`` in consecutive pieces (``array("I")``) that
            join exactly (see ``PromptBuilder``), so unchanged sections are never encoded again.
        reserved: (label, tokens) of each section counted against the budget before
            history and lore (``available = max(256, budget − Σ reserved)``).
    """

    npc: str
    tick: int
    encoding: str
    budget: int
    available: int
    sections: list[Section]
    cards: list[CardRecord]
    history: HistoryReport
    text: str
    total_tokens: int
    system_tokens: int
    chunks: tuple[array, ...] = field(default=(), repr=False)
    reserved: tuple[tuple[str, int], ...] = ()

    card_share: float = CARD_BUDGET_SHARE

    @property
    def card_budget(self) -> int:
        """Tokens story cards may take: ``int(available × card_share)`` (prompt-preview §8;
        0.4 unless a what-if tunes it), as the builder spent it (``lore_budget``)."""
        return lore_budget(self.available, self.card_share)

    @property
    def token_ids(self) -> list[int]:
        """The token ids of ``text``, in order (the chunks joined)."""
        return [t for chunk in self.chunks for t in chunk]

    @property
    def section_sum(self) -> int:
        """Sum of the section counts (tokens)."""
        return sum(s.tokens for s in self.sections)

    @property
    def history_section_tokens(self) -> int:
        """Tokens of the ``history`` and ``recent_history`` sections as assembled; compare
        ``history.budgeted``, which counts each line alone."""
        return sum(s.tokens for s in self.sections if s.label in HISTORY_LABELS)

    def section(self, label: str) -> Section | None:
        """The section with this label, if present."""
        return next((s for s in self.sections if s.label == label), None)

    def to_json(self) -> dict:
        """The ``prompt --format json`` contract of prompt-preview.md."""
        return {
            "npc": self.npc,
            "tick": self.tick,
            "encoding": self.encoding,
            "budget": self.budget,
            "total_tokens": self.total_tokens,
            "section_tokens": self.section_sum,
            "available": self.available,
            "sections": [{"label": s.label, "tokens": s.tokens, "text": s.text} for s in self.sections],
            "cards": [
                {"id": c.id, "name": c.name, "keyword": c.keyword, "included": c.included, "tokens": c.tokens, "reason": c.reason}
                for c in self.cards
            ],
            "history": {
                "included": self.history.included,
                "total": self.history.total,
                "oldest_truncated": self.history.oldest_truncated,
            },
        }


@dataclass(frozen=True, slots=True)
class PromptDiff:
    """What changed between two previews: labels of changed sections and the shared prefix (tokens)."""

    changed: tuple[str, ...]
    common_prefix_tokens: int
    total_tokens: int


def compare(old: PromptPreview, new: PromptPreview) -> PromptDiff:
    """Sections that differ and leading tokens identical (what a prompt cache can reuse)."""
    if old.encoding != new.encoding:
        labels = tuple(dict.fromkeys(s.label for s in (*old.sections, *new.sections)))
        return PromptDiff(labels, 0, new.total_tokens)
    before = {s.label: s.text for s in old.sections}
    after = {s.label: s.text for s in new.sections}
    labels = list(dict.fromkeys([*before, *after]))
    changed = tuple(label for label in labels if before.get(label) != after.get(label))
    shared = 0
    k = 0
    both = min(len(old.chunks), len(new.chunks))
    while k < both and (old.chunks[k] is new.chunks[k] or old.chunks[k] == new.chunks[k]):
        shared += len(old.chunks[k])  # identical leading pieces: no token-by-token walk
        k += 1
    for a, b in zip(chain.from_iterable(old.chunks[k:]), chain.from_iterable(new.chunks[k:])):
        if a != b:
            break
        shared += 1
    return PromptDiff(changed, shared, new.total_tokens)


#: A character a piece of tiktoken's pre-tokenizer can never reach back over a newline
#: to join: anything but whitespace and "/" (o200k's punctuation pieces may end in
#: newlines and slashes, so "/" after a newline is not a safe start).
def _safe_start(ch: str) -> bool:
    return bool(ch) and not ch.isspace() and ch != "/"


def _plain(line: str) -> bool:
    """Whether ``line`` is a single ``split_lines`` piece wherever it stands in a section
    of lines, the separator after it included: no newline inside, and a safe start."""
    return "\n" not in line and _safe_start(line[:1])


def split_tail(text: str) -> tuple[str, str]:
    """Split ``text`` after its last newline that is followed by a safe character.

    Both encodings' pre-tokenizers (cl100k_base, o200k_base) always end a piece at
    such a newline, so ``encode(head) + encode(tail + rest)`` equals
    ``encode(head + tail + rest)`` for any ``rest``: joining sections only ever
    re-tokenizes the tail line. A test holds this against whole-prompt encodes.
    """
    end = len(text)
    while True:
        j = text.rfind("\n", 0, end)
        if j < 0:
            return "", text
        if _safe_start(text[j + 1 : j + 2]):
            return text[: j + 1], text[j + 1 :]
        end = j


#: A newline ``split_lines`` does not cut after: one followed by whitespace, "/" or
#: nothing (``\s`` is ``str.isspace``'s set, as in ``_safe_start``).
_UNSAFE_NEWLINE = re.compile(r"\n(?![^\s/])")
_SAFE_NEWLINE = re.compile(r"(?<=\n)(?=[^\s/])")


def split_lines(text: str) -> list[str]:
    """``text`` cut after each newline followed by a safe character (``split_tail``'s
    rule, applied at every such newline): the pieces join to ``text``, and encoding
    each piece alone gives the ids of the whole. One piece when there is no such newline."""
    if "\n" not in text:
        return [text]
    if _UNSAFE_NEWLINE.search(text) is not None:
        return _SAFE_NEWLINE.split(text)
    pieces = text.split("\n")
    last = pieces.pop()
    out = [piece + "\n" for piece in pieces]
    out.append(last)
    return out


def match_cards(cards: list[StoryCard], window: str, occurs: Callable[[str], bool] | None = None) -> list[tuple[StoryCard, str]]:
    """Cards whose keys occur in ``window``: literal, case-insensitive substrings, in card order.

    Keys are comma-separated; blank keys (and a key list such as " , ") never match;
    "c++" is text, not a pattern. Returns (card, the key that matched first).
    ``occurs(key)``, when given, answers "is this lowercased key in ``window.lower()``"
    in its own faster way; the default searches. (The builder matches with
    ``CardKeys.match``, which gives the same from its per-line masks.)
    """
    if occurs is None:
        occurs = window.lower().__contains__
    out = []
    for card in cards:
        for key in card.key_list():
            if occurs(key):
                out.append((card, key))
                break
    return out


def encoding_of(content: Content) -> str:
    """The token encoding a content folder's prompts are counted in: prompt.yaml's,
    else ``DEFAULT_ENCODING``."""
    return content.prompt.encoding or DEFAULT_ENCODING


class _KeptIds:
    """Token ids (``array("I")``) kept for recent builds, by key: of ``key + suffix``.
    Two generations of at most ``IDS_CACHE_ENTRIES`` keys: a key met again moves to the
    young generation; when that one is full, the old one is dropped and the young one
    becomes it. The keys are the pieces of sections, which recur in the NPC's next
    prompts; for a section of lines, each line (suffix ``LINE_SEPARATOR``): a history line
    is the same str object from build to build (the span's), whose hash Python keeps, so
    finding it makes no new string."""

    __slots__ = ("young", "old", "encode", "suffix")

    def __init__(self, encode: Callable[[str], list[int]], suffix: str = "") -> None:
        self.young: dict[str, array] = {}
        self.old: dict[str, array] = {}
        self.encode = encode
        self.suffix = suffix

    def get(self, key: str) -> array:
        """The ids of ``key + suffix``, encoded only when neither generation has them."""
        young = self.young
        ids = young.get(key)
        if ids is None:
            ids = self.old.get(key)
            if ids is None:
                text = key + self.suffix
                ids = array(TOKEN_ID_TYPECODE, self.encode(text) if text else ())
            young[key] = ids
            if len(young) >= IDS_CACHE_ENTRIES:
                self.old, self.young = young, {}
        return ids


@dataclass(slots=True)
class _Span:
    """An NPC's history lines rendered so far: from line ``start``, their texts, running
    costs (``cum[k]``: tokens of ``texts[:k]``) and the card keys each holds (a
    ``CardKeys.mask``; -1 until a trigger window first holds the line)."""

    start: int
    texts: list[str]
    cum: list[int]
    masks: list[int]

    def keys_between(self, first: int, end: int, mask_of: Callable[[str], int]) -> int:
        """The card keys of ``texts[first:end]`` joined (``mask_of`` a text's), each line's
        found once: a span is rendered past the window (it grows by doubling) and the
        lines past it are never searched."""
        masks, texts, joined = self.masks, self.texts, 0
        for k in range(first, end):
            mask = masks[k]
            if mask < 0:
                mask = masks[k] = mask_of(texts[k])
            joined |= mask
        return joined


class PromptBuilder:
    """Builds previews for one playthrough; reuses token counts across ticks.

    Args:
        playthrough: a readable playthrough.
        encoding: tiktoken encoding name (default: prompt.yaml's, else cl100k_base).
        budget: override of ``context_token_budget`` (tokens); default the playthrough's
            tuning's ``prompt_budget``, else prompt.yaml's. The reserves (``min_available``,
            ``card_share``) are the tuning's too (``models/domain/tuning.py``).
        lines_from: a builder of a playthrough whose dialogue lines, speakers' names and
            content are this one's (a what-if's B beside A, when B's replay took A's
            lines): the history lines it rendered, their token costs and card keys are
            shared, not made again (a comparison of 300 NPCs builds 600 prompts of
            ~1 000 lines each). Ignored when its token encoding is another.

    Raises:
        models.tokens.UnknownEncodingError: for an encoding that is not offered.
    """

    def __init__(self, playthrough: Playthrough, encoding: str | None = None, budget: int | None = None,
                 lines_from: "PromptBuilder | None" = None) -> None:
        self.play = playthrough
        config = playthrough.content.prompt
        self.counter: TokenCounter = get_encoder(encoding or encoding_of(playthrough.content))
        tuning = playthrough.tuning  # a what-if may tune the budget and its reserves (issue 38)
        if budget is None and tuning.prompt_budget is not None:
            budget = tuning.prompt_budget
        self.budget = budget if budget is not None else config.context_token_budget
        self.min_available = tuning.min_available
        self.card_share = tuning.card_share
        self._clear_ids()
        self._last: dict[str, tuple[tuple, PromptPreview]] = {}
        if lines_from is not None and lines_from.counter is self.counter:
            self._lines, self._spans, self._card_keys = lines_from._lines, lines_from._spans, lines_from._card_keys
        else:
            self._lines: dict[int, tuple[str, int]] = {}
            self._spans: dict[int, _Span] = {}
            #: The cards' keys, and a bit for each key without a newline (keys with one are searched in the window).
            self._card_keys = CardKeys(playthrough.content.cards)

    def _count(self, text: str) -> int:
        return self.counter.count(text) if text else 0

    def _clear_ids(self) -> None:
        """Forget the kept token ids: of texts (the pieces of sections) and of lines
        followed by ``LINE_SEPARATOR`` (a section of lines' pieces, ``_pieces_of_lines``)."""
        self._texts = _KeptIds(self.counter.encode)
        self._lines_ids = _KeptIds(self.counter.encode, LINE_SEPARATOR)

    def _pieces_of_lines(self, lines: Sequence[str]) -> list[array] | None:
        """The token ids of the pieces ``split_lines`` cuts ``LINE_SEPARATOR.join(lines)``
        into, read from the kept ids of each line: each line but the last with its
        separator, then the last. None when the lines are not those pieces: a line holds
        a newline, or a line after the first starts with whitespace or "/" and so joins
        the line before it (``_plain``). A line's ids are kept only once it is plain, so
        a kept line needs no test."""
        head = lines[:-1]
        got = list(map(self._lines_ids.young.get, head))
        if not all(got):  # ids are never empty: a line not kept is None
            for k, ids in enumerate(got):
                if ids is None:
                    line = head[k]
                    if _plain(line):
                        got[k] = self._lines_ids.get(line)
                    elif k == 0 and "\n" not in line:  # where it stands, its start joins nothing
                        got[k] = self._texts.get(line + LINE_SEPARATOR)
                    else:
                        return None
        last = lines[-1]
        if "\n" in last or (head and not _safe_start(last[:1])):
            return None
        got.append(self._texts.young.get(last) or self._texts.get(last))
        return got

    def _count_pieces(self, text: str) -> int:
        """``count(text)`` (tokens), as the sum of its ``split_lines`` pieces' kept ids
        (``split_tail``'s rule makes the two equal): a counted section is counted before
        the budget is known and encoded after, and this way it is encoded once."""
        if not text:
            return 0
        kept, ids = self._texts.young.get, self._texts.get
        return sum(len(kept(piece) or ids(piece)) for piece in split_lines(text))

    def _encode_sections(self, parts: list[tuple[str, str, Sequence[str] | None]]) -> tuple[list[Section], tuple[array, ...]]:
        """Sections with their counts, and the prompt's token ids in chunks.

        ``parts``: (label, text, lines) in prompt order, ``lines`` the section's lines
        where it is a section of lines (``SectionSpec.lines``), else None. Each section is
        encoded in pieces that end at its safe newlines (``split_lines``: one piece a
        history line; a section of lines reads them from its lines' kept ids,
        ``_pieces_of_lines``), its last piece again with the separator that follows it.
        Only pieces not met in recent builds are really encoded (the rest comes from
        the id cache), and the chunks join into exactly the ids of the whole prompt
        (``split_tail``). Sections that start with a character that could merge with
        the separator fall back to one whole encode.
        """
        sections: list[Section] = []
        chunks: list[array] = []
        safe = all(_safe_start(text[0]) for _, text, _ in parts)
        last = len(parts) - 1
        ids, kept = self._texts.get, self._texts.young.get  # a hit in the young generation, without a call
        for i, (label, text, lines) in enumerate(parts):
            piece_ids = self._pieces_of_lines(lines) if lines is not None else None
            if piece_ids is not None:
                tail = lines[-1]
            else:
                pieces = split_lines(text)
                piece_ids = [kept(piece) or ids(piece) for piece in pieces]
                tail = pieces[-1]
            sections.append(Section(label, text, sum(map(len, piece_ids))))
            if safe:
                chunks += piece_ids[:-1]
                chunks.append(piece_ids[-1] if i == last else ids(tail + SEPARATOR))
        if not safe:
            chunks = [array(TOKEN_ID_TYPECODE, self.counter.encode(SEPARATOR.join(text for _, text, _ in parts)))]
        return sections, tuple(chunks)

    def render_line(self, rec) -> tuple[str, int]:
        """A history line as the prompt shows it (``Name: text``) and its cost in tokens
        (its own count plus the line separator), kept across builds."""
        return self._lines.get(rec.index) or self._render(rec.index, rec.speaker, rec.text)

    def _render(self, index: int, speaker: StableId, text: str) -> tuple[str, int]:
        """``render_line`` of the line at journal ``index``, made and kept."""
        play = self.play
        name = (play.save.player.name or "Player") if speaker == play.save.player.stable_id else play.npc_name(speaker)
        line = f"{name}: {text}"
        rendered = self._lines[index] = (line, self._count(line) + self._count(LINE_SEPARATOR))
        return rendered

    def _history(self, npc: int, count: int, need: int) -> tuple[_Span, int]:
        """The NPC's first ``count`` history lines as rendered, from the oldest one needed:
        ``(span, end)`` where ``span.texts[:end]`` are lines in reading order ending with
        line ``count - 1``, ``span.cum[k]`` is the cost of ``span.texts[:k]`` (tokens,
        separators included), and either the span starts at the NPC's first line or the
        lines up to ``end`` cost more than ``need``. Kept and grown across builds; a tick
        before the kept lines, or more than ``SPAN_GAP`` lines after them, starts a new
        span there rather than render every line in between. The lines are read as the
        index's columns (journal index, then its entry's speaker and text), not as
        records: a comparison of 300 NPCs renders ~300 000."""
        dialogue = self.play.index.dialogue
        positions = self.play.index.dialogue_by_npc.get(npc, ())
        lines, data = dialogue.lines, dialogue.journal.data
        known, render = self._lines.get, self._render

        def rendered(k: int) -> tuple[str, int]:
            i = lines[positions[k]]
            line = data[i]
            return known(i) or render(i, line.speaker, line.text)

        span = self._spans.get(npc)
        if span is None or count < span.start or count > span.start + len(span.texts) + SPAN_GAP:
            span = self._spans[npc] = _Span(count, [], [0], [])
        texts, cum, masks = span.texts, span.cum, span.masks
        for k in range(span.start + len(texts), count):  # lines added since
            text, cost = rendered(k)
            texts.append(text)
            cum.append(cum[-1] + cost)
            masks.append(-1)
        while span.start > 0 and cum[count - span.start] <= need:
            lo = max(0, span.start - max(64, len(texts)))  # grows by doubling
            older = list(map(rendered, range(lo, span.start)))
            texts[:0] = [text for text, _ in older]
            masks[:0] = [-1] * len(older)
            costs = [cost for _, cost in older] + [b - a for a, b in zip(cum, cum[1:])]
            cum[:] = [0, *accumulate(costs)]
            span.start = lo
        return span, count - span.start

    def build(self, npc_slug: str, tick: int) -> PromptPreview:
        """Assemble the prompt for ``npc_slug`` at ``tick``.

        Raises:
            KeyError: the save has no NPC with that slug.
        """
        play = self.play
        npc_snapshot = play.save.npc_by_slug(npc_slug)
        if npc_snapshot is None:
            raise KeyError(npc_slug)
        signature = play.index.npc_signature(npc_snapshot.stable_id, tick)
        last = self._last.get(npc_slug)
        if last is not None and last[0] == signature:
            # Nothing this NPC's prompt depends on changed: same text, same counts.
            return replace(last[1], tick=tick)
        preview = self._build(npc_snapshot, tick)
        self._last[npc_slug] = (signature, preview)
        return preview

    def _build(self, npc_snapshot: NpcState, tick: int) -> PromptPreview:
        play = self.play
        npc_slug = npc_snapshot.slug
        state = play.state_at(tick)
        npc = state.npc(npc_snapshot.stable_id)
        if npc is None:
            raise KeyError(npc_slug)
        name = play.content.npc_name(npc.slug)
        player_name = play.save.player.name or "Player"
        count = self._count

        # The counted sections first (registry order): their tokens are reserved, and
        # history and lore share what is left of the budget (context builder seed).
        context = SectionContext(play, state, npc, name, player_name, play.content.prompt)
        counted = {spec.label: spec.text(context) for spec in SECTIONS if spec.counted}
        reserved_parts = [(label, self._count_pieces(text)) for label, text in counted.items()]
        reserved = sum(n for _, n in reserved_parts)
        available = max(self.min_available, self.budget - reserved)

        # History candidates, newest first (prompt-preview §7), rendered only as far as
        # the budget reaches; rendered lines and their counts are kept across ticks.
        index = play.index
        total_lines = index.dialogue_count_with(npc.stable_id, tick)
        sep_tokens = count(LINE_SEPARATOR)
        # Cards trigger on the recent history that could fill the whole available budget,
        # before lore takes its share (context builder seed: the trigger window is the
        # last `available` tokens of the history). The game builds its prompt this way,
        # so the preview does too, even when lore then pushes the triggering line out.
        # Newest first, the lines that fit are those after the first one that does not:
        # with the lines' running costs that is one bisection (costs are at least 1).
        span, end = self._history(npc.stable_id, total_lines, available)
        texts, cum = span.texts, span.cum
        total = cum[end]
        first = bisect_left(cum, total - available, 0, end)
        window_lines = texts[first:end]
        if first:
            # The oldest line in the window is cut to its last tokens (only it is encoded again).
            cut, _ = self.counter.truncate_to_last(texts[first - 1], max(0, available - (total - cum[first]) - sep_tokens))
            window_lines.insert(0, cut)
        # The keys in the window: a key without a newline lies within one of its lines
        # (and lowercasing the joined lines is joining the lowercased ones: a newline
        # is neither cased nor case-ignorable), so the lines' key bits tell.
        card_keys = self._card_keys
        in_window = span.keys_between(first, end, card_keys.mask) | (card_keys.mask(window_lines[0]) if first else 0)

        def fit(budget: int) -> tuple[list[str], bool, int]:
            """The lines kept (reading order), whether the newest was cut, the tokens spent.
            ``budget`` is at most ``available``: the window's lines reach far enough."""
            kept = bisect_left(cum, total - budget, 0, end)
            if kept == end and end:
                cut, was_cut = self.counter.truncate_to_last(texts[end - 1], max(0, budget - sep_tokens))
                return ([cut] if cut else []), was_cut, (budget if cut else 0)
            return texts[kept:end], False, total - cum[kept]

        window = LINE_SEPARATOR.join(window_lines)
        card_budget = lore_budget(available, self.card_share)
        used = 0
        lore_lines: list[str] = []
        card_records: list[CardRecord] = []
        for card, keyword in card_keys.match(play.content.cards, in_window, window):
            line = f"World lore ({card.name}): {card.entry}"
            tokens = count(line) + sep_tokens
            included = used + tokens <= card_budget
            if included:
                lore_lines.append(line)
                used += tokens
            card_records.append(CardRecord(card.id, card.name, keyword, included, tokens, "" if included else "budget"))
        lines, truncated, budgeted = fit(available - used)

        filled = replace(context, fill=fill_with(context, lines, lore_lines))
        parts = []
        for spec in SECTIONS:
            if spec.counted:
                parts.append((spec.label, counted[spec.label], None))
            elif spec.lines is not None:
                section_lines = spec.lines(filled)
                parts.append((spec.label, LINE_SEPARATOR.join(section_lines), section_lines))
            else:
                parts.append((spec.label, spec.text(filled), None))
        sections, chunks = self._encode_sections([part for part in parts if part[1]])
        system_text = SEPARATOR.join(s.text for s in sections if s.label in SYSTEM_LABELS)
        text = SEPARATOR.join(s.text for s in sections)
        return PromptPreview(
            npc=npc.slug,
            tick=tick,
            encoding=self.counter.name,
            budget=self.budget,
            available=available,
            sections=sections,
            cards=card_records,
            history=HistoryReport(len(lines), total_lines, truncated, budgeted),
            text=text,
            total_tokens=sum(map(len, chunks)),
            system_tokens=count(system_text),
            chunks=chunks,
            reserved=tuple(reserved_parts),
            card_share=self.card_share,
        )
