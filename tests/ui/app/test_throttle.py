"""The one "refresh soon, once" helper: debounce, requests folded into a running refresh, and
refreshes that wait until the widget is shown (real widgets, real background tasks)."""

from __future__ import annotations

import threading

from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.base.throttle import Throttle
from thoughtdesk.ui.qt import QWidget


def test_requests_within_the_delay_are_one_refresh(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    runs: list[int] = []
    throttle = Throttle(widget, lambda: runs.append(1), delay_ms=50)
    for _ in range(5):
        throttle.request()
    assert runs == [] and throttle.busy()
    with qtbot.waitSignal(throttle.idle, timeout=10000):
        pass
    assert runs == [1] and not throttle.busy()


def test_without_a_delay_the_refresh_runs_at_once(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    runs: list[int] = []
    throttle = Throttle(widget, lambda: runs.append(1), delay_ms=None)
    throttle.request()
    throttle.request()
    assert runs == [1, 1] and not throttle.busy()


def test_requests_while_a_task_runs_are_folded_into_one_more_run(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    release = threading.Event()
    started: list[int] = []

    def refresh() -> Task[int]:
        started.append(len(started))
        return Task(lambda _ctx: release.wait(10) and len(started))

    throttle = Throttle(widget, refresh, delay_ms=None)
    throttle.request()
    assert started == [0] and throttle.busy()
    for _ in range(3):
        throttle.request()  # while the first runs: folded
    assert started == [0]
    with qtbot.waitSignal(throttle.idle, timeout=5000):
        release.set()
    assert started == [0, 1] and not throttle.busy()


def test_a_hidden_widget_refreshes_when_it_is_shown(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    runs: list[int] = []
    throttle = Throttle(widget, lambda: runs.append(1), delay_ms=None, visible_only=True)
    throttle.request()
    throttle.request()
    assert runs == [] and throttle.stale and not throttle.busy()
    widget.show()
    qtbot.waitUntil(lambda: runs == [1], timeout=10000)
    assert not throttle.stale
    widget.hide()
    widget.show()  # nothing changed meanwhile: no refresh
    qtbot.wait(50)
    assert runs == [1]
