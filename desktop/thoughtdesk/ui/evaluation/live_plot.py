"""An accuracy plot for live redraws: panels are reused while the datasets stay the same.

:class:`~thoughtdesk.ui.evaluation.plots.AccuracyPlot` rebuilds every panel on each call; a
pyqtgraph PlotItem costs ~60 ms to create (its ViewBox menu builds widgets), which alone would
break the 100 ms budget of a live redraw. This subclass draws the same figure (bars grouped by
model, Wilson whiskers, one panel per dataset split) but keeps the PlotItems and the model
legend, replacing only their contents; bar labels are shown when they can be read.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg

from thoughtdesk.core.evaluation.metrics import AccuracyRow
from thoughtdesk.ui.evaluation.plots import _MODEL_COLOURS, AccuracyPlot, label_bars

#: Above this many bars in a panel the x labels would overlap: they are left out (the table
#: and the CSV export name every bar).
MAX_LABELLED_BARS = 12


class LiveAccuracyPlot(AccuracyPlot):
    """AccuracyPlot that reuses its panels and legend between redraws."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._panels: dict[tuple[str, str], pg.PlotItem] = {}
        self._legend: pg.LegendItem | None = None
        self._legend_models: list[str] = []

    def set_rows(self, rows: Sequence[AccuracyRow]) -> None:
        """Redraw from accuracy rows (cheap when the dataset splits are unchanged)."""
        self.rows = list(rows)
        datasets = sorted({(r.dataset, r.split) for r in self.rows})
        if list(self._panels) != datasets:
            self._build_panels(datasets)
        models = sorted({r.model for r in self.rows})
        colours = {m: _MODEL_COLOURS[i % len(_MODEL_COLOURS)] for i, m in enumerate(models)}
        for (dataset, split), plot in self._panels.items():
            plot.clear()
            panel = sorted(
                (r for r in self.rows if (r.dataset, r.split) == (dataset, split)), key=lambda r: (r.model, r.condition)
            )
            xs = np.arange(len(panel), dtype=float)
            for model in models:
                mask = np.array([r.model == model for r in panel], dtype=bool)
                if not mask.any():
                    continue
                chosen = [r for r in panel if r.model == model]
                accuracy = np.array([r.accuracy for r in chosen])
                # No ``name``: a named item would be re-added to the legend on every redraw.
                bars = pg.BarGraphItem(x=xs[mask], height=accuracy, width=0.7, brush=colours[model])
                plot.addItem(bars)
                plot.addItem(
                    pg.ErrorBarItem(
                        x=xs[mask],
                        y=accuracy,
                        top=np.array([r.wilson_high for r in chosen]) - accuracy,
                        bottom=accuracy - np.array([r.wilson_low for r in chosen]),
                        beam=0.2,
                    )
                )
            label_bars(plot, panel, with_ticks=len(panel) <= MAX_LABELLED_BARS)
            plot.setXRange(-0.6, max(len(panel) - 0.4, 0.6), padding=0)
        if self._legend is not None and models != self._legend_models:
            self._legend.clear()
            self._legend_models = models
            for model in models:  # a sample of each model's colour; it stays valid across redraws
                self._legend.addItem(
                    pg.BarGraphItem(x=[0], height=[0], width=1, brush=colours[model]), html.escape(model)
                )

    def _build_panels(self, datasets: list[tuple[str, str]]) -> None:
        self.layout_widget.clear()
        self._panels = {}
        self._legend = None
        self._legend_models = []
        for column, (dataset, split) in enumerate(datasets):
            plot = self.layout_widget.addPlot(row=0, col=column)
            plot.setTitle(html.escape(f"{dataset} / {split}"))
            plot.setYRange(0, 1)
            plot.setLabel("left", "accuracy (Wilson 95 %)")
            plot.setMouseEnabled(x=False, y=False)
            self._panels[(dataset, split)] = plot
            if self._legend is None:
                self._legend = plot.addLegend(offset=(-10, 10), labelTextColor="#333333", brush=(255, 255, 255, 220))
