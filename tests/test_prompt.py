"""Prompt assembly (prompt-preview.md, context builder seed) on small hand-made saves."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from narrative_debugger.models.content.loader import StoryCard
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import PromptBuilder, compare, match_cards
from narrative_debugger.models.prompt.sections import SECTIONS, length_hint
from narrative_debugger.models.prompt.tokens import get_encoder

DATA = Path(__file__).parent / "data"
BASE = json.loads((DATA / "minimal.json").read_text())
PLAYER, KAEL = 1, 17


def ev(tick, variant, **fields):
    return {"tick": tick, "event": {variant: fields}}


def make_content(root: Path, *, budget=8192, cards="", max_output=300) -> Path:
    files = {
        "prompt.yaml": f"narrator_prompt: You voice the Reach.\nai_instructions: Stay in character.\ncontext_token_budget: {budget}\nmax_output_tokens: {max_output}\n"
        "campaign_canon:\n  rules: [The ring is real.]\n  forbidden_status_changes: [{from: dead, to: alive}]\n",
        "npcs/kael-davan.yaml": "name: Kael Davan\npronouns: he/him\ndescription: A dockhand.\n",
        "lore/cards.yaml": cards or "- id: dock\n  name: Dock Ward\n  keys: dock, pier\n  entry: Tar and rope.\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def conversation(lines: int, start=200, text="line {i} about the dock") -> dict:
    """A save where the player talks with Kael: ``lines`` dialogue lines from tick ``start``+1."""
    doc = copy.deepcopy(BASE)
    doc["journal"].append(ev(start, "InteractionStarted", target=KAEL, player_initiated=True, location="dock-ward"))
    for i in range(lines):
        doc["journal"].append(ev(start + 1 + i, "DialogueLine", speaker=KAEL if i % 2 else PLAYER, text=text.format(i=i)))
    doc["saved_at_tick"] = start + lines + 1
    return doc


def open_play(tmp_path, doc, **content) -> Playthrough:
    save = tmp_path / "s.json"
    save.write_text(json.dumps(doc))
    return Playthrough.open(save, make_content(tmp_path / "content", **content))


@pytest.mark.parametrize("cap, words, floor", [(300, 168, None), (1000, 641, 224), (100, None, None), (2400, 1586, 300)])
def test_length_hint_figures(cap, words, floor):
    hint = length_hint(cap)
    if words is None:
        assert hint == ""
        return
    assert f"no more than {words} words" in hint
    if floor is None:
        assert "not much under" not in hint
    else:
        assert f"not much under {floor}" in hint


def test_sections_in_contract_order_and_empty_left_out(tmp_path):
    play = open_play(tmp_path, conversation(4))
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    labels = [s.label for s in p.sections]
    # The contract's order of the sections this save fills; a section added to the
    # registry may come between them, never reorder them.
    filled = [
        "narrator", "campaign_canon", "ai_instructions", "npc_profile", "player_character",
        "history", "world_lore", "relationship", "interaction_memory", "npc_state", "length_hint", "state_reminder",
    ]
    assert [label for label in labels if label in filled] == filled
    assert labels == [spec.label for spec in SECTIONS if spec.label in labels]
    assert "plot_essentials" not in labels and "story_summary" not in labels  # empty in the save
    assert p.text == "\n\n".join(s.text for s in p.sections)
    assert "What is dead never becomes alive." in p.section("campaign_canon").text


def test_total_is_whole_prompt_and_differs_from_section_sum(tmp_path):
    play = open_play(tmp_path, conversation(6))
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    enc = get_encoder()
    assert p.total_tokens == enc.count(p.text)
    assert p.section_sum == sum(enc.count(s.text) for s in p.sections)
    assert p.total_tokens != p.section_sum  # joins merge with punctuation: ".\n\n" is one token


def test_tick_boundary_line_at_t_plus_1_never_appears(tmp_path):
    play = open_play(tmp_path, conversation(5))
    builder = PromptBuilder(play)
    at = builder.build("kael-davan", 203)  # lines at 201..203
    assert at.history.total == 4  # the minimal save's line at 131 plus lines 0..2
    assert "line 3" not in at.text and "line 2" in at.text


def test_history_cut_to_newest_lines_under_small_budget(tmp_path):
    play = open_play(tmp_path, conversation(400, text="line {i}: " + "the tide turns again " * 8), budget=600)
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    assert p.available == 600 - sum(s.tokens for s in p.sections if s.label not in ("history", "world_lore"))
    h = p.history
    assert 0 < h.included < h.total == 401
    assert "line 399" in p.section("history").text and "line 0:" not in p.text
    assert p.section("history").tokens <= p.available
    assert 0 < h.budgeted <= p.available - sum(c.tokens for c in p.cards if c.included)


def test_a_newest_line_cut_to_fit_budgets_the_whole_history_budget(tmp_path):
    play = open_play(tmp_path, conversation(1, text="x " * 3000), budget=300)
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    assert p.history.oldest_truncated and p.history.budgeted == p.available - sum(c.tokens for c in p.cards if c.included)


def test_newest_line_alone_over_budget_is_cut_and_reported(tmp_path):
    play = open_play(tmp_path, conversation(1, text="x " * 3000), budget=300)
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    assert p.history.included == 1 and p.history.oldest_truncated
    assert p.section("history").tokens <= p.available


def test_authors_note_three_lines_before_the_end(tmp_path):
    doc = conversation(6)
    doc["story"]["authors_note"] = "Keep it tense."
    play = open_play(tmp_path, doc)
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    labels = [s.label for s in p.sections]
    assert labels.index("history") < labels.index("authors_note") < labels.index("recent_history")
    assert p.section("recent_history").text.count("\n") == 2  # three lines
    assert "[Author's note: Keep it tense.]" == p.section("authors_note").text


def test_lore_capped_at_40_percent_of_available(tmp_path):
    big = "salt " * 120
    cards = "".join(f"- id: c{i}\n  name: Card {i}\n  keys: dock\n  entry: {big}\n" for i in range(6))
    play = open_play(tmp_path, conversation(3), budget=1200, cards=cards)
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    included = [c for c in p.cards if c.included]
    dropped = [c for c in p.cards if not c.included]
    assert included and dropped
    assert all(c.reason == "budget" for c in dropped)
    assert sum(c.tokens for c in included) <= int(p.available * 0.4)
    assert [c.id for c in p.cards] == [f"c{i}" for i in range(6)]  # card order


def test_story_card_keys_literal_case_insensitive():
    cards = [
        StoryCard("boat", "Boat", "boat", "e"),
        StoryCard("cpp", "C++", "c++", "e"),
        StoryCard("blank", "Blank", " , ", "e"),
        StoryCard("empty", "Empty", "", "e"),
        StoryCard("dots", "Dots", "n.b.", "e"),
    ]
    hits = {card.id: key for card, key in match_cards(cards, "Three BOATS and some C++ code; nab it")}
    assert hits == {"boat": "boat", "cpp": "c++"}  # "n.b." is not a pattern matching "nab"


def _window(builder: PromptBuilder, play: Playthrough, tick: int, available: int) -> str:
    """The card trigger window as the seed words it: the newest lines that fit
    ``available``, the one before them cut to what is left, joined by newlines."""
    lines, spent = [], 0
    for rec in play.index.dialogue_newest_first(KAEL, tick):
        text, cost = builder.render_line(rec)
        if spent + cost > available:
            lines.append(builder.counter.truncate_to_last(text, max(0, available - spent - builder.counter.count("\n")))[0])
            break
        lines.append(text)
        spent += cost
    return "\n".join(reversed(lines))


def test_card_keys_match_the_window_as_one_text(tmp_path):
    """The builder keeps which card keys each history line holds; the cards it finds are
    those ``match_cards`` finds in the window as one text: a key that runs over a line
    break ("dock" at a line's end, "Kael" at the next one's start), a Greek capital
    sigma lowercased as a final sigma, a key only in the cut oldest line of the window.
    The same at an earlier tick from the same builder, for budgets that cut the window
    anywhere."""
    cards = (
        "- id: split\n  name: Split\n  keys: \"nothing, dock\\nkael\"\n  entry: Across a line break.\n"
        "- id: final\n  name: Final\n  keys: οδος\n  entry: A final sigma.\n"
        "- id: medial\n  name: Medial\n  keys: οδοσ\n  entry: Never, as the sigma ends a word.\n"
        "- id: oldest\n  name: Oldest\n  keys: end-word\n  entry: Only at the end of the oldest line.\n"
        "- id: never\n  name: Never\n  keys: harbor\n  entry: Not said.\n"
    )
    doc = conversation(12, text="ΟΔΟΣ {i} " + "the tide is out and " * 4 + "by the dock")
    doc["journal"][-12]["event"]["DialogueLine"]["text"] = "and the nets are dry " * 40 + "END-WORD"
    end = doc["saved_at_tick"]
    cut_with_key = 0
    for budget in range(520, 1100, 15):
        folder = tmp_path / str(budget)
        folder.mkdir()
        play = open_play(folder, doc, budget=budget, cards=cards)
        builder = PromptBuilder(play)
        for tick in (end, end - 4, end):
            preview = builder.build("kael-davan", tick)
            window = _window(builder, play, tick, preview.available)
            found = [c.id for c in preview.cards]
            assert found == [c.id for c, _ in match_cards(play.content.cards, window)], (budget, tick)
            assert found[:2] == ["split", "final"] and "medial" not in found and "never" not in found
            oldest = builder.render_line(play.index.dialogue_with(KAEL, tick)[0])[0]
            cut_with_key += "oldest" in found and oldest.endswith(window.split("\n")[0]) and not window.startswith(oldest)
    assert cut_with_key > 0


def test_a_jump_back_or_far_ahead_renders_only_the_lines_its_window_needs(tmp_path):
    """The builder keeps an NPC's rendered lines with their running costs; a jump to a
    tick before them, or far after them, starts again there instead of rendering every
    line in between (3 000 lines; the window holds ~100), and each preview is still the
    one a fresh builder gives."""
    doc = conversation(3000)
    play = open_play(tmp_path, doc, budget=1000)
    builder = PromptBuilder(play)
    rendered = []
    real = builder.render_line

    def counting(rec):
        rendered.append(rec.index)
        return real(rec)

    builder.render_line = counting
    start = 200  # the conversation's first tick; its n-th line is at start + n
    for tick in (start + 3000, start + 40, start + 2990, start + 1500, start + 1510):
        rendered.clear()
        preview = builder.build("kael-davan", tick)
        assert preview.history.included < 200 and len(rendered) < 400, (tick, len(rendered))
        fresh = PromptBuilder(play).build("kael-davan", tick)
        assert (preview.text, preview.cards, preview.history, preview.total_tokens) == (fresh.text, fresh.cards, fresh.history, fresh.total_tokens)


def test_relationship_modifier_per_level_and_shared_references(tmp_path):
    doc = conversation(2)
    rel_events = [ev(205, "SharedReferenceAdded", target=KAEL, kind="jokes", content="the eel in the ledger")]
    score = 0.0
    tick = 206
    for _ in range(70):  # 70 perfect talks: 1.0 point each → 70 = Good Friend
        score = min(100.0, score + 1.0)
        rel_events.append(ev(tick, "RelationshipInteraction", target=KAEL, sentiment=0.8, message_length=800, conversation_turns=5, delta=1.0, score_after=score))
        tick += 1
    doc["journal"].extend(rel_events)
    doc["saved_at_tick"] = tick
    play = open_play(tmp_path, doc)
    builder = PromptBuilder(play)
    at_friend = builder.build("kael-davan", 206 + 44)  # score 45: Friend
    at_good = builder.build("kael-davan", tick)  # score 70: Good Friend
    assert "eel in the ledger" not in at_friend.section("relationship").text
    assert "eel in the ledger" in at_good.section("relationship").text
    assert at_friend.section("relationship").text != at_good.section("relationship").text


def test_special_tokens_and_any_script_count_as_text(tmp_path):
    # A save cannot hold a lone surrogate (F001, see test_bad_input); tokens.py counts
    # them anyway (test_tokens). Pairs written as JSON escapes arrive as one character.
    play = open_play(tmp_path, conversation(2, text="<|endoftext|> and \U0001F600 and 漢字 {i}"))
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    assert "<|endoftext|>" in p.text and "\U0001F600" in p.text and p.total_tokens > 0


def test_compare_changed_sections_and_cache_prefix(tmp_path):
    play = open_play(tmp_path, conversation(6))
    builder = PromptBuilder(play)
    a = builder.build("kael-davan", 204)
    b = builder.build("kael-davan", 205)
    diff = compare(a, b)
    assert "history" in diff.changed and "narrator" not in diff.changed
    assert 0 < diff.common_prefix_tokens < b.total_tokens
    assert diff.common_prefix_tokens >= sum(s.tokens for s in b.sections[:5])  # the system block is cached
    same = compare(b, builder.build("kael-davan", 205))
    assert same.changed == () and same.common_prefix_tokens == b.total_tokens
    other = PromptBuilder(play, encoding="o200k_base").build("kael-davan", 205)
    assert compare(b, other).common_prefix_tokens == 0


def test_interaction_memory_reflects_walk_away(tmp_path):
    play = open_play(tmp_path, conversation(2))
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    memory = p.section("interaction_memory").text
    assert "spoken 1 time before" in memory and "walked away" in memory and "talking now" in memory


def test_interaction_memory_reads_the_npc_only_through_memory_inputs(tmp_path):
    """A what-if compares a turn's interaction memory only where the two NPC states'
    memory_inputs differ: a score, a stress or a threshold must never change it."""
    import msgspec
    from narrative_debugger.models.prompt.sections import BY_LABEL, SectionContext, memory_inputs

    play = open_play(tmp_path, conversation(2))
    tick = play.save.saved_at_tick
    state = play.state_at(tick)
    npc = state.npc(KAEL)
    memory = BY_LABEL["interaction_memory"].text

    def text(n):
        return memory(SectionContext(play, state, n, "Kael Davan", "Player", play.content.prompt))

    moved = msgspec.structs.replace(
        npc,
        relationship=msgspec.structs.replace(npc.relationship, score=npc.relationship.score + 40.0),
        tolerance=msgspec.structs.replace(npc.tolerance, current_stress=npc.tolerance.current_stress + 9, threshold=3),
    )
    assert memory_inputs(moved) == memory_inputs(npc) and text(moved) == text(npc)
    more = msgspec.structs.replace(npc, walk_aways=npc.walk_aways + 2)
    assert memory_inputs(more) != memory_inputs(npc)
    assert f"({npc.walk_aways + 2} times)" in text(more) and text(more) != text(npc)


def test_unknown_npc_raises_keyerror(tmp_path):
    play = open_play(tmp_path, conversation(1))
    with pytest.raises(KeyError):
        PromptBuilder(play).build("nobody", 10)


def test_available_never_below_256(tmp_path):
    play = open_play(tmp_path, conversation(3), budget=100)
    p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
    assert p.available == 256


def test_reused_preview_equals_a_fresh_build(tmp_path):
    doc = conversation(4)
    doc["journal"].append(ev(210, "StressChanged", target=KAEL, delta=2, current_stress=8, cause="argument"))
    doc["saved_at_tick"] = 220
    play = open_play(tmp_path, doc)
    builder = PromptBuilder(play)
    for tick in (205, 206, 209, 210, 215, 220):
        stepped = builder.build("kael-davan", tick)
        fresh = PromptBuilder(play).build("kael-davan", tick)
        assert (stepped.text, stepped.total_tokens, stepped.tick) == (fresh.text, fresh.total_tokens, tick)


def test_cards_trigger_on_the_window_before_lore_as_the_seed_does(tmp_path):
    """Context builder seed: the trigger window is the history that could fill all of
    `available`; lore then shrinks the history, which may drop the triggering line."""
    doc = conversation(60, text="line {i}: " + "the nets are dry again " * 3)
    doc["journal"][6]["event"]["DialogueLine"]["text"] = "Have you seen the lighthouse lamp?"  # an early line
    cards = (
        "- id: lh\n  name: The Point Light\n  keys: lighthouse\n  entry: " + "The lamp turns. " * 40 + "\n"
    )
    builder_budget = None
    for budget in range(700, 3000, 50):  # find a budget where the line fits `available` but not the history after lore
        folder = tmp_path / str(budget)
        folder.mkdir()
        play = open_play(folder, doc, budget=budget, cards=cards)
        p = PromptBuilder(play).build("kael-davan", play.save.saved_at_tick)
        if p.cards and p.cards[0].included and "lighthouse" not in p.section("history").text:
            builder_budget = budget
            break
    assert builder_budget is not None
    assert p.cards[0].keyword == "lighthouse"


@pytest.mark.parametrize("budget, used, c001", [
    (2**64 - 1, 2**64 - 1, False),  # token counts are u64, like ticks
    (2**64 + 1, 8192, True),        # past u64: a C001, and the default budget
    (-5, 8192, True),
])
def test_a_token_budget_past_u64_is_a_c001(tmp_path, budget, used, c001):
    from narrative_debugger.models.content.loader import load_content

    content = load_content(make_content(tmp_path / "content", budget=budget))
    assert content.prompt.context_token_budget == used
    found = [f for f in content.findings if f.code == "C001" and "context_token_budget" in f.message]
    assert bool(found) == c001
    if c001:
        assert "prompt.yaml" in found[0].location
