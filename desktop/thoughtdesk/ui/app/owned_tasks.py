"""Background work owned by a widget: ``work()`` without a context, results to plain callbacks.

:meth:`Task.start <thoughtdesk.ui.app.tasks.Task.start>` already keeps every task alive until it
finished and gives its signal object a GUI-thread parent (so no cycle frees it on a pool thread).
:func:`start_owned_task` makes ``owner`` that parent instead, so the connections die with the
widget (a closed dialog gets no late callback), and keeps the task in the caller's ``running``
set while it runs (for "is anything still running?" checks such as ``ResultsView.is_idle``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thoughtdesk.ui.app.tasks import Task
from thoughtdesk.ui.qt import QObject


def start_owned_task(
    owner: QObject,
    running: set[Task],
    work: Callable[[], Any],
    on_success: Callable[[Any], None],
    on_failure: Callable[[BaseException], None] | None = None,
) -> Task:
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
