"""Statistics plots (pyqtgraph): token-length box plots per dataset split, and an n-gram overlap
heatmap. Both export PNG/SVG (``ExportablePlot``) and their data as CSV. Dataset and split names
are drawn as plain text (axis ticks, ``TextItem`` without html), never as rich text."""

from __future__ import annotations

import csv
import html
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from thoughtdesk.core.files import export_file
from thoughtdesk.core.stats import CollectionStatistics, OverlapMatrix
from thoughtdesk.ui.evaluation.plots import ExportablePlot, tick_font

_BOX = "#4C72B0"
FIELD_TITLES = {
    "question": "question",
    "context": "context",
    "reference_cot": "reference CoT",
    "generated_cot": "generated CoT",
}


class LengthPlot(ExportablePlot):
    """Token lengths of one field per dataset split: box p25-p75, median line, whiskers p5-p95,
    min and max as dots."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stats: CollectionStatistics | None = None
        self.field = "question"
        self.plot = self.add_plot()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.getAxis("bottom").setStyle(tickFont=tick_font())
        self.plot.setLabel("left", "tokens (words)")

    def set_statistics(self, stats: CollectionStatistics | None, field: str | None = None) -> None:
        """Redraw for ``stats`` (None: empty) and, if given, the field to show."""
        self.stats = stats
        if field is not None:
            self.field = field
        self.plot.clear()
        self.plot.setTitle(html.escape(f"Token lengths: {FIELD_TITLES[self.field]}"))
        rows = self.rows()
        ticks = []
        for x, (dataset, split, summary) in enumerate(rows):
            p = summary.percentiles
            self.plot.addItem(
                pg.BarGraphItem(x=[x], y0=[p[25]], height=[p[75] - p[25]], width=0.6, brush=_BOX, pen="#223")
            )
            self.plot.addItem(pg.PlotDataItem([x - 0.3, x + 0.3], [p[50], p[50]], pen=pg.mkPen("#fff", width=2)))
            self.plot.addItem(pg.PlotDataItem([x, x], [p[5], p[25]], pen="#333"))
            self.plot.addItem(pg.PlotDataItem([x, x], [p[75], p[95]], pen="#333"))
            self.plot.addItem(
                pg.ScatterPlotItem([x, x], [summary.minimum, summary.maximum], size=5, brush="#333", pen=None)
            )
            ticks.append((float(x), f"{dataset}/{split}"))
        self.plot.getAxis("bottom").setTicks([ticks])
        if rows:
            self.plot.setXRange(-0.6, len(rows) - 0.4, padding=0)
            self.plot.setYRange(0, max(s.maximum for _, _, s in rows) * 1.05, padding=0)

    def rows(self):
        """(dataset, split, LengthSummary) of the splits that have texts of the field."""
        if self.stats is None:
            return []
        return [(s.dataset, s.split, s.lengths[self.field]) for s in self.stats.splits if s.lengths[self.field].count]

    def export_csv(self, path: str | Path) -> Path:
        """One row per dataset split: the field, count, mean, min, percentiles, max."""
        with export_file(Path(path)) as handle:
            writer = csv.writer(handle)
            writer.writerow(
                ["dataset", "split", "field", "texts", "mean", "min", "p5", "p25", "p50", "p75", "p95", "max"]
            )
            for dataset, split, s in self.rows():
                p = s.percentiles
                writer.writerow(
                    [dataset, split, self.field, s.count, f"{s.mean:.3f}", s.minimum,
                     p[5], p[25], p[50], p[75], p[95], s.maximum]
                )  # fmt: skip
        return Path(path)


class OverlapHeatmap(ExportablePlot):
    """Containment of row in column (share of the row's distinct n-grams found in the column),
    0 white to 1 dark blue, each cell labelled in percent ("<1": shared, under 0.5 %)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.matrix: OverlapMatrix | None = None
        self.plot = self.add_plot()
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)
        for side in ("bottom", "left"):
            self.plot.getAxis(side).setStyle(tickFont=tick_font())
        self._colours = pg.ColorMap([0.0, 1.0], [(255, 255, 255), (8, 48, 107)])

    def set_matrix(self, matrix: OverlapMatrix | None) -> None:
        """Redraw for ``matrix`` (None: empty)."""
        self.matrix = matrix
        self.plot.clear()
        if matrix is None or not matrix.units:
            self.plot.setTitle("No overlap computed: tick “n-gram overlap” and compute")
            return
        what = FIELD_TITLES.get(matrix.field, matrix.field)
        self.plot.setTitle(html.escape(f"{what}s: {matrix.n}-gram containment, row in column"))
        values = np.array(matrix.containment, dtype=float)
        image = pg.ImageItem(values.T)  # ImageItem indexes [x, y]
        image.setLookupTable(self._colours.getLookupTable(0.0, 1.0, 256))
        image.setLevels((0.0, 1.0))
        self.plot.addItem(image)
        k = len(matrix.units)
        for i in range(k):
            for j in range(k):
                value = values[i, j]
                label = "0" if matrix.shared[i][j] == 0 else "<1" if value < 0.005 else f"{100 * value:.0f}"
                text = pg.TextItem(label, anchor=(0.5, 0.5))
                text.setColor("#fff" if value > 0.5 else "#222")
                text.setPos(j + 0.5, i + 0.5)
                self.plot.addItem(text)
        ticks = [(i + 0.5, name) for i, name in enumerate(matrix.units)]
        self.plot.getAxis("bottom").setTicks([ticks])
        self.plot.getAxis("left").setTicks([ticks])
        self.plot.setXRange(0, k, padding=0)
        self.plot.setYRange(0, k, padding=0)

    def export_csv(self, path: str | Path) -> Path:
        """Long form: row unit, column unit, distinct n-grams of each, shared, containment, Jaccard."""
        with export_file(Path(path)) as handle:
            writer = csv.writer(handle)
            writer.writerow(
                ["field", "n", "row", "column", "row_ngrams", "column_ngrams", "shared", "containment", "jaccard"]
            )
            m = self.matrix
            if m is not None:
                containment, jaccard = m.containment, m.jaccard
                for i, a in enumerate(m.units):
                    for j, b in enumerate(m.units):
                        writer.writerow(
                            [m.field, m.n, a, b, m.sizes[i], m.sizes[j], m.shared[i][j],
                             f"{containment[i][j]:.6f}", f"{jaccard[i][j]:.6f}"]
                        )  # fmt: skip
        return Path(path)
