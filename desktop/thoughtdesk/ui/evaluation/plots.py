"""Result plots (pyqtgraph): accuracy with Wilson whiskers, accuracy vs tokens with its Pareto
front, and a samples x conditions correctness map. Each exports to PNG/SVG and its data to CSV.

Fed from ``core.evaluation.metrics`` records; call ``set_rows``/``set_answers`` again while a run is
in progress to redraw (the accuracy plot keeps its panels for that). Names from datasets are shown
escaped, never as live rich text.
"""

from __future__ import annotations

import csv
import html
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import QRectF, QSize, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QVBoxLayout, QWidget

from thoughtdesk.core.evaluation.metrics import AccuracyRow, ScoredAnswer
from thoughtdesk.core.evaluation.tables import ROW_FIELDS
from thoughtdesk.core.files import export_file, export_part

_MODEL_COLOURS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C"]


class ExportablePlot(QWidget):
    """A graphics layout with PNG/SVG export of the whole figure."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setBackground("w")
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.layout_widget)

    def add_plot(self, **where: int) -> pg.PlotItem:
        """A plot in the figure whose axes show plain values: pyqtgraph scales an axis by an SI
        prefix on its own and titles it "student model (x0.001)", which means nothing here."""
        plot = self.layout_widget.addPlot(**where)
        for side in ("left", "bottom"):
            plot.getAxis(side).enableAutoSIPrefix(False)
        return plot

    def export_png(self, path: str | Path, width: int = 1200) -> Path:
        """Write the figure as PNG, ``width`` pixels wide (height keeps the aspect ratio), whole
        or not at all (:func:`~thoughtdesk.core.files.export_part`)."""
        exporter = pg.exporters.ImageExporter(self.layout_widget.scene())
        exporter.parameters()["width"] = int(width)
        image = exporter.export(toBytes=True)
        with export_part(Path(path)) as part:
            if not image.save(str(part), "PNG"):
                raise OSError("Qt could not save the image")
        return Path(path)

    def export_svg(self, path: str | Path) -> Path:
        """Write the figure as SVG.

        Rendered with Qt's own QSvgGenerator: pyqtgraph's SVGExporter fails on the path data
        this Qt version writes ("not enough values to unpack" in SVGExporter.correctCoordinates).
        """
        scene = self.layout_widget.scene()
        rect = scene.sceneRect()
        with export_part(Path(path)) as part:
            generator = QSvgGenerator()
            generator.setFileName(str(part))
            generator.setSize(QSize(int(rect.width()), int(rect.height())))
            generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
            generator.setTitle("ThoughtDesk plot")
            painter = QPainter(generator)
            try:
                scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
            finally:
                painter.end()
            if not part.exists():
                raise OSError("Qt could not write the SVG")
        return Path(path)


def _write_rows_csv(path: str | Path, rows: Sequence[AccuracyRow]) -> Path:
    with export_file(Path(path)) as handle:
        writer = csv.writer(handle)
        writer.writerow(ROW_FIELDS)
        for row in rows:
            writer.writerow(["" if getattr(row, f) is None else getattr(row, f) for f in ROW_FIELDS])
    return Path(path)


def short_labels(rows) -> list[str]:
    """Bar labels that say only what differs between the bars of one panel.

    A condition is "instruction / trigger / extraction"; parts equal on every bar are left out,
    and the model is named only when the panel has more than one (full names are in the table
    and the tooltip-free CSV export).
    """
    rows = list(rows)
    if not rows:
        return []
    parts = [r.condition.split(" / ") for r in rows]
    width = max(len(p) for p in parts)
    parts = [p + [""] * (width - len(p)) for p in parts]
    varying = [i for i in range(width) if len({p[i] for p in parts}) > 1]
    several_models = len({r.model for r in rows}) > 1
    labels = []
    for row, p in zip(rows, parts, strict=False):
        bits = ([row.model] if several_models else []) + [_part_name(p[i], i, width) for i in varying]
        labels.append(" / ".join(bits) or row.condition or row.model)
    return labels


def tick_font() -> QFont:
    font = QFont()
    font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
    return font


#: What each part of a three-part condition is, for saying that a bar has none ("-").
_CONDITION_PARTS = ("instruction", "trigger", "extraction")


def _part_name(value: str, index: int, width: int) -> str:
    return "none" if value == "-" and width == len(_CONDITION_PARTS) else value


def varying_parts(rows) -> str:
    """What the bars of one panel differ in ("model / trigger"): the x-axis title."""
    rows = list(rows)
    parts = [r.condition.split(" / ") for r in rows]
    width = max((len(p) for p in parts), default=0)
    names = ["model"] if len({r.model for r in rows}) > 1 else []
    for i in range(width):
        if len({p[i] if i < len(p) else "" for p in parts}) > 1:
            names.append(_CONDITION_PARTS[i] if width == len(_CONDITION_PARTS) else f"part {i + 1}")
    return " / ".join(names)


#: At most this many lines a bar's label is wrapped into (the last one cut with "…").
LABEL_LINES = 3
_BREAK_AFTER = (" / ", " · ", "-", "_", " ", "/", ".")


def wrap_label(label: str, chars: int, lines: int = LABEL_LINES) -> str:
    """``label`` in lines of at most ``chars`` characters (broken after " / ", "-", "_" or a
    space where one is near), at most ``lines`` of them: long condition names stay readable
    under a narrow bar instead of printing over their neighbours' labels."""
    chars = max(chars, 3)
    out: list[str] = []
    rest = label
    while rest and len(out) < lines:
        if len(rest) <= chars:
            out.append(rest)
            rest = ""
            break
        window = rest[:chars]
        cut = max((window.rfind(mark) + len(mark) for mark in _BREAK_AFTER if window.rfind(mark) > 0), default=0)
        cut = cut if cut >= chars // 2 else chars
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        out[-1] = out[-1][: max(chars - 1, 1)] + "…"
    return "\n".join(out)


def fit_label(label: str, width: float) -> str:
    """``label`` wrapped so that each line is at most ``width`` pixels wide in the tick font."""
    metrics = QFontMetrics(tick_font())
    chars = max(int(width / max(metrics.averageCharWidth(), 1)), 3)
    while True:
        wrapped = wrap_label(label, chars)
        if chars <= 3 or all(metrics.horizontalAdvance(line) <= width for line in wrapped.split("\n")):
            return wrapped
        chars -= 1


def enumerate_labels(rows, width: float | None = None):
    """``(x, label)`` ticks for the bars at x = 0, 1, 2, ... (each line at most ``width`` px)."""
    labels = short_labels(rows)
    return [(float(i), fit_label(label, width) if width else label) for i, label in enumerate(labels)]


def label_bars(plot, rows, with_ticks: bool = True, width: float | None = None) -> None:
    """Name a panel's bars (x = 0, 1, ...) and title its x axis with what they differ in;
    ``width``: the pixels a label's line may take (its bar's slot)."""
    bottom = plot.getAxis("bottom")
    bottom.setTicks([list(enumerate_labels(rows, width)) if with_ticks else []])
    title = varying_parts(rows)
    if bottom.labelText != title:  # setting it re-lays the panel out
        bottom.setStyle(tickFont=tick_font())  # several labels share a narrow panel
        plot.setLabel("bottom", title)


#: Above this many bars in a panel the x labels would overlap: they are left out (the table
#: and the CSV export name every bar).
MAX_LABELLED_BARS = 12


class AccuracyPlot(ExportablePlot):
    """Accuracy per condition with Wilson whiskers; bars coloured by model, one panel per dataset split.

    Redrawn live while a run is in progress, so the panels, their items and the model legend are
    kept from one :meth:`set_rows` to the next while the dataset splits and the models stay the
    same, and only the items' data are replaced (``setOpts``/``setData``): a pyqtgraph PlotItem
    costs ~60 ms to create (its ViewBox menu builds widgets), and re-creating a bar and a whisker
    item per model and panel on every redraw cost as much again.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[AccuracyRow] = []
        self._panels: dict[tuple[str, str], pg.PlotItem] = {}
        self._legend: pg.LegendItem | None = None
        self._legend_models: list[str] = []
        self._labelled_width = 0  # the figure's width the bar labels were wrapped for
        self._relabel_timer = QTimer(self, singleShot=True, interval=0)
        self._relabel_timer.timeout.connect(self._relabel)
        #: (dataset split, model) -> its bars and whiskers, created with the panels' models
        self._items: dict[tuple[tuple[str, str], str], tuple[pg.BarGraphItem, pg.ErrorBarItem]] = {}
        self._item_models: list[str] = []

    def set_rows(self, rows: Sequence[AccuracyRow]) -> None:
        """Redraw from accuracy rows (cheap when the dataset splits and models are unchanged)."""
        self.rows = list(rows)
        by_panel: dict[tuple[str, str], list[AccuracyRow]] = {}
        for row in self.rows:
            by_panel.setdefault((row.dataset, row.split), []).append(row)
        datasets = sorted(by_panel)
        if list(self._panels) != datasets:
            self._build_panels(datasets)
        models = sorted({r.model for r in self.rows})
        colours = {m: _MODEL_COLOURS[i % len(_MODEL_COLOURS)] for i, m in enumerate(models)}
        if models != self._item_models:
            self._build_items(models, colours)
        for key, plot in self._panels.items():
            panel = sorted(by_panel[key], key=lambda r: (r.model, r.condition))
            xs = np.arange(len(panel), dtype=float)
            for model in models:
                bars, whiskers = self._items[(key, model)]
                mask = np.array([r.model == model for r in panel], dtype=bool)
                if not mask.any():
                    bars.setVisible(False)
                    whiskers.setVisible(False)
                    continue
                chosen = [r for r in panel if r.model == model]
                accuracy = np.array([r.accuracy for r in chosen])
                bars.setOpts(x=xs[mask], height=accuracy, width=0.7, brush=colours[model])
                whiskers.setData(
                    x=xs[mask],
                    y=accuracy,
                    top=np.array([r.wilson_high for r in chosen]) - accuracy,
                    bottom=accuracy - np.array([r.wilson_low for r in chosen]),
                    beam=0.2,
                )
                bars.setVisible(True)
                whiskers.setVisible(True)
            label_bars(
                plot, panel, with_ticks=len(panel) <= MAX_LABELLED_BARS, width=self._label_width(plot, len(panel))
            )
            plot.setXRange(-0.6, max(len(panel) - 0.4, 0.6), padding=0)
        self._labelled_width = self.layout_widget.width()
        self._relabel_timer.start()  # once laid out, each panel's own width is known
        if self._legend is not None and models != self._legend_models:
            self._legend.clear()
            self._legend_models = models
            for model in models:  # a sample of each model's colour; it stays valid across redraws
                self._legend.addItem(
                    pg.BarGraphItem(x=[0], height=[0], width=1, brush=colours[model]), html.escape(model)
                )

    def _label_width(self, plot: pg.PlotItem, bars: int) -> float:
        """The pixels a bar's label may take a line: the panel's data width (before the first
        layout, the figure's width shared by the panels) over its bars, less a gap."""
        width = plot.getViewBox().width()
        if width < 50:
            width = max(self.layout_widget.width(), 300) / max(len(self._panels), 1) - 60
        return max(width / max(bars, 1) - 4, 12.0)

    def _relabel(self) -> None:
        """Wrap every panel's labels again for the panels' widths now (ticks only, cheap)."""
        self._labelled_width = self.layout_widget.width()
        by_panel: dict[tuple[str, str], list[AccuracyRow]] = {}
        for row in self.rows:
            by_panel.setdefault((row.dataset, row.split), []).append(row)
        for key, plot in self._panels.items():
            panel = sorted(by_panel.get(key, []), key=lambda r: (r.model, r.condition))
            label_bars(
                plot, panel, with_ticks=len(panel) <= MAX_LABELLED_BARS, width=self._label_width(plot, len(panel))
            )

    def resizeEvent(self, event) -> None:  # Qt override
        super().resizeEvent(event)
        if self.rows and abs(self.layout_widget.width() - self._labelled_width) > 40:
            self._relabel_timer.start()  # wrapped for the old width: again for this one

    def _build_items(self, models: list[str], colours: dict[str, str]) -> None:
        """A bar item and a whisker item per panel and model, in model order (their drawing order)."""
        self._items = {}
        self._item_models = models
        for key, plot in self._panels.items():
            plot.clear()
            for model in models:
                # No ``name``: a named item would be added to the legend (which names each model once).
                bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush=colours[model])
                whiskers = pg.ErrorBarItem(beam=0.2)
                plot.addItem(bars)
                plot.addItem(whiskers)
                self._items[(key, model)] = (bars, whiskers)

    def _build_panels(self, datasets: list[tuple[str, str]]) -> None:
        self.layout_widget.clear()
        self._panels = {}
        self._items = {}
        self._item_models = []
        self._legend = None
        self._legend_models = []
        # The model legend is a row of its own above the panels: inside a panel it covered bars.
        self._legend = pg.LegendItem(labelTextColor="#333333", colCount=4)
        self.layout_widget.addItem(self._legend, row=0, col=0, colspan=max(len(datasets), 1))
        for column, (dataset, split) in enumerate(datasets):
            plot = self.add_plot(row=1, col=column)
            plot.setTitle(html.escape(f"{dataset} / {split}"))
            plot.setYRange(0, 1)
            plot.setLabel("left", "accuracy (Wilson 95 %)")
            plot.getAxis("left").enableAutoSIPrefix(False)  # never "accuracy (x0.001)"
            plot.setMouseEnabled(x=False, y=False)
            self._panels[(dataset, split)] = plot

    def export_csv(self, path: str | Path) -> Path:
        """The plotted rows as CSV (all AccuracyRow fields)."""
        return _write_rows_csv(path, self.rows)


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points (cost, accuracy) not beaten by a cheaper-or-equal point with higher accuracy,
    sorted by cost."""
    front: list[tuple[float, float]] = []
    best = -math.inf
    for cost, accuracy in sorted(points, key=lambda p: (p[0], -p[1])):
        if accuracy > best:
            front.append((cost, accuracy))
            best = accuracy
    return front


class ParetoPlot(ExportablePlot):
    """Accuracy against mean tokens (or mean cost) per condition: one panel per dataset split
    (accuracies of different datasets are not comparable), each with its Pareto front, points
    coloured by model with a legend. The axes show plain values: pyqtgraph's SI prefixes turned
    accuracies 0.5-0.9 into "accuracy (x0.001)" with ticks 500-900."""

    def __init__(self, parent: QWidget | None = None, *, use_cost: bool = False) -> None:
        super().__init__(parent)
        self.use_cost = use_cost
        self.rows: list[AccuracyRow] = []
        self.panels: dict[tuple[str, str], pg.PlotItem] = {}
        self.legend: pg.LegendItem | None = None
        #: what the panels, items and legend were built for: (dataset splits, models, use_cost)
        self._built: tuple[tuple[tuple[str, str], ...], tuple[str, ...], bool] | None = None
        self._points: dict[tuple[tuple[str, str], str], pg.ScatterPlotItem] = {}
        self._fronts: dict[tuple[str, str], pg.PlotDataItem] = {}

    def set_rows(self, rows: Sequence[AccuracyRow]) -> None:
        """Redraw from accuracy rows (those without token counts, or costs, are left out).

        Live redraws with the same dataset splits, models and x axis keep the panels, items and
        legend and only replace the items' data (a PlotItem costs ~60 ms to create)."""
        self.rows = [row for row in rows if self._x(row) is not None]
        by_panel: dict[tuple[str, str], list[AccuracyRow]] = {}
        for row in self.rows:
            by_panel.setdefault((row.dataset, row.split), []).append(row)
        models = sorted({row.model for row in self.rows})
        colours = {m: _MODEL_COLOURS[i % len(_MODEL_COLOURS)] for i, m in enumerate(models)}
        datasets = sorted(by_panel)
        shape = (tuple(datasets), tuple(models), self.use_cost)
        if shape != self._built:
            self._build(datasets, models, colours)
            self._built = shape
        for key in datasets:
            panel = by_panel[key]
            points = [(float(self._x(row) or 0.0), row.accuracy) for row in panel]
            for model in models:
                mine = [point for point, row in zip(points, panel, strict=True) if row.model == model]
                item = self._points[(key, model)]
                if mine:
                    item.setData([p[0] for p in mine], [p[1] for p in mine])
                item.setVisible(bool(mine))
            front = pareto_front(points)
            self._fronts[key].setData([p[0] for p in front], [p[1] for p in front])

    def _build(self, datasets: list[tuple[str, str]], models: list[str], colours: dict[str, str]) -> None:
        """Panels (wrapped onto rows beyond three), a point item per model and panel, the Pareto
        front line on top, and the legend beside the panels."""
        self.layout_widget.clear()
        self.panels = {}
        self._points = {}
        self._fronts = {}
        columns = max(1, min(3, len(datasets)))
        for index, key in enumerate(datasets):
            plot = self.layout_widget.addPlot(row=index // columns, col=index % columns)
            plot.setTitle(html.escape(f"{key[0]} / {key[1]}"))
            self._axes(plot)
            for model in models:
                item = pg.ScatterPlotItem(size=9, brush=colours[model], pen="w")
                plot.addItem(item)
                self._points[(key, model)] = item
            self._fronts[key] = pg.PlotDataItem(pen=pg.mkPen("#C44E52", width=2))
            plot.addItem(self._fronts[key])
            self.panels[key] = plot
        self.legend = None
        if models:  # beside the panels, where it hides no point
            self.legend = pg.LegendItem(labelTextColor="#333333")
            self.layout_widget.addItem(self.legend, row=0, col=columns)
            for model in models:
                self.legend.addItem(pg.ScatterPlotItem(size=9, brush=colours[model], pen="w"), html.escape(model))
            self.legend.addItem(pg.PlotDataItem(pen=pg.mkPen("#C44E52", width=2)), "Pareto front")
        if not datasets:
            self._axes(self.add_plot())

    def _x(self, row: AccuracyRow) -> float | None:
        return row.mean_cost if self.use_cost else row.mean_tokens

    def _axes(self, plot: pg.PlotItem) -> None:
        plot.setLabel("bottom", "mean cost (USD)" if self.use_cost else "mean tokens")
        plot.setLabel("left", "accuracy")
        for side in ("left", "bottom"):
            plot.getAxis(side).enableAutoSIPrefix(False)
        plot.setYRange(0, 1, padding=0.05)

    def export_csv(self, path: str | Path) -> Path:
        return _write_rows_csv(path, self.rows)


class CorrectnessMap(ExportablePlot):
    """Samples (rows) x conditions (columns): green correct, red incorrect, grey unextractable,
    amber truncated (cut by the token limit), white where the condition has no answer for the sample (not the same as unextractable).

    Clicking a cell emits ``sample_clicked`` with the sample id.
    """

    sample_clicked = Signal(str)
    _CODES = {"correct": 2.0, "incorrect": 0.0, "unextractable": 1.0, "truncated": 3.0}
    MISSING = 4.0  # image value of a cell without an answer

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = self.add_plot()
        self.image = pg.ImageItem()
        self.image.setLookupTable(
            np.array([[196, 78, 82], [170, 170, 170], [85, 168, 104], [222, 160, 40], [255, 255, 255]], dtype=np.ubyte)
        )
        self.plot.addItem(self.image)
        self.plot.invertY(True)
        self.sample_ids: list[str] = []
        self.conditions: list[str] = []
        self._tick_conditions: list[str] | None = None
        self.matrix = np.zeros((0, 0))
        self.image.mouseClickEvent = self._clicked  # a click on the image reports the sample

    def set_answers(self, answers: Sequence[ScoredAnswer]) -> None:
        """Redraw from scored answers (first sample of each question per condition)."""
        self.sample_ids = sorted({a.sample_id for a in answers})
        labels: dict[tuple[str, str], str] = {}  # one label per model and condition, not per answer
        for a in answers:
            if (a.model, a.condition) not in labels:
                labels[(a.model, a.condition)] = f"{a.model}:{a.condition}"
        self.conditions = sorted(set(labels.values()))
        rows = {sid: i for i, sid in enumerate(self.sample_ids)}
        cols = {c: j for j, c in enumerate(self.conditions)}
        column_of = {pair: cols[label] for pair, label in labels.items()}
        self.matrix = np.full((len(self.sample_ids), len(self.conditions)), np.nan)
        codes = self._CODES
        for a in sorted(answers, key=lambda a: -a.sample_index):  # the first sample of a question wins
            self.matrix[rows[a.sample_id], column_of[(a.model, a.condition)]] = codes[a.outcome]
        # ImageItem's first axis is x: columns are conditions
        self.image.setImage(np.nan_to_num(self.matrix.T, nan=self.MISSING), levels=(0, self.MISSING), autoLevels=False)
        if self.conditions != self._tick_conditions:  # a live redraw mostly keeps the conditions
            self._tick_conditions = self.conditions
            self.plot.getAxis("bottom").setTicks([[(j + 0.5, c) for j, c in enumerate(self.conditions)]])

    def sample_at(self, x: float, y: float) -> str | None:
        """The sample id under image coordinates (x = condition column, y = sample row)."""
        row = int(math.floor(y))
        if 0 <= row < len(self.sample_ids) and 0 <= int(math.floor(x)) < len(self.conditions):
            return self.sample_ids[row]
        return None

    def _clicked(self, event) -> None:  # pyqtgraph mouse event
        sample = self.sample_at(event.pos().x(), event.pos().y())
        if sample is not None:
            event.accept()
            self.sample_clicked.emit(sample)

    def export_csv(self, path: str | Path) -> Path:
        """The map as CSV: one row per sample, one column per condition, outcome names."""
        names = {code: name for name, code in self._CODES.items()}
        with export_file(Path(path)) as handle:
            writer = csv.writer(handle)
            writer.writerow(["sample_id", *self.conditions])
            for i, sid in enumerate(self.sample_ids):
                writer.writerow([sid, *("" if np.isnan(v) else names[float(v)] for v in self.matrix[i])])
        return Path(path)
