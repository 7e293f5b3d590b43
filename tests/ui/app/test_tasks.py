"""The one background-task API: what happens when the widget that owns a task goes first."""

from __future__ import annotations

import threading

from shiboken6 import isValid

from thoughtdesk.ui.app.tasks import Task, running_tasks
from thoughtdesk.ui.qt import QWidget


def test_a_task_whose_owner_was_closed_drops_its_result_quietly(qtbot):
    """A dialog closed while its work runs: no callback, no error in the pool thread, no leak.

    The owner takes the task's signal object with it; emitting on it from the pool thread raised
    "Signal source has been deleted" there (seen in CI between two tests), and the task stayed
    counted as running for ever.
    """
    owner = QWidget()
    release = threading.Event()
    results: list[object] = []
    running: set[Task[int]] = set()
    before = running_tasks()
    task = Task(lambda _ctx: release.wait(10) and 42).on_success(results.append).owned_by(owner, running).start()
    assert task in running
    owner.deleteLater()
    qtbot.waitUntil(lambda: not isValid(task.signals), timeout=5000)  # gone with its owner
    release.set()
    qtbot.waitUntil(lambda: not running and running_tasks() == before, timeout=5000)
    qtbot.wait(50)  # any late delivery would arrive now
    assert results == []
