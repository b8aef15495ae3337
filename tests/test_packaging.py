"""The distribution: every code folder is packaged, package data is declared, a closed pipe is quiet.

Building and installing the wheel itself is CI's job (``.ci/wheel-smoke``); these checks
catch the cheap mistakes (a new subpackage left out of pyproject) in the normal suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _package_folders() -> dict[str, Path]:
    """Installed package name -> folder, for every folder with an __init__.py under each mapped top-level folder."""
    out = {}
    for name, folder in SETUPTOOLS["package-dir"].items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder)
            out[".".join((name, *rel.parts))] = init.parent
    return out


def test_every_code_folder_is_a_listed_package():
    folders = _package_folders()
    listed = set(SETUPTOOLS["packages"])
    missing = sorted(set(folders) - listed)
    assert not missing, f"pyproject [tool.setuptools] packages lacks {missing}: they would be missing from the wheel"
    assert listed <= set(folders), f"pyproject lists packages with no folder: {sorted(listed - set(folders))}"


def test_nothing_from_tests_is_packaged():
    assert all(not folder.startswith("tests") for folder in SETUPTOOLS["package-dir"].values())
    assert not any("savegen" in name or name.endswith(".tests") for name in SETUPTOOLS["packages"])


def test_package_data_covers_the_token_tables_and_sample_campaign():
    data = SETUPTOOLS["package-data"]
    folders = _package_folders()

    def declared(package: str) -> set[Path]:
        base = folders[package]
        return {p for pattern in data[package] for p in base.glob(pattern) if p.is_file()}

    tables = declared("narrative_debugger.resources")
    assert {p.name for p in tables} == {"cl100k_base.tiktoken.gz", "o200k_base.tiktoken.gz"}
    samples = folders["narrative_debugger.sample_saves"]
    wanted = set(samples.glob("*.json")) | set((samples / "content").rglob("*.yaml"))
    assert wanted and wanted <= declared("narrative_debugger.sample_saves")
    assert not any("screenshots" in str(p) for p in tables)


def _run_into_a_closed_pipe(args: list[str]) -> subprocess.CompletedProcess:
    """Run the CLI with ``args`` writing to a pipe whose reader is already gone, with
    block-buffered stdout (PYTHONUNBUFFERED unset): stderr captured as bytes."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "narrative_debugger.app", *args],
            stdout=write_end, stderr=subprocess.PIPE, cwd=ROOT, env=env, timeout=300,
        )
    finally:
        os.close(write_end)


def test_a_closed_pipe_is_not_an_error():
    """``narrative-debugger check save | head`` style: the reader is gone before the exit flush.

    With block-buffered stdout (PYTHONUNBUFFERED unset), the one-line output of ``check``
    is only written at interpreter exit; that used to print "Exception ignored ...
    BrokenPipeError" and exit 120.
    """
    for args in (["check", "sample_saves/evening.json"], ["state", "sample_saves/evening.json"]):
        out = _run_into_a_closed_pipe(args)
        assert (out.returncode, out.stderr) == (0, b""), (args, out.stderr)


def test_a_closed_pipe_keeps_the_computed_exit_status():
    """``check qa-faults.json | true`` still exits 1 (errors found) and ``check nope.json | true``
    2 (unreadable), quietly: the closed pipe must not turn the status into 0."""
    cases = (
        (["check", "sample_saves/qa-faults.json"], 1),
        (["check", "sample_saves/qa-faults.json", "--format", "json"], 1),
        (["check", "sample_saves/no-such-save.json"], 2),
    )
    for args, status in cases:
        out = _run_into_a_closed_pipe(args)
        assert out.returncode == status, (args, out.stderr)
        assert b"Exception ignored" not in out.stderr and b"Traceback" not in out.stderr, (args, out.stderr)


def test_ci_constraints_pin_every_dependency_within_pyproject_ranges():
    """.ci/constraints.txt (what CI installs) pins each declared dependency to a version pyproject allows."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / ".ci" / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin (name==version)"
            pins[canonicalize_name(name)] = version
    project = PYPROJECT["project"]
    declared = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    for text in declared:
        req = Requirement(text)
        version = pins.get(canonicalize_name(req.name))
        assert version is not None, f"{req.name} is not pinned in .ci/constraints.txt"
        assert req.specifier.contains(version, prereleases=True), f"{req.name}=={version} is outside pyproject's {req.specifier}"


def test_pyqtgraph_internals_the_timelines_override_still_exist():
    """widgets/timelines/tracks.py overrides PlotDataItem._getDisplayDataset and reads _dataset (private):
    a pyqtgraph without them would leave the override silently dead, hence the <0.15 cap."""
    import pyqtgraph as pg

    assert callable(getattr(pg.PlotDataItem, "_getDisplayDataset", None))
    item = pg.PlotDataItem([0, 1, 2], [0, 1, 0])
    assert len(item._dataset.x) == 3
    assert "<0.15" in next(d for d in PYPROJECT["project"]["dependencies"] if d.startswith("pyqtgraph"))
