"""The command registry: one module per sub-command.

Each module has ``NAME`` (the sub-command, a contract with QA automation), ``HELP``,
``add_arguments(parser)`` and ``run(args) -> exit status``. To add a command, write
its module and list it here; ``app.cli.main`` builds the parser and dispatches from this
list. Headless commands import no Qt.
"""

from __future__ import annotations

from narrative_debugger.app.cli.commands import check, corpus, coverage, diff, open_report, prompt, query, rules, screenshot, state, whatif, why

#: Sub-commands in help order.
COMMANDS = (check, state, prompt, diff, whatif, why, screenshot, open_report, rules, corpus, coverage, query)
