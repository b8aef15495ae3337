"""A large content folder is read in a second process while the save is decoded
(models/content/background.py, issue 10): the outcome is what ``load_content`` reads
here, findings included, and a child that fails changes nothing."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from narrative_debugger.models.content import background, reuse
from narrative_debugger.models.content.background import ContentInBackground, yaml_bytes
from narrative_debugger.models.content.loader import load_content
from narrative_debugger.models.playthrough import Playthrough

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_saves"


def _faulty_content(tmp_path: Path) -> Path:
    """The sample content with broken profiles: a tab in indentation, a duplicate key,
    a file name that is not a slug and a profile without a name."""
    root = tmp_path / "content"
    shutil.copytree(SAMPLES / "content", root)
    npcs = root / "npcs"
    (npcs / "tabbed.yaml").write_text("name: Tab\ntolerance:\n\tthreshold: 3\n", encoding="utf-8")
    (npcs / "twice.yaml").write_text("name: One\nname: Two\n", encoding="utf-8")
    (npcs / "Not_A_Slug.yaml").write_text("name: Odd\n", encoding="utf-8")
    (npcs / "nameless.yaml").write_text("pronouns: they\n", encoding="utf-8")
    return root


def test_the_child_reads_what_this_process_reads(tmp_path):
    for root in (SAMPLES / "content", _faulty_content(tmp_path)):
        early = ContentInBackground.start(root, 1 << 30, min_save=0, min_content=0)
        assert early is not None
        content = early.result()
        here = load_content(root)
        assert content == here
        assert [f.code for f in content.findings] == [f.code for f in here.findings]
    assert {"C001", "C002"} <= {f.code for f in here.findings}  # the faulty folder's


def test_a_failing_child_falls_back_to_reading_here(tmp_path, monkeypatch):
    monkeypatch.setattr(background, "_CHILD", "import sys; sys.stdout.write('not a pickle'); sys.exit(0)")
    early = ContentInBackground.start(SAMPLES / "content", 1 << 30, min_save=0, min_content=0)
    assert early is not None and early.result() == load_content(SAMPLES / "content")
    monkeypatch.setattr(background, "_CHILD", "raise SystemExit(3)")
    early = ContentInBackground.start(SAMPLES / "content", 1 << 30, min_save=0, min_content=0)
    assert early is not None and early.result() == load_content(SAMPLES / "content")


def test_no_child_where_it_would_not_pay_or_cannot_run(tmp_path, monkeypatch):
    content = SAMPLES / "content"
    assert ContentInBackground.start(content, 10_000) is None  # a small save
    assert ContentInBackground.start(content, 1 << 30) is None  # a small folder (14 files)
    assert ContentInBackground.start(tmp_path / "missing", 1 << 30, min_save=0, min_content=0) is None
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert ContentInBackground.start(content, 1 << 30, min_save=0, min_content=0) is None


def test_yaml_bytes_counts_yaml_files_only_and_stops_early(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.yaml").write_bytes(b"k: v\n" * 10)
    (tmp_path / "b.yml").write_bytes(b"k: v\n" * 4)
    (tmp_path / "c.txt").write_bytes(b"z" * 1000)
    assert yaml_bytes(tmp_path, 1 << 30) == 70
    assert yaml_bytes(tmp_path, 1) == 20  # stops after the folder where it got there: a/ is never read
    assert yaml_bytes(tmp_path / "missing", 100) == 0


def test_an_open_with_the_child_equals_one_without(monkeypatch):
    alone = Playthrough.open(SAMPLES / "qa-faults.json", SAMPLES / "content")
    started = []
    real = ContentInBackground.start.__func__

    def spy(cls, root, save_bytes, **kw):
        early = real(cls, root, save_bytes, min_save=0, min_content=0)
        started.append(early)
        return early

    monkeypatch.setattr(ContentInBackground, "start", classmethod(spy))
    reuse.forget_content()  # else the second open reuses what the first read, with no child
    both = Playthrough.open(SAMPLES / "qa-faults.json", SAMPLES / "content")
    assert started and started[0] is not None
    assert both.content == alone.content
    assert [(f.code, f.message, f.location) for f in both.findings] == [(f.code, f.message, f.location) for f in alone.findings]
