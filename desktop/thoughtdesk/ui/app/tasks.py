"""Background work with results delivered on the GUI thread (Anki's ``QueryOp`` pattern).

A :class:`Task` runs a plain function in the thread pool; the function gets a
:class:`TaskContext` to report progress and to ask whether the user cancelled. It never touches
widgets: it returns data, and the ``succeeded``/``failed`` signals hand it to the GUI thread.
Work that writes to the library opens its own :class:`Library` on the same file.

Lifetime: a started task is held in ``_RUNNING`` until it finished, and its signal object is
parented to the application (unless the caller gave it an owner). Otherwise Python owns the
signal object, and when it sits in a reference cycle (a slot that mentions the task) the cycle
collector may free it on whichever thread collects, such as a pool thread; Qt aborts when a
QObject is destroyed outside its thread. After ``finished`` the signal object is deleted with
``deleteLater`` on the GUI thread.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

from thoughtdesk.ui.qt import QCoreApplication, QObject, QRunnable, QThreadPool, Signal

_RUNNING: set[Task] = set()


class TaskContext:
    """Handed to the work function: progress reporting and the cancel flag."""

    def __init__(self, signals: TaskSignals) -> None:
        self._signals = signals
        self._cancel = threading.Event()

    def progress(self, done: int, total: int) -> None:
        self._signals.progress.emit(int(done), int(total))

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()


class TaskSignals(QObject):
    progress = Signal(int, int)
    succeeded = Signal(object)
    failed = Signal(object)  # the exception
    finished = Signal()


class Task(QRunnable):
    """Run ``work(context)`` in the global thread pool."""

    def __init__(self, work: Callable[[TaskContext], Any]) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.signals = TaskSignals()
        self.context = TaskContext(self.signals)
        self._work = work

    def run(self) -> None:  # runs in a pool thread
        try:
            result = self._work(self.context)
        except BaseException as error:  # every failure goes back to the GUI
            error.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
            self.signals.failed.emit(error)
        else:
            self.signals.succeeded.emit(result)
        finally:
            self.signals.finished.emit()

    def start(self) -> Task:
        signals = self.signals
        if signals.parent() is None and QCoreApplication.instance() is not None:
            signals.setParent(QCoreApplication.instance())
        _RUNNING.add(self)
        # Connect slots before start(): a fast task may finish before a later connection. The
        # object is deleted with deleteLater, so slots already queued for ``finished`` still run.
        signals.finished.connect(self._release)
        QThreadPool.globalInstance().start(self)
        return self

    def _release(self) -> None:  # GUI thread, after ``finished``
        _RUNNING.discard(self)
        self.signals.deleteLater()


def running_tasks() -> int:
    """How many started tasks have not yet delivered ``finished`` (for tests and shutdown)."""
    return len(_RUNNING)
