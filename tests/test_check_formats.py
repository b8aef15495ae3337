"""``check`` for QA's CI: SARIF 2.1.0, JUnit XML, GitHub annotations, --jobs, --version, and ``rules``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from narrative_debugger.app.cli.main import main
from narrative_debugger.models.rules.catalogue import RULES, Severity

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_saves"
QA = SAMPLES / "qa-faults.json"
EVENING = SAMPLES / "evening.json"


def run(capsys, *args: str) -> tuple[int, str]:
    status = main([*args])
    return status, capsys.readouterr().out


@pytest.fixture(scope="module")
def broken_content(tmp_path_factory) -> Path:
    """The sample content with one monologue pool that does not parse (C001 at a line:col)."""
    root = tmp_path_factory.mktemp("content") / "content"
    shutil.copytree(SAMPLES / "content", root)
    (root / "monologues" / "zz-broken.yaml").write_text("- id: broken_line\n  text: [unclosed\n")
    return root


def _qa_codes() -> dict[str, Severity]:
    from narrative_debugger.models.playthrough import Playthrough

    return {f.code: f.severity for f in Playthrough.open(QA).findings}


def test_sarif_has_what_sarif_2_1_0_requires(capsys, broken_content):
    status, out = run(capsys, "check", str(QA), str(EVENING), "--content", str(broken_content), "--format", "sarif")
    assert status == 1
    log = json.loads(out)
    assert log["$schema"].endswith("sarif-2.1.0.json")
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1
    run_ = log["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "narrative-debugger"
    assert [r["id"] for r in driver["rules"]] == list(RULES)
    assert all(r["shortDescription"]["text"] and r["defaultConfiguration"]["level"] in ("error", "warning") for r in driver["rules"])
    results = run_["results"]
    assert results
    for res in results:
        assert res["ruleId"] in RULES
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] == RULES[res["ruleId"]].severity.value
        assert res["message"]["text"]
        assert res["locations"] and res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    # a save finding: the save plus its JSON path as a logical location
    i008 = next(r for r in results if r["ruleId"] == "I008")
    assert i008["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("qa-faults.json")
    assert i008["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "player.knowledge.facts.interaction.lera-sessik_001.confidence"
    # a content finding: the file with line and column
    c001 = next(r for r in results if r["ruleId"] == "C001")
    loc = c001["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("monologues/zz-broken.yaml")
    assert loc["region"]["startLine"] >= 1 and loc["region"]["startColumn"] >= 1
    assert "logicalLocations" not in c001["locations"][0]


def test_sarif_uri_is_percent_encoded_for_spaces_hash_percent_query_and_non_ascii(capsys, tmp_path, monkeypatch):
    """A save in "play test #1 %/ü?" gives RFC 3986 URI references (SARIF 2.1.0 §3.10):
    relative as given, absolute as file:// URIs, both decoding back to the path."""
    from urllib.parse import unquote, urlsplit

    folder = tmp_path / "play test #1 %" / "ü?"
    folder.mkdir(parents=True)
    save = folder / "qa faults.json"
    shutil.copy(QA, save)
    monkeypatch.chdir(tmp_path)
    status, out = run(capsys, "check", "play test #1 %/ü?/qa faults.json", str(save), "--format", "sarif")
    assert status == 1
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(out)["runs"][0]["results"]}
    relative = "play%20test%20%231%20%25/%C3%BC%3F/qa%20faults.json"
    assert uris == {relative, save.as_uri()}
    absolute = save.as_uri()
    assert absolute.startswith("file:///") and absolute.endswith("/play%20test%20%231%20%25/%C3%BC%3F/qa%20faults.json")
    for uri in uris:
        assert re.fullmatch(r"[A-Za-z0-9\-._~/:%]+", uri), uri
        parts = urlsplit(uri)
        assert parts.query == "" and parts.fragment == ""
    assert unquote(urlsplit(absolute).path) == str(save)
    assert unquote(relative) == "play test #1 %/ü?/qa faults.json" and urlsplit(relative).scheme == ""


def test_junit_one_suite_per_file_one_case_per_code_failures_for_error_codes(capsys):
    status, out = run(capsys, "check", str(QA), str(EVENING), "--format", "junit")
    assert status == 1
    root = ET.fromstring(out)
    suites = root.findall("testsuite")
    assert [Path(s.get("name")).name for s in suites] == ["qa-faults.json", "evening.json"]
    fired = _qa_codes()
    for suite, expected in zip(suites, (fired, {}), strict=True):
        cases = suite.findall("testcase")
        assert [c.get("name").split()[0] for c in cases] == list(RULES)
        failed = {c.get("name").split()[0] for c in cases if c.find("failure") is not None}
        assert failed == {code for code, sev in expected.items() if sev is Severity.ERROR}
        assert int(suite.get("failures")) == len(failed)
        assert int(suite.get("tests")) == len(RULES)
    warned = next(c for c in suites[0].findall("testcase") if c.get("name").startswith("K004"))
    assert warned.find("failure") is None and "acquired_tick" in warned.find("system-out").text


def test_github_annotations(capsys, broken_content):
    status, out = run(capsys, "check", str(QA), "--content", str(broken_content), "--format", "github")
    assert status == 1
    lines = out.splitlines()
    assert lines and all(line.startswith(("::error ", "::warning ")) for line in lines)
    assert any(line.startswith("::warning ") and "title=K004::" in line for line in lines)
    r002 = next(line for line in lines if "title=R002::" in line)
    assert r002.startswith("::error file=") and "qa-faults.json" in r002 and "journal[2983]" in r002
    c001 = next(line for line in lines if "title=C001::" in line)
    assert "zz-broken.yaml,line=" in c001 and ",col=" in c001


def test_jobs_gives_the_same_json_and_status(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "settled-reach.save", "journal": [')
    files = [str(QA), str(EVENING), str(bad), str(SAMPLES / "walkaway-spiral.json")]

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "narrative_debugger.app", "check", *files, "--format", "json", *args],
                              capture_output=True, text=True, timeout=600)

    one, two = cli(), cli("--jobs", "2")
    assert one.returncode == two.returncode == 2, one.stderr + two.stderr
    assert one.stdout == two.stdout
    doc = json.loads(one.stdout)
    assert [Path(f["path"]).name for f in doc["files"]] == ["qa-faults.json", "evening.json", "broken.json", "walkaway-spiral.json"]


def test_json_stream_is_json_dump_indent_1(capsys):
    _, out = run(capsys, "check", str(QA), str(EVENING), "--format", "json")
    doc = json.loads(out)
    assert out == json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def test_jobs_must_be_positive(capsys):
    assert main(["check", str(EVENING), "--jobs", "0"]) == 2


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("narrative-debugger ")


def test_rules_lists_and_explains(capsys):
    status, out = run(capsys, "rules", "--format", "json")
    assert status == 0
    rules = json.loads(out)["rules"]
    assert [r["code"] for r in rules] == list(RULES)
    assert set(rules[0]) >= {"code", "severity", "title", "checks", "seed", "example", "lands", "implementations"}
    status, out = run(capsys, "rules", "k003")
    assert status == 0
    assert out.startswith("K003 (error):") and "schema §3.1" in out and "checks.py:" in out and "Snapshot" in out
    assert main(["rules", "Z999"]) == 2


def test_junit_stays_well_formed_with_control_characters_from_a_save():
    """A fact id with U+0001 (and a save name with U+001B) is not allowed in XML 1.0: JUnit escapes it."""
    from narrative_debugger.models.report.check_formats import FileResult, junit
    from narrative_debugger.models.rules.findings import Finding

    code = next(c for c, rule in RULES.items() if rule.severity is Severity.ERROR)
    finding = Finding(code=code, severity=Severity.ERROR, message="fact bad\x01id is unknown", location="journal[0].event.fact\x01id", tick=5)
    out = junit([FileResult(Path("odd\x1bname.json"), True, None, [finding])])
    root = ET.fromstring(out)  # raises ParseError on a raw control character
    suite = root.find("testsuite")
    assert suite.get("name") == "odd\\u001bname.json"
    failure = next(c.find("failure") for c in suite.findall("testcase") if c.find("failure") is not None)
    assert "bad\\u0001id" in failure.get("message") and "fact\\u0001id" in failure.text


def test_sarif_rule_names_keep_every_word_of_the_title():
    # Words with punctuation were dropped: F001 was "NotNotGzipOrNot", K001 "FactidIsNot".
    from narrative_debugger.models.report.check_formats import sarif_rule_name, sarif_rules

    assert sarif_rule_name("not JSON, not gzip or not UTF-8") == "NotJSONNotGzipOrNotUTF8"
    assert sarif_rule_name("FactId is not category.topic") == "FactIdIsNotCategoryTopic"
    assert sarif_rule_name("walk-away without its walk_away stress change") == "WalkAwayWithoutItsWalkAwayStressChange"
    names = {r["id"]: r["name"] for r in sarif_rules()}
    assert names["F001"] == "NotJSONNotGzipOrNotUTF8" and names["C002"] == "NPCProfileWithoutANameOrAFileNameThatIsNotASlug"
    assert len(set(names.values())) == len(names)
    assert all(re.fullmatch(r"[A-Z][A-Za-z0-9]{0,79}", n) for n in names.values()), names
