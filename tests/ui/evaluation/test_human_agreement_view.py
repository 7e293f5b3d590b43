"""Results > Judges vs humans (issue 26, point 3): per judge version kappa and accuracy with
intervals, the confusion matrix, the disagreements opening their samples, template versions on
the same human labels, and what an empty collection says."""

from __future__ import annotations

from tests.core.review.test_judge_agreement import _critique, _critique_run, _samples_with_cots
from tests.helpers.screenshots import save_screenshot
from thoughtdesk.core.critiques import ExplanationRating, add_explanation_rating
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.preferences import set_preference
from thoughtdesk.ui.evaluation.human_agreement_view import EMPTY_HINT


def _show(window, qtbot):
    view = window.evaluation
    window.show_tab(view)
    view.views.setCurrentWidget(view.human_agreement)
    qtbot.waitUntil(lambda: view.human_agreement.report is not None and view.is_idle(), timeout=30000)
    return view.human_agreement


def test_empty_collection_says_how_to_get_human_verdicts(window, qtbot):
    panel = _show(window, qtbot)
    assert panel.report.judges == [] and panel.status.text() == EMPTY_HINT


def test_judges_against_humans_with_versions_confusion_and_disagreements(window, qtbot, tmp_path):
    path = window.library.path
    with Library.open(path) as lib, lib.transaction() as conn:
        groups = _samples_with_cots(lib, 2)
        cots = [cot for group in groups for cot in group[:2]]
        human = {cot: (i * 2) % 6 for i, cot in enumerate(cots)}
        first = _critique_run(conn, "td-critique-v1", "first wording")
        second = _critique_run(conn, "td-critique-v1", "edited wording")
        for cot, score in human.items():
            add_explanation_rating(conn, cot, ExplanationRating("ann", score))
            _critique(conn, cot, "DS-7B", score, first)
            _critique(conn, cot, "DS-7B", 5 - score, second)
        for group in groups:
            a, b = group[:2]
            set_preference(conn, "ann", a, b, a if human[a] >= human[b] else b)
    panel = _show(window, qtbot)
    qtbot.waitUntil(lambda: bool(panel.report.judges), timeout=30000)
    assert panel.judges_model.rowCount() == 4  # 2 versions x (pairwise, explanation score)
    assert f"{len(groups)} pair(s) with a human verdict by 1 reviewer(s)" in panel.status.text()
    cells = panel.judges_model.cells
    assert {row[1].split("@")[0] for row in cells} == {"td-critique-v1"} and len({row[1] for row in cells}) == 2
    assert panel.versions_model.rowCount() == 4  # each measure: both versions on the common items
    worst = min(range(len(cells)), key=lambda r: panel.report.judges[r].accuracy or 0)
    panel.judges.selectRow(worst)
    judge = panel.report.judges[worst]
    assert panel.disagreements_model.rowCount() == judge.n_disagreements > 0
    assert panel.confusion_model.headers[1:] == list(judge.categories)
    total = sum(int(c) for row in panel.confusion_model.cells for c in row[1:])
    assert total == judge.n
    panel.details.setCurrentIndex(1)
    window.resize(1366, 768)
    assert save_screenshot(window, tmp_path, "results-judges-vs-humans").stat().st_size > 10_000
    assert panel.open_disagreement(panel.disagreements_model.index(0, 0))
    assert window.samples.current_sample_key() == judge.disagreements[0].sample_pk
