"""Content values and files that were dropped without a word (issue 35, "no silent fallbacks").

A profile's ``tolerance.threshold`` written as ``３０``, ``٣٠``, ``3_0``, ``.nan`` or
``0x1e`` was ignored; a ``context_token_budget: 0x2000`` was read as 8192 (YAML 1.1 hex);
a content folder without ``prompt.yaml`` (or with an empty one) or without NPC profiles
passed ``check`` with "0 errors, 0 warnings"; an unreadable ``--content`` folder gave a
C006 for every sub-folder it only guessed at. Every test builds real files in ``tmp_path``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.boundary import I16, U64, ConversionError, check_int
from narrative_debugger.models.content import files as content_files
from narrative_debugger.models.content.loader import DEFAULT_BUDGET, load_content
from narrative_debugger.models.rules.catalogue import RULES, Severity

from tests.support.files import write_enums

PROMPT = "narrator_prompt: You voice the Reach.\nai_instructions: Stay in character.\ncontext_token_budget: 2048\n"


def _content(tmp_path: Path, threshold: str = "40", prompt: str | None = PROMPT) -> Path:
    root = tmp_path / "content"
    (root / "npcs").mkdir(parents=True)
    if prompt is not None:
        (root / "prompt.yaml").write_text(prompt, encoding="utf-8")
    (root / "npcs" / "kael-davan.yaml").write_text(
        f"name: Kael Davan\ntolerance:\n  threshold: {threshold}\n", encoding="utf-8")
    return write_enums(root)  # without them, C012s


def test_a_clean_folder_reads_the_threshold_and_the_budget(tmp_path):
    content = load_content(_content(tmp_path))
    assert content.findings == []
    assert content.npcs["kael-davan"].threshold == 40
    assert content.prompt.context_token_budget == 2048


@pytest.mark.parametrize("written, shown", [
    ("３０", "'３０'"),       # full-width digits
    ("٣٠", "'٣٠'"),          # Arabic-Indic digits
    ("3_0", "'3_0'"),
    (".nan", "nan"),
    ("0x1e", "'0x1e'"),       # hex: text, not 30
    ("0o36", "'0o36'"),
    ("1e3", "1000.0"),
    ("30.5", "30.5"),
    ('"30"', "'30'"),
    ("40000", "40000"),       # past i16
])
def test_a_threshold_that_is_not_a_decimal_i16_is_a_c001_at_its_place(tmp_path, written, shown):
    content = load_content(_content(tmp_path, threshold=written))
    [c001] = [f for f in content.findings if f.code == "C001"]
    assert c001.location == "npcs/kael-davan.yaml:3:3"
    assert c001.severity is Severity.ERROR
    assert f"tolerance.threshold must be a whole number -32768..32767 in digits 0-9: {shown} is not an i16: " in c001.message
    assert content.npcs["kael-davan"].threshold is None  # ignored, and said so
    assert content.npcs["kael-davan"].name == "Kael Davan"  # the rest of the profile is kept


def test_a_tolerance_that_is_not_a_mapping_is_a_c001(tmp_path):
    root = _content(tmp_path)
    (root / "npcs" / "kael-davan.yaml").write_text("name: Kael Davan\ntolerance: 40\n", encoding="utf-8")
    [c001] = load_content(root).findings
    assert c001.code == "C001" and c001.location == "npcs/kael-davan.yaml:2:1" and "tolerance must be a mapping" in c001.message


@pytest.mark.parametrize("written, why", [
    ("0x2000", "'x' (U+0078) is not an ASCII digit 0-9"),
    ("0o20000", "'o' (U+006F) is not an ASCII digit 0-9"),
    ("0b10", "'b' (U+0062) is not an ASCII digit 0-9"),
    ("2:16:32", "':' (U+003A) is not an ASCII digit 0-9"),  # YAML 1.1 sexagesimal
    ("８１９２", "'８' (U+FF18) is not an ASCII digit 0-9"),
    ("8_192", "'_' is not an ASCII digit 0-9"),
    ('"8192"', "it is quoted text, not a number"),
    ("1e3", "it is not a whole number"),
    (".inf", "it is not a finite number"),
    ("0", "found 0"),
])
def test_a_budget_that_is_not_decimal_ascii_is_a_c001_and_the_default(tmp_path, written, why):
    root = _content(tmp_path, prompt=f"narrator_prompt: Hi.\ncontext_token_budget: {written}\n")
    content = load_content(root)
    [c001] = content.findings
    assert c001.code == "C001" and c001.location == "prompt.yaml:2:1"
    assert why in c001.message and f"using {DEFAULT_BUDGET}" in c001.message
    assert content.prompt.context_token_budget == DEFAULT_BUDGET
    assert content.prompt.narrator_prompt == "Hi."  # the rest of prompt.yaml is kept


def test_check_int_is_the_one_conversion():
    assert check_int(2**64 - 1, U64) == 2**64 - 1 and check_int(-5, I16) == -5
    for value in (True, None, [1], 2**64, -1):
        with pytest.raises(ConversionError):
            check_int(value, U64)


@pytest.mark.parametrize("case", ["missing", "empty", "comments"])
def test_c012_prompt_yaml_missing_or_empty(tmp_path, case, capsys):
    root = _content(tmp_path, prompt={"missing": None, "empty": "", "comments": "# to do\n"}[case])
    content = load_content(root)
    [c012] = content.findings
    assert c012.code == "C012" and c012.severity is Severity.WARNING
    assert c012.location == "prompt.yaml:1:1" and c012.target.kind == "file"
    assert ("is missing" if case == "missing" else "is empty") in c012.message
    assert "no narrator prompt, AI instructions or campaign canon" in c012.message and "8192" in c012.message


@pytest.mark.parametrize("case", ["no folder", "empty folder"])
def test_c012_no_npc_profiles(tmp_path, case):
    root = _content(tmp_path)
    (root / "npcs" / "kael-davan.yaml").unlink()
    if case == "no folder":
        (root / "npcs").rmdir()
    [c012] = load_content(root).findings
    assert c012.code == "C012" and c012.location == "npcs:1:1" and c012.target.kind == "file"
    assert ("npcs/ is missing" if case == "no folder" else "npcs/ holds no NPC profile") in c012.message


def test_c012_not_when_npcs_has_a_finding_of_its_own(tmp_path):
    root = _content(tmp_path)
    (root / "npcs" / "kael-davan.yaml").rename(root / "npcs" / "kael-davan.txt")
    assert [f.code for f in load_content(root).findings] == ["C011"]


def test_check_no_longer_says_0_warnings_for_a_folder_without_prompt(tmp_path, capsys):
    root = _content(tmp_path, prompt=None)
    save = Path(__file__).resolve().parent / "data" / "minimal.json"
    assert main(["check", str(save), "--content", str(root)]) in (0, 1)
    out = capsys.readouterr().out
    assert "C012" in out and "0 warnings" not in out


def test_an_unlistable_content_folder_is_one_c006(tmp_path, monkeypatch):
    root = _content(tmp_path)
    tried = []
    real_scandir = os.scandir

    def scandir(path):
        tried.append(os.fspath(path))
        if os.fspath(path) == os.fspath(root):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(content_files.os, "scandir", scandir)
    content = load_content(root)
    assert [(f.code, f.location) for f in content.findings] == [("C006", ".:1:1")]
    assert tried == [os.fspath(root)]  # its sub-folders were not tried, nor reported
    assert content.npcs == {}


def test_rules_explains_c012(capsys):
    assert main(["rules", "C012"]) == 0
    out = capsys.readouterr().out
    assert "C012" in out and RULES["C012"].title in out


def test_check_content_unlistable_says_c006_once_and_guesses_nothing(tmp_path, monkeypatch, capsys):
    root = _content(tmp_path)
    real_scandir = os.scandir

    def scandir(path):
        if os.fspath(path) == os.fspath(root):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(content_files.os, "scandir", scandir)
    save = Path(__file__).resolve().parent / "data" / "minimal.json"
    assert main(["check", str(save), "--content", str(root)]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("C006") == 1 and "the content folder cannot be listed (Permission denied)" in captured.out
    for folder in ("global", "npcs", "lore", "monologues"):
        assert f"{folder}/ cannot be listed" not in captured.out
    assert "C012" not in captured.out  # nothing is known to be missing


def test_no_guess_about_a_folder_that_cannot_be_listed(tmp_path, monkeypatch):
    """A folder that cannot be listed is C006's (its entries would read as absent to a
    non-root user: "has none of prompt.yaml, ...: is it a content folder?" was a guess)."""
    from narrative_debugger.models.content.loader import not_content_reason

    empty = tmp_path / "empty"
    empty.mkdir()
    assert "is it a content folder?" in not_content_reason(empty)
    real_scandir = os.scandir

    def scandir(path):
        if os.fspath(path) == os.fspath(empty):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(content_files.os, "scandir", scandir)
    assert not_content_reason(empty) is None


@pytest.mark.parametrize("written, why", [
    ("0", "it is below 1"),
    ("0x2", "'x' (U+0078) is not an ASCII digit 0-9"),
    ("２", "'２' (U+FF12) is not an ASCII digit 0-9"),
    ("2.0", "it is not a whole number"),
])
def test_a_min_count_that_is_not_a_decimal_count_is_a_c003(tmp_path, written, why):
    root = _content(tmp_path)
    (root / "monologues").mkdir()
    (root / "monologues" / "pool.yaml").write_text(
        "- id: after-kael\n  text: Kael noticed.\n  prerequisites:\n"
        f"    interaction: {{target: 'npc:kael-davan', state: walked_away, min_count: {written}}}\n", encoding="utf-8")
    content = load_content(root)
    [c003] = content.findings
    assert c003.code == "C003" and c003.location.startswith("monologues/pool.yaml:4:") and why in c003.message


# The enum files (issue 35): without global/enums/topics.yaml, I009 was skipped, and
# without fact_categories.yaml C004 knew only the saves' categories, under "0 warnings".

TOPICS, CATEGORIES = "global/enums/topics.yaml", "global/enums/fact_categories.yaml"


@pytest.mark.parametrize("rel, names", [(TOPICS, "I009 is skipped"), (CATEGORIES, "C004 knows no others")])
def test_c012_an_enum_file_missing_names_the_check_it_leaves_undone(tmp_path, rel, names):
    root = _content(tmp_path)
    (root / rel).unlink()
    [c012] = load_content(root).findings
    assert c012.code == "C012" and c012.severity is Severity.WARNING
    assert c012.location == f"{rel}:1:1" and c012.target.kind == "file" and c012.target.file == rel
    assert c012.message.startswith(f"{rel} is missing: ") and names in c012.message


def test_c012_no_global_folder_is_one_c012_per_enum_file(tmp_path):
    root = _content(tmp_path)
    for rel in (TOPICS, CATEGORIES):
        (root / rel).unlink()
    (root / "global" / "enums").rmdir()
    (root / "global").rmdir()
    assert [(f.code, f.location) for f in load_content(root).findings] == [
        ("C012", f"{TOPICS}:1:1"), ("C012", f"{CATEGORIES}:1:1")]


@pytest.mark.parametrize("text", ["", "# to do\n", "[]\n", "topics: []\n"])
def test_c012_an_enum_file_that_lists_no_id(tmp_path, text):
    root = _content(tmp_path)
    (root / TOPICS).write_text(text, encoding="utf-8")
    content = load_content(root)
    [c012] = content.findings
    assert (c012.code, c012.location) == ("C012", f"{TOPICS}:1:1")
    assert c012.message == f"{TOPICS} lists no id: interaction topics are not checked against a list (I009 is skipped)"
    assert content.topics == frozenset()


def test_no_c012_when_both_enum_files_are_there(tmp_path):
    content = load_content(_content(tmp_path))
    assert "C012" not in {f.code for f in content.findings}
    assert "cargo" in content.topics and "contraband" in content.fact_categories


def test_no_c012_for_an_enum_file_that_cannot_be_parsed(tmp_path):
    """Its C001 already says the list was not read."""
    root = _content(tmp_path)
    (root / TOPICS).write_text("- cargo\n- [unclosed\n", encoding="utf-8")
    assert [f.code for f in load_content(root).findings] == ["C001"]


@pytest.mark.parametrize("unlistable", [".", "global/enums"])
def test_no_c012_for_enum_files_in_a_folder_that_cannot_be_listed(tmp_path, monkeypatch, unlistable):
    """Nothing is known to be missing there: C006 alone says what was not read."""
    root = _content(tmp_path)
    real_scandir = os.scandir

    def scandir(path):
        if os.path.normpath(os.fspath(path)) == os.path.normpath(os.path.join(root, unlistable)):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(content_files.os, "scandir", scandir)
    assert [(f.code, f.location) for f in load_content(root).findings] == [("C006", f"{unlistable}:1:1")]


def test_check_says_the_topics_go_unchecked_instead_of_0_warnings(tmp_path, capsys):
    """Without topics.yaml no interaction topic is checked (no I009 can come), and
    ``check`` says so rather than "0 errors, 0 warnings"; a warning is no error (exit 0)."""
    root = _content(tmp_path)
    (root / TOPICS).unlink()
    save = Path(__file__).resolve().parent / "data" / "minimal.json"
    assert main(["check", str(save), "--content", str(root)]) == 0
    out = capsys.readouterr().out
    assert "0 errors, 1 warning\n" in out
    assert f"C012  {TOPICS}:1:1" in out and "I009 is skipped" in out


def test_rules_c012_names_the_enum_files_and_the_checks_they_feed(capsys):
    assert main(["rules", "C012"]) == 0
    out = capsys.readouterr().out
    assert "topics.yaml" in out and "fact_categories.yaml" in out and "I009" in out and "C004" in out
