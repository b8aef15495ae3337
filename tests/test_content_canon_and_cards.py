"""Content values of the wrong type in prompt.yaml's campaign canon and in story cards:
each is C001 at its ``file:line:col`` and left out, never dropped without a word or put
in a prompt as Python's ``['drowned']`` (hostile-input trial 47)."""

from __future__ import annotations

import re
import shutil

import pytest

from narrative_debugger.models.content.loader import load_content
from tests.conftest import CONTENT

CANON = '''campaign_canon:
  rules:
    - {rule: 1}
    - null
    - 3.5
    - "The ring moves its cargo on moonless nights."
  forbidden_status_changes:
    - from: [drowned]
      to: alive
    - from: Hostile
    - from: lost
      to: found
'''


def _folder(tmp_path, prompt: str | None = None, harbor: str | None = None):
    root = tmp_path / "content"
    shutil.copytree(CONTENT, root)
    if prompt is not None:  # the sample's campaign_canon block (up to the next top-level key) replaced
        path = root / "prompt.yaml"
        path.write_text(re.sub(r"^campaign_canon:\n(?:[ \t].*\n|\n)*", prompt, path.read_text(encoding="utf-8"), count=1, flags=re.M),
                        encoding="utf-8")
    if harbor is not None:
        (root / "lore" / "harbor.yaml").write_text(harbor, encoding="utf-8")
    return root


def test_canon_items_of_the_wrong_shape_are_c001_at_their_place_and_left_out(tmp_path):
    content = load_content(_folder(tmp_path, prompt=CANON))
    said = [(f.location.split(":", 1)[1], f.message.split(": ", 1)[1]) for f in content.findings if f.code == "C001"]
    line = next(n for n, text in enumerate((tmp_path / "content" / "prompt.yaml").read_text().splitlines(), 1) if text.startswith("campaign_canon:"))
    assert said == [
        (f"{line + 2}:7", "a campaign_canon rule must be text, found a mapping; left out"),
        (f"{line + 3}:7", "a campaign_canon rule is empty; left out"),
        (f"{line + 7}:7", "a forbidden status change's from must be text, found a list; left out"),
        (f"{line + 9}:7", "a forbidden status change needs from: and to: (like from: drowned, to: alive); left out"),
    ]
    assert content.prompt.canon_rules == ("3.5", "The ring moves its cargo on moonless nights.")
    assert content.prompt.forbidden_status_changes == (("lost", "found"),)


@pytest.mark.parametrize("canon, said", [
    ("campaign_canon: hello\n", "campaign_canon must be a mapping (rules:, forbidden_status_changes:), found str; left out"),
    ("campaign_canon: [a, b]\n", "campaign_canon must be a mapping (rules:, forbidden_status_changes:), found a list; left out"),
    ("campaign_canon:\n  forbidden_status_changes: nope\n", "campaign_canon.forbidden_status_changes must be a list of {from:, to:}, found str; left out"),
    ("campaign_canon:\n  rules: {a: b}\n", "campaign_canon.rules must be a list of rules, found a mapping; left out"),
])
def test_a_canon_of_the_wrong_shape_is_said_not_dropped(tmp_path, canon, said):
    content = load_content(_folder(tmp_path, prompt=canon))
    assert [f.message.split(": ", 1)[1] for f in content.findings if f.code == "C001"] == [said]


@pytest.mark.parametrize("field, written, said", [
    ("entry", "[x, y]", "story card dock-ward's entry must be text, found a list; left out"),
    ("name", "{a: b}", "story card dock-ward's name must be text, found a mapping; left out"),
])
def test_a_story_cards_text_of_the_wrong_shape_is_c001_and_never_a_python_repr(tmp_path, field, written, said):
    harbor = f"- id: dock-ward\n  name: The Dock Ward\n  keys: dock\n  entry: The dock ward.\n".replace(
        f"  {field}: " + ("The dock ward." if field == "entry" else "The Dock Ward"), f"  {field}: {written}")
    content = load_content(_folder(tmp_path, harbor=harbor))
    assert [(f.location, f.message.split(": ", 1)[1]) for f in content.findings if f.code == "C001"] == [
        (f"lore/harbor.yaml:{2 if field == 'name' else 4}:3", said)]
    card = next(c for c in content.cards if c.id == "dock-ward")
    assert "[" not in card.entry and "{" not in card.name


def test_a_content_file_not_utf8_is_found_at_its_line_and_column(tmp_path):
    # Trial 47: the column was always 1 (prompt.yaml:5:1 for a byte far along line 5).
    root = _folder(tmp_path)
    (root / "npcs" / "kael-davan.yaml").write_bytes("name: Kaël\ndescription: Café \xe9t\xe9\n".encode("utf-8").replace(b"\xc3\xa9t", b"\xe9t"))
    found = [f for f in load_content(root).findings if f.code == "C001"]
    assert [(f.location, f.message) for f in found] == [("npcs/kael-davan.yaml:2:19", "npcs/kael-davan.yaml: not UTF-8 (byte offset 31)")]


@pytest.mark.parametrize("written, name, said", [
    ('"Kael\\nDavan"', "Kael\nDavan", "'Kael\\nDavan' holds a line break (U+000A)"),
    ("|\n  Kael\n  Davan\n", "Kael\nDavan", "'Kael\\nDavan' holds a line break (U+000A)"),  # a block scalar: the last line break is stripped, not the inner one
    ('"Kael\\tDa\\nvan"', "Kael\tDa\nvan", "'Kael\\tDa\\nvan' holds a line break (U+000A) and a control character (U+0009)"),  # trial 48: a tab is no line break
    ('"\\u202eKael"', "\u202eKael", "'\\u202eKael' holds a direction control (U+202E)"),  # trial 48: shown as "leaK"
    ('"Kael\\tDavan\\e[31m"', "Kael\tDavan\x1b[31m", "'Kael\\tDavan\\x1b[31m' holds a control character (U+0009, U+001B)"),
    ('"Kael\\LDavan"', "Kael\u2028Davan", "'Kael\\u2028Davan' holds a line break (U+2028)"),
])
def test_an_npc_name_that_is_not_one_line_is_c001_at_its_key(tmp_path, capsys, written, name, said):
    """A display name with a line break or another control character had no finding
    (the window shows it on one line, escaped): C001 at the name's file:line:col, the
    name used as written, in the open's findings and ``check --format json``."""
    import json

    from narrative_debugger.app.cli.main import main
    from tests.conftest import SAMPLES

    root = _folder(tmp_path)
    profile = root / "npcs" / "kael-davan.yaml"
    profile.write_text(profile.read_text(encoding="utf-8").replace("name: Kael Davan\n", f"# the dockhand\nname: {written}\n", 1), encoding="utf-8")
    content = load_content(root)
    assert [(f.location, f.message) for f in content.findings] == [(
        "npcs/kael-davan.yaml:2:1",
        f"npcs/kael-davan.yaml: the NPC's name {said}: a name is one line of text, with no control characters; used as written")]
    assert content.npc_name("kael-davan") == name
    assert main(["check", str(SAMPLES / "evening.json"), "--content", str(root), "--format", "json"]) == 1
    (doc,) = json.loads(capsys.readouterr().out)["files"]
    (c001,) = [f for f in doc["findings"] if f["code"] == "C001"]
    assert c001["location"] == "npcs/kael-davan.yaml:2:1" and c001["severity"] == "error"
    assert c001["target"] == {"kind": "content", "file": "npcs/kael-davan.yaml", "line": 2, "col": 1, "snapshot": False}


def test_a_story_card_name_that_is_not_one_line_is_c001(tmp_path):
    harbor = "- id: dock-ward\n  name: >\n    The Dock\n\n    Ward\n  keys: dock\n  entry: The dock ward.\n- id: tide\n  name: Tide\n  keys: tide\n  entry: Tides.\n"
    content = load_content(_folder(tmp_path, harbor=harbor))
    assert [(f.code, f.location, f.message.split(": ", 1)[1]) for f in content.findings] == [(
        "C001", "lore/harbor.yaml:2:3",
        "story card dock-ward's name 'The Dock\\nWard\\n' holds a line break (U+000A): a name is one line of text, with no control characters; used as written")]
    assert [c.name for c in content.cards if c.id in ("dock-ward", "tide")] == ["The Dock\nWard\n", "Tide"]
