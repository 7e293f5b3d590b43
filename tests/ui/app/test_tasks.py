"""The one background-task API: what happens when the widget that owns a task goes first."""

from __future__ import annotations

import threading

from shiboken6 import isValid

from thoughtdesk.ui.base.tasks import Task, running_tasks
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
    running: set[Task[object]] = set()
    before = running_tasks()
    task = Task(lambda _ctx: release.wait(10) and 42).on_success(results.append).owned_by(owner, running).start()
    assert task in running
    owner.deleteLater()
    qtbot.waitUntil(lambda: not isValid(task.signals), timeout=5000)  # gone with its owner
    release.set()
    qtbot.waitUntil(lambda: not running and running_tasks() == before, timeout=5000)
    qtbot.wait(50)  # any late delivery would arrive now
    assert results == []


def close_owner_while_the_worker_emits(qtbot, steps: int) -> None:
    """One round: the worker emits ``steps`` progress reports while the owner is deleted."""
    owner = QWidget()
    started, closed = threading.Event(), threading.Event()
    reached: list[int] = []
    results: list[object] = []
    failures: list[BaseException] = []
    progress_after_close: list[int] = []
    running: set[Task[object]] = set()
    before = running_tasks()

    def work(ctx) -> int:
        started.set()
        for i in range(steps // 2):  # racing with the owner's deletion
            ctx.progress(i, steps)
        # The rest only once the owner is gone: on a loaded machine the whole work could
        # otherwise end, and its result be delivered, before the deletion was processed.
        assert closed.wait(30)
        for i in range(steps // 2, steps):
            ctx.progress(i, steps)
        reached.append(steps)
        return steps

    def on_progress(done: int, _total: int) -> None:
        if closed.is_set():
            progress_after_close.append(done)

    task = (
        Task(work)
        .on_progress(on_progress)
        .on_success(results.append)
        .on_failure(failures.append)
        .owned_by(owner, running)
        .start()
    )
    assert started.wait(5)
    owner.deleteLater()
    qtbot.waitUntil(lambda: not isValid(owner), timeout=5000)
    closed.set()
    qtbot.waitUntil(lambda: not running and running_tasks() == before, timeout=10000)
    qtbot.wait(20)  # any late delivery would arrive now
    assert reached == [steps]  # the work ran to its end: no error from a deleted signal object
    assert results == [] and failures == [] and progress_after_close == []
    assert task.done


def test_closing_the_owner_while_the_worker_emits_does_not_crash_or_stop_the_work(qtbot):
    """The owner deleted on the GUI thread while the worker emits progress as fast as it can.

    The worker used to emit on the owner's child: a delete racing an emit is a use-after-free in
    Qt (a segfault, 2 runs in 3 before the fix), and an emit after it raised RuntimeError inside
    the work, which stopped half-way. Now the worker's signal object lives until the task
    finished; only the callbacks go with the owner.
    """
    for _ in range(10):
        close_owner_while_the_worker_emits(qtbot, 5000)
