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
    harbor = "- id: dock-ward\n  name: The Dock Ward\n  keys: dock\n  entry: The dock ward.\n".replace(
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


CARD = "- id: dock-ward\n  name: The Dock Ward\n  keys: {keys}\n  entry: The dock ward.\n"
NO_KEY = (': it can never enter a prompt (keys are comma-separated words, like keys: "boat, harbor"; '
          'a card kept only for reference has keys: "")')
ONE_LINE = ": a key is one line of text, with no control characters; used as written, it matches only story text that holds the same characters"


@pytest.mark.parametrize("keys, written, said", [
    ('"dock, pi\\u202eer"', "dock, pi\u202eer", ["3:3 story card dock-ward's key 'pi\\u202eer' holds a direction control (U+202E)" + ONE_LINE]),
    ('"dock\\nkael, \\e[1mpier"', "dock\nkael, \x1b[1mpier", [
        "3:3 story card dock-ward's key 'dock\\nkael' holds a line break (U+000A)" + ONE_LINE,
        "3:3 story card dock-ward's key '\\x1b[1mpier' holds a control character (U+001B)" + ONE_LINE]),
    ("|\n    dock, pier\n", "dock, pier\n", []),  # a block scalar's last line break is around a key, not in it
    ("\n    - dock\n    - \"\\u2067pier\"\n", "dock, \u2067pier", ["5:7 story card dock-ward's key '\\u2067pier' holds a direction control (U+2067)" + ONE_LINE]),
])
def test_a_story_card_key_that_is_not_one_line_is_c001_at_its_place(tmp_path, keys, written, said):
    """A card key holding a control character or a direction control passed without a
    word (the name beside it was checked): C001 at the key (a list's item at its own
    line:col), each character named under what it is; the key is used as written."""
    content = load_content(_folder(tmp_path, harbor=CARD.format(keys=keys)))
    assert [f"{f.location.split(':', 1)[1]} {f.message.split(': ', 1)[1]}" for f in content.findings] == said
    assert {f.code for f in content.findings} <= {"C001"}
    assert next(c for c in content.cards if c.id == "dock-ward").keys == written


@pytest.mark.parametrize("card, where, said", [
    (CARD.format(keys='" , ,"'), "3:3", "story card dock-ward's keys ' , ,' hold no key"),
    (CARD.format(keys="'   '"), "3:3", "story card dock-ward's keys '   ' hold no key"),
    (CARD.format(keys="\n    -\n    - ''"), "3:3", "story card dock-ward's keys list holds no key"),
    (CARD.format(keys=""), "3:3", "story card dock-ward's keys: has no value"),
    ("- id: dock-ward\n  name: The Dock Ward\n  entry: The dock ward.\n", "1:3", "story card dock-ward has no keys"),
    ("- name: The Dock Ward\n  entry: The dock ward.\n", "1:3", "story card harbor-1 has no keys"),
])
def test_a_story_card_whose_keys_hold_no_key_is_c001(tmp_path, card, where, said):
    """A card whose keys are missing or blank after stripping can never trigger; it was
    kept without a word. Now C001 at its keys (its id, or the card, when it has none)."""
    content = load_content(_folder(tmp_path, harbor=card))
    assert [(f.code, f.location, f.message) for f in content.findings] == [
        ("C001", f"lore/harbor.yaml:{where}", f"lore/harbor.yaml: {said}{NO_KEY}")]
    assert [c.key_list() for c in content.cards if c.file == "lore/harbor.yaml"] == [[]]


@pytest.mark.parametrize("keys", ['""', "''", "[]"])
def test_keys_written_empty_keep_a_card_for_reference_without_a_finding(tmp_path, keys):
    """``keys: ""`` is how a card kept only for reference is written (the sample's
    the-tallyman, lore/town.yaml): it never triggers, on purpose, and is no finding."""
    content = load_content(_folder(tmp_path, harbor=CARD.format(keys=keys)))
    assert content.findings == []
    assert next(c for c in content.cards if c.id == "dock-ward").key_list() == []
    assert next(c for c in content.cards if c.id == "the-tallyman").key_list() == []


@pytest.mark.parametrize("keys, key_list, said", [
    ("[Dock, pier, 1990, true]", ["dock", "pier", "1990", "true"], []),
    ("\n    - dock\n    - salt market\n", ["dock", "salt market"], []),
    ("[dock, ~, pier]", ["dock", "pier"], []),
    ("[dock, [pier, wharf], {crates: 1}]", ["dock"], [
        "3:16 story card dock-ward's key 2 must be text, found a list; left out",
        "3:31 story card dock-ward's key 3 must be text, found a mapping; left out"]),
    ("[[pier]]", [], ["3:10 story card dock-ward's key 1 must be text, found a list; left out"]),  # said once: no "keys are empty" besides
    ('["dock, pier", wharf]', ["dock", "pier", "wharf"], [
        "3:10 story card dock-ward's key 'dock, pier' holds a comma: keys are split at commas, so it is read as the keys 'dock', 'pier'"]),
    ("{dock: 1}", [], ["3:3 story card dock-ward's keys must be comma-separated text or a list of keys, found a mapping; left out"]),
])
def test_story_card_keys_written_as_a_yaml_list_are_the_list_of_keys(tmp_path, keys, key_list, said):
    """``keys: [boat, harbor]`` means those two keys (save-format §7 writes them
    ``keys: "boat, harbor"``): each item is a key. What cannot be one (a list or a
    mapping: left out; an item holding a comma: split as the text form is) is C001 at the
    item's own line:col, never dropped without a word."""
    content = load_content(_folder(tmp_path, harbor=CARD.format(keys=keys)))
    assert [f"{f.location.split(':', 1)[1]} {f.message.split(': ', 1)[1]}" for f in content.findings] == said
    assert {f.code for f in content.findings} <= {"C001"}
    assert next(c for c in content.cards if c.id == "dock-ward").key_list() == key_list


def test_a_story_card_key_finding_is_in_check_and_lands_on_the_content(tmp_path, capsys):
    import json

    from narrative_debugger.app.cli.main import main
    from tests.conftest import SAMPLES

    root = _folder(tmp_path)
    lore = root / "lore" / "harbor.yaml"
    lore.write_text(lore.read_text(encoding="utf-8").replace('keys: "dock, pier, wharf, crates"', 'keys: " , "', 1), encoding="utf-8")
    line = next(n for n, text in enumerate(lore.read_text(encoding="utf-8").splitlines(), 1) if text == '  keys: " , "')
    assert main(["check", str(SAMPLES / "evening.json"), "--content", str(root), "--format", "json"]) == 1
    (doc,) = json.loads(capsys.readouterr().out)["files"]
    (c001,) = [f for f in doc["findings"] if f["code"] == "C001"]
    assert c001["message"] == f"lore/harbor.yaml: story card dock-ward's keys ' , ' hold no key{NO_KEY}"
    assert c001["target"] == {"kind": "content", "file": "lore/harbor.yaml", "line": line, "col": 3, "snapshot": False}
