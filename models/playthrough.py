"""Opening a save with its content: read, replay, index and check in one step.

``Playthrough.open`` is what the command line and the app both use. It never raises
on bad input: an unreadable save gives a Playthrough with ``readable`` False and the
findings that say why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from narrative_debugger.models.content.loader import Content, load_content
from narrative_debugger.models.content.background import ContentInBackground
from narrative_debugger.models.content.reuse import keep_content, kept_content
from narrative_debugger.models.progress import Cancelled, reporting
from narrative_debugger.models.rules.checks import check_against_replay, check_content, check_snapshot
from narrative_debugger.models.rules.findings import Finding, FindingSink, Severity, Target, finding
from narrative_debugger.models.save.savefile import Save, load_save
from narrative_debugger.models.timeline.index import EVERYTHING, Recording, TimelineIndex
from narrative_debugger.models.timeline.state_view import StateAtTick
from narrative_debugger.models.timeline.replay import Recompute, Resume, replay
from narrative_debugger.models.domain.tuning import DEFAULT_TUNING, Tuning

#: The installed sample campaign (``sample_saves/`` in the checkout), found as
#: package data so that it works from any folder.
BUNDLED_SAMPLES = Path(os.fspath(resources.files("narrative_debugger.sample_saves")))
#: The content folder shipped with the tool (the sample campaign).
BUNDLED_CONTENT = BUNDLED_SAMPLES / "content"
#: The sample save opened when the app starts without one.
BUNDLED_SAVE = BUNDLED_SAMPLES / "evening.json"


def content_beside(save_path: Path) -> Path | None:
    """The ``content/`` folder beside the save (symbolic links resolved), or None when there is none."""
    try:
        real = Path(save_path).resolve()
    except (OSError, RuntimeError):  # a symlink loop: the save will be refused with F001
        real = Path(os.path.abspath(save_path))
    beside = real.parent / "content"
    return beside if beside.is_dir() else None


def default_content_dir(save_path: Path) -> Path:
    """``content/`` beside the save when it exists, else the bundled sample content
    (``Playthrough.open`` then adds a C010 warning)."""
    return content_beside(save_path) or BUNDLED_CONTENT


#: The share of an open (0..1) each pass of reading the file ends at, for its progress:
#: (start, end) by ``progress.checkpoint`` stage, in proportion to the time each takes
#: on a large save (tests/benchmarks/README.md).
READING_PARTS = {"read": (0.0, 0.05), "scan": (0.05, 0.12), "journal": (0.12, 0.27)}


@dataclass
class Playthrough:
    """A save, its content, the replayed timeline and every finding.

    Attributes:
        save: the parsed save.
        content: the content folder it was read with.
        index: the timeline (None when the save was unreadable).
        findings: all findings, ordered by tick then code.

    What the window's views make from a playthrough ahead of showing it is theirs
    (``widgets.kit.prepared``), never kept here; values made from the timeline on
    first use are the index's memos (``models/memo.py``).
    """

    save: Save
    content: Content
    index: TimelineIndex | None
    findings: list[Finding] = field(default_factory=list)
    #: The rules' constants the replay used (the seeds' unless a what-if tuned them).
    tuning: Tuning = DEFAULT_TUNING
    #: A what-if's ``Recompute`` (which score changes the replay derived anew), else None.
    recompute: Recompute | None = None
    #: Where a what-if of this run may resume its replay (``replay.ReplayCheckpoint``,
    #: a few dozen at most; none for a what-if's own run).
    checkpoints: tuple = field(default=(), repr=False, compare=False)
    #: The replay's own findings in the order it made them: a checkpoint counts them.
    replay_findings: list = field(default_factory=list, repr=False, compare=False)
    # What ``finish_checks`` needs when ``build`` left the checks: (the reading's sink,
    # the replay's sink, the confrontations the replay saw); None once checked.
    _pending: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def readable(self) -> bool:
        """False when the save could not be read at all."""
        return self.index is not None

    @property
    def has_errors(self) -> bool:
        """True when any finding is an error (``check`` exits 1)."""
        return any(f.severity is Severity.ERROR for f in self.findings)

    def state_at(self, tick: int) -> StateAtTick:
        """The narrative state at ``tick``.

        Raises:
            ValueError: when the save was unreadable.
        """
        if self.index is None:
            raise ValueError(f"{self.save.label} could not be read")
        return self.index.at(tick)

    @property
    def last_tick(self) -> int:
        """The last tick worth showing: ``saved_at_tick`` or the last journal tick."""
        if self.index is None:
            return 0
        return max(self.save.saved_at_tick, self.index.last_tick)

    @property
    def first_tick(self) -> int:
        """The first journal tick (0 for an empty journal)."""
        return self.index.first_tick if self.index is not None else 0

    def npc_name(self, stable_id: int) -> str:
        """Display name of an NPC (profile name, else its slug), or the player's name."""
        if stable_id == self.save.player.stable_id:
            return self.save.player.name or "Player"
        npc = self.save.npcs.get(stable_id)
        if npc is None:
            return str(stable_id)
        return self.content.npc_name(npc.slug)

    @classmethod
    def open(cls, path: Path, content_dir: Path | None = None, *, progress=None, cancelled=None, defer_checks: bool = False,
             recording: Recording = EVERYTHING) -> "Playthrough":
        """Read, replay and check a save (read-only).

        Args:
            path: the save (``.json`` or ``.json.gz``).
            content_dir: the content folder; default ``default_content_dir(path)``. A
                folder read by an earlier open in this process is reused while none of
                its files changed (``models/content/reuse.py``).
            progress: optional callable(fraction 0..1, message).
            cancelled: optional callable returning True to stop early (raises Cancelled,
                also while the file is read: ``progress.checkpoint``).
            defer_checks: leave the snapshot and content checks to ``finish_checks``
                (see ``build``).
            recording: what the index records beside the state at a tick (``build``).
        """
        path = Path(path)
        fallback = content_dir is None and content_beside(path) is None
        content_dir = Path(content_dir) if content_dir is not None else (content_beside(path) or BUNDLED_CONTENT)

        def report(fraction, message):
            if cancelled is not None and cancelled():
                raise Cancelled()
            if progress is not None:
                progress(fraction, message)

        reading = "reading the save"  # the progress names the file already ("Opening NAME")
        report(0.0, reading)
        shown = [0]  # the last whole percent reported while reading

        def reading_part(stage, fraction):
            low, high = READING_PARTS[stage]
            percent = int(100 * (low + (high - low) * fraction))
            if percent > shown[0]:  # never back: the content's small files are read inside too
                shown[0] = percent
                progress(percent / 100, reading)

        # Reading the file takes seconds between two reports: between its slices,
        # ``progress.checkpoint`` asks ``cancelled`` and says how far it has got.
        with reporting(cancelled, reading_part if progress is not None else None):
            # The folder read by an earlier open, when none of its files changed since;
            # else a large folder is read by a second process while this one decodes the save.
            content, stamp = kept_content(content_dir)
            early = ContentInBackground.start(content_dir, _size_of(path)) if content is None else None
            try:
                save = load_save(path)
                notes = []
                if fallback and save.readable:  # issue 35: a finding, not only a path in a header line
                    notes.append(finding(
                        "C010", f"no content/ folder beside the save; it is read against the bundled sample content "
                        f"({BUNDLED_CONTENT}), so its content findings, names and prompts are the sample campaign's (choose the game's with --content DIR)",
                        "content/", target=Target("file", field="content/")))
                report(0.3, "reading content")
                if content is None:
                    content = early.result() if early is not None else load_content(content_dir)
                    keep_content(content_dir, stamp, content)
            finally:
                if early is not None:
                    early.stop()
            return cls.build(save, content, report, defer_checks=defer_checks, notes=notes, recording=recording)

    @classmethod
    def build(cls, save: Save, content: Content, report=None, *, defer_checks: bool = False, notes=(),
              tuning: Tuning = DEFAULT_TUNING, recompute: Recompute | None = None, resume: Resume | None = None,
              dialogue_of: TimelineIndex | None = None, knowledge_of: TimelineIndex | None = None,
              recording: Recording = EVERYTHING) -> "Playthrough":
        """Replay and check an already parsed save against content.

        With ``defer_checks`` the snapshot, replay-versus-snapshot and content checks
        are left to ``finish_checks``: ``findings`` then holds those of reading and
        replaying, and ``checks_pending`` is True. The window shows the save at once
        and checks it after, so that the checks do not delay the first paint.
        ``notes`` are findings about how the save was opened (``open``'s C010), kept
        with those of reading it. ``tuning`` and ``recompute`` go to the replay (a
        what-if, issue 38: ``models/whatif``); ``tuning`` is kept as ``play.tuning``.
        ``resume``: the recorded run's checkpoint a what-if's replay starts at (the
        result is the same as from the start); a run replayed from the start keeps
        its own checkpoints (``checkpoints``). ``dialogue_of``: the recorded index whose
        dialogue lines and ticks the replay takes (``replay``'s); ``knowledge_of``: the one
        whose knowledge it takes (``replay``'s). ``recording``: what the index records
        beside the state at a tick (``replay``'s; ``models.timeline.index.Recording``):
        ``EVERYTHING`` for what a window, a what-if or a comparison reads; the checks,
        and so ``findings``, are the same with any.
        """
        report = report or (lambda fraction, message: None)
        # Merged from the save's own sink: its closed list holds a capped code's note,
        # and adding that list again counted the note as one more finding (a journal
        # of 1 000 000 bad entries said "10001 in all" of its 2 000 000 F002).
        if save.finding_sink is not None:
            read = FindingSink.merged(save.finding_sink)
        else:
            read = FindingSink()
            read.extend(save.findings)
        read.extend(notes)
        if not save.readable:
            save.document = None
            return cls(save, content, None, _ordered(read.close()))
        report(0.35, "replaying the journal")
        replayed = FindingSink()
        result = replay(save, content, replayed, progress=lambda done, total: report(0.35 + 0.6 * done / max(total, 1), "replaying the journal"),
                        tuning=tuning, recompute=recompute, checkpoints=resume is None and dialogue_of is None, resume=resume,
                        dialogue_of=dialogue_of, knowledge_of=knowledge_of, recording=recording)
        play = cls(save, content, result.index, tuning=tuning, recompute=recompute, checkpoints=result.checkpoints,
                   replay_findings=list(replayed.items))
        play._pending = (read, replayed, result.confrontation_seen)
        if defer_checks:
            play.findings = _ordered(content.findings + FindingSink.merged(read, replayed).close())
        else:
            play.finish_checks()
        report(1.0, "ready")
        return play

    @property
    def checks_pending(self) -> bool:
        """True while ``findings`` lacks the checks ``build(defer_checks=True)`` left."""
        return self._pending is not None

    def finish_checks(self) -> None:
        """Run the checks ``build`` left (none when none were left): the snapshot by itself,
        the replay against it, the content. ``findings`` becomes the whole list, the
        same one, in the same order, as checking before the replay gave.

        The findings come in the order of one sink fed by each stage in turn: reading,
        snapshot, replay, replay against snapshot, content (``FindingSink.merged``)."""
        if self._pending is None:
            return
        read, replayed, confronted = self._pending
        save, content = self.save, self.content
        snapshot = FindingSink()
        check_snapshot(save, content, snapshot)
        after = FindingSink()
        check_against_replay(save, self.index, confronted, after)
        check_content(content, [save], after, self.index)
        save.document = None  # the raw JSON was needed only for key-order checks
        self.findings = _ordered(content.findings + FindingSink.merged(read, snapshot, replayed, after).close())
        self._pending = None


    def take_checks(self, findings: list[Finding]) -> None:
        """Take the whole findings that ``finish_checks`` made elsewhere (the open's
        child process, ``app/workers/engine.py``): ``checks_pending`` is False after."""
        self.findings = findings
        self._pending = None


def _size_of(path: Path) -> int:
    """The file's size in bytes, 0 when it cannot be read (``load_save`` then says why)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _ordered(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.tick is not None, f.tick or 0, f.code))
