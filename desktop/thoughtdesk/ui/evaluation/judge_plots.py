"""The Judges view's plot (pyqtgraph): each condition's Bradley-Terry strength under one judge,
a dot with its 95 % bootstrap interval as a horizontal bar, strongest at the top. Exports PNG/SVG
(:class:`~thoughtdesk.ui.evaluation.plots.ExportablePlot`) and its data as CSV. Condition names
from the data are plain tick text (never rich text), shortened to fit the axis; the CSV and the
table beside the plot have them whole.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pyqtgraph as pg

from thoughtdesk.core.files import export_file
from thoughtdesk.core.judges.analysis import ConditionFigures
from thoughtdesk.ui.evaluation.plots import ExportablePlot, tick_font
from thoughtdesk.ui.qt import QFontMetrics, QWidget

#: Widest a condition's tick label gets, in pixels (the rest of a long name is elided).
LABEL_WIDTH = 300


class StrengthPlot(ExportablePlot):
    """Bradley-Terry strengths of the conditions under one judge, with their intervals."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.add_plot()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.setLabel("bottom", "Bradley-Terry strength (log scale, mean 0; bars: 95 % bootstrap interval)")
        self.plot.getAxis("left").setStyle(tickFont=tick_font())
        self.plot.getAxis("left").setWidth(LABEL_WIDTH + 10)
        self.plot.addLine(x=0, pen=pg.mkPen("#999999", style=pg.QtCore.Qt.PenStyle.DashLine))
        self.bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), pen=pg.mkPen("#4C72B0", width=2))
        self.dots = pg.ScatterPlotItem(size=9, brush="#4C72B0", pen=None)
        self.plot.addItem(self.bars)
        self.plot.addItem(self.dots)
        self.rows: list[ConditionFigures] = []
        self.judge = ""

    def set_conditions(self, judge: str, rows: list[ConditionFigures]) -> None:
        """Show ``rows`` (one judge's conditions) strongest first (at the top)."""
        self.judge = judge
        self.rows = sorted(rows, key=lambda c: c.strength)
        y = np.arange(len(self.rows), dtype=float)
        strength = np.array([c.strength for c in self.rows], dtype=float)
        low = np.array([c.strength - c.low for c in self.rows], dtype=float)
        high = np.array([c.high - c.strength for c in self.rows], dtype=float)
        self.bars.setData(x=strength, y=y, left=low, right=high, height=np.zeros(len(y)))
        self.dots.setData(x=strength, y=y)
        metrics = QFontMetrics(tick_font())
        ticks = [
            (float(i), metrics.elidedText(c.condition, pg.QtCore.Qt.TextElideMode.ElideMiddle, LABEL_WIDTH))
            for i, c in enumerate(self.rows)
        ]
        self.plot.getAxis("left").setTicks([ticks])
        self.plot.setTitle(f"Judge {judge}" if judge else "No pairwise verdicts")
        if self.rows:
            self.plot.setYRange(-0.7, len(self.rows) - 0.3, padding=0)
            span = [min(c.low for c in self.rows), max(c.high for c in self.rows)]
            pad = max(0.1, (span[1] - span[0]) * 0.08)
            self.plot.setXRange(span[0] - pad, span[1] + pad, padding=0)

    def export_csv(self, path: str | Path) -> Path:
        """One row per condition: judge, wins, losses, ties, strength and interval."""
        with export_file(Path(path)) as handle:
            writer = csv.writer(handle)
            writer.writerow(["judge", "condition", "wins", "losses", "ties", "strength", "low", "high"])
            for c in reversed(self.rows):
                writer.writerow([c.judge, c.condition, c.wins, c.losses, c.ties, c.strength, c.low, c.high])
        return Path(path)
