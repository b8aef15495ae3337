"""``narrative-debugger rules``: the rule catalogue (as ``ruff rule`` does), read from the registry."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_OK, UsageError
from narrative_debugger.models.report.json_text import dump_strict
from narrative_debugger.models.rules.catalogue import RULES, Rule

NAME = "rules"
HELP = "list the finding codes, or explain one (rules CODE)"


def add_arguments(p) -> None:
    p.add_argument("code", nargs="?", metavar="CODE", help="explain one code (e.g. K003)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def where_implemented(rule: Rule) -> list[str]:
    """``path:line  qualname`` of each function that emits the rule's code."""
    out = []
    for k, name in enumerate(rule.implementations):
        func = rule.implementation(k)
        try:
            path = Path(inspect.getsourcefile(func))
            line = inspect.getsourcelines(func)[1]
            out.append(f"{path}:{line}  {name.partition(':')[2]}")
        except (OSError, TypeError):
            out.append(name)
    return out


def explain(rule: Rule) -> str:
    """One rule in full, for a terminal."""
    parts = [
        f"{rule.code} ({rule.severity.value}): {rule.title}",
        "",
        f"What it finds:  {rule.checks}",
        f"Seed rule:      {rule.seed}",
        f"Example:        {rule.example}",
        f"In the app:     {rule.lands}",
        "Implemented in:",
        *(f"  {line}" for line in where_implemented(rule)),
    ]
    return "\n".join(parts)


def run(args) -> int:
    if args.code is not None:
        code = args.code.upper()
        if code not in RULES:
            raise UsageError(f"no rule {args.code!r} (codes: {', '.join(RULES)})")
        rule = RULES[code]
        if args.format == "json":
            dump_strict(rule.to_json() | {"implemented_in": where_implemented(rule)}, sys.stdout)
            sys.stdout.write("\n")
        else:
            print(explain(rule))
        return EXIT_OK
    if args.format == "json":
        dump_strict({"rules": [rule.to_json() for rule in RULES.values()]}, sys.stdout)
        sys.stdout.write("\n")
        return EXIT_OK
    for rule in RULES.values():
        print(f"{rule.code}  {rule.severity.value:7}  {rule.title}")
    print("\n'narrative-debugger rules CODE' explains one: what it finds, its seed rule, an example, where it lands in the app and its code.")
    return EXIT_OK
