"""A seeded stand-in for the game that writes Settled Reach saves.

The generator plays the game's rules (save-format §5) against a content folder:
the player talks to NPCs, learns and revises facts, walks away, quarrels, hears
monologue lines. Every change is written to the journal as it happens and the
snapshot is the state after the last entry, so replaying the journal from the
initial state gives the snapshot. Standard library only; no Qt.

Units: ticks (``ticks_per_second`` = 10), relationship score points (0..100),
stress points (i16). Non-integer numbers are f32 in the game; the generator
rounds each one to the shortest decimal that survives an f32 round trip when it
is recorded, and chains later values from the recorded one.

Command line::

    python -m tests.support.savegen.generator --scenario evening --events 300 --seed 7 --out PATH
    python -m tests.support.savegen.generator --samples sample_saves
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import random
import shutil
import struct
import sys
from pathlib import Path

from tests.support.savegen import text
from tests.support.savegen.content import Content, NpcProfile, load_content
from tests.support.savegen.sim import SCENARIOS, Simulation

DEFAULT_CONTENT = Path(__file__).resolve().parents[3] / "sample_saves" / "content"
PLAYER_ID = 1
NPC_IDS = {
    "lera-sessik": 9,
    "kael-davan": 17,
    "mira-holt": 42,
    "orrin-vask": 130,
    "tobin-quill": 1_000_003,
    "sera-venn": 9_007_199_254_740_993,
}
"""StableIds of the sample NPCs: numeric key order differs from string order, and
one id is above 2**53 so it only survives an exact integer reader."""

_F32 = struct.Struct("<f")


def f32(x: float) -> float:
    """Rounds a number the way the game stores it: as an f32, written shortest.

    Args:
        x: any finite float.

    Returns:
        The float whose ``repr`` is the shortest decimal that reads back as the
        same f32 as ``x`` (``f32(0.1 + 0.2) == 0.3``).
    """
    single = _F32.unpack(_F32.pack(x))[0]
    for digits in range(1, 10):
        candidate = float("%.*g" % (digits, single))
        if _F32.unpack(_F32.pack(candidate))[0] == single:
            return candidate
    return single


def _draw(rng: random.Random, spec, kind: type):
    if isinstance(spec, list):
        low, high = spec
        if kind is int:
            return rng.randint(int(low), int(high))
        return f32(round(rng.uniform(float(low), float(high)), 2))
    if kind is float:
        return f32(float(spec))
    return kind(spec)


def seeded_tolerance(profile: NpcProfile, seed: int) -> dict:
    """Draws an NPC's per-playthrough interaction tolerance (schema seed §8).

    Args:
        profile: the NPC profile; each field is a value or a ``[low, high]`` range.
        seed: the playthrough seed.

    Returns:
        ``interaction_tolerance`` as the save writes it.
    """
    rng = random.Random(f"{seed}/{profile.slug}")
    spec = profile.tolerance_ranges
    return {
        "walk_away_threshold": _draw(rng, spec["walk_away_threshold"], int),
        "walk_away_penalty": _draw(rng, spec["walk_away_penalty"], float),
        "walk_away_stress_delta": _draw(rng, spec["walk_away_stress_delta"], int),
        "permanent_confrontation_memory": bool(spec.get("permanent_confrontation_memory", False)),
    }


def npc_ids(content: Content) -> dict[str, int]:
    """StableIds for every NPC of a content folder (known ones fixed, others derived).

    Args:
        content: the loaded content.

    Returns:
        slug -> StableId, in the content's slug order.
    """
    ids = {}
    for index, slug in enumerate(content.npcs):
        ids[slug] = NPC_IDS.get(slug, 5_000 + index)
    return ids


def generate_save(*, seed: int, events: int, scenario: str = "evening",
                  content_dir: Path | None = None) -> dict:
    """Plays a seeded session and returns the save document.

    Args:
        seed: the playthrough seed; the same arguments give the same document.
        events: the exact number of journal entries.
        scenario: ``evening``, ``walkaway-spiral``, ``abandoned-confrontation`` or
            ``large`` (evening tuned for up to millions of entries).
        content_dir: the content folder to play by; the sample content by default.

    Returns:
        The JSON-ready document (dicts, lists, ints, floats, strings, None, bools),
        maps already in BTreeMap order.
    """
    return _play(seed, events, scenario, content_dir, None)[0]


def generate_fork(*, seed: int, events: int, fork_at: int, fork_seed: int, scenario: str = "evening",
                  content_dir: Path | None = None) -> tuple[dict, dict, int]:
    """Two playthroughs of one seed that part ways once the journal holds ``fork_at`` entries.

    The first is ``generate_save(seed=seed, ...)``; the second plays the same session
    up to the fork, then goes on with an RNG seeded ``fork_seed`` (the next tick is
    drawn from it, so the two journals differ from the fork on).

    Returns:
        (document A, document B, fork index): both documents hold ``events`` entries
        and share exactly their first ``fork index`` entries (``fork index`` >= ``fork_at``:
        the fork waits for the end of the conversation in progress).
    """
    doc_a = generate_save(seed=seed, events=events, scenario=scenario, content_dir=content_dir)
    doc_b, forked_at = _play(seed, events, scenario, content_dir, (fork_at, fork_seed))
    return doc_a, doc_b, forked_at


def generate_save_file(path: Path, *, seed: int, events: int, scenario: str = "evening",
                       content_dir: Path | None = None) -> None:
    """Plays a seeded session and writes its save to ``path`` (plain JSON), the same
    bytes as ``write_save(generate_save(...), path)``, without holding the journal:
    each entry is encoded as it is played into a spool file beside ``path``, which is
    then copied into place. Memory stays near the snapshot's size whatever ``events``
    is (a 10 000 000-entry save as one document would take ~10 GB of dicts).

    Args:
        path: where to write (``.json``); its parent folder must exist.
        seed, events, scenario, content_dir: as ``generate_save``.

    Raises:
        ValueError: an unknown scenario or negative ``events``.
        OSError: the file cannot be written.
    """
    path = Path(path)
    spool_path = path.with_name(path.name + ".journal")
    try:
        with open(spool_path, "wb") as spool_file:
            spool = _JournalSpool(spool_file)
            doc = _play(seed, events, scenario, content_dir, None, journal=spool)[0]
        doc["journal"] = []
        whole = _encode(doc)
        if whole.count(b'"journal":[]') != 1:  # the generator's own texts never hold it
            raise ValueError("cannot place the journal: its key occurs in the save's texts")
        head, _, tail = whole.partition(b'"journal":[]')
        with open(path, "wb") as out, open(spool_path, "rb") as entries:
            out.write(head + b'"journal":[')
            shutil.copyfileobj(entries, out, 1 << 20)
            out.write(b"]" + tail)
    finally:
        spool_path.unlink(missing_ok=True)


class _JournalSpool:
    """A journal that writes each entry as compact JSON as it is appended (``,``
    between entries): what ``Simulation`` needs of a list, ``append`` and ``len``."""

    def __init__(self, out) -> None:
        self._out = out
        self._count = 0

    def append(self, entry: dict) -> None:
        if self._count:
            self._out.write(b",")
        self._out.write(_encode(entry))
        self._count += 1

    def __len__(self) -> int:
        return self._count


def _encode(value) -> bytes:
    """Compact UTF-8 JSON, as the game's serde_json writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _play(seed: int, events: int, scenario: str, content_dir: Path | None,
          fork: tuple[int, int] | None, journal=None) -> tuple[dict, int | None]:
    """Plays one session (see ``generate_save``); returns the document and where it
    forked. ``journal``: where the entries go (see ``Simulation``), else the document's list."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; one of {sorted(SCENARIOS)}")
    if events < 0:
        raise ValueError("events must be >= 0")
    content = load_content(Path(content_dir) if content_dir else DEFAULT_CONTENT)
    ids = npc_ids(content)
    tolerance = {slug: seeded_tolerance(p, seed) for slug, p in content.npcs.items()}
    sim = Simulation(content, ids, PLAYER_ID, tolerance, SCENARIOS[scenario], seed, events, f32, fork, journal)
    collecting = gc.isenabled()
    gc.disable()  # millions of acyclic dicts: cycle collection would only slow the run down
    try:
        sim.run()
    finally:
        if collecting:
            gc.enable()
    story = text.STORY[scenario]
    doc = {
        "format": "settled-reach.save",
        "format_version": 1,
        "game_version": "0.7.2",
        "world_seed": seed,
        "saved_at_tick": sim.tick + 3,
        "ticks_per_second": 10,
        "player": {
            "stable_id": PLAYER_ID,
            "name": text.PLAYER_NAME,
            "pronouns": text.PLAYER_PRONOUNS,
            "description": text.PLAYER_DESCRIPTION,
            "knowledge": {"entities": sim.entities_snapshot(), "facts": sim.facts_snapshot()},
        },
        "npcs": sim.npcs_snapshot(),
        "journal": sim.journal,
        "story": {
            "plot_essentials": text.PLOT_ESSENTIALS,
            "story_summary": story,
            "authors_note": text.AUTHORS_NOTE,
        },
    }
    return doc, sim.forked_at


def canonical_order(doc: dict) -> dict:
    """Puts a document's maps in BTreeMap order, in place.

    Facts sort by the UTF-8 bytes of their id; StableId-keyed maps (``npcs``,
    ``entities``) sort numerically.

    Args:
        doc: a save document.

    Returns:
        The same document.
    """
    knowledge = doc["player"]["knowledge"]
    facts = knowledge["facts"]
    knowledge["facts"] = {k: facts[k] for k in sorted(facts, key=lambda k: k.encode("utf-8"))}
    entities = knowledge["entities"]
    knowledge["entities"] = {k: entities[k] for k in sorted(entities, key=int)}
    doc["npcs"] = {k: doc["npcs"][k] for k in sorted(doc["npcs"], key=int)}
    return doc


def write_save(doc: dict, path: Path) -> None:
    """Writes a document the way the game's serde_json does: compact UTF-8 JSON.

    Keys are written in the document's own order (see ``canonical_order``), so a
    deliberately mis-ordered map stays mis-ordered. A path ending in
    ``.json.gz`` is gzip-compressed with a zero timestamp, so equal documents give
    equal bytes.

    Args:
        doc: the document.
        path: where to write.
    """
    path = Path(path)
    raw = _encode(doc)
    if path.name.endswith(".json.gz"):
        with open(path, "wb") as handle:
            with gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0,
                               compresslevel=6) as packed:
                packed.write(raw)
    else:
        path.write_bytes(raw)


def inject_faults(doc: dict, content_dir: Path | None = None) -> list[dict]:
    """Plants known faults in a clean document, in place (see ``faults``).

    Args:
        doc: a clean document from ``generate_save`` (evening-like, a few thousand
            entries).
        content_dir: the content folder the document was generated with.

    Returns:
        One ``{code, where, note, also}`` per fault: the checks.md code, the JSON
        path, what was changed, and the codes a checker may also raise for it.
    """
    from tests.support.savegen.faults import plant_faults

    return plant_faults(doc, load_content(Path(content_dir) if content_dir else DEFAULT_CONTENT))


SAMPLES = {
    "evening.json": ("evening", 3800, 7),
    "walkaway-spiral.json": ("walkaway-spiral", 500, 3),
    "abandoned-confrontation.json": ("abandoned-confrontation", 900, 33),
}
QA_SAMPLE = ("qa-faults.json", "evening", 3000, 11)


def write_samples(out_dir: Path, content_dir: Path | None = None) -> list[dict]:
    """Regenerates the sample saves; the same call gives byte-identical files.

    Args:
        out_dir: the folder to write into (``sample_saves/``).
        content_dir: the content folder; the sample content by default.

    Returns:
        The faults planted in ``qa-faults.json``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (scenario, events, seed) in SAMPLES.items():
        doc = generate_save(seed=seed, events=events, scenario=scenario, content_dir=content_dir)
        write_save(doc, out_dir / name)
    name, scenario, events, seed = QA_SAMPLE
    doc = generate_save(seed=seed, events=events, scenario=scenario, content_dir=content_dir)
    faults = inject_faults(doc, content_dir)
    write_save(doc, out_dir / name)
    return faults


def _count(text: str) -> int:
    """A whole number of 0 or more (argparse type): a negative count is a usage error."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is below 0")
    return value


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.savegen.generator", description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", default="evening", choices=sorted(SCENARIOS))
    parser.add_argument("--events", type=_count, default=300, help="journal entries (exact)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--content", type=Path, default=None, help="content folder")
    parser.add_argument("--out", type=Path, help="output .json or .json.gz")
    parser.add_argument("--faults", action="store_true", help="plant the QA faults")
    parser.add_argument("--fork-at", type=int, metavar="N",
                        help="play on with --fork-seed once the journal holds N entries (a fork of --seed's run)")
    parser.add_argument("--fork-seed", type=int, default=None, help="the RNG seed after the fork (default: --seed + 1)")
    parser.add_argument("--samples", type=Path, help="regenerate the sample saves into this folder")
    args = parser.parse_args(argv)
    if args.samples:
        for fault in write_samples(args.samples, args.content):
            print(f"{fault['code']}  {fault['where']}")
        return 0
    if not args.out:
        parser.error("--out is required unless --samples is given")
    if args.fork_at is not None:
        fork_seed = args.fork_seed if args.fork_seed is not None else args.seed + 1
        doc, forked_at = _play(args.seed, args.events, args.scenario, args.content, (args.fork_at, fork_seed))
        print(f"forked at journal[{forked_at}]")
    else:
        doc = generate_save(seed=args.seed, events=args.events, scenario=args.scenario,
                            content_dir=args.content)
    if args.faults:
        entries = len(doc["journal"])
        try:
            faults = inject_faults(doc, args.content)
        except ValueError as exc:
            print(f"savegen: --faults: {exc}; a save of {entries:,} journal entries is too short "
                  "for the thirteen faults (--events 2000 or more has room); nothing written", file=sys.stderr)
            return 2
        for fault in faults:
            print(f"{fault['code']}  {fault['where']}")
    write_save(doc, args.out)
    return 0


__all__ = [
    "canonical_order", "f32", "generate_fork", "generate_save", "inject_faults",
    "write_samples", "write_save",
]

if __name__ == "__main__":
    raise SystemExit(main())
