"""Assembling the NPC dialogue prompt at a tick (shared/docs/prompt-preview.md).

The sections, their order and which of them count against the budget are declared
once in :mod:`narrative_debugger.models.prompt.sections` (``SECTIONS``); this module
fits history and lore into what the counted sections leave, and counts tokens. All
counts are tokens of one tiktoken encoding.

One plan decides a prompt (``PromptBuilder.plan``, a ``PromptPlan``): the budget, which
history lines fit, which cards trigger and are kept or dropped, each section's tokens,
the whole prompt's tokens and the prefix it shares with another. It is made from
running sums kept per NPC (each history line's cost, its tokens as a piece, the card
keys it holds), so a window of history is a bisection and its counts subtractions;
the history is held as a range of lines, never joined. ``PromptBuilder.render`` makes
the text, the sections and the token ids from a plan, only when they are asked for
(``build`` is ``render(plan(...))``); the corpus's rows read plans alone.
"""

from __future__ import annotations

import functools
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import chain

from narrative_debugger.models.content.loader import Content, StoryCard
from narrative_debugger.models.domain.types import NpcState, StableId
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.card_keys import CardKeys, mask_of
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
        stream: the plan's token stream the chunks were made from (``PromptPlan.stream``):
            ``compare`` reads it, and skips runs of history lines both prompts hold.
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
    stream: tuple = field(default=(), repr=False)

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
    """Sections that differ and leading tokens identical (what a prompt cache can reuse:
    ``common_prefix_tokens``)."""
    if old.encoding != new.encoding:
        labels = tuple(dict.fromkeys(s.label for s in (*old.sections, *new.sections)))
        return PromptDiff(labels, 0, new.total_tokens)
    before = {s.label: s.text for s in old.sections}
    after = {s.label: s.text for s in new.sections}
    labels = list(dict.fromkeys([*before, *after]))
    changed = tuple(label for label in labels if before.get(label) != after.get(label))
    return PromptDiff(changed, common_prefix_tokens(old, new), new.total_tokens)


def common_prefix_tokens(old: "PromptPlan | PromptPreview", new: "PromptPlan | PromptPreview") -> int:
    """How many leading token ids two prompts share (tokens; 0 across encodings): the part
    of ``new`` a provider's prompt cache can reuse after ``old`` (prompt-preview.md).

    Read from their token streams (a preview without one: its chunks): leading pieces
    that are the same are skipped whole, and so are the history lines both hold from
    the same first line (their tokens a subtraction of running sums); from the first
    piece that differs, token by token."""
    if old.encoding != new.encoding:
        return 0
    a, b = old.stream or old.chunks, new.stream or new.chunks
    shared, k = 0, 0
    both = min(len(a), len(b))
    while k < both:
        x, y = a[k], b[k]
        if x is y or (type(x) is array and type(y) is array and x == y):
            shared += _size(x)  # identical leading pieces: no token-by-token walk
            k += 1
            continue
        if type(x) is _Lines and type(y) is _Lines and x.span is y.span and x.a == y.a:
            end = min(x.b, y.b)  # the lines both hold: one subtraction, then on from the first that differs
            shared += x[: end - x.a].tokens
            a, b, k = [x[end - x.a :], *a[k + 1 :]], [y[end - y.a :], *b[k + 1 :]], 0
        break
    pieces_a, pieces_b = _pieces(a[k:]), _pieces(b[k:])
    for x, y in zip(pieces_a, pieces_b):
        if x is y or x == y:
            shared += len(x)
            continue
        for t, u in zip(chain(x, chain.from_iterable(pieces_a)), chain(y, chain.from_iterable(pieces_b))):
            if t != u:
                break
            shared += 1
        break
    return shared


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
    """An NPC's history lines rendered so far, from its line ``start`` (an NPC's lines are
    numbered from 0, oldest first), with running sums over them:

    - ``cum[k]``: the budget cost of ``texts[:k]`` (tokens: each line counted alone, plus
      the line separator, ``render_line``'s cost);
    - ``joined[k]``: the tokens of ``texts[:k]`` each encoded with the separator after it
      (the pieces a section of lines is encoded in, ``_pieces_of_lines``);
    - ``broken[k]``: how many of ``texts[:k]`` hold a newline, and ``joining[k]`` how many
      start with a character that joins the line before (``_plain``): a run of lines
      without either (but its first) is encoded line by line;
    - ``keys``: each card key's number (``CardKeys.numbers``) -> the lines that hold it
      (the NPC's line numbers, ascending): a key is in a window when one of them is.
    """

    start: int
    texts: list[str] = field(default_factory=list)
    cum: list[int] = field(default_factory=lambda: [0])
    joined: list[int] = field(default_factory=lambda: [0])
    broken: list[int] = field(default_factory=lambda: [0])
    joining: list[int] = field(default_factory=lambda: [0])
    keys: dict[int, list[int]] = field(default_factory=dict)

    def extend(self, rows: Sequence[tuple[str, int, int, tuple[int, ...]]]) -> None:
        """Add the next lines: ``rows`` of (text, cost, tokens as a piece, key numbers),
        as ``PromptBuilder._render`` makes them."""
        texts, cum, joined, broken, joining, keys = self.texts, self.cum, self.joined, self.broken, self.joining, self.keys
        n = self.start + len(texts)
        for text, cost, size, numbers in rows:
            texts.append(text)
            cum.append(cum[-1] + cost)
            joined.append(joined[-1] + size)
            broken.append(broken[-1] + ("\n" in text))
            joining.append(joining[-1] + (not _safe_start(text[:1])))
            for key in numbers:
                where = keys.get(key)
                if where is None:
                    keys[key] = [n]
                else:
                    where.append(n)
            n += 1

    def prepend(self, start: int, rows: Sequence[tuple[str, int, int, tuple[int, ...]]]) -> None:
        """Add the lines from ``start`` up to this span's first (``rows`` as ``extend``'s)."""
        older = _Span(start)
        older.extend(rows)
        for name in ("cum", "joined", "broken", "joining"):
            before, sums = getattr(older, name), getattr(self, name)
            shift = before[-1]
            sums[:] = [*before, *(value + shift for value in sums[1:])]
        self.texts[:0] = older.texts
        for key, where in older.keys.items():
            self.keys.setdefault(key, [])[:0] = where
        self.start = start

    def keys_between(self, first: int, end: int) -> list[int]:
        """The numbers of the card keys that ``texts[first:end]`` hold."""
        a, b = self.start + first, self.start + end
        found = []
        for key, where in self.keys.items():
            last = where[-1]
            if last < b:
                if last >= a:
                    found.append(key)
            else:
                i = bisect_left(where, b)
                if i and where[i - 1] >= a:
                    found.append(key)
        return found


class _Lines(Sequence[str]):
    """History lines ``a`` to ``b`` (the NPC's line numbers, ``b`` excluded) of a span, as
    a section's lines: a view, never a copy (a slice is a view too). ``ids(line)`` gives a
    line's token ids with the separator after it, from the builder's kept ids."""

    __slots__ = ("span", "a", "b", "ids")

    def __init__(self, span: _Span, a: int, b: int, ids: Callable[[str], array]) -> None:
        self.span, self.a, self.b, self.ids = span, a, b, ids

    def __len__(self) -> int:
        return self.b - self.a

    def __getitem__(self, i):
        if isinstance(i, slice):
            lo, hi, step = i.indices(self.b - self.a)
            if step != 1:
                return list(self)[i]
            return _Lines(self.span, self.a + lo, self.a + max(lo, hi), self.ids)
        if i < 0:
            i += self.b - self.a
        if not 0 <= i < self.b - self.a:
            raise IndexError(i)
        return self.span.texts[self.a - self.span.start + i]

    def __iter__(self) -> Iterator[str]:
        start = self.span.start
        return iter(self.span.texts[self.a - start : self.b - start])

    @property
    def tokens(self) -> int:
        """Tokens of the lines, each encoded with the separator after it (a subtraction)."""
        joined, start = self.span.joined, self.span.start
        return joined[self.b - start] - joined[self.a - start]

    def piecewise(self) -> bool:
        """Whether the lines are the pieces ``split_lines`` cuts their join into, as
        ``_pieces_of_lines`` tests it: no newline in any, no joining start but the first's."""
        span, start = self.span, self.span.start
        a, b = self.a - start, self.b - start
        return span.broken[b] == span.broken[a] and span.joining[b] == span.joining[min(a + 1, b)]


def _size(piece) -> int:
    """Tokens of a piece of a token stream: an ``array`` of ids or a run of lines."""
    return piece.tokens if type(piece) is _Lines else len(piece)


def _pieces(stream: Sequence) -> Iterator[array]:
    """The token ids of a stream's pieces, a run of lines line by line."""
    for piece in stream:
        if type(piece) is _Lines:
            yield from map(piece.ids, piece)
        else:
            yield piece


@dataclass(frozen=True, slots=True)
class PromptPlan:
    """What goes into one NPC's prompt at one tick, decided once, with its counts and
    without its text (``PromptBuilder.render`` makes the preview from it).

    Attributes:
        npc, tick, encoding, budget, available, cards, history, reserved, card_share:
            as ``PromptPreview``'s.
        parts: (label, text, lines) of each non-empty section in prompt order: ``lines``
            the lines of a section of lines (history as a view of the NPC's kept lines),
            with ``text`` None (their ``LINE_SEPARATOR`` join, made when rendered); else
            ``lines`` None.
        tokens: each part's tokens (``Section.tokens``).
        stream: the prompt's token ids in pieces, in order: ``array("I")`` pieces and
            runs of history lines (each line's ids with its separator); they join into
            exactly the ids of the whole prompt (``PromptBuilder._stream``).
        total_tokens: tokens of the whole prompt (the stream's length).
    """

    npc: str
    tick: int
    encoding: str
    budget: int
    available: int
    cards: list[CardRecord]
    history: HistoryReport
    reserved: tuple[tuple[str, int], ...]
    card_share: float
    parts: tuple[tuple[str, str | None, Sequence[str] | None], ...]
    tokens: tuple[int, ...]
    stream: tuple = field(repr=False)
    total_tokens: int

    @property
    def chunks(self) -> tuple[array, ...]:
        """The stream's ids as the preview's chunks (``PromptPreview.chunks``)."""
        return tuple(_pieces(self.stream))


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
        self._last: dict[str, list] = {}  # slug -> [signature, plan, preview or None] (``_entry``)
        if lines_from is not None and lines_from.counter is self.counter:
            self._lines, self._spans, self._card_keys = lines_from._lines, lines_from._spans, lines_from._card_keys
        else:
            #: journal index -> the line as the spans keep it (``_render``)
            self._lines: dict[int, tuple[str, int, int, tuple[int, ...]]] = {}
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
        #: section text -> (its ``split_lines`` pieces' ids, its tokens, the ids of its last
        #: piece and the separator after it): a counted section is counted before the
        #: budget is known and encoded after.
        self._split: dict[str, tuple[list[array], int, array]] = {}

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
        return self._split_ids(text)[1] if text else 0

    def _split_ids(self, text: str) -> tuple[list[array], int, array]:
        """``text``'s ``split_lines`` pieces' ids, its tokens, and the ids of its last piece
        followed by ``SEPARATOR`` (how it ends a section a section follows), kept for
        the texts of recent builds."""
        known = self._split.get(text)
        if known is None:
            kept, ids = self._texts.young.get, self._texts.get
            pieces = split_lines(text)
            piece_ids = [kept(piece) or ids(piece) for piece in pieces]
            if len(self._split) >= IDS_CACHE_ENTRIES:
                self._split.clear()
            known = self._split[text] = (piece_ids, sum(map(len, piece_ids)), ids(pieces[-1] + SEPARATOR))
        return known

    def _line_ids(self, line: str) -> array:
        """The token ids of ``line`` followed by ``LINE_SEPARATOR``, kept: with the lines'
        ids when it is plain (``_pieces_of_lines`` finds it there), else with the texts'."""
        return self._lines_ids.get(line) if _plain(line) else self._texts.get(line + LINE_SEPARATOR)

    def _run_pieces(self, lines: _Lines) -> list | None:
        """``_pieces_of_lines`` for a run of history lines, from the span's running sums:
        the lines but the last as one run (its tokens a subtraction), then the last
        line's ids; None when the lines are not those pieces (``_Lines.piecewise``)."""
        if not lines.piecewise():
            return None
        tail = lines[-1]
        tail_ids = self._texts.young.get(tail) or self._texts.get(tail)
        return [lines[:-1], tail_ids] if len(lines) > 1 else [tail_ids]

    def _stream(self, parts: Sequence[tuple[str, str | None, Sequence[str] | None]]) -> tuple[list[int], list]:
        """Each section's tokens, and the prompt's token ids as a stream of pieces.

        ``parts``: (label, text, lines) in prompt order, ``lines`` the section's lines
        where it is a section of lines (``SectionSpec.lines``; ``text`` may then be None:
        their join), else None. Each section is encoded in pieces that end at its safe
        newlines (``split_lines``: one piece a history line; a section of lines reads
        them from its lines' kept ids, ``_pieces_of_lines``, and a run of history lines
        stays one piece whose tokens the span's running sums give), its last piece again
        with the separator that follows it. Only pieces not met in recent builds are
        really encoded (the rest comes from the id cache), and the pieces join into
        exactly the ids of the whole prompt (``split_tail``). Sections that start with a
        character that could merge with the separator fall back to one whole encode.
        """
        tokens: list[int] = []
        stream: list = []
        safe = all(_safe_start((text if text is not None else lines[0])[:1]) for _, text, lines in parts)
        last = len(parts) - 1
        ids = self._texts.get
        for i, (label, text, lines) in enumerate(parts):
            if lines is None:
                piece_ids = None
            elif type(lines) is _Lines:
                piece_ids = self._run_pieces(lines)
            else:
                piece_ids = self._pieces_of_lines(lines)
            if piece_ids is not None:
                tokens.append(sum(map(_size, piece_ids)))
                ended = piece_ids[-1] if i == last or not safe else ids(lines[-1] + SEPARATOR)
            else:
                piece_ids, n, ended = self._split_ids(text if text is not None else LINE_SEPARATOR.join(lines))
                tokens.append(n)
                ended = piece_ids[-1] if i == last else ended
            if safe:
                stream += piece_ids[:-1]
                stream.append(ended)
        if not safe:
            whole = SEPARATOR.join(text if text is not None else LINE_SEPARATOR.join(lines) for _, text, lines in parts)
            stream = [array(TOKEN_ID_TYPECODE, self.counter.encode(whole))]
        return tokens, stream

    def _encode_sections(self, parts: list[tuple[str, str, Sequence[str] | None]]) -> tuple[list[Section], tuple[array, ...]]:
        """Sections with their counts, and the prompt's token ids in chunks (``_stream``'s
        pieces, a run of lines line by line) that join exactly into the whole prompt's."""
        tokens, stream = self._stream(parts)
        sections = [Section(label, text, n) for (label, text, _), n in zip(parts, tokens)]
        return sections, tuple(_pieces(stream))

    def render_line(self, rec) -> tuple[str, int]:
        """A history line as the prompt shows it (``Name: text``) and its cost in tokens
        (its own count plus the line separator), kept across builds."""
        return (self._lines.get(rec.index) or self._render(rec.index, rec.speaker, rec.text))[:2]

    def _render(self, index: int, speaker: StableId, text: str) -> tuple[str, int, int, tuple[int, ...]]:
        """The line at journal ``index`` as the span keeps it, made and kept: its text
        (``render_line``'s), its cost, its tokens as a piece of a section of lines (with
        the separator after it: ``_line_ids``) and the numbers of the card keys it holds."""
        play = self.play
        name = (play.save.player.name or "Player") if speaker == play.save.player.stable_id else play.npc_name(speaker)
        line = f"{name}: {text}"
        numbers = self._card_keys.numbers_in(line)
        rendered = self._lines[index] = (line, self._count(line) + self._count(LINE_SEPARATOR), len(self._line_ids(line)),
                                         tuple(set(numbers)) if numbers else ())
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

        def rendered(k: int) -> tuple[str, int, int, tuple[int, ...]]:
            i = lines[positions[k]]
            line = data[i]
            return known(i) or render(i, line.speaker, line.text)

        span = self._spans.get(npc)
        if span is None or count < span.start or count > span.start + len(span.texts) + SPAN_GAP:
            span = self._spans[npc] = _Span(count)
        if count > span.start + len(span.texts):  # lines added since
            span.extend(list(map(rendered, range(span.start + len(span.texts), count))))
        while span.start > 0 and span.cum[count - span.start] <= need:
            lo = max(0, span.start - max(64, len(span.texts)))  # grows by doubling
            span.prepend(lo, list(map(rendered, range(lo, span.start))))
        return span, count - span.start

    def _entry(self, npc_slug: str, tick: int) -> list:
        """``[signature, plan, preview or None]`` of the NPC's last plan, made again when
        anything its prompt depends on changed by ``tick`` (``npc_signature``).

        Raises:
            KeyError: the save has no NPC with that slug.
        """
        play = self.play
        npc_snapshot = play.save.npc_by_slug(npc_slug)
        if npc_snapshot is None:
            raise KeyError(npc_slug)
        signature = play.index.npc_signature(npc_snapshot.stable_id, tick)
        last = self._last.get(npc_slug)
        if last is None or last[0] != signature:
            last = self._last[npc_slug] = [signature, self._plan(npc_snapshot, tick), None]
        return last

    def plan(self, npc_slug: str, tick: int) -> PromptPlan:
        """Decide the prompt for ``npc_slug`` at ``tick`` without making its text: what
        goes in, each section's tokens and the whole prompt's (``PromptPlan``).

        Raises:
            KeyError: the save has no NPC with that slug.
        """
        plan = self._entry(npc_slug, tick)[1]
        # Nothing this NPC's prompt depends on changed since: the same plan at this tick.
        return plan if plan.tick == tick else replace(plan, tick=tick)

    def build(self, npc_slug: str, tick: int) -> PromptPreview:
        """Assemble the prompt for ``npc_slug`` at ``tick``: its plan, rendered.

        Raises:
            KeyError: the save has no NPC with that slug.
        """
        entry = self._entry(npc_slug, tick)
        preview = entry[2]
        if preview is None:
            preview = entry[2] = self.render(entry[1])
            if preview.tick == tick:
                return preview
        # Nothing this NPC's prompt depends on changed: same text, same counts.
        return replace(preview, tick=tick)

    def render(self, plan: PromptPlan) -> PromptPreview:
        """The preview of a plan this builder made: the sections' texts, the prompt's text
        and its token ids in chunks; every count is the plan's."""
        sections = [Section(label, text if text is not None else LINE_SEPARATOR.join(lines), n)
                    for (label, text, lines), n in zip(plan.parts, plan.tokens)]
        system_text = SEPARATOR.join(s.text for s in sections if s.label in SYSTEM_LABELS)
        return PromptPreview(
            npc=plan.npc,
            tick=plan.tick,
            encoding=plan.encoding,
            budget=plan.budget,
            available=plan.available,
            sections=sections,
            cards=plan.cards,
            history=plan.history,
            text=SEPARATOR.join(s.text for s in sections),
            total_tokens=plan.total_tokens,
            system_tokens=self._count(system_text),
            chunks=plan.chunks,
            reserved=plan.reserved,
            card_share=plan.card_share,
            stream=plan.stream,
        )

    def _plan(self, npc_snapshot: NpcState, tick: int) -> PromptPlan:
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
        # the budget reaches; rendered lines and their running sums are kept across ticks.
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
        cut_line = ""
        if first:
            # The oldest line in the window is cut to its last tokens (only it is encoded again).
            cut_line, _ = self.counter.truncate_to_last(texts[first - 1], max(0, available - (total - cum[first]) - sep_tokens))
        # The keys in the window: a key without a newline lies within one of its lines
        # (and lowercasing the joined lines is joining the lowercased ones: a newline
        # is neither cased nor case-ignorable), so the lines that hold each key tell.
        card_keys = self._card_keys
        in_window = mask_of(span.keys_between(first, end)) | (card_keys.mask(cut_line) if first else 0)

        def window() -> str:
            """The trigger window's text, made only for a key with a newline."""
            return LINE_SEPARATOR.join([cut_line, *texts[first:end]] if first else texts[first:end])

        def fit(budget: int) -> tuple[Sequence[str], bool, int]:
            """The lines kept (reading order), whether the newest was cut, the tokens spent.
            ``budget`` is at most ``available``: the window's lines reach far enough."""
            kept = bisect_left(cum, total - budget, 0, end)
            if kept == end and end:
                cut, was_cut = self.counter.truncate_to_last(texts[end - 1], max(0, budget - sep_tokens))
                return ([cut] if cut else []), was_cut, (budget if cut else 0)
            return _Lines(span, span.start + kept, span.start + end, self._line_ids), False, total - cum[kept]

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
                text = counted[spec.label]
                if text:
                    parts.append((spec.label, text, None))
            elif spec.lines is not None:
                section_lines = spec.lines(filled)
                if section_lines:  # a line is never empty ("Name: text", "World lore (…): …", a cut kept)
                    parts.append((spec.label, None, section_lines))
            else:
                text = spec.text(filled)
                if text:
                    parts.append((spec.label, text, None))
        tokens, stream = self._stream(parts)
        return PromptPlan(
            npc=npc.slug,
            tick=tick,
            encoding=self.counter.name,
            budget=self.budget,
            available=available,
            cards=card_records,
            history=HistoryReport(len(lines), total_lines, truncated, budgeted),
            reserved=tuple(reserved_parts),
            card_share=self.card_share,
            parts=tuple(parts),
            tokens=tuple(tokens),
            stream=tuple(stream),
            total_tokens=sum(map(_size, stream)),
        )
