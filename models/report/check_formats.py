"""``check`` results in the formats QA's CI reads: JSON, SARIF 2.1.0, JUnit XML, GitHub annotations.

A ``FileResult`` is what ``check`` keeps of one save: its path, whether it could be
read, the content folder it was checked with and its findings (never the
playthrough, so memory does not grow with the number of files). Every format takes
its rule list from the registry (``catalogue.RULES``).

Locations: a content finding (``target.kind`` content or line, with ``file``) points
at ``content_root/file`` with ``line``/``col``; a save finding points at the save with
its JSON path as a SARIF logical location (``fullyQualifiedName``); an unparsable save
(F001) has its ``line``/``col``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_from_bytes
from xml.etree import ElementTree as ET

from narrative_debugger.models.rules.catalogue import RULES, Severity
from narrative_debugger.models.rules.findings import Finding
from narrative_debugger.models.report.sinks import github_data, github_property, one_line, sarif_message, visible, xml_chars
from narrative_debugger.models.report.json_text import dumps_indented

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "narrative-debugger"
TOOL_URI = "https://github.com/settled-reach/narrative-debugger"


@dataclass
class FileResult:
    """What ``check`` keeps of one save.

    Attributes:
        path: the save as given on the command line.
        readable: False when it could not be read at all (exit 2).
        content_root: the content folder it was checked with (content findings are relative to it).
        findings: every finding, ordered as ``Playthrough.findings``.
    """

    path: Path
    readable: bool
    content_root: Path | None
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    def to_json(self) -> dict:
        """``{"path", "findings": [...]}`` (the ``check --format json`` entry)."""
        return {"path": str(self.path), "findings": [f.to_json() for f in self.findings]}


def text_position(result: FileResult, f: Finding) -> tuple[str, int | None, int | None]:
    """``(file, line, col)`` of a finding: the content file for content, else the save."""
    t = f.target
    if t is not None and t.kind in ("content", "line") and t.file:
        base = result.content_root
        path = Path(t.file)
        return (str(path if path.is_absolute() or base is None else base / path), t.line, t.col)
    if t is not None and t.kind == "file" and t.line is not None:
        return str(result.path), t.line, t.col
    return str(result.path), None, None


def _is_save_path(result: FileResult, f: Finding) -> bool:
    t = f.target
    return not (t is not None and (t.kind in ("content", "line") and t.file or t.kind == "file" and t.line is not None))


# ----- JSON -----
class JsonStream:
    """Writes ``{"files": [...]}`` one file at a time; byte for byte ``dump_strict(doc, indent=1)`` (strict JSON)."""

    def __init__(self, out) -> None:
        self.out = out
        self.count = 0

    def add(self, result: FileResult) -> None:
        body = dumps_indented(result.to_json()).replace("\n", "\n  ")
        self.out.write(("{\n \"files\": [\n  " if self.count == 0 else ",\n  ") + body)
        self.out.flush()
        self.count += 1

    def close(self) -> None:
        self.out.write("\n ]\n}\n" if self.count else "{\n \"files\": []\n}\n")
        self.out.flush()


# ----- SARIF 2.1.0 -----
def artifact_uri(file: str | Path) -> str:
    """A SARIF ``artifactLocation.uri`` for a path (SARIF 2.1.0 §3.10, RFC 3986).

    An absolute path becomes a ``file://`` URI (``Path.as_uri``); a relative one stays
    relative (to where ``check`` ran), ``/``-separated. Both are percent-encoded from the
    path's file-system bytes (UTF-8 for non-ASCII), keeping only ``/`` and RFC 3986's
    unreserved characters, so a space, ``#``, ``%``, ``?`` or ``:`` in a folder name
    cannot end the path or read as a scheme, query or fragment.
    """
    path = Path(file)
    if path.is_absolute():
        return path.as_uri()
    return quote_from_bytes(os.fsencode(path.as_posix()), safe="/")


def sarif_rule_name(title: str) -> str:
    """A rule title as a PascalCase ``reportingDescriptor.name``: every run of letters
    and digits is a word, its first letter raised and the rest kept ("not JSON, not
    UTF-8" → ``NotJSONNotUTF8``; "walk-away" → ``WalkAway``), at most 80 characters."""
    return "".join(w[0].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9]+", title))[:80]


def sarif_rules() -> list[dict]:
    """``tool.driver.rules``: one reportingDescriptor per catalogue entry."""
    return [
        {
            "id": rule.code,
            "name": sarif_rule_name(rule.title) or rule.code,
            "shortDescription": {"text": sarif_message(rule.title)},
            "fullDescription": {"text": sarif_message(rule.checks)},
            "help": {"text": sarif_message(f"{rule.checks}\nSeed: {rule.seed}\nExample: {rule.example}\nIn the app: {rule.lands}")},
            "defaultConfiguration": {"level": rule.severity.value},
            "properties": {"seed": rule.seed, "lands": rule.lands},
        }
        for rule in RULES.values()
    ]


def sarif_result(result: FileResult, f: Finding, rule_index: dict[str, int]) -> dict:
    """One SARIF ``result``: ruleId, ruleIndex, level, message, locations, properties."""
    file, line, col = text_position(result, f)
    physical: dict = {"artifactLocation": {"uri": artifact_uri(file)}}
    if line is not None:
        physical["region"] = {"startLine": max(1, line), "startColumn": max(1, col or 1)}
    location: dict = {"physicalLocation": physical}
    if _is_save_path(result, f) and f.location:
        location["logicalLocations"] = [{"fullyQualifiedName": visible(f.location), "kind": "member"}]
    out = {
        "ruleId": f.code,
        "ruleIndex": rule_index[f.code],
        "level": f.severity.value,
        "message": {"text": sarif_message(f.message)},
        "locations": [location],
        "properties": {"tick": f.tick, "target": f.to_json()["target"]},
    }
    return out


def sarif(results: list[FileResult], version: str) -> dict:
    """A SARIF 2.1.0 log with one run for all files (rules from the catalogue)."""
    rule_index = {code: k for k, code in enumerate(RULES)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": TOOL_NAME, "version": version, "informationUri": TOOL_URI, "rules": sarif_rules()}},
                "columnKind": "unicodeCodePoints",
                "results": [sarif_result(r, f, rule_index) for r in results for f in r.findings],
            }
        ],
    }


# ----- JUnit XML -----
def junit(results: list[FileResult]) -> str:
    """JUnit XML: one testsuite per file, one testcase per rule code, a failure per error code that fired.

    A warning code that fired passes, with its findings in ``system-out``.
    """
    suites = ET.Element("testsuites", name="narrative-debugger check")
    total = failed = 0
    for r in results:
        by_code: dict[str, list[Finding]] = {}
        for f in r.findings:
            by_code.setdefault(f.code, []).append(f)
        suite = ET.SubElement(suites, "testsuite", name=str(r.path), tests=str(len(RULES)), errors="0", skipped="0")
        failures = 0
        for rule in RULES.values():
            case = ET.SubElement(suite, "testcase", classname=str(r.path), name=f"{rule.code} {rule.title}")
            fired = by_code.get(rule.code, [])
            lines = "\n".join(f"{one_line(f.location)}{f' @tick {f.tick}' if f.tick is not None else ''}: {one_line(f.message)}" for f in fired)
            if fired and rule.severity is Severity.ERROR:
                failures += 1
                failure = ET.SubElement(case, "failure", type=rule.code, message=f"{len(fired)} {rule.code} finding{'s' * (len(fired) != 1)}: {one_line(fired[0].message)}")
                failure.text = lines
            elif fired:
                ET.SubElement(case, "system-out").text = lines
        suite.set("failures", str(failures))
        total += len(RULES)
        failed += failures
    suites.set("tests", str(total))
    suites.set("failures", str(failed))
    ET.indent(suites)
    # Save text (fact ids, names, paths) may carry controls XML 1.0 forbids, in text and attributes alike.
    return '<?xml version="1.0" encoding="utf-8"?>\n' + xml_chars(ET.tostring(suites, encoding="unicode")) + "\n"


# ----- GitHub workflow annotations -----
def github_lines(result: FileResult) -> list[str]:
    """``::error file=…,line=…,col=…,title=CODE::message`` (``::warning`` for warnings), one per finding."""
    out = []
    for f in result.findings:
        file, line, col = text_position(result, f)
        props = [f"file={github_property(Path(file).as_posix())}"]
        if line is not None:
            props.append(f"line={line}")
            if col is not None:
                props.append(f"col={col}")
        props.append(f"title={f.code}")
        where = f"{f.location}: " if _is_save_path(result, f) and f.location else ""
        out.append(f"::{'error' if f.severity is Severity.ERROR else 'warning'} {','.join(props)}::{github_data(where + f.message)}")
    return out
