"""``narrative-debugger state``: the replayed state at a tick, as JSON or text."""

from __future__ import annotations

from pathlib import Path

from narrative_debugger.app.cli.commands.common import EXIT_OK, content_arg, open_for_query, tick_arg, write_json
from narrative_debugger.models.timeline.index import STATES
from narrative_debugger.models.timeline.state_json import state_json
from narrative_debugger.models.report.plain_text import counted, one_line

NAME = "state"
HELP = "print the replayed state at a tick"


def add_arguments(p) -> None:
    p.add_argument("save", type=Path, metavar="SAVE")
    tick_arg(p, "tick (default: saved_at_tick)")
    content_arg(p)
    p.add_argument("--format", choices=("json", "text"), default="json")


def run(args) -> int:
    session = open_for_query(args.save, args.content, args.tick, recording=STATES)  # the state at a tick, not the timeline
    play, tick = session.playthrough, session.tick
    doc = state_json(play, tick)
    if args.format == "json":
        write_json(doc)
        return EXIT_OK
    print(f"{one_line(play.save.label)} at tick {tick} ({play.save.game_time(tick)})")
    for slug, npc in doc["npcs"].items():
        print(f"  {one_line(slug)}: {npc['level']} ({npc['score']:.2f}), stress {npc['stress']}/{npc['threshold']}, walk-aways {npc['walk_aways']}, {counted(len(npc['interactions']), 'interaction')}")
    print(f"  {len(doc['facts'])} facts; {sum(m['eligible'] for m in doc['monologues'].values())} monologue lines eligible")
    return EXIT_OK
