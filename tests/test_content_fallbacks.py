"""No silent fallbacks (issue 35, pattern 3, and pattern 6's recursive alias and ``--content ''``).

Each case passed ``check`` with "0 errors" before: a content folder that cannot be
listed (C006), two profiles for one slug (C007), one story-card id twice (C008), a
link leading out of the content folder (C009), the bundled sample content standing in
(C010), an entry that is not read (C011), and an NPC slug that is not kebab-case
ASCII (K006). Every test builds real files in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.content import files as content_files
from narrative_debugger.models.content.loader import load_content
from narrative_debugger.models.playthrough import Playthrough
from narrative_debugger.models.rules.catalogue import RULES, Severity

from tests.support.files import write_enums

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
MINIMAL = Path(__file__).resolve().parent / "data" / "minimal.json"


def _content(tmp_path: Path) -> Path:
    """A small content folder: a prompt, the enum files, one profile, one lore file, nothing odd."""
    root = tmp_path / "content"
    (root / "npcs").mkdir(parents=True)
    (root / "lore").mkdir()
    (root / "prompt.yaml").write_text("narrator_prompt: You voice the Reach.\n", encoding="utf-8")  # none would be a C012
    (root / "npcs" / "kael-davan.yaml").write_text("name: Kael Davan\n", encoding="utf-8")
    (root / "lore" / "harbor.yaml").write_text("- id: dock-ward\n  keys: dock\n  entry: Piers.\n", encoding="utf-8")
    return write_enums(root)  # without them, C012s


def _by_code(content) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in content.findings:
        out.setdefault(f.code, []).append(f)
    return out


def test_a_clean_folder_has_no_findings(tmp_path):
    """The baseline the other tests change one thing of."""
    content = load_content(_content(tmp_path))
    assert content.findings == []
    assert content.npcs["kael-davan"].name == "Kael Davan"


def test_c006_a_folder_that_cannot_be_listed(tmp_path, monkeypatch):
    # Tests run as root here, where chmod 000 does not stop a listing: the listing itself fails.
    root = _content(tmp_path)
    real_scandir = os.scandir

    def scandir(path):
        if os.path.basename(os.fspath(path)) == "npcs":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(content_files.os, "scandir", scandir)
    content = load_content(root)
    [c006] = _by_code(content)["C006"]
    assert c006.severity is Severity.ERROR
    assert c006.location == "npcs:1:1"
    assert "npcs/ cannot be listed (Permission denied)" in c006.message
    assert c006.target.kind == "file"
    assert content.npcs == {}
    assert [card.id for card in content.cards] == ["dock-ward"]  # the other folders are still read


def test_c006_a_file_where_a_folder_belongs(tmp_path):
    root = _content(tmp_path)
    (root / "monologues").write_text("not a folder\n", encoding="utf-8")
    [c006] = _by_code(load_content(root))["C006"]
    assert c006.location == "monologues:1:1" and "is not a folder" in c006.message


def test_c007_two_profiles_for_one_slug(tmp_path):
    root = _content(tmp_path)
    (root / "npcs" / "kael-davan.yml").write_text("name: Someone Else\n", encoding="utf-8")
    content = load_content(root)
    [c007] = _by_code(content)["C007"]
    assert c007.severity is Severity.ERROR
    assert c007.location == "npcs/kael-davan.yml:1:1"
    assert "npcs/kael-davan.yaml is the one used" in c007.message
    assert content.npcs["kael-davan"].name == "Kael Davan"  # the .yml one used to win, silently


def test_c008_one_story_card_id_in_two_files(tmp_path):
    root = _content(tmp_path)
    (root / "lore" / "town.yaml").write_text("# town\n- id: market\n  keys: stall\n  entry: Stalls.\n- id: dock-ward\n  keys: other\n  entry: Another.\n",
                                             encoding="utf-8")
    content = load_content(root)
    [c008] = _by_code(content)["C008"]
    assert c008.location == "lore/town.yaml:5:3"
    assert "first at lore/harbor.yaml:1:3" in c008.message
    assert [(card.id, card.entry) for card in content.cards] == [("dock-ward", "Piers."), ("market", "Stalls.")]


def test_c008_one_story_card_id_twice_in_one_file(tmp_path):
    root = _content(tmp_path)
    (root / "lore" / "harbor.yaml").write_text("- id: dock-ward\n  keys: a\n- id: dock-ward\n  keys: b\n", encoding="utf-8")
    [c008] = _by_code(load_content(root))["C008"]
    assert c008.location == "lore/harbor.yaml:3:3"


def test_c009_a_link_out_of_the_content_folder_is_not_followed(tmp_path):
    root = _content(tmp_path)
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("name: Outsider\n", encoding="utf-8")
    (root / "npcs" / "orrin-vask.yaml").symlink_to(outside)
    (root / "npcs" / "sera-venn.yaml").symlink_to(root / "npcs" / "kael-davan.yaml")  # inside: read
    content = load_content(root)
    [c009] = _by_code(content)["C009"]
    assert c009.severity is Severity.ERROR
    assert c009.location == "npcs/orrin-vask.yaml:1:1"
    assert c009.target.kind == "file"  # the Content dock does not open it either
    assert "orrin-vask" not in content.npcs
    assert content.npcs["sera-venn"].name == "Kael Davan"


def test_c009_a_named_file_linking_out(tmp_path):
    root = _content(tmp_path)
    outside = tmp_path / "prompt.yaml"
    outside.write_text("context_token_budget: 77\n", encoding="utf-8")
    (root / "prompt.yaml").unlink()
    (root / "prompt.yaml").symlink_to(outside)
    content = load_content(root)
    assert [f.location for f in _by_code(content)["C009"]] == ["prompt.yaml:1:1"]
    assert content.prompt.context_token_budget != 77


def test_c011_entries_not_read_are_warnings(tmp_path):
    root = _content(tmp_path)
    (root / "npcs" / "notes.txt").write_text("todo\n", encoding="utf-8")
    (root / "npcs" / "Mira.YAML").write_text("name: Mira\n", encoding="utf-8")
    (root / "lore" / "old").mkdir()
    (root / "lore" / ".gitkeep").write_text("", encoding="utf-8")  # hidden, not YAML: no finding
    (root / "prompts.yaml").write_text("narrator_prompt: typo in the name\n", encoding="utf-8")
    (root / "README.md").write_text("about this content\n", encoding="utf-8")  # not content: no finding
    findings = _by_code(load_content(root))
    assert set(findings) == {"C011"}
    c011 = {f.location: f for f in findings["C011"]}
    assert sorted(c011) == ["lore/old:1:1", "npcs/Mira.YAML:1:1", "npcs/notes.txt:1:1", "prompts.yaml:1:1"]
    assert all(f.severity is Severity.WARNING for f in c011.values())
    assert "sub-folders of lore/ are not read" in c011["lore/old:1:1"].message
    assert "prompt.yaml" in c011["prompts.yaml:1:1"].message


def test_c010_a_save_without_content_beside_it(tmp_path, capsys):
    save = tmp_path / "evening.json"
    shutil.copy(SAMPLES / "evening.json", save)
    play = Playthrough.open(save)
    [c010] = [f for f in play.findings if f.code == "C010"]
    assert c010.severity is Severity.WARNING
    assert "bundled sample content" in c010.message and c010.location == "content/"
    assert main(["check", str(save), "--format", "json"]) == 0  # a warning: exit 0, but said
    codes = [f["code"] for f in json.loads(capsys.readouterr().out)["files"][0]["findings"]]
    assert codes == ["C010"]


def test_c010_not_when_content_is_beside_or_given(tmp_path):
    assert not [f for f in Playthrough.open(SAMPLES / "evening.json").findings if f.code == "C010"]
    save = tmp_path / "evening.json"
    shutil.copy(SAMPLES / "evening.json", save)
    assert not [f for f in Playthrough.open(save, SAMPLES / "content").findings if f.code == "C010"]


def test_k006_a_save_slug_that_is_not_kebab_case_ascii(tmp_path):
    doc = json.loads(MINIMAL.read_text(encoding="utf-8"))
    doc["npcs"]["17"]["slug"] = "k\u0430el-davan"  # a Cyrillic a: prints like kael-davan
    save = tmp_path / "homoglyph.json"
    save.write_text(json.dumps(doc), encoding="utf-8")
    play = Playthrough.open(save, SAMPLES / "content")
    [k006] = [f for f in play.findings if f.code == "K006"]
    assert k006.severity is Severity.ERROR
    assert k006.location == "npcs.17.slug"
    assert "'k\\u0430el-davan'" in k006.message  # spelt in ASCII escapes, so it reads unlike kael-davan
    assert k006.target.stable_id == 17
    assert play.has_errors


def test_k006_not_for_a_kebab_case_slug(tmp_path):
    save = tmp_path / "minimal.json"
    shutil.copy(MINIMAL, save)
    assert not [f for f in Playthrough.open(save, SAMPLES / "content").findings if f.code == "K006"]


def test_a_recursive_alias_gets_its_own_message_not_the_tab_hint(tmp_path):
    root = _content(tmp_path)
    (root / "npcs" / "kael-davan.yaml").write_text("name: Kael\nloop: &a [*a]\n", encoding="utf-8")
    [c001] = _by_code(load_content(root))["C001"]
    assert c001.location == "npcs/kael-davan.yaml:2:7"
    assert "recursive alias" in c001.message
    assert "tab" not in c001.message


@pytest.mark.parametrize("flag", ["--content", "--content-b"])
def test_an_empty_content_flag_is_misuse(flag, tmp_path):
    args = ["diff", str(SAMPLES / "evening.json")] if flag == "--content-b" else ["check", str(SAMPLES / "evening.json")]
    # From an empty folder: read as ".", it was taken for a content folder.
    out = subprocess.run([sys.executable, "-m", "narrative_debugger.app", *args, flag, ""], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"{flag}: an empty folder name" in out.stderr and "usage:" not in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_check_no_longer_says_0_errors_for_a_skipped_file(tmp_path, capsys):
    save = tmp_path / "evening.json"
    shutil.copy(SAMPLES / "evening.json", save)
    root = tmp_path / "content"
    shutil.copytree(SAMPLES / "content", root)
    shutil.copy(root / "npcs" / "kael-davan.yaml", root / "npcs" / "kael-davan.yml")
    assert main(["check", str(save)]) == 1
    out = capsys.readouterr().out
    assert "1 error" in out and "C007" in out


@pytest.mark.parametrize("code", ["C006", "C007", "C008", "C009", "C010", "C011", "K006"])
def test_rules_explains_each_new_code(code, capsys):
    assert main(["rules", code]) == 0
    out = capsys.readouterr().out
    assert code in out and RULES[code].title in out
