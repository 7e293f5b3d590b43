"""Result plots render offscreen, export PNG/SVG of the right size and CSV with the data."""

from __future__ import annotations

import csv
import random

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QImage

from thoughtdesk.core.evaluation.metrics import ScoredAnswer, accuracy_table
from thoughtdesk.ui.evaluation.plots import MAX_LABELLED_BARS, AccuracyPlot, CorrectnessMap, ParetoPlot, pareto_front


@pytest.fixture
def answers():
    rng = random.Random(4)
    rows = []
    for dataset in ("medqa", "<b>pubmedqa</b>"):  # markup in a name must stay text
        for model in ("gpt-4", "llama"):
            for condition in ("zero-shot", "kojima-01"):
                for q in range(30):
                    rows.append(
                        ScoredAnswer(
                            dataset,
                            "test",
                            model,
                            condition,
                            f"{dataset}-{q}",
                            rng.choice(["correct", "incorrect", "unextractable"]),
                            tokens=rng.randrange(50, 400),
                            cost=0.002,
                        )
                    )
    return rows


def _check_exports(widget, tmp_path, width=800):
    png = widget.export_png(tmp_path / "plot.png", width=width)
    image = QImage(str(png))
    assert png.stat().st_size > 1000 and image.width() == width and image.height() > 50
    svg = widget.export_svg(tmp_path / "plot.svg")
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text and len(text) > 1000


def test_accuracy_plot(qtbot, tmp_path, answers):
    widget = AccuracyPlot()
    qtbot.addWidget(widget)
    widget.resize(900, 400)
    rows = accuracy_table(answers)
    widget.set_rows(rows)
    _check_exports(widget, tmp_path)
    with open(widget.export_csv(tmp_path / "rows.csv"), encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == len(rows) == 8
    assert float(table[0]["accuracy"]) == pytest.approx(rows[0].accuracy)
    titles = [item.titleLabel.text for item in widget.layout_widget.ci.items if hasattr(item, "titleLabel")]
    assert any("&lt;b&gt;" in t for t in titles)


def test_pareto(qtbot, tmp_path, answers):
    assert pareto_front([(10, 0.5), (5, 0.4), (20, 0.45), (30, 0.9)]) == [(5, 0.4), (10, 0.5), (30, 0.9)]
    widget = ParetoPlot()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.set_rows(accuracy_table(answers))
    _check_exports(widget, tmp_path, width=640)


def test_correctness_map_click_emits_sample(qtbot, tmp_path, answers):
    widget = CorrectnessMap()
    qtbot.addWidget(widget)
    widget.resize(600, 600)
    widget.set_answers(answers)
    assert widget.matrix.shape == (60, 4)
    assert widget.sample_at(0.5, 3.5) == widget.sample_ids[3]

    class Event:
        def __init__(self, x, y):
            from PySide6.QtCore import QPointF

            self._pos = QPointF(x, y)

        def pos(self):
            return self._pos

        def accept(self):
            pass

    with qtbot.waitSignal(widget.sample_clicked, timeout=10000) as blocker:
        widget._clicked(Event(1.2, 5.7))
    assert blocker.args == [widget.sample_ids[5]]
    _check_exports(widget, tmp_path, width=500)
    with open(widget.export_csv(tmp_path / "map.csv"), encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    assert len(lines) == 61 and len(lines[0]) == 5


def test_bar_labels_name_only_what_differs():
    from types import SimpleNamespace as Row

    from thoughtdesk.ui.evaluation.plots import short_labels, varying_parts

    one_model = [Row(model="gpt", condition=f"- / {t} / kojima-A-E") for t in ("-", "kojima-01", "zhou-01")]
    assert short_labels(one_model) == ["none", "kojima-01", "zhou-01"]
    assert varying_parts(one_model) == "trigger"
    two_models = [Row(model=m, condition="- / kojima-01 / x") for m in ("gpt", "llama")]
    assert varying_parts(two_models) == "model"
    assert short_labels(two_models) == ["gpt", "llama"]
    assert short_labels([Row(model="gpt", condition="a / b / c")]) == ["a / b / c"]


def test_correctness_map_keeps_missing_apart_from_unextractable(qtbot, tmp_path):
    widget = CorrectnessMap()
    qtbot.addWidget(widget)
    widget.set_answers(
        [
            ScoredAnswer("d", "test", "m", "a", "q1", "correct"),
            ScoredAnswer("d", "test", "m", "a", "q2", "unextractable"),
            ScoredAnswer("d", "test", "m", "b", "q1", "incorrect"),
        ]
    )  # b has no q2
    widget.image.render()
    colour = lambda x, y: widget.image.qimage.pixelColor(x, y).getRgb()[:3]  # noqa: E731 - a short reader (x = condition)
    assert colour(0, 0) == (85, 168, 104) and colour(1, 0) == (196, 78, 82)  # correct, incorrect
    assert colour(0, 1) == (170, 170, 170)  # unextractable: grey
    assert colour(1, 1) not in {(170, 170, 170), (85, 168, 104), (196, 78, 82)}  # no answer
    with open(widget.export_csv(tmp_path / "map.csv"), encoding="utf-8") as handle:
        assert list(csv.reader(handle))[2] == ["q2", "unextractable", ""]


def test_accuracy_whiskers_are_the_wilson_interval(qtbot, answers):
    widget = AccuracyPlot()
    qtbot.addWidget(widget)
    rows = accuracy_table(answers)
    widget.set_rows(rows)
    whiskers = [
        item
        for plot in widget.layout_widget.ci.items
        if hasattr(plot, "titleLabel")
        for item in plot.items
        if isinstance(item, pg.ErrorBarItem)
    ]
    drawn = sorted(
        (round(float(y - b), 9), round(float(y + t), 9))
        for item in whiskers
        for y, t, b in zip(item.opts["y"], item.opts["top"], item.opts["bottom"], strict=False)
    )
    assert drawn == sorted((round(r.wilson_low, 9), round(r.wilson_high, 9)) for r in rows)


def _panels(widget) -> list:
    return [item for item in widget.layout_widget.ci.items if hasattr(item, "titleLabel")]


def _legend_names(widget) -> list[str]:
    return [label.text for _sample, label in widget._legend.items]


def test_live_redraws_reuse_the_panels_and_the_legend(qtbot, answers):
    """A run in progress redraws the plot every few seconds: the panels (costly to create) are
    kept while the dataset splits stay the same, and the legend names each model once."""
    widget = AccuracyPlot()
    qtbot.addWidget(widget)
    widget.set_rows(accuracy_table(answers))
    first = _panels(widget)
    assert len(first) == 2 and _legend_names(widget) == ["gpt-4", "llama"]
    partial = [a for a in answers if a.sample_id.endswith(("-1", "-2", "-3"))]  # fewer answers, same splits
    widget.set_rows(accuracy_table(partial))
    widget.set_rows(accuracy_table(answers))
    assert _panels(widget) == first  # the same PlotItem objects
    assert _legend_names(widget) == ["gpt-4", "llama"]  # not repeated by the redraws
    bars = [item for item in first[0].items if isinstance(item, pg.BarGraphItem)]
    assert len(bars) == 2  # one per model: the previous contents were replaced, not added to
    widget.set_rows(accuracy_table([a for a in answers if a.dataset == "medqa" and a.model == "llama"]))
    assert len(_panels(widget)) == 1 and _panels(widget)[0] not in first  # other splits: new panels
    assert _legend_names(widget) == ["llama"]


def test_bar_labels_are_left_out_when_they_would_overlap(qtbot):
    many = [
        ScoredAnswer("d", "test", "m", f"- / trigger-{i:02d} / x", f"q{q}", "correct")
        for i in range(MAX_LABELLED_BARS + 1)
        for q in range(3)
    ]
    widget = AccuracyPlot()
    qtbot.addWidget(widget)
    widget.set_rows(accuracy_table(many[:-3]))
    (panel,) = _panels(widget)
    assert len(panel.getAxis("bottom")._tickLevels[0]) == MAX_LABELLED_BARS  # every bar named
    widget.set_rows(accuracy_table(many))
    assert panel.getAxis("bottom")._tickLevels[0] == []  # 13 bars: none named (the table names them)
    assert panel.getAxis("bottom").labelText == "trigger"  # the axis still says what they differ in


def test_accuracy_vs_tokens_has_a_panel_per_dataset_a_model_legend_and_plain_axes(qtbot, tmp_path, answers):
    from dataclasses import replace

    # Accuracies between 0.5 and 0.9 made pyqtgraph label the axis "accuracy (x0.001)".
    rows = [replace(row, accuracy=0.5 + 0.1 * (i % 5)) for i, row in enumerate(accuracy_table(answers))]
    widget = ParetoPlot()
    qtbot.addWidget(widget)
    widget.resize(900, 420)
    widget.set_rows(rows)
    assert sorted(widget.panels) == [("<b>pubmedqa</b>", "test"), ("medqa", "test")]
    for (dataset, _split), plot in widget.panels.items():
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            assert not axis.autoSIPrefix and "x0.00" not in axis.labelString()
        assert "&lt;b&gt;" in plot.titleLabel.text or dataset == "medqa"
        points = [item for item in plot.items if isinstance(item, pg.ScatterPlotItem)]
        assert sum(len(item.data) for item in points) == sum(1 for r in rows if r.dataset == dataset)
    legend = widget.legend
    assert legend is not None
    assert {label.text for _sample, label in legend.items} == {"gpt-4", "llama", "Pareto front"}
    _check_exports(widget, tmp_path, width=900)


def _painted(widget):
    return widget.layout_widget.grab().toImage()


@pytest.mark.parametrize("plot_class", [AccuracyPlot, ParetoPlot])
def test_a_live_redraw_paints_what_a_fresh_plot_paints(qtbot, answers, plot_class):
    """Issue 27, point 6: a redraw while a run is in progress replaces the data of the items it
    keeps (setOpts/setData) instead of re-creating panels and items, and shows the same picture
    as a plot drawn afresh, also when a model has no answers in one panel any more."""
    live, fresh = plot_class(), plot_class()
    for widget in (live, fresh):
        qtbot.addWidget(widget)
        widget.resize(900, 420)
    live.set_rows(accuracy_table(answers))
    panels = dict(live.panels if isinstance(live, ParetoPlot) else live._panels)
    items = [item for plot in panels.values() for item in plot.items]
    fewer = [a for a in answers if not (a.model == "llama" and a.dataset == "medqa") and not a.sample_id.endswith("7")]
    for rows in (accuracy_table(fewer), accuracy_table(answers)):
        live.set_rows(rows)
        fresh.set_rows(rows)
        assert _painted(live) == _painted(fresh)
        now = live.panels if isinstance(live, ParetoPlot) else live._panels
        assert now == panels and [item for plot in now.values() for item in plot.items] == items  # kept


def test_long_condition_labels_wrap_under_their_bars_and_the_legend_is_outside_the_data(qtbot, tmp_path):
    # Issue 28, point 1: at 1366x768 the labels of long conditions printed over each other and
    # the legend covered bars.
    from PySide6.QtGui import QFontMetrics

    from thoughtdesk.ui.evaluation.plots import tick_font, wrap_label

    conditions = [
        "plan-and-solve-detailed-v2 / kojima-01 / kojima-A-E",
        "self-consistency-medical-v3 / zhou-01 / kojima-A-E",
        "- / - / kojima-A-E",
        "chain-of-verification / lievin-02 / kojima-A-E",
    ]
    rows = [
        ScoredAnswer(dataset, "test", model, condition, f"q{q}", "correct" if q % 3 else "incorrect")
        for dataset in ("med_qa", "medmc_qa", "pubmed_qa")
        for model in ("gpt-4o-mini-2024-07-18", "llama-3.1-8b-instruct-q4_k_m")
        for condition in conditions
        for q in range(10)
    ]
    widget = AccuracyPlot()
    qtbot.addWidget(widget)
    widget.resize(1340, 330)  # the Results tab's plot area at 1366x768
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_rows(accuracy_table(rows))
    qtbot.waitUntil(lambda: not widget._relabel_timer.isActive(), timeout=5000)
    metrics = QFontMetrics(tick_font())
    for plot in widget._panels.values():
        ticks = plot.getAxis("bottom")._tickLevels[0]
        slot = plot.getViewBox().width() / len(ticks)
        for _x, label in ticks:
            widest = max(metrics.horizontalAdvance(line) for line in label.split("\n"))
            assert widest <= slot, f"{label!r} is {widest} px under a {slot:.0f} px bar slot"
    # The legend sits above the panels, not inside one.
    assert widget._legend is not None
    legend = widget._legend.sceneBoundingRect()
    for plot in widget._panels.values():
        assert not legend.intersects(plot.getViewBox().sceneBoundingRect())
    assert wrap_label("plan-and-solve-detailed-v2 / kojima-01", 12) == "plan-and-\nsolve-\ndetailed-v2…"
    assert wrap_label("kojima-01", 20) == "kojima-01"
    save = tmp_path / "accuracy.png"
    widget.export_png(save, width=1340)
    assert save.stat().st_size > 0


def test_no_axis_is_scaled_by_an_si_prefix():
    # The Critiques tab's dimension plot said "student model (x0.001)".
    from thoughtdesk.ui.evaluation.critique_plots import DimensionPlot

    widget = DimensionPlot()
    for side in ("left", "bottom"):
        assert not widget.plot.getAxis(side).autoSIPrefix
