"""Background work whose Qt objects are owned by a widget, so none is freed on a worker thread.

A :class:`~thoughtdesk.ui.workers.Task`'s signal object has no parent, so Python owns it; when it
sits in a reference cycle (a slot that mentions the task), Python's cycle collector may free it
on whichever thread happens to collect, such as a run's executor thread, and Qt crashes when a
QObject is destroyed outside its thread. :func:`start_owned_task` parents the signal object to
``owner`` (destroyed on the GUI thread with it, or after the task finished via ``deleteLater``)
and keeps the task referenced until it finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thoughtdesk.ui.qt import QObject
from thoughtdesk.ui.workers import Task


def start_owned_task(owner: QObject, running: set[Task], work: Callable[[], Any],
                     on_success: Callable[[Any], None],
                     on_failure: Callable[[BaseException], None] | None = None) -> Task:
    """Run ``work()`` in the thread pool; its result or exception is delivered on the GUI thread.

    ``running`` holds the task until it finished (the caller can count or wait on it).
    """
    task = Task(lambda _ctx: work())
    signals = task.signals
    signals.setParent(owner)
    signals.succeeded.connect(on_success)
    if on_failure is not None:
        signals.failed.connect(on_failure)
    running.add(task)
    signals.finished.connect(lambda: running.discard(task))
    return task.start()
