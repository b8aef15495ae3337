"""The command line's golden files: what ``check``, ``state``, ``why``, ``diff`` and
``prompt`` print as JSON, captured before the core is rewritten into columns (issue 37,
"Correctness is not traded"), so that a rewrite can show its output stays byte-identical.

Every case runs in a *workspace*: a temporary folder that ``build_workspace`` fills with
copies of the sample saves and their content, a few saves from the generator
(``tests/support/savegen``, fixed seeds) and bad saves made from ``tests/data/minimal.json``.
The commands run in process (``app.cli.main.main``) with the workspace as the current
folder and every path given relative to it, so no output holds the folder the repository
was cloned into (``write_cli_goldens`` refuses one that does).

Files, under ``tests/data/golden/cli/``:

- ``cases.json``: one line per case, ``name: {"argv", "status", "stdout", "stderr"}``:
  the arguments, the exit status, where stdout is kept and stderr's text.
- ``<name>.json``: a case's stdout, byte for byte, as plain UTF-8 text (``stdout`` is that
  file's name; None when the command printed nothing). Every output is kept whole: one
  over ``SIZE_LIMIT`` bytes is refused (choose a smaller case), so the folder stays small.

``tests/test_cli_golden.py`` runs every case and compares; ``make golden`` writes them.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_saves"
DATA = ROOT / "tests" / "data"
CLI_GOLDEN = DATA / "golden" / "cli"
MANIFEST = CLI_GOLDEN / "cases.json"
#: The largest output a case may have, in bytes (the largest today is about 110 KB).
SIZE_LIMIT = 256 * 1024

#: The sample saves, in the workspace's ``sample_saves/`` with their ``content/``.
SAMPLE_SAVES = ("evening.json", "walkaway-spiral.json", "abandoned-confrontation.json", "qa-faults.json")
CONTENT = "sample_saves/content"


@dataclass(frozen=True)
class Generated:
    """A generated save: its scenario, journal entries, seed, NPCs (None: the sample
    content's six; more: ``crowd_content``), and whether the QA faults are planted."""

    scenario: str
    events: int
    seed: int
    npcs: int | None = None
    faults: bool = False

    @property
    def content(self) -> str:
        return f"generated/crowd-{self.npcs}" if self.npcs else CONTENT


GENERATED = {
    "evening-s5.json": Generated("evening", 3000, 5),
    "spiral-s4.json.gz": Generated("walkaway-spiral", 1500, 4),
    "crowd12-s9.json": Generated("evening", 3000, 9, npcs=12),
    "faults-s23.json": Generated("evening", 2500, 23, faults=True),
}
#: Two runs of one seed that part ways after ``at`` entries (``generate_fork``).
FORK = {"a": "fork-a.json", "b": "fork-b.json", "events": 2000, "seed": 13, "at": 1000, "fork_seed": 14}
#: The sample content with Sera's weather line needing nine finished conversations (README, diff).
STRICTER_CONTENT = "stricter-content"


def _bad_saves() -> dict[str, bytes]:
    """Bad saves, each a small change to ``tests/data/minimal.json`` (the kinds
    tests/test_cli_hostile.py and tests/test_bad_input.py use)."""
    raw = (DATA / "minimal.json").read_bytes()
    doc = json.loads(raw)
    cut = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=cut, mtime=0) as packed:
        packed.write(raw)
    return {
        "empty.json": b"",
        "null.json": b"null",
        "truncated.json": raw[:300],
        "bom.json": b"\xef\xbb\xbf" + raw,
        "nan.json": raw.replace(b'"score": 0.0', b'"score": NaN'),
        "dup-key.json": raw.replace(b'"game_version": "0.7.2"', b'"game_version": "0.7.2", "game_version": "0.7.3"'),
        "bad-shapes.json": json.dumps({**doc, "npcs": [], "journal": {}, "player": None}).encode(),
        "u64-overflow.json": raw.replace(b'"saved_at_tick": 170', b'"saved_at_tick": 18446744073709551616'),
        "u8.json": raw.replace(b'"walk_away_threshold": 2', b'"walk_away_threshold": 300'),
        "i16.json": raw.replace(b'"current_stress": 6, "threshold"', b'"current_stress": 60000, "threshold"'),
        "overflow.json": raw.replace(b'"score": 0.0', b'"score": -1e400'),
        "long-sequence.json": raw.replace(b"kael-davan_001", b"kael-davan_" + b"1" * 5000),
        "utf16.json": raw.decode("utf-8").encode("utf-16-le"),
        "cut.json.gz": cut.getvalue()[:-10],
        "wrong-format.json": raw.replace(b"settled-reach.save", b"other.save"),
    }


def build_workspace(where: Path) -> Path:
    """Fill the folder ``where`` (made if needed) with every file the cases read; returns it.

    Layout: ``sample_saves/`` (the four sample saves and ``content/``),
    ``generated/`` (``GENERATED``, the fork pair, ``crowd-N/`` content folders),
    ``stricter-content/`` and ``bad/``. The same call writes the same bytes.
    """
    from tests.support.savegen.crowd import crowd_content
    from tests.support.savegen.generator import generate_fork, generate_save, inject_faults, write_save

    where = Path(where)
    samples = where / "sample_saves"
    samples.mkdir(parents=True, exist_ok=True)
    for name in SAMPLE_SAVES:
        shutil.copyfile(SAMPLES / name, samples / name)
    shutil.copytree(SAMPLES / "content", samples / "content", ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    stricter = where / STRICTER_CONTENT
    shutil.copytree(samples / "content", stricter, dirs_exist_ok=True)
    lines = stricter / "monologues" / "harbor-nights.yaml"
    lines.write_text(lines.read_text(encoding="utf-8").replace("min_count: 2", "min_count: 9", 1), encoding="utf-8")

    generated = where / "generated"
    generated.mkdir(exist_ok=True)
    for name, spec in GENERATED.items():
        content = crowd_content(spec.npcs, where / spec.content) if spec.npcs else samples / "content"
        doc = generate_save(seed=spec.seed, events=spec.events, scenario=spec.scenario, content_dir=content)
        if spec.faults:
            inject_faults(doc, content)
        write_save(doc, generated / name)
    doc_a, doc_b, _ = generate_fork(seed=FORK["seed"], events=FORK["events"], fork_at=FORK["at"], fork_seed=FORK["fork_seed"])
    write_save(doc_a, generated / FORK["a"])
    write_save(doc_b, generated / FORK["b"])

    bad = where / "bad"
    bad.mkdir(exist_ok=True)
    for name, data in _bad_saves().items():
        (bad / name).write_bytes(data)
    return where


def _read_doc(path: Path) -> dict:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data)


def _slug(text: str) -> str:
    """A case name part that is a portable file name."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)


def _save_cases(label: str, rel: str, content: str, doc: dict) -> list[tuple[str, list[str]]]:
    """``check``, ``state`` at three ticks, ``why`` and ``prompt`` for one readable save."""
    end = doc["saved_at_tick"]
    mid = end // 2
    slugs = [npc["slug"] for npc in doc["npcs"].values()]
    first, last = sorted(slugs)[0], sorted(slugs)[-1]
    npc = "kael-davan" if "kael-davan" in slugs else first
    facts = sorted(doc["player"]["knowledge"]["facts"])
    plain = next((f for f in facts if not f.startswith("interaction.")), None)
    meeting = next((f for f in facts if f.startswith(f"interaction.{npc}_")), None)
    c = ["--content", content]
    j = ["--format", "json"]
    cases = [(f"{label}.check", ["check", rel, *c, *j])]
    cases += [(f"{label}.state.t{t}", ["state", rel, "--tick", str(t), *c, *j]) for t in (0, mid, end)]
    whys = [(f"npc:{npc}.score", None), (f"npc:{npc}.stress", mid), (f"npc:{npc}.level", None), (f"npc:{first}.walk_aways", mid),
            ("line:the-last-shift_m_s_090", mid), (f"history:{npc}", None)]
    whys += [(f"fact:{fact}", None) for fact in (plain, meeting) if fact]
    for target, tick in whys:
        at = [] if tick is None else ["--tick", str(tick)]
        cases.append((f"{label}.why.{_slug(target)}" + (f".t{tick}" if tick is not None else ""), ["why", rel, target, *at, *c, *j]))
    prompts = [(npc, mid, None), (npc, end, None), (last, end, "o200k_base")]
    prompts += [(first, end, None)] if first not in (npc, last) else []  # a crowd's added NPC
    for slug, tick, encoding in prompts:
        enc = [] if encoding is None else ["--encoding", encoding]
        name = f"{label}.prompt.{slug}.t{tick}" + (f".{encoding}" if encoding else "")
        cases.append((name, ["prompt", rel, "--npc", slug, "--tick", str(tick), *enc, *c, *j]))
    return cases


def cli_cases(workspace: Path) -> list[tuple[str, list[str]]]:
    """Every case as ``(name, argv)``, in order; ``argv`` is relative to ``workspace``
    (made by ``build_workspace``), whose saves give the ticks, NPCs and facts asked about."""
    workspace = Path(workspace)
    cases: list[tuple[str, list[str]]] = []
    for name in SAMPLE_SAVES:
        rel = f"sample_saves/{name}"
        cases += _save_cases(Path(name).stem, rel, CONTENT, _read_doc(workspace / rel))
    cases += [
        ("evening.why.card-kael-davan-night-boats.t33548",
         ["why", "sample_saves/evening.json", "card:kael-davan/night-boats", "--tick", "33548", "--content", CONTENT, "--format", "json"]),
        ("evening.why.line-harbor-nights_m_s_020.t22075",
         ["why", "sample_saves/evening.json", "line:harbor-nights_m_s_020", "--tick", "22075", "--content", CONTENT, "--format", "json"]),
    ]
    for name, spec in GENERATED.items():
        rel = f"generated/{name}"
        cases += _save_cases("gen-" + name.split(".")[0], rel, spec.content, _read_doc(workspace / rel))
    j = ["--format", "json"]
    fork_a, fork_b = f"generated/{FORK['a']}", f"generated/{FORK['b']}"
    middle = min(_read_doc(workspace / fork_a)["saved_at_tick"], _read_doc(workspace / fork_b)["saved_at_tick"]) // 2
    cases += [
        ("diff.evening-vs-walkaway-spiral", ["diff", "sample_saves/evening.json", "sample_saves/walkaway-spiral.json", "--content", CONTENT, *j]),
        ("diff.evening-vs-itself", ["diff", "sample_saves/evening.json", "sample_saves/evening.json", "--content", CONTENT, *j]),
        ("diff.qa-faults-vs-evening.t100000", ["diff", "sample_saves/qa-faults.json", "sample_saves/evening.json", "--tick", "100000", "--content", CONTENT, *j]),
        ("diff.evening-stricter-content", ["diff", "sample_saves/evening.json", "--content", CONTENT, "--content-b", STRICTER_CONTENT, *j]),
        ("diff.gen-fork", ["diff", fork_a, fork_b, "--content", CONTENT, *j]),
        (f"diff.gen-fork.t{middle}", ["diff", fork_a, fork_b, "--tick", str(middle), "--content", CONTENT, *j]),
        ("check.all-samples", ["check", *(f"sample_saves/{n}" for n in SAMPLE_SAVES), "--content", CONTENT, *j]),
    ]
    for name in _bad_saves():
        rel = f"bad/{name}"
        label = "bad-" + name.split(".")[0]
        cases += [
            (f"{label}.check", ["check", rel, "--content", CONTENT, *j]),
            (f"{label}.state", ["state", rel, "--content", CONTENT, *j]),
            (f"{label}.why", ["why", rel, "npc:kael-davan.stress", "--content", CONTENT, *j]),
            (f"{label}.prompt", ["prompt", rel, "--npc", "kael-davan", "--content", CONTENT, *j]),
        ]
    return cases


def run_cli(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run the command line in this process from the folder ``cwd``; returns
    ``(exit status, stdout, stderr)``."""
    from narrative_debugger.app.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = main(list(argv))
            except SystemExit as exc:  # argparse's usage errors
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(here)
    return status, out.getvalue(), err.getvalue()


def write_cli_goldens(workspace: Path) -> int:
    """Run every case in ``workspace`` and write ``CLI_GOLDEN`` anew (files of cases
    that are gone are removed); returns the number of cases.

    Raises:
        RuntimeError: when an output names the workspace or the repository by its
            absolute path (the golden would then hold the machine's folders), or is
            larger than ``SIZE_LIMIT``.
    """
    entries: dict[str, dict] = {}
    outputs: dict[str, str] = {}
    for name, argv in cli_cases(workspace):
        status, stdout, stderr = run_cli(argv, workspace)
        for place in {str(Path(workspace).resolve()), str(workspace), str(ROOT)}:
            if place in stdout or place in stderr:
                raise RuntimeError(f"the output of {name} names the folder {place}: give its paths relative to the workspace")
        if len(stdout.encode("utf-8")) > SIZE_LIMIT:
            raise RuntimeError(f"the output of {name} is larger than {SIZE_LIMIT} bytes: choose a smaller case")
        kept = f"{name}.json" if stdout else None
        entries[name] = {"argv": argv, "status": status, "stdout": kept, "stderr": stderr}
        if kept:
            outputs[kept] = stdout
    CLI_GOLDEN.mkdir(parents=True, exist_ok=True)
    for old in CLI_GOLDEN.glob("*.json"):
        if old != MANIFEST and old.name not in outputs:
            old.unlink()
    for file, text in outputs.items():
        (CLI_GOLDEN / file).write_bytes(text.encode("utf-8"))
    lines = [f" {json.dumps(key, ensure_ascii=False)}: {json.dumps(item, ensure_ascii=False)}" for key, item in entries.items()]
    MANIFEST.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    return len(entries)


def read_manifest() -> dict[str, dict]:
    """The cases as ``make golden`` last wrote them (empty when there is no manifest)."""
    if not MANIFEST.exists():
        return {}
    return json.loads(MANIFEST.read_text(encoding="utf-8"))
