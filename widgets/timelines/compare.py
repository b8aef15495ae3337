"""Side B over the timelines while comparing (issue 13).

``ComparisonOverlay`` belongs to a ``TimelinesView``: it draws B's score curve of
every NPC dashed in the colour of the same NPC's A curve (NPCs matched by slug),
B's stress of the selected NPC dashed over A's, and a line at the tick where the
journals part. B's curves stop at B's own last tick (its ``saved_at_tick``), not at
the end of the longer side. Ticks are aligned by value. It follows ``comparisonChanged``,
``loaded`` and ``npcChanged``; leaving comparison removes everything it drew.
"""

from __future__ import annotations

import weakref
from html import escape

import numpy as np
import pyqtgraph as pg
from narrative_debugger.models.domain.types import RelationshipLevel
from narrative_debugger.models.explain.chain import fmt_places
from narrative_debugger.widgets.kit.plain_text import NBSP
from narrative_debugger.widgets.timelines.layer import STRESS_HEADROOM, stress_frame
from narrative_debugger.widgets.timelines.tracks import OTHER_WIDTH, SELECTED_WIDTH, StepCurve, build_tracks, faded, plot_origin
from PySide6.QtCore import Qt

DIVERGENCE_COLOUR = "#c2185b"
B_DASH = Qt.DashLine
#: Where the "A/B part" label sits along its line (0: the plot's bottom, 1: its top) when
#: the plot is tall enough; a shorter plot puts it in the row below the cursor label.
DIVERGENCE_LABEL_POSITION = 0.84
#: Pixels between the cursor label's row and the "A/B part" label's.
LABEL_ROW_GAP_PX = 2


#: B's tracks built ahead by ``prebuild_tracks``: id(B) -> (weak ref to B, B's last tick, origin, tracks).
_PREBUILT: dict[int, tuple] = {}


def b_tracks(comparison) -> tuple[int, int, list]:
    """Side B's tracks for the overlay: ``(B's last tick, the plot origin (A's), the
    NpcTracks)``. Reading a 1 000 000-event timeline into arrays takes seconds: the
    what-if's child process builds them (``app/workers/engine.py``), the compare worker
    through ``prebuild_tracks``."""
    end, origin = comparison.b.last_tick, plot_origin(comparison.a)
    return end, origin, build_tracks(comparison.b, end, origin)


def prebuild_tracks(comparison, built: tuple | None = None) -> None:
    """Keep side B's tracks for the overlay, built ahead off the GUI thread, which must
    not spend the seconds they take. ``built``: what ``b_tracks`` gave (elsewhere, for
    this comparison); None: built here. Keeps one comparison's tracks."""
    b = comparison.b
    end, origin, tracks = built if built is not None else b_tracks(comparison)
    _PREBUILT.clear()
    _PREBUILT[id(b)] = (weakref.ref(b), end, origin, tracks)


def _tracks_for(b, end: int, origin: int) -> list:
    """B's tracks: the prebuilt ones when they match, else built here."""
    hit = _PREBUILT.get(id(b))
    if hit is not None and hit[0]() is b and hit[1] == end and hit[2] == origin:
        return hit[3]
    return build_tracks(b, end, origin)


class ComparisonOverlay:
    """B's dashed curves and the divergence line in a TimelinesView.

    Attributes:
        curves: side A StableId (or B's, for an NPC only B has) -> B's dashed score curve.
        tracks: the same keys -> B's NpcTrack.
        stress_curve: B's stress of the selected NPC (dashed).
        divergence_lines: the vertical lines at the divergence tick (score, stress plot).
    """

    def __init__(self, view) -> None:
        self.view = view
        self.session = view.session
        self.curves: dict[int, pg.PlotDataItem] = {}
        self.tracks: dict = {}
        self.stress_curve = StepCurve(name="Stress B")
        view.stress_plot.addItem(self.stress_curve)
        self.divergence_lines = []
        for plot in (view.score_plot, view.stress_plot):
            line = pg.InfiniteLine(0, angle=90, movable=False, pen=pg.mkPen(DIVERGENCE_COLOUR, width=1.5, style=Qt.DotLine))
            line.setZValue(95)
            line.setVisible(False)
            plot.addItem(line, ignoreBounds=True)
            self.divergence_lines.append(line)
        # Near the top: scores start at 0, so at the bottom the label hid the start of the A curves.
        self.divergence_lines[0].label = pg.InfLineLabel(
            self.divergence_lines[0], text="A/B part", position=DIVERGENCE_LABEL_POSITION, color=DIVERGENCE_COLOUR,
            fill=(255, 255, 255, 220)
        )
        self.session.comparisonChanged.connect(self.refresh)
        self.session.loaded.connect(self._forget)  # the view has rebuilt itself for the new save
        self.session.npcChanged.connect(self.on_npc)

    @property
    def active(self) -> bool:
        return bool(self.curves)

    def place_label(self, *_args) -> None:
        """Put the "A/B part" label in a row of its own, below the cursor label's.

        Both labels sit near the top of the score plot, each beside its line; with the
        cursor near the parting tick, a plot of ~100 px (a 1040x700 window) drew them over
        each other. The row is worked out in pixels, from the plot's height and the labels'
        (the view calls it when the plot is resized, once its cursor label is placed).
        """
        label, cursor_label = self.divergence_lines[0].label, self.view.cursors[0].label
        height = self.view.score_plot.vb.sceneBoundingRect().height()
        if height <= 0:
            return
        # Below the cursor label's top row; below the cursor label itself only when that
        # went down beside curve ends (``TimelinesView._place_labels``) this close to the
        # parting line: following it elsewhere put "A/B part" over the start of the curves.
        position = cursor_label.orthoPos
        if position != self.view.cursor_label_top and not self._beside(cursor_label, label):
            position = self.view.cursor_label_top
        cursor_middle = (1 - position) * height  # pixels below the plot's top
        # The texts' own heights in pixels (a label's scene rect follows the view only once painted).
        middle = (cursor_middle + cursor_label.textItem.boundingRect().height() / 2 + LABEL_ROW_GAP_PX
                  + label.textItem.boundingRect().height() / 2)
        label.setPosition(max(0.0, min(DIVERGENCE_LABEL_POSITION, 1 - middle / height)))

    def _beside(self, cursor_label, label) -> bool:
        """Whether the cursor's and the parting line's labels, either side of their lines,
        could meet across: the lines are closer, in pixels, than the labels' widths."""
        vb = self.view.score_plot.vb
        apart = abs(self.view.cursors[0].value() - self.divergence_lines[0].value()) / max(vb.viewPixelSize()[0], 1e-300)
        return apart < cursor_label.textItem.boundingRect().width() + label.textItem.boundingRect().width()

    def _forget(self) -> None:
        for curve in self.curves.values():
            self.view.score_plot.removeItem(curve)
        self.curves.clear()
        self.tracks.clear()
        self.refresh()

    def refresh(self) -> None:
        """Rebuild B's curves from the session's comparison (or remove them)."""
        view, s = self.view, self.session
        was_active = bool(self.curves)
        for curve in self.curves.values():
            view.score_plot.removeItem(curve)
        self.curves.clear()
        self.tracks.clear()
        c = s.comparison if s.ready else None
        parted = c.divergence.tick if c is not None and c.divergence is not None else None
        for line in self.divergence_lines:
            line.setVisible(parted is not None)
            if parted is not None:
                line.setValue(view.x_of(parted))
        self.place_label()
        if c is None:
            empty = np.empty(0)
            self.stress_curve.setData(empty, empty)
            _PREBUILT.clear()
            if was_active and s.ready:
                view._on_loaded()  # the single-save axes and legend again
            return
        a_by_slug = {s.playthrough.save.npcs[sid].slug: sid for sid in view.tracks}
        for track in _tracks_for(c.b, c.b.last_tick, view.origin):
            slug = c.b.save.npcs[track.stable_id].slug
            key = a_by_slug.get(slug, track.stable_id)
            a_track = view.tracks.get(key)
            if a_track is not None:
                track.colour = a_track.colour
            curve = StepCurve(track.score.x, track.score.y, connect="finite", name=f"{track.name} (B)")
            view.score_plot.addItem(curve)
            view._tune(curve)
            self.curves[key] = curve
            self.tracks[key] = track
        # Both sides on one axis (ticks aligned by value; B's curves stop at B's own end):
        # the whole range, also for Full range, zoomed out no further than the first event,
        # as for one save, and scores up to the highest of either side.
        view.frame_x()
        view.fit_scores((*view.tracks.values(), *self.tracks.values()))
        self.on_npc(s.npc)
        view._update_legend(s.npc)
        view._show_values(s.tick, s.npc)

    def on_npc(self, npc) -> None:
        """Emphasise the selected NPC's B curve and show its B stress."""
        if not self.curves:
            return  # not comparing: ``refresh`` emptied B's stress
        for key, curve in self.curves.items():
            selected = key == npc
            colour = self.tracks[key].colour if selected else faded(self.tracks[key].colour)
            curve.setPen(pg.mkPen(colour, width=SELECTED_WIDTH if selected else OTHER_WIDTH, style=B_DASH))
            curve.setZValue(11 if selected else 1)
        track = self.tracks.get(npc)
        if track is None:
            empty = np.empty(0)
            self.stress_curve.setData(empty, empty)
            self.view.fit_stress_range()
            return
        # In the frame of A's stress of the NPC (the units the stress plot draws in).
        _, span = stress_frame(self.view._track(npc))
        self.stress_curve.setData(track.stress.x, track.stress.y / span, connect="finite")
        self.stress_curve.setPen(pg.mkPen(track.colour.darker(115), width=2, style=B_DASH))
        self.view._tune(self.stress_curve)
        self.view.fit_stress_range()

    def stress_extent(self) -> tuple[float, float] | None:
        """(lowest, STRESS_HEADROOM x highest) of B's stress shown, in the stress plot's
        units, or None when none is shown (not comparing, or an NPC B lacks)."""
        if not self.curves or self.stress_curve.yData is None:
            return None
        y = self.stress_curve.yData
        y = y[np.isfinite(y)]
        return (min(0.0, float(y.min())), float(y.max()) * STRESS_HEADROOM) if len(y) else None

    def legend(self, ink: str = "#333") -> str:
        """The legend's B part (rich text, its swatch in ``ink``), or "" when not comparing."""
        if not self.curves:
            return ""
        return f"<span style='color:{ink}'>╍ ╍</span>&nbsp;B&nbsp;(compared)"

    def score_at(self, tick: int, npc) -> float | None:
        """B's score of ``npc`` at ``tick`` (score points), or None where the readout
        shows none: not comparing, an NPC B lacks, past B's end, no state there."""
        track = self.tracks.get(npc)
        c = self.session.comparison
        if track is None or (c is not None and tick > c.b.last_tick):
            return None
        score = track.score.at(self.view.x_of(tick))
        return score if np.isfinite(score) else None

    def readout(self, tick: int, npc, places: int = 2) -> str:
        """The readout's B part for ``npc`` at ``tick`` (rich text; names escaped), or "";
        the view shows it on a line of its own. The score with ``places`` decimals
        (``fmt_places``), as A's beside it. "B", its curve's dash and the score are tied
        by non-breaking spaces, as each other label to its value: a line never starts
        with B's values without their label."""
        track = self.tracks.get(npc)
        if track is None:
            return ""
        c = self.session.comparison
        if c is not None and tick > c.b.last_tick:
            return f"<b>B</b>{NBSP}ended at tick{NBSP}{c.b.last_tick:,}"
        x = self.view.x_of(tick)
        score = track.score.at(x)
        if not np.isfinite(score):
            return f"<b>B</b>{NBSP}no state at this tick"
        level = RelationshipLevel.for_score(score).display_name
        stress = track.stress.at(x)
        walk = track.walk_aways.at(x)
        return (f"<b>B</b>{NBSP}<span style='color:{escape(track.colour.name())}'>╍</span>{NBSP}score{NBSP}<b>{fmt_places(score, places)}</b>{NBSP}({level})"
                f" · stress{NBSP}<b>{stress:.0f}</b> · walk-aways{NBSP}{walk:.0f}")
