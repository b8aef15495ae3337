"""``narrative-debugger why``: the journal entries behind one value, verdict or prompt choice."""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_OK, UsageError, content_arg, number_arg, open_for_query, tick_arg, write_json
from narrative_debugger.models.boundary import U32
from narrative_debugger.models.explain import DEFAULT_LIMIT, TARGET_FORMS, Explanation, UnknownTarget, explain
from narrative_debugger.models.explain.chain import fmt_signed, fmt_value
from narrative_debugger.models.report.plain_text import one_line

NAME = "why"
HELP = "explain a value at a tick from the journal entries that made it"


def add_arguments(p) -> None:
    p.add_argument("save", type=Path, metavar="SAVE")
    p.add_argument("target", metavar="TARGET", help="one of: " + ", ".join(TARGET_FORMS))
    tick_arg(p, "tick (default: saved_at_tick)")
    content_arg(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--limit", type=number_arg("--limit", U32), default=DEFAULT_LIMIT, metavar="N", help=f"steps shown in full; older ones are folded by rule (default {DEFAULT_LIMIT})")


def _short(value) -> str:
    """A value, before or after for text: numbers as ``fmt_num`` (score points with 2
    decimals, as ``state`` prints them), None as ``—``, a dict as ``{key: value, ...}``."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_short(v)}" for k, v in value.items()) + "}"
    return fmt_value(value)


#: The target's own keys the text output prints after the steps, in this order.
EXTRA_KEYS = ("clauses", "nearest_miss", "fired", "crossings", "path", "reason", "budget", "history", "line")


def format_text(exp: Explanation) -> str:
    """The summary, folded aggregates, each step, then the target's own keys."""
    doc = exp.to_json()
    out = [one_line(f"{exp.target} at tick {exp.tick}: {_short(exp.value) if not isinstance(exp.value, dict) else ''}".rstrip()), one_line(exp.summary), ""]
    if exp.folded is not None:
        out.append(f"{exp.folded.count} older step(s) folded:")
        for rule, (n, s) in exp.folded.by_rule.items():
            out.append(f"  {n:>6} × {rule}" + (f"  Σ {fmt_signed(s)}" if exp.numeric else ""))
    for s in exp.steps:
        out.append(f"  #{s.journal_index:<7} tick {s.tick:<9} {s.event:<28} {s.rule}")
        if not isinstance(s.before, (dict, list)):
            out.append(f"           {_short(s.before)} → {_short(s.after)}")
        out.append(f"           {one_line(s.detail)}")
    for key in EXTRA_KEYS:
        if doc.get(key) not in (None, [], {}):
            out.extend(_block(key, doc[key]))
    return "\n".join(out)


def _words(key: str) -> str:
    return key.replace("_", " ")


def _inline(value) -> str:
    """One value of a target's own keys on one line: yes/no, ``—`` for None, numbers as
    ``fmt_value``, a dict as ``key value, ...``, a list as ``a; b``, save text flattened."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{_words(k)} {_inline(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(_inline(v) for v in value) if value else "none"
    if isinstance(value, str):
        return one_line(value)
    return fmt_value(value)


def _has_parts(value) -> bool:
    """A dict or list that holds a dict or list: ``_block`` gives it lines of its own."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(isinstance(x, (dict, list)) for x in items)


def _block(key: str, value, indent: str = "") -> list[str]:
    """A target's own key as text lines: a scalar on its line, a dict a line per key
    (nested a level deeper), a list a ``-`` line per item. The ``--format json``
    output has the same keys as JSON."""
    title = f"{indent}{_words(key)}:"
    if isinstance(value, dict):
        lines = [title]
        for k, v in value.items():
            if _has_parts(v):
                lines.extend(_block(k, v, indent + "  "))
            else:
                lines.append(f"{indent}  {_words(k)}: {_inline(v)}")
        return lines
    if isinstance(value, list):
        return [title] + [f"{indent}  - {_inline(v)}" for v in value]
    return [f"{title} {_inline(value)}"]


def run(args) -> int:
    session = open_for_query(args.save, args.content, args.tick)
    play, tick = session.playthrough, session.tick
    try:
        exp = explain(play, args.target, tick, args.limit)
    except UnknownTarget as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        write_json(exp.to_json())
    else:
        print(format_text(exp))
    return EXIT_OK
