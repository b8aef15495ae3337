"""The bug-report summary (models/report/summary.py): findings about the saved snapshot
have their own section, and a name with a line break cannot break a heading."""

from __future__ import annotations

import json
import shutil

from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.report.meta import REPORT_FORMAT_VERSION, ViewRecord
from narrative_debugger.models.report.sinks import markdown
from narrative_debugger.models.report.summary import build_summary

from tests.conftest import CONTENT, SAMPLES


def _record(play: Playthrough, tick: int, npc: str) -> ViewRecord:
    return ViewRecord(REPORT_FORMAT_VERSION, play.save.label, play.save.sha256, "", "", tick, npc, "knowledge")


def _section(summary: str, title_start: str) -> list[str]:
    """The lines of the section whose heading starts with ``title_start``."""
    lines = summary.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"## {title_start}"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def test_snapshot_findings_have_their_own_section():
    play = Playthrough.open(SAMPLES / "qa-faults.json", CONTENT)
    snapshot = [f for f in play.findings if f.tick is None and f.location.startswith(("npcs.", "player."))]
    assert snapshot
    tick = play.save.saved_at_tick
    summary = build_summary(play, _record(play, tick, ""), None, "report.png")
    timed = _section(summary, f"Findings at or before tick {tick}")
    about = _section(summary, "Findings about the saved snapshot")
    assert about[0] == f"## Findings about the saved snapshot (saved at tick {play.save.saved_at_tick}) ({len(snapshot)})"
    for f in snapshot:
        assert f"| {f.severity.value} | {f.code} | `{f.location}` | {markdown(f.message)} |" in about
    want = sum(f.tick is not None and f.tick <= tick for f in play.findings)
    assert timed[0] == f"## Findings at or before tick {tick} ({want})"
    rows = [line for line in timed if line.startswith("| ") and not line.startswith("| severity")]
    assert len(rows) == min(want, 40)
    assert all(line.split(" | ")[2].strip().isdigit() for line in rows)  # every one has its tick


def _hostile_playthrough(tmp_path, name: str, location: str, save_name: str = "evening.json") -> Playthrough:
    """evening.json with Lera Sessik named ``name`` in a content copy and every
    conversation's location set to ``location``, saved as ``save_name``."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    profile = content / "npcs" / "lera-sessik.yaml"
    profile.write_text(profile.read_text(encoding="utf-8").replace("name: Lera Sessik", f"name: {json.dumps(name)}", 1),
                       encoding="utf-8")
    doc = json.loads((SAMPLES / "evening.json").read_text(encoding="utf-8"))
    for entry in doc["journal"]:
        if "InteractionStarted" in entry["event"]:
            entry["event"]["InteractionStarted"]["location"] = location
    save = tmp_path / save_name
    save.write_text(json.dumps(doc), encoding="utf-8")
    return Playthrough.open(save, content)


def test_a_newline_in_a_name_stays_in_its_heading(tmp_path):
    name = "Lera\n# Injected heading\r\n- item"
    play = _hostile_playthrough(tmp_path, name, "dock\n## also injected", "evening\nnext.json")
    assert play.readable and play.content.npc_name("lera-sessik") == name
    summary = build_summary(play, _record(play, play.save.saved_at_tick, "lera-sessik"), None, "r`x.png")
    lines = summary.split("\n")
    headings = [line for line in lines if line.startswith("#")]
    assert not any("Injected" in h and not h.startswith("## NPC: ") for h in headings)
    assert f"## NPC: {markdown(name)} (`lera-sessik`, StableId 9)" in lines
    # The line breaks read as \u000a escapes (their backslash escaped for Markdown), the '#' as text.
    assert markdown(name) == "Lera\\\\u000a\\# Injected heading\\\\u000d\\\\u000a- item"
    assert lines[0] == f"# Narrative bug report: evening\\\\u000anext.json at tick {play.save.saved_at_tick}"
    assert not any(line.startswith(("## also", "- item")) for line in lines)
    assert "``r`x.png``" in summary  # a backtick in a name keeps its code span whole


def test_markup_in_names_and_messages_is_text(tmp_path):
    """A name from content and a location from the save holding HTML read as written in
    the Markdown summary; they are not rendered as markup."""
    play = _hostile_playthrough(tmp_path, "<b>Lera</b> & co", "<img src=x onerror=alert(1)>")
    # A tick where Lera's conversation is in progress, so its location is in the summary.
    tick = next(m.started_tick for m in play.state_at(play.last_tick).knowledge.interactions_with(9))
    summary = build_summary(play, _record(play, tick, "lera-sessik"), None, "r.png")
    assert "## NPC: &lt;b&gt;Lera&lt;/b&gt; &amp; co (`lera-sessik`, StableId 9)" in summary
    assert "<b>" not in summary and "<img" not in summary
    assert "at &lt;img src=x onerror=alert(1)&gt;" in summary
