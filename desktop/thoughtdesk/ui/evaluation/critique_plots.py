"""The Critiques view's plots (pyqtgraph): flaw dimensions per student model (stacked bars),
explanation scores per critique model (grouped bars), critique score vs human score (scatter
with jitter). Each exports PNG/SVG (:class:`~thoughtdesk.ui.evaluation.plots.ExportablePlot`)
and its data as CSV.

The plot items are made once and their contents replaced on every redraw (a PlotItem costs
~60 ms to create). Names from the data are escaped in the legend, never live rich text.
"""

from __future__ import annotations

import csv
import html
from pathlib import Path

import numpy as np
import pyqtgraph as pg

from thoughtdesk.core.critiques.analysis import SCORE_BINS, CritiqueAnalysis, ScorePoint
from thoughtdesk.core.files import export_file
from thoughtdesk.ui.evaluation.plots import ExportablePlot, fit_label, tick_font
from thoughtdesk.ui.qt import QWidget

#: One colour per DS dimension (and a grey for "no dimension"); more names cycle through them.
DIMENSION_COLOURS = [
    "#4C72B0",
    "#DD8452",
    "#55A868",
    "#C44E52",
    "#8172B3",
    "#937860",
    "#DA8BC3",
    "#CCB974",
    "#64B5CD",
]
NONE_COLOUR = "#BBBBBB"
MODEL_COLOURS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C"]
#: Half-width of the jitter added to each scatter coordinate (scores are whole numbers).
JITTER = 0.15
#: Widest the legend column gets (names are not cut: longer ones widen the legend itself).
LEGEND_WIDTH = 200
#: Above this many bars the x labels would overlap: they are left out (the CSV names every bar).
MAX_LABELLED = 14


def _side_legend(layout: pg.GraphicsLayoutWidget) -> pg.LegendItem:
    """A legend in its own column right of the plot, where it hides no bar or point (a stacked
    bar fills its panel to the top, and scores of 5 are common)."""
    column = layout.addLayout(row=0, col=1)
    legend = pg.LegendItem(labelTextColor="#333333")
    column.addItem(legend, row=0, col=0)
    filler = column.addLayout(row=1, col=0)  # takes the height the legend does not need
    column.layout.setRowStretchFactor(0, 0)
    column.layout.setRowStretchFactor(1, 1)
    filler.setMinimumHeight(0)
    column.setMaximumWidth(LEGEND_WIDTH)
    layout.ci.layout.setColumnStretchFactor(0, 1)
    layout.ci.layout.setColumnStretchFactor(1, 0)
    return legend


def _fill_legend(legend: pg.LegendItem, entries: list[tuple[str, str]]) -> None:
    legend.clear()
    for name, colour in entries:
        legend.addItem(pg.BarGraphItem(x=[0], height=[0], width=1, brush=colour), html.escape(name))


class DimensionPlot(ExportablePlot):
    """Share of each flaw dimension among the critiques of each student model (stacked bars)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.add_plot()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setLabel("left", "share of critiques")
        self.plot.setLabel("bottom", "student model")
        self.plot.getAxis("bottom").setStyle(tickFont=tick_font())
        self.legend = _side_legend(self.layout_widget)
        self._legend_entries: list[tuple[str, str]] = []
        self.models: list[str] = []
        self.names: list[str] = []
        self.counts = np.zeros((0, 0))

    def _label_width(self) -> float:
        """The pixels a model's name may take a line under its bar (it wraps onto more lines)."""
        width = self.plot.getViewBox().width()
        if width < 50:
            width = max(self.layout_widget.width(), 300) - 260  # less the axis and the side legend
        return max(width / max(len(self.models), 1) - 4, 12.0)

    def set_analysis(self, analysis: CritiqueAnalysis | None) -> None:
        """Redraw from an analysis (None: empty)."""
        by_model = analysis.dimensions_by_student_model if analysis else {}
        self.models = list(by_model)
        names = list(analysis.dimension_names) if analysis else []
        used = {name for counts in by_model.values() for name in counts}
        self.names = [n for n in names if n in used] + ([""] if "" in used else [])
        self.counts = np.array([[by_model[m].get(n, 0) for n in self.names] for m in self.models], dtype=float)
        self.plot.clear()
        entries = []
        if self.models:
            totals = self.counts.sum(axis=1, keepdims=True)
            shares = np.divide(self.counts, totals, out=np.zeros_like(self.counts), where=totals > 0)
            xs = np.arange(len(self.models), dtype=float)
            bottom = np.zeros(len(self.models))
            for j, name in enumerate(self.names):
                colour = NONE_COLOUR if name == "" else DIMENSION_COLOURS[j % len(DIMENSION_COLOURS)]
                self.plot.addItem(pg.BarGraphItem(x=xs, y0=bottom.copy(), height=shares[:, j], width=0.7, brush=colour))
                bottom += shares[:, j]
                entries.append((name or "(no dimension)", colour))
            labelled = len(self.models) <= MAX_LABELLED
            self.plot.getAxis("bottom").setTicks(
                [[(float(i), fit_label(m, self._label_width())) for i, m in enumerate(self.models)] if labelled else []]
            )
            self.plot.setXRange(-0.6, len(self.models) - 0.4, padding=0)
            self.plot.setYRange(0, 1.0, padding=0.02)
        if entries != self._legend_entries:
            _fill_legend(self.legend, entries[::-1])  # top to bottom, as the stack
            self._legend_entries = entries

    def export_csv(self, path: str | Path) -> Path:
        """One row per student model and dimension: count and share ("" = no dimension)."""
        with export_file(Path(path)) as handle:
            writer = csv.writer(handle)
            writer.writerow(["student_model", "dimension", "count", "share"])
            for i, model in enumerate(self.models):
                total = self.counts[i].sum()
                for j, name in enumerate(self.names):
                    count = int(self.counts[i, j])
                    writer.writerow([model, name, count, count / total if total else 0.0])
        return Path(path)


class ScoreDistributionPlot(ExportablePlot):
    """How many critiques gave each explanation score 0-5, one bar colour per critique model."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.add_plot()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setLabel("left", "critiques")
        self.plot.setLabel("bottom", "explanation score (rounded)")
        self.plot.getAxis("bottom").setTicks([[(float(b), str(b)) for b in SCORE_BINS]])
        self.legend = _side_legend(self.layout_widget)
        self._legend_entries: list[tuple[str, str]] = []
        self.rows: list[tuple[str, tuple[int, ...]]] = []

    def set_analysis(self, analysis: CritiqueAnalysis | None) -> None:
        """Redraw from an analysis (None: empty)."""
        self.rows = [(r.model, r.score_counts) for r in analysis.critique_models] if analysis else []
        self.plot.clear()
        entries = []
        count = len(self.rows)
        width = 0.8 / max(count, 1)
        xs = np.array(SCORE_BINS, dtype=float)
        for i, (model, counts) in enumerate(self.rows):
            colour = MODEL_COLOURS[i % len(MODEL_COLOURS)]
            offset = (i - (count - 1) / 2) * width
            self.plot.addItem(
                pg.BarGraphItem(x=xs + offset, height=np.array(counts, dtype=float), width=width, brush=colour)
            )
            entries.append((model, colour))
        self.plot.setXRange(-0.6, SCORE_BINS[-1] + 0.6, padding=0)
        if entries != self._legend_entries:
            _fill_legend(self.legend, entries)
            self._legend_entries = entries

    def export_csv(self, path: str | Path) -> Path:
        """One row per critique model and score: how many critiques gave it."""
        with export_file(Path(path)) as handle:
            writer = csv.writer(handle)
            writer.writerow(["critique_model", "explanation_score", "critiques"])
            for model, counts in self.rows:
                for score, n in zip(SCORE_BINS, counts, strict=True):
                    writer.writerow([model, score, n])
        return Path(path)


class ScoreScatterPlot(ExportablePlot):
    """Each critique model's score of a CoT (x) against the mean human score of that CoT (y).

    Both are mostly whole numbers, so each point is moved by a small random jitter (seeded: the
    same data draws the same picture) to show how many points share a spot; the CSV carries the
    exact values.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.add_plot()
        self.plot.setLabel("bottom", "critique model's explanation score (jittered)")
        self.plot.setLabel("left", "human score, mean of raters (jittered)")
        self.legend = _side_legend(self.layout_widget)
        self._legend_entries: list[tuple[str, str]] = []
        self.points: list[ScorePoint] = []

    def set_analysis(self, analysis: CritiqueAnalysis | None) -> None:
        """Redraw from an analysis (None: empty)."""
        self.points = list(analysis.points) if analysis else []
        self.plot.clear()
        models = sorted({p.critique_model for p in self.points})
        rng = np.random.default_rng(0)
        entries = []
        for i, model in enumerate(models):
            chosen = [p for p in self.points if p.critique_model == model]
            x = np.array([p.critique_score for p in chosen]) + rng.uniform(-JITTER, JITTER, len(chosen))
            y = np.array([p.human_score for p in chosen]) + rng.uniform(-JITTER, JITTER, len(chosen))
            colour = MODEL_COLOURS[i % len(MODEL_COLOURS)]
            self.plot.addItem(pg.ScatterPlotItem(x, y, size=6, pen=None, brush=pg.mkBrush(colour + "B0")))
            entries.append((model, colour))
        self.plot.setXRange(-0.5, 5.5, padding=0)
        self.plot.setYRange(-0.5, 5.5, padding=0)
        if entries != self._legend_entries:
            _fill_legend(self.legend, entries)
            self._legend_entries = entries

    def export_csv(self, path: str | Path) -> Path:
        """One row per plotted point, exact (not jittered) scores."""
        with export_file(Path(path)) as handle:
            writer = csv.writer(handle)
            writer.writerow(["critique_model", "cot_pk", "critique_score", "human_score"])
            for p in self.points:
                writer.writerow([p.critique_model, p.cot_pk, p.critique_score, p.human_score])
        return Path(path)
