"""Why the NPC prompt at a tick holds what it holds: story cards and history (prompt-preview.md).

Everything is read from the preview ``models.prompt.builder.PromptBuilder`` builds
(the same one the Prompt view shows); nothing is assembled twice. The budget:
``available = max(256, budget − Σ reserved sections)``; story cards take at most
``int(40 % of available)`` in card order; history gets ``available − lore used``,
newest line first, until the next line does not fit.
"""

from __future__ import annotations

from narrative_debugger.models.explain.chain import Explanation, Step, fold_list
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.prompt.builder import MIN_AVAILABLE, PromptBuilder, PromptPreview

RULE_CARD = "story cards ≤ 40 % of available (prompt-preview §8)"
RULE_HISTORY = "history newest first within its budget (prompt-preview §7)"


def budget_json(preview: PromptPreview) -> dict:
    """The available budget built from each reserved section, and the lore budget (tokens)."""
    reserved = [{"label": label, "tokens": n} for label, n in preview.reserved if n]
    total = sum(r["tokens"] for r in reserved)
    terms = " + ".join(str(r["tokens"]) for r in reserved) or "0"
    return {
        "budget": preview.budget,
        "reserved": reserved,
        "reserved_total": total,
        "available": preview.available,
        "lore_budget": preview.card_budget,
        "arithmetic": (
            f"available = max({MIN_AVAILABLE}, {preview.budget} − ({terms})) = max({MIN_AVAILABLE}, {preview.budget - total}) = {preview.available}; "
            f"lore budget = int({preview.card_share:g} × {preview.available}) = {preview.card_budget}"
        ),
    }


def _keyword_line(builder: PromptBuilder, npc: int, tick: int, keyword: str, available: int):
    """The newest history line in the card trigger window that contains ``keyword``."""
    spent = 0
    for rec in builder.play.index.dialogue_newest_first(npc, tick):
        text, cost = builder.render_line(rec)
        if keyword in text.lower():
            return rec, text
        spent += cost
        if spent > available:
            break
    return None, None


def explain_card(play: Playthrough, builder: PromptBuilder, slug: str, card_id: str, tick: int, limit: int, target: str) -> Explanation:
    """Why story card ``card_id`` is in ``slug``'s prompt at ``tick``, or dropped, or not triggered.

    Steps follow the rule's own order, as ``explain_history``'s do: the matched cards
    up to ``card_id`` in card order, the order the lore budget takes them in
    (prompt-preview §8). Before/after are the lore tokens used, so each step's after is
    the next one's before and the Explain dock's waterfall adds up; each step's journal
    index and tick are those of the history line holding that card's keyword.
    """
    preview = builder.build(slug, tick)
    npc = play.save.npc_by_slug(slug).stable_id
    budget = budget_json(preview)
    lore_budget = preview.card_budget
    steps = []
    used = 0
    record = None
    used_before = 0
    reach: dict[int, int] = {}  # id(step) of a dropped card -> the tokens it would have reached
    for card in preview.cards:
        rec, text = _keyword_line(builder, npc, tick, card.keyword, preview.available)
        after = used + card.tokens if card.included else used
        verdict = f"{used} + {card.tokens} = {used + card.tokens} {'≤' if card.included else '>'} {lore_budget}: {'included' if card.included else 'dropped'}"
        where = f"key {card.keyword!r} in {text!r}" if text else f"key {card.keyword!r}"
        steps.append(
            Step(rec.index if rec else -1, rec.tick if rec else tick, "DialogueLine", RULE_CARD, used, after, f"{card.id}: {where}; {card.tokens} tokens; {verdict}")
        )
        if not card.included:
            reach[id(steps[-1])] = used + card.tokens
        if card.id == card_id:
            record, used_before, line = card, used, (rec, text)
            break
        used = after
    shown, folded = fold_list(steps, limit)
    name = play.content.npc_name(slug)
    if record is None:
        keys = next((c.keys for c in play.content.cards if c.id == card_id), "")
        summary = f"Card {card_id} is not in {name}'s prompt at tick {tick}: none of its keys ({keys}) occurs in the history window."
        exp = Explanation(target, tick, "not triggered", summary, [], None, True, npc)
        exp.extra.update({"included": False, "keyword": None, "tokens": None, "lore_budget": lore_budget, "used_before": None, "reason": "not triggered", "budget": budget})
        return exp
    total = used_before + record.tokens
    if record.included:
        reason = f"{used_before} + {record.tokens} = {total} ≤ lore budget {lore_budget} (int({preview.card_share * 100:g} % of {preview.available}))"
    else:
        reason = f"{used_before} + {record.tokens} = {total} > lore budget {lore_budget} (int({preview.card_share * 100:g} % of {preview.available})): dropped"
    rec, text = line
    summary = (
        f"Card {card_id} is {'included in' if record.included else 'dropped from'} {name}'s prompt at tick {tick}: "
        f"key {record.keyword!r} occurs in {text!r}" + (f" (journal #{rec.index}, tick {rec.tick})" if rec else "") + f"; the cards before it used {used_before} tokens; {reason}."
    )
    exp = Explanation(target, tick, "included" if record.included else "dropped", summary, shown, folded, True, npc)
    exp.refused = {k: reach[id(s)] for k, s in enumerate(shown) if id(s) in reach}
    exp.extra.update(
        {
            "included": record.included,
            "keyword": record.keyword,
            "tokens": record.tokens,
            "lore_budget": lore_budget,
            "used_before": used_before,
            "reason": reason,
            "line": {"journal_index": rec.index, "tick": rec.tick, "text": text} if rec else None,
            "budget": budget,
        }
    )
    return exp


def explain_history(play: Playthrough, builder: PromptBuilder, slug: str, tick: int, limit: int, target: str) -> Explanation:
    """How many history lines fit ``slug``'s prompt at ``tick``, and which was the first left out.

    Steps follow the rule's own order, newest line first; before/after are the tokens
    spent of the history budget (``available − lore used``).
    """
    preview = builder.build(slug, tick)
    npc = play.save.npc_by_slug(slug).stable_id
    lore_used = sum(c.tokens for c in preview.cards if c.included)
    history_budget = preview.available - lore_used
    steps = []
    spent = 0
    left_out = None
    h = preview.history
    for k, rec in enumerate(play.index.dialogue_newest_first(npc, tick)):
        text, cost = builder.render_line(rec)
        if k >= h.included:
            left_out = {"journal_index": rec.index, "tick": rec.tick, "text": text, "tokens": cost}
            steps.append(Step(rec.index, rec.tick, "DialogueLine", RULE_HISTORY, spent, spent, f"left out: {spent} + {cost} = {spent + cost} > {history_budget}"))
            break
        if h.oldest_truncated:
            steps.append(Step(rec.index, rec.tick, "DialogueLine", RULE_HISTORY, spent, history_budget, f"the newest line alone ({cost} tokens) is over the budget of {history_budget}: cut to its last tokens"))
            spent = history_budget
            break
        steps.append(Step(rec.index, rec.tick, "DialogueLine", RULE_HISTORY, spent, spent + cost, f"{spent} + {cost} = {spent + cost} ≤ {history_budget}"))
        spent += cost
    shown, folded = fold_list(steps, limit)
    budget = budget_json(preview)
    name = play.content.npc_name(slug)
    summary = (
        f"{h.included} of {h.total} history lines fit {name}'s prompt at tick {tick}: history budget {preview.available} available − {lore_used} lore = {history_budget} tokens, "
        f"{spent} spent, {history_budget - spent} left"
        + (f"; the next line (journal #{left_out['journal_index']}, {left_out['tokens']} tokens) does not fit" if left_out else "")
        + ("; the newest line was cut to fit" if h.oldest_truncated else "")
        + (f". Each line is counted alone with its separator; as assembled, the history sections count {preview.history_section_tokens} tokens (tokens merge where lines join)" if h.included else "")
        + "."
    )
    exp = Explanation(target, tick, h.included, summary, shown, folded, True, npc)
    exp.extra.update(
        {
            "history": {
                "included": h.included,
                "total": h.total,
                "oldest_truncated": h.oldest_truncated,
                "budget": history_budget,
                "spent": spent,
                "assembled_tokens": preview.history_section_tokens,
                "left": history_budget - spent,
                "first_left_out": left_out,
            },
            "budget": budget,
        }
    )
    return exp
