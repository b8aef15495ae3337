"""Tick steps update the views' item models incrementally (issue 10, stepping at 60
frames a second). At each tick of a walk through a sample save, forwards, backwards
and jumping, a model that was stepped there must hold exactly what a model built
afresh at that tick holds, and every cell that changed must have been signalled
(``dataChanged``, inserted rows, or a reset), or the view would keep painting the old
value."""

from __future__ import annotations

import random

import pytest
from tests.conftest import CONTENT, SAMPLES

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtGui import QBrush, QColor, QFont  # noqa: E402

ROLES = (Qt.DisplayRole, Qt.ForegroundRole, Qt.BackgroundRole, Qt.FontRole, Qt.ToolTipRole,
         Qt.TextAlignmentRole, Qt.DecorationRole, *(Qt.UserRole + k for k in range(1, 5)))


def _plain(value):
    if isinstance(value, QBrush):
        return ("brush", value.color().name(QColor.HexArgb), value.style().value)
    if isinstance(value, QColor):
        return ("color", value.name(QColor.HexArgb))
    if isinstance(value, QFont):
        return ("font", value.bold(), value.italic())
    if value is not None and type(value).__name__ == "QIcon":
        return ("icon", value.cacheKey() != 0)
    return value


def dump(model, roles=ROLES) -> list[list[tuple]]:
    """Every cell of ``model`` in every role of ``roles``, as plain values."""
    return [[tuple(_plain(model.data(model.index(r, c), role)) for role in roles)
             for c in range(model.columnCount())] for r in range(model.rowCount())]


class Signals:
    """The rows and cells a model signalled since the last ``take``."""

    def __init__(self, model) -> None:
        self.model = model
        self.cells: set[tuple[int, int]] = set()
        self.reset = False
        self.structure = False
        model.dataChanged.connect(self._changed)
        model.modelReset.connect(self._reset)
        model.layoutChanged.connect(self._reset)
        model.rowsInserted.connect(self._rows)
        model.rowsRemoved.connect(self._rows)

    def _changed(self, top_left, bottom_right, _roles=()) -> None:
        for r in range(top_left.row(), bottom_right.row() + 1):
            for c in range(top_left.column(), bottom_right.column() + 1):
                self.cells.add((r, c))

    def _reset(self, *_args) -> None:
        self.reset = True

    def _rows(self, *_args) -> None:
        self.structure = True

    def take(self) -> tuple[set[tuple[int, int]], bool, bool]:
        out = (self.cells, self.reset, self.structure)
        self.cells, self.reset, self.structure = set(), False, False
        return out


def assert_signalled(before, after, signals: Signals) -> None:
    """Every cell that differs between ``before`` and ``after`` was signalled."""
    cells, reset, structure = signals.take()
    if reset:
        return
    if len(before) != len(after) and not structure:
        raise AssertionError(f"rows {len(before)} -> {len(after)} without a row signal")
    if structure:
        return  # rows moved: the comparison with a fresh model covers the values
    for r, (old, new) in enumerate(zip(before, after)):
        for c, (a, b) in enumerate(zip(old, new)):
            assert a == b or (r, c) in cells, f"cell ({r}, {c}) changed {a} -> {b} unsignalled"


def walk(play, steps=45, seed=5) -> list[int]:
    """Ticks visited by single events, hundreds of ticks and far jumps, both ways."""
    ticks = sorted(set(play.index.ticks))
    rng = random.Random(seed)
    k, out = len(ticks) // 2, []
    for _ in range(steps):
        k = max(0, min(len(ticks) - 1, k + rng.choice((1, 1, 2, -1, -2, 25, -25, len(ticks) // 3, -len(ticks) // 3))))
        out.append(ticks[k])
    return out + [0, ticks[-1], ticks[0], ticks[-1], ticks[-2]]


@pytest.fixture(scope="module")
def faults_playthrough():
    from narrative_debugger.models.playthrough import Playthrough

    return Playthrough.open(SAMPLES / "qa-faults.json", CONTENT)


@pytest.mark.parametrize("which", ["evening", "faults", "generated"])
def test_npc_rows_follow_every_step(qtbot, which, evening_playthrough, faults_playthrough, generated):
    from narrative_debugger.widgets.docks.npc_list import NpcTableModel

    play = {"evening": evening_playthrough, "faults": faults_playthrough, "generated": generated}[which]
    stepped = NpcTableModel()
    stepped.set_playthrough(play)
    signals = Signals(stepped)
    before = dump(stepped)
    signals.take()
    ticks = sorted(set(play.index.ticks))
    every = ticks[len(ticks) // 3 : len(ticks) // 3 + 80]  # one event at a time, then back
    for tick in [*every, *every[::-1], *walk(play)]:
        stepped.set_state(play.state_at(tick))
        fresh = NpcTableModel()
        fresh.set_playthrough(play)
        fresh.set_state(play.state_at(tick))
        after = dump(stepped)
        assert after == dump(fresh), f"tick {tick}"
        assert_signalled(before, after, signals)
        before = after


@pytest.mark.parametrize("which", ["evening", "generated"])
def test_npc_rows_filled_with_the_state_at_an_open(qtbot, which, evening_playthrough, generated):
    """An open gives the NPC table its rows and the state at once: the ``set_state`` of
    the same state that follows changes and signals nothing, and the rows are those of
    a table fed the state after its rows (the table was measured twice an open)."""
    from narrative_debugger.widgets.docks.npc_list import NpcTableModel

    play = {"evening": evening_playthrough, "generated": generated}[which]
    ticks = sorted(set(play.index.ticks))
    for tick in (ticks[0], ticks[len(ticks) // 2], play.save.saved_at_tick):
        state = play.state_at(tick)
        model = NpcTableModel()
        model.set_playthrough(play, state)
        signals = Signals(model)
        model.set_state(state)
        assert signals.take() == (set(), False, False), f"tick {tick}"
        fresh = NpcTableModel()
        fresh.set_playthrough(play)
        fresh.set_state(state)
        assert dump(model) == dump(fresh), f"tick {tick}"
        model.set_state(play.state_at(ticks[-1]))  # and it steps on from there
        fresh.set_state(play.state_at(ticks[-1]))
        assert dump(model) == dump(fresh), f"tick {tick}"


def test_npc_rows_read_when_shown(qtbot, generated):
    """A row's state is read when it is first shown: the first state reads none, and a
    row left unread through many steps shows the state of the tick it is read at."""
    from narrative_debugger.widgets.docks.npc_list import NpcTableModel

    play = generated
    reads = []

    class Counting:
        def __init__(self, state):
            self.inner = state

        def npc(self, sid):
            reads.append(sid)
            return self.inner.npc(sid)

        def __getattr__(self, name):
            return getattr(self.inner, name)

    model = NpcTableModel()
    model.set_playthrough(play)
    ticks = sorted(set(play.index.ticks))
    model.set_state(Counting(play.state_at(ticks[0])))
    assert reads == []
    rng = random.Random(5)
    rows = model.rowCount()
    for tick in ticks[: 120]:
        model.set_state(Counting(play.state_at(tick)))
        for row in rng.sample(range(rows), k=max(1, rows // 4)):  # some rows shown, the rest not
            model.index(row, 0).data()
    last = play.state_at(ticks[119])
    assert [model.npc_state(r) for r in range(rows)] == [last.npc(sid) for sid in play.save.npcs]
    fresh = NpcTableModel()
    fresh.set_playthrough(play)
    fresh.set_state(last)
    assert dump(model) == dump(fresh)


@pytest.mark.parametrize("save", ["walkaway-spiral.json", "abandoned-confrontation.json"])
@pytest.mark.parametrize("kind", [None, "InteractionStarted"])
def test_journal_rows_follow_every_step(qtbot, save, kind):
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.widgets.docks.journal import JournalModel

    play = Playthrough.open(SAMPLES / save, CONTENT)
    index = play.index
    roles = (Qt.DisplayRole, Qt.ForegroundRole, Qt.BackgroundRole, Qt.FontRole)  # what the position changes
    stepped = JournalModel()
    stepped.set_playthrough(play)
    stepped.set_filter(kind)
    signals = Signals(stepped)
    before = dump(stepped, roles)
    signals.take()
    for tick in walk(play, steps=14):
        stepped.set_position(index.position_for_tick(tick))
        fresh = JournalModel()
        fresh.set_playthrough(play)
        fresh.set_filter(kind)
        fresh.set_position(index.position_for_tick(tick))
        after = dump(stepped, roles)
        assert after == dump(fresh, roles), f"tick {tick}"
        assert_signalled(before, after, signals)
        before = after


@pytest.mark.parametrize("which", ["evening", "faults"])
def test_monologue_rows_follow_every_step(qtbot, which, evening_playthrough, faults_playthrough):
    from narrative_debugger.widgets.docks.monologues import MonologueModel, monologue_rows

    play = evening_playthrough if which == "evening" else faults_playthrough
    npcs = list(play.save.npcs)
    rng = random.Random(11)
    stepped = MonologueModel()
    signals = Signals(stepped)
    before = dump(stepped)
    for tick in walk(play, steps=30):
        npc = rng.choice([*npcs, npcs[0], npcs[0], None])
        state = play.state_at(tick)
        stepped.set_rows(monologue_rows(play, state, npc))
        fresh = MonologueModel()
        fresh.set_rows(monologue_rows(play, state, npc))
        after = dump(stepped)
        assert after == dump(fresh), f"tick {tick}, NPC {npc}"
        assert_signalled(before, after, signals)
        before = after


def test_monologue_view_row_heights_follow_every_step(qtbot, evening_playthrough):
    """A blocked line's row is as tall as its reasons, an eligible one a line high, after
    any sequence of steps, as when the view is built at the tick."""
    from narrative_debugger.widgets.docks.monologues import MonologueView
    from narrative_debugger.widgets.session import Session

    def heights(view):
        return [view.view.rowHeight(k) for k in range(view.model.rowCount())]

    play = evening_playthrough
    session = Session()
    stepped = MonologueView(session)
    qtbot.addWidget(stepped)
    stepped.resize(500, 400)
    session.load(play)
    for tick in walk(play, steps=20):
        session.set_tick(tick)
        other = Session()
        fresh = MonologueView(other)
        qtbot.addWidget(fresh)
        fresh.resize(500, 400)
        other.load(play, tick=tick, npc=session.npc)
        assert dump(stepped.model) == dump(fresh.model)
        assert heights(stepped) == heights(fresh), f"tick {tick}"
        assert stepped.caption.text() == fresh.caption.text()


def test_monologue_view_follows_steps_event_by_event(qtbot, evening_playthrough):
    """Next event, one journal entry at a time (the step selects the entry's NPC): steps
    that change no fact (the rows are kept) and steps that change one or fire a line
    (made again) show the rows and caption of a view built at the tick."""
    from narrative_debugger.widgets.docks.monologues import MonologueView
    from narrative_debugger.widgets.session import Session

    play = evening_playthrough
    session = Session()
    stepped = MonologueView(session)
    qtbot.addWidget(stepped)
    stepped.resize(500, 400)
    session.load(play, tick=play.index.ticks[0])
    kinds = set()
    for _ in range(80):
        before = session.state.position
        session.step_event()
        state = session.state
        kinds.add(state.knowledge.changes_since(before) > 0)
        other = Session()
        fresh = MonologueView(other)
        qtbot.addWidget(fresh)
        fresh.resize(500, 400)
        other.load(play, tick=session.tick, npc=session.npc)
        assert dump(stepped.model) == dump(fresh.model), f"tick {session.tick}"
        assert stepped.caption.text() == fresh.caption.text()
    assert kinds == {True, False}  # both kinds of step were taken


def _knowledge_at(play, tick, previous, npc, fact=None):
    """A KnowledgeView built afresh at ``tick`` (coming from ``previous``): a full refresh."""
    from narrative_debugger.widgets.knowledge.view import KnowledgeView
    from narrative_debugger.widgets.session import Session

    session = Session()
    session.load(play, tick=previous, npc=npc)
    session.set_tick(tick)
    view = KnowledgeView(session)
    return session, view


def _categories(view):
    return [(view.category.itemText(k), view.category.itemData(k)) for k in range(view.category.count())]


@pytest.mark.parametrize(("which", "filtered", "signal_all_above"),
                         [("evening", False, None), ("faults", False, None), ("generated", False, None), ("generated", True, None),
                          ("generated", False, 0), ("generated", True, 0)])
def test_knowledge_table_follows_every_step(qtbot, monkeypatch, which, filtered, signal_all_above, evening_playthrough, faults_playthrough, generated):
    """With ``signal_all_above`` 0 every step signals every cell at once (as after a far jump)."""
    from narrative_debugger.widgets.kit.fact_model import FactTableModel
    from narrative_debugger.widgets.knowledge.view import KnowledgeView
    from narrative_debugger.widgets.session import Session

    if signal_all_above is not None:
        monkeypatch.setattr(FactTableModel, "SIGNAL_ALL_ABOVE", signal_all_above)

    play = {"evening": evening_playthrough, "faults": faults_playthrough, "generated": generated}[which]
    session = Session()
    session.load(play)
    view = KnowledgeView(session)
    qtbot.addWidget(view)
    if filtered:
        view.changed_only.setChecked(True)  # the proxy re-filters every signalled row
    signals = Signals(view.model)
    before = dump(view.model)
    signals.take()
    moved = 0
    for tick in walk(play, steps=20):
        previous = session.tick
        session.set_tick(tick)
        fresh_session, fresh = _knowledge_at(play, tick, previous, session.npc)
        if filtered:
            fresh.changed_only.setChecked(True)
        after = dump(view.model)
        assert after == dump(fresh.model), f"tick {previous} -> {tick}"
        moved += not signals.reset
        assert_signalled(before, after, signals)
        if filtered:
            assert dump(view.table.model()) == dump(fresh.table.model())
        assert view.count.full_text() == fresh.count.full_text()
        assert view.heading.text() == fresh.heading.text()
        assert _categories(view) == _categories(fresh)
        before = after
        fresh.deleteLater()
    assert moved >= 10, "most steps move the rows in place"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated 3 000-event save of the sample content: facts come and go by the dozen."""
    from narrative_debugger.models.playthrough import Playthrough
    from tests.support.savegen.generator import generate_save, write_save

    folder = tmp_path_factory.mktemp("stepped")
    write_save(generate_save(seed=7, events=3000, scenario="large", content_dir=CONTENT), folder / "save.json")
    return Playthrough.open(folder / "save.json", CONTENT)


@pytest.mark.parametrize("offset", [0, 10**15 + 3, 2**62 + 7])
def test_one_npc_track_equals_the_whole_journal_conversion(tmp_path, offset):
    """Selecting an NPC not drawn yet builds its track from its own versions' ticks; the
    values are those of converting every journal tick first, as before (u64 ticks too)."""
    import numpy as np
    from narrative_debugger.models.playthrough import Playthrough
    from narrative_debugger.widgets.timelines.tracks import Step, build_tracks, plot_origin, relative_x
    from tests.test_widgets_u64_ticks import shifted_save

    path, _ = shifted_save(tmp_path, "walkaway-spiral.json", offset) if offset else (SAMPLES / "walkaway-spiral.json", 0)
    play = Playthrough.open(path, CONTENT)
    origin = plot_origin(play)
    entry_ticks = relative_x(play.index.ticks, origin)
    zero = float(relative_x([0], origin)[0])
    x_end = float(relative_x([play.last_tick], origin)[0])
    tracks = build_tracks(play, play.last_tick, origin)
    assert len(tracks) == len(play.index.npcs)
    for track in tracks:
        versions = play.index.npcs[track.stable_id]
        pos = np.asarray(versions.positions, dtype=np.int64)
        ticks = np.where(pos > 0, entry_ticks[np.maximum(pos - 1, 0)], zero)
        for got, values in ((track.score, [v.relationship.score for v in versions.values]),
                            (track.stress, [v.tolerance.current_stress for v in versions.values])):
            want = Step.build(ticks, np.asarray(values, dtype=np.float64), x_end)
            assert np.array_equal(got.x, want.x) and np.array_equal(got.y, want.y)


def test_views_behind_another_tab_catch_up_when_shown(qtbot, open_window, isolated_settings):

    window = open_window(SAMPLES / "evening.json")
    s = window.session
    s.set_view("knowledge")
    s.set_tick(0)
    timelines, interactions = window.views["timelines"], window.views["interactions"]
    seen = {s.npc}
    for _ in range(60):
        window.tickbar.next_action.trigger()
        seen.add(s.npc)
    assert len(seen) > 1, "the steps selected other NPCs"
    assert not timelines.isVisible() and not interactions.isVisible()
    s.set_view("timelines")
    qtbot.waitUntil(lambda: timelines.drawn, timeout=10000)  # a load's curves are drawn in slices once shown
    assert all(abs(line.value() - timelines.x_of(s.tick)) < 1e-6 for line in timelines.cursors)
    widths = {sid: curve.opts["pen"].widthF() for sid, curve in timelines.curves.items()}
    assert timelines.layer.npc == s.npc and timelines.layer.shown
    assert timelines.layer.score.opts["pen"].widthF() > max(widths.values())
    assert f"{s.tick:,}" in timelines.readout.text()
    s.set_view("interactions")
    assert s.playthrough.npc_name(s.npc) in interactions.heading.text()
    assert f"at tick {s.tick:,}" in interactions.heading.text()


def test_prompt_tables_follow_every_step(qtbot, evening_playthrough):
    """The section and card tables of the prompt preview, updated in place tick after tick
    (and across NPCs), hold what tables built afresh for each preview hold."""
    from narrative_debugger.models.prompt.builder import PromptBuilder, compare
    from narrative_debugger.widgets.prompt.parts import CardTableModel, SectionTableModel

    play = evening_playthrough
    builder = PromptBuilder(play)
    slugs = [npc.slug for npc in play.save.npcs.values()]
    ticks = sorted(set(play.index.ticks))
    rng = random.Random(2)
    sections, cards = SectionTableModel(), CardTableModel()
    signals = (Signals(sections), Signals(cards))
    before_dumps = (dump(sections), dump(cards))
    previous = None
    for k in range(18):
        slug = slugs[0] if k < 10 else rng.choice(slugs)
        tick = ticks[len(ticks) // 2 + 7 * k]
        preview = builder.build(slug, tick)
        diff = compare(previous, preview) if previous is not None else None
        sections.set_preview(preview, previous, diff)
        cards.set_cards(preview.cards)
        fresh_sections, fresh_cards = SectionTableModel(), CardTableModel()
        fresh_sections.set_preview(preview, previous, diff)
        fresh_cards.set_cards(preview.cards)
        after = (dump(sections), dump(cards))
        assert after == (dump(fresh_sections), dump(fresh_cards)), f"{slug} at {tick}"
        for old, new, sig in zip(before_dumps, after, signals):
            assert_signalled(old, new, sig)
        before_dumps, previous = after, preview


def _preview_with(preview, label: str, text: str):
    """``preview`` with one section's text replaced (odd characters the builder may pass on)."""
    import dataclasses

    from narrative_debugger.models.prompt.builder import SEPARATOR

    sections = [dataclasses.replace(s, text=text) if s.label == label else s for s in preview.sections]
    return dataclasses.replace(preview, sections=sections, text=SEPARATOR.join(s.text for s in sections))


class _FedPrompt:
    """Prompt views of ``play`` that show the previews a test hands them: the worker's
    ``build_result`` is replaced by one that returns the preview given to ``show``, with
    its difference from the one shown before. A view's ``rebuilds`` counts the times its
    document was emptied whole (a fill that did not patch it in place)."""

    def __init__(self, qtbot, monkeypatch, play) -> None:
        from narrative_debugger.models.prompt.builder import compare
        from narrative_debugger.widgets.prompt import view as prompt_view
        from narrative_debugger.widgets.prompt.parts import PreviewResult

        self.qtbot, self.play, self.held = qtbot, play, None

        def build_result(request, _builders):
            if self.held is None:
                raise LookupError("no preview handed over yet")
            preview, before = self.held
            return PreviewResult(request, preview, before, before.tick if before else None,
                                 compare(before, preview) if before else None, 0.0)

        monkeypatch.setattr(prompt_view, "build_result", build_result)

    def view(self):
        from narrative_debugger.widgets.prompt.view import PromptView
        from narrative_debugger.widgets.session import Session

        session = Session()
        session.load(self.play, npc=next(iter(self.play.save.npcs)))
        view = PromptView(session)
        self.qtbot.addWidget(view)
        view.resize(900, 700)
        view.show()
        self.qtbot.waitExposed(view)
        self.qtbot.waitUntil(lambda: not view.busy, timeout=20_000)
        view.rebuilds = []
        document = view.text_view.document()

        def changed(_at, removed, _added) -> None:
            if removed and document.characterCount() == 1:  # emptied: a patch keeps the headers
                view.rebuilds.append(removed)

        document.contentsChange.connect(changed)
        return view

    def show(self, view, preview, before=None) -> str:
        """``view`` shows ``preview`` (compared with ``before``); returns its document's HTML."""
        self.held = (preview, before)
        with self.qtbot.waitSignal(view.previewReady, timeout=20_000):
            view.request_preview()
        return view.text_view.document().toHtml()

    def fresh(self, preview, before=None) -> str:
        """The HTML of a new view's document filled with ``preview`` at once."""
        view = self.view()
        html = self.show(view, preview, before)
        view.close()
        return html


def test_prompt_text_patched_in_place_equals_a_fresh_document(qtbot, monkeypatch, evening_playthrough):
    """The prompt text, patched section by section tick after tick, is the document a
    fresh fill builds: same text, same formats (HTML), for steps, NPC changes and text
    with astral characters, CRLF and an empty section."""
    from narrative_debugger.models.prompt.builder import PromptBuilder

    play = evening_playthrough
    fed = _FedPrompt(qtbot, monkeypatch, play)
    view = fed.view()
    builder = PromptBuilder(play)
    slugs = [npc.slug for npc in play.save.npcs.values()]
    ticks = sorted(set(play.index.ticks))
    rng = random.Random(4)
    before = None
    for k in range(16):
        preview = builder.build(slugs[0] if k < 8 else rng.choice(slugs), ticks[len(ticks) // 2 + 9 * k])
        if k in (3, 4):
            label = preview.sections[-1].label
            preview = _preview_with(preview, label, "a 🐉 dragon\r\nand\u2028more" if k == 3 else "")
        assert fed.show(view, preview, before) == fed.fresh(preview, before), f"step {k}"
        before = preview
    assert len(view.rebuilds) <= 3, "most steps patch the document in place"
    font = view.text_view.font()
    font.setPointSize(font.pointSize() + 2)
    view.text_view.setFont(font)  # another style: the next fill builds the document anew
    fed.show(view, builder.build(slugs[0], ticks[-1]), before)
    assert len(view.rebuilds) >= 1, "a rebuild is seen"


def test_text_edits_make_the_new_text():
    """``_text_edits`` turns any old text into the new one; a sliding history (lines
    leave at the start, come at the end) is two small edits, not the whole text."""
    from narrative_debugger.widgets.prompt.view import _text_edits

    def apply(old, edits):
        for start, end, replacement in edits:  # last first: earlier positions hold
            old = old[:start] + replacement + old[end:]
        return old

    lines = [f"line {k} 🐉" if k % 7 == 0 else f"line {k}" for k in range(60)]
    for first in range(0, 12):
        for came in range(0, 4):
            old, new = "\n".join(lines[5:40]), "\n".join(lines[5 + first : 40 + came])
            edits = _text_edits(old, new)
            assert apply(old, edits) == new
            if first and came:
                assert len(edits) == 2 and sum(len(r) for _, _, r in edits) < 40
    rng = random.Random(3)
    alphabet = "ab\n🐉\r"
    for _ in range(400):
        old = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        new = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        assert apply(old, _text_edits(old, new)) == new, (old, new)


def test_prompt_text_with_a_sliding_history_equals_a_fresh_document(qtbot, monkeypatch, evening_playthrough):
    """A history whose oldest lines leave while new ones come, patched in place, is the
    document a fresh fill builds (the lines that left and came are separate edits)."""
    from narrative_debugger.models.prompt.builder import PromptBuilder

    play = evening_playthrough
    fed = _FedPrompt(qtbot, monkeypatch, play)
    view = fed.view()
    preview = PromptBuilder(play).build(next(iter(play.save.npcs.values())).slug, play.save.saved_at_tick)
    label = max(preview.sections, key=lambda s: len(s.text)).label
    lines = [f"Mira: line {k} of the evening, with a 🐉 now and then" if k % 5 == 0 else f"Kael: line {k}" for k in range(300)]
    fed.show(view, _preview_with(preview, label, "\n".join(lines[:150])))
    rebuilt = len(view.rebuilds)  # the first fill builds the document
    for k in range(1, 12):
        step = _preview_with(preview, label, "\n".join(lines[3 * k : 150 + 4 * k]))
        assert fed.show(view, step) == fed.fresh(step), f"step {k}"
    assert len(view.rebuilds) == rebuilt, "only the first fill builds the document"


def test_a_drag_moves_journal_and_npcs_once_it_pauses_and_the_commit_at_once(qtbot, open_window, isolated_settings):

    from narrative_debugger.widgets.kit import visibility

    window = open_window(SAMPLES / "evening.json")
    s = window.session
    journal, npcs = window.docks["journal"].widget(), window.docks["npcs"].widget()
    s.set_tick(s.last_tick // 2)
    position, tick = journal.model.position, s.tick
    for k in range(1, 6):
        s.set_tick(tick + 5000 * k, live=True)
    assert journal.model.position == position and npcs.model.tick == tick  # not every frame
    qtbot.waitUntil(lambda: npcs.model.tick == tick + 25000)
    assert journal.model.position == s.playthrough.index.position_for_tick(tick + 25000)
    s.set_tick(tick + 30000, live=True)
    s.set_tick(tick + 31000)  # released: the commit shows at once and the pending frame is dropped
    assert npcs.model.tick == tick + 31000
    assert journal.model.position == s.playthrough.index.position_for_tick(tick + 31000)
    # A precise timer of twice the pause, started after that frame, fires after the frame's
    # (coarse, at most 5 % late) pause would have ended: a frame not dropped would have
    # moved both back to tick + 30000 by then.
    after_the_pause = QTimer(window)
    after_the_pause.setSingleShot(True)
    after_the_pause.setTimerType(Qt.PreciseTimer)
    after_the_pause.setInterval(2 * visibility.PAUSE_MS)
    with qtbot.waitSignal(after_the_pause.timeout, timeout=10_000):
        after_the_pause.start()
    assert npcs.model.tick == tick + 31000
    assert journal.model.position == s.playthrough.index.position_for_tick(tick + 31000)


@pytest.mark.parametrize("descending", [False, True])
def test_interaction_rows_follow_every_step(qtbot, descending, evening_playthrough, generated):
    """The interactions table moves its rows in place at a step of the same NPC (rows
    added or removed at the end, changed rows signalled) and equals a fresh table."""
    from narrative_debugger.widgets.interactions.view import InteractionView
    from narrative_debugger.widgets.session import Session

    play = generated
    session = Session()
    npc = max(play.index.interactions_by_npc, key=lambda sid: len(play.index.interactions_by_npc[sid]))
    session.load(play, npc=npc)
    view = InteractionView(session)
    qtbot.addWidget(view)
    view.show()
    if descending:
        view.model.sort(0, Qt.DescendingOrder)
    signals = Signals(view.model)
    before = dump(view.model)
    signals.take()
    moved = 0
    ticks = sorted(set(play.index.ticks))
    every = ticks[len(ticks) // 3 : len(ticks) // 3 + 60]
    for tick in [*every, *every[::-1], *walk(play, steps=20)]:
        session.set_tick(tick)
        fresh_session = Session()
        fresh_session.load(play, tick=tick, npc=npc)
        fresh = InteractionView(fresh_session)
        if descending:
            fresh.model.sort(0, Qt.DescendingOrder)
        after = dump(view.model)
        assert after == dump(fresh.model), f"tick {tick}"
        moved += len(after) != len(before) and not signals.reset
        assert_signalled(before, after, signals)
        before = after
        fresh.deleteLater()
    assert moved >= 5, "conversations that start or end add or remove rows in place"


def test_the_monologue_holds_text_cache_drops_the_least_recently_used_line(qtbot, monkeypatch):
    """Past its bound the cache was cleared whole, so a content of more eligible lines
    than it holds made every line's text again (carried bug): now only the least
    recently used goes, and the lines in view stay."""
    from narrative_debugger.models.content.monologue import MonologueLine
    from narrative_debugger.widgets.docks import monologues as monologue_view

    made = []
    monkeypatch.setattr(monologue_view, "HOLDS_KEPT", 3)
    monkeypatch.setattr(monologue_view, "describe_prerequisites", lambda line: made.append(line.id) or [line.id])
    model = monologue_view.MonologueModel()
    lines = [MonologueLine(f"line-{k}", "text") for k in range(4)]
    model.set_rows([monologue_view.MonologueRow("line", line=line, line_id=line.id, eligible=True) for line in lines])

    def holds(k: int) -> str:
        """The Why cell of line k's row: what an eligible line holds."""
        return model.index(k, model.WHY).data()

    for k in range(3):
        holds(k)
    assert holds(0) == "holds: line-0"  # used again: now the most recent
    holds(3)  # past the bound: line-1, the least recently used, goes
    made.clear()
    assert [holds(k) for k in (0, 2, 3)] == ["holds: line-0", "holds: line-2", "holds: line-3"]
    assert made == []
    holds(1)
    assert made == ["line-1"]
