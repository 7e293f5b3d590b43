"""The "Compare two conditions" panel: the comparison is computed in the background, and a
redraw of the Results tab with unchanged outcomes does not compute it again."""

from __future__ import annotations

import random

from thoughtdesk.core.evaluation.evaluate import PairedOutcomes, compare_conditions
from thoughtdesk.core.evaluation.metrics import ScoredAnswer, accuracy_table
from thoughtdesk.ui.evaluation.conditions import ComparePanel


def _answers(seed: int) -> list[ScoredAnswer]:
    rng = random.Random(seed)
    return [
        ScoredAnswer("d", "test", "m", condition, f"q{q}", rng.choice(["correct", "incorrect"]))
        for condition in ("a", "b", "c")
        for q in range(40)
    ]


def test_a_redraw_with_the_same_outcomes_reuses_the_comparison(qtbot):
    """Issue 27, point 6: every live redraw started the bootstrap again (seconds of CPU in the
    thread pool, competing with the GUI thread); now only when the compared outcomes changed."""
    runs: list[tuple] = []

    def start_task(work, on_success, on_failed):  # the work runs at once, as the pool would
        outcome = work()
        runs.append(outcome[:2])
        on_success(outcome)

    panel = ComparePanel(start_task)
    qtbot.addWidget(panel)
    answers = _answers(1)
    rows = accuracy_table(answers)
    panel.set_snapshot(rows, PairedOutcomes(answers))
    shown = panel.result_label.text()
    assert len(runs) == 1 and "McNemar" in shown
    with qtbot.waitSignal(panel.compared) as blocker:
        panel.set_snapshot(rows, PairedOutcomes(list(answers)))  # a redraw: same outcomes
    assert len(runs) == 1 and panel.result_label.text() == shown
    a, b = runs[0]
    assert blocker.args == [compare_conditions(PairedOutcomes(answers), a, b)]
    changed = _answers(2)  # the same conditions, other outcomes: computed again
    panel.set_snapshot(accuracy_table(changed), PairedOutcomes(changed))
    assert len(runs) == 2 and runs[1] == (a, b)
    assert panel.result_label.text() != shown
