"""The prompt's token ids are built from per-section pieces; they must equal encoding
the whole prompt, for every sample save, NPC, tick and encoding, and for hostile text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import SEPARATOR, PromptBuilder, common_prefix_tokens, compare, split_lines, split_tail
from narrative_debugger.models.prompt.sections import LINE_SEPARATOR
from narrative_debugger.models.prompt.tokens import ENCODINGS, get_encoder

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"


def naive_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@pytest.mark.parametrize("name", ["evening.json", "walkaway-spiral.json", "abandoned-confrontation.json", "qa-faults.json"])
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_chunked_ids_equal_whole_prompt_encode(name, encoding):
    play = Playthrough.open(SAMPLES / name, SAMPLES / "content")
    enc = get_encoder(encoding)
    rng = random.Random(name)
    for npc in play.save.npcs.values():
        builder = PromptBuilder(play, encoding=encoding)
        previous = None
        ticks = sorted(rng.randint(0, play.last_tick) for _ in range(12)) + [play.last_tick]
        for tick in ticks:
            p = builder.build(npc.slug, tick)
            whole = enc.encode(p.text)
            assert p.token_ids == whole, (npc.slug, tick)
            assert p.total_tokens == len(whole)
            assert [s.tokens for s in p.sections] == [enc.count(s.text) for s in p.sections]
            if previous is not None:
                assert compare(previous, p).common_prefix_tokens == naive_prefix(enc.encode(previous.text), whole)
            previous = p


ALPHABET = ["a", "Z", "é", "漢", "😀", "1", "23", "456", " ", "  ", "\n", "\n\n", ".", "!", "?", ",", "'s", "'ll", "/", "//", "-", "[", "]", "(", ")", "\t", "\r\n", ":", "_", "#", "\u200b", "'", '"']


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40)))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hostile_sections_join_exactly(encoding):
    enc = get_encoder(encoding)
    rng = random.Random(7)
    builder = PromptBuilder.__new__(PromptBuilder)  # only the encoding machinery is exercised
    builder.counter = enc
    builder._clear_ids()
    for _ in range(600):
        parts = []
        for i in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                parts.append((f"s{i}", random_text(rng).strip() or "x", None))
            else:  # a section of lines (history, lore): encoded from its lines' kept ids
                lines = [random_text(rng) if rng.random() < 0.3 else "Name: " + random_text(rng) for _ in range(rng.randint(1, 5))]
                lines[0] = lines[0].lstrip() or "x"
                parts.append((f"s{i}", LINE_SEPARATOR.join(lines), lines))
        sections, chunks = builder._encode_sections(parts)
        text = SEPARATOR.join(t for _, t, _ in parts)
        assert [t for c in chunks for t in c] == enc.encode(text), parts
        assert [s.tokens for s in sections] == [enc.count(t) for _, t, _ in parts]


def test_split_lines_cuts_only_at_safe_newlines():
    assert split_lines("one\ntwo\nthree") == ["one\n", "two\n", "three"]
    assert split_lines("one\n two\n/three\n") == ["one\n two\n/three\n"]
    assert split_lines("a\n\nb\n c\nd") == ["a\n\n", "b\n c\n", "d"]
    assert split_lines("no newline") == ["no newline"]
    assert split_lines("") == [""]


def test_split_tail_only_at_safe_newlines():
    assert split_tail("one\ntwo") == ("one\n", "two")
    assert split_tail("one\n two") == ("", "one\n two")
    assert split_tail("a\nb\n/c") == ("a\n", "b\n/c")
    assert split_tail("no newline") == ("", "no newline")


def test_token_ids_are_kept_where_the_collector_does_not_walk_them():
    """Tuples of ids made each collection that met them walk every id: 280 000 ids of a
    few previews were a 5-10 ms pause inside a tick step (issue 10). The chunks are
    arrays, whose ids the collector never walks, and they still join to the prompt's ids."""
    import gc

    play = Playthrough.open(SAMPLES / "evening.json", SAMPLES / "content")
    builder = PromptBuilder(play)
    npc = next(iter(play.save.npcs.values())).slug
    preview = builder.build(npc, play.save.saved_at_tick)
    assert preview.chunks and all(len(gc.get_referents(chunk)) <= 1 for chunk in preview.chunks)  # at most its type
    assert preview.token_ids == builder.counter.encode(preview.text)
    assert len(preview.token_ids) == preview.total_tokens > 1000


def _same_preview(a, b) -> bool:
    return (a.text, a.total_tokens, a.cards, a.history, a.available, a.token_ids) == (b.text, b.total_tokens, b.cards, b.history, b.available, b.token_ids)


@pytest.mark.parametrize("name", ["evening.json", "walkaway-spiral.json", "qa-faults.json"])
@pytest.mark.parametrize("budget", [None, 700, 1200])
def test_one_builder_at_ticks_in_any_order_equals_fresh_builds(name, budget):
    """A builder keeps rendered lines, their running costs and token ids across builds;
    whatever order the ticks come in (back and forth, NPCs interleaved, as the window
    steps), each preview is the one a fresh builder gives at that tick. Small budgets
    make the history overflow, so the oldest lines slide out and the window is cut."""
    play = Playthrough.open(SAMPLES / name, SAMPLES / "content")
    rng = random.Random(f"{name}{budget}")
    shared = PromptBuilder(play, budget=budget)
    slugs = [npc.slug for npc in play.save.npcs.values()]
    cut = 0
    for _ in range(40):
        slug, tick = rng.choice(slugs), rng.randint(0, play.last_tick)
        preview = shared.build(slug, tick)
        fresh = PromptBuilder(play, budget=budget).build(slug, tick)
        assert _same_preview(preview, fresh), (slug, tick)
        assert preview.token_ids == shared.counter.encode(preview.text)
        cut += preview.history.included < preview.history.total
    if budget is not None:
        assert cut > 5


@pytest.mark.parametrize("name", ["evening.json", "walkaway-spiral.json", "qa-faults.json"])
@pytest.mark.parametrize("budget", [None, 700])
def test_plans_hold_the_counts_of_the_rendered_prompt(name, budget):
    """A plan is made without any text (the corpus reads plans alone): its whole-prompt
    tokens, cards and history are those of its rendered preview, and the prefix two
    plans share is the one their texts' encodes share, whatever order the ticks come in
    (a small budget slides the history window, so the prompts share less)."""
    play = Playthrough.open(SAMPLES / name, SAMPLES / "content")
    enc = get_encoder()
    rng = random.Random(f"plans{name}{budget}")
    planner, renderer = PromptBuilder(play, budget=budget), PromptBuilder(play, budget=budget)
    slugs = [npc.slug for npc in play.save.npcs.values()]
    previous: dict[str, tuple] = {}
    for _ in range(40):
        slug, tick = rng.choice(slugs), rng.randint(0, play.last_tick)
        plan, preview = planner.plan(slug, tick), renderer.build(slug, tick)
        ids = enc.encode(preview.text)
        assert (plan.total_tokens, plan.cards, plan.history, plan.available) == (len(ids), preview.cards, preview.history, preview.available)
        assert renderer.render(renderer.plan(slug, tick)).text == preview.text
        if slug in previous:
            old_plan, old_ids = previous[slug]
            assert common_prefix_tokens(old_plan, plan) == naive_prefix(old_ids, ids), (slug, tick)
        previous[slug] = (plan, ids)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_hostile_history_runs_join_exactly(encoding):
    """A run of history lines is one piece of the stream, its tokens a subtraction of
    the span's running sums; lines with a newline inside, or that start with whitespace
    or "/" after the first, are encoded from the joined text instead. Either way the
    stream joins into the whole prompt's ids, and the sections count as encoded alone."""
    from narrative_debugger.models.prompt.builder import _Lines, _pieces, _size, _Span

    enc = get_encoder(encoding)
    rng = random.Random(11)
    builder = PromptBuilder.__new__(PromptBuilder)
    builder.counter = enc
    builder._clear_ids()
    for _ in range(300):
        texts = [random_text(rng) if rng.random() < 0.2 else "Name: " + random_text(rng) for _ in range(rng.randint(2, 12))]
        texts = [t.lstrip() or "x" for t in texts[:1]] + texts[1:]
        span = _Span(5)
        span.extend([(t, 0, len(builder._line_ids(t)), ()) for t in texts])
        a = rng.randint(5, 4 + len(texts))
        b = rng.randint(a + 1, 5 + len(texts))
        lines = _Lines(span, a, b, builder._line_ids)
        if not _safe_first(lines[0]):
            continue
        parts = [("s0", "Narrator text.", None), ("history", None, lines), ("s2", "After.", None)]
        tokens, stream = builder._stream(parts)
        whole = SEPARATOR.join(["Narrator text.", LINE_SEPARATOR.join(lines), "After."])
        assert [t for c in _pieces(stream) for t in c] == enc.encode(whole), texts[a - 5 : b - 5]
        assert sum(map(_size, stream)) == len(enc.encode(whole))
        assert tokens == [enc.count("Narrator text."), enc.count(LINE_SEPARATOR.join(lines)), enc.count("After.")]


def _safe_first(line: str) -> bool:
    return bool(line) and not line[0].isspace() and line[0] != "/"
