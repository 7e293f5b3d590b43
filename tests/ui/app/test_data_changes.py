"""``data_changed`` says what changed and who changed it: each view refreshes only for what it
shows and skips what it already shows (the real main window, offscreen)."""

from __future__ import annotations

from thoughtdesk.ui.base.changes import DataChanges


def test_the_samples_tab_refreshes_for_what_it_shows_only(window, qtbot):
    samples = window.samples
    with qtbot.assertNotEmitted(samples.browse_refreshed, wait=300):
        window.notify_data_changed(DataChanges(runs=True))  # the run list only
    with qtbot.assertNotEmitted(samples.browse_refreshed, wait=300):
        window.notify_data_changed(DataChanges.imported(initiator=samples))  # it shows this already
    with qtbot.waitSignal(samples.browse_refreshed, timeout=10000):
        window.notify_data_changed(DataChanges(annotations=True))  # the Annotated column


def test_the_review_tab_skips_its_own_changes(window, qtbot, monkeypatch):
    reloads: list[int] = []
    monkeypatch.setattr(window.review.view, "reload", lambda: reloads.append(1))
    window.show_tab(window.review.view)
    qtbot.waitUntil(window.review.view.isVisible, timeout=5000)
    window.notify_data_changed(DataChanges(annotations=True, initiator=window.review))
    window.notify_data_changed(DataChanges(runs=True))
    assert reloads == []
    window.notify_data_changed(DataChanges(cots=True))  # e.g. a run stored new CoTs
    assert reloads == [1]


def test_the_review_tab_reloads_when_shown_after_a_change_elsewhere(window, qtbot, monkeypatch):
    reloads: list[int] = []
    monkeypatch.setattr(window.review.view, "reload", lambda: reloads.append(1))
    window.notify_data_changed(DataChanges(answers=True))  # the tab is hidden: later
    window.notify_data_changed(DataChanges(answers=True))
    assert reloads == []
    window.show_tab(window.review.view)
    qtbot.waitUntil(lambda: reloads == [1], timeout=5000)


def test_the_results_tab_recomputes_when_scores_change_only(window, qtbot):
    view = window.evaluation
    window.show_tab(view)
    qtbot.waitUntil(lambda: view.snapshot is not None and view.is_idle(), timeout=30000)
    window.notify_data_changed(DataChanges(annotations=True))
    assert view.is_idle()  # annotations are not scored
    window.notify_data_changed(DataChanges(answers=True, initiator=view))  # its own re-scoring too
    assert not view.is_idle()
    qtbot.waitUntil(view.is_idle, timeout=30000)
