"""Background work with results delivered on the GUI thread: the one task API (Anki's ``QueryOp``).

A :class:`Task` runs a plain function in the thread pool; the function gets a
:class:`TaskContext` to report progress and to ask whether the user cancelled. It never touches
widgets: it returns data, and the callbacks get it on the GUI thread. Work that writes to the
library opens its own :class:`~thoughtdesk.core.library.store.Library` on the same file. A task
is configured before it starts, then started once::

    Task(work).on_success(self._show).on_failure(self._report).owned_by(self, self._tasks).start()
    Task(work).with_progress("Importing…", parent).on_success(done).start()

(:meth:`~thoughtdesk.ui.base.window_api.WindowApi.run_task` adds the window's progress dialog
and error reporting to the second form.)

Lifetime: a started task is held in ``_RUNNING`` until it finished. It has two signal objects.
The worker emits on its own (``Task._emitter``), which belongs to the application and is deleted
only after the worker emitted its last signal: an object deleted on the GUI thread while a pool
thread emits on it is a use-after-free in Qt (a segfault). Each of its signals is forwarded,
queued to the GUI thread, to :attr:`Task.signals`, where the callbacks are connected; that one
is parented to the application, or to its owner (:meth:`Task.owned_by`: the callbacks then die
with the owner, and Qt drops the deliveries already queued for it, so a closed dialog gets no
late call while the work still runs to its end). Python must not own either object: when one
sits in a reference cycle (a slot that mentions the task) the cycle collector may free it on
whichever thread collects, such as a pool thread; Qt aborts when a QObject is destroyed outside
its thread. After ``finished`` both are deleted with ``deleteLater`` on the GUI thread.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Generic, Self, TypeVar

from shiboken6 import isValid

from thoughtdesk.ui.qt import QCoreApplication, QObject, QProgressDialog, QRunnable, Qt, QThreadPool, QWidget, Signal

T_co = TypeVar("T_co", covariant=True)

_RUNNING: set[Task[object]] = set()


class TaskContext:
    """Handed to the work function: progress reporting and the cancel flag."""

    def __init__(self, signals: TaskSignals) -> None:
        self._signals = signals
        self._cancel = threading.Event()

    def progress(self, done: int, total: int) -> None:
        """Report ``done`` of ``total`` steps (total 0: unknown); safe from the worker thread."""
        self._signals.progress.emit(int(done), int(total))

    def cancelled(self) -> bool:
        """True once the user (or the caller) asked the work to stop."""
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Ask the work to stop at its next check of :meth:`cancelled`."""
        self._cancel.set()


class TaskSignals(QObject):
    """The task's queued signals (untyped ``object`` inside; :class:`Task` gives typed callbacks)."""

    progress = Signal(int, int)
    succeeded = Signal(object)
    failed = Signal(object)  # the exception
    finished = Signal()


class Task(QRunnable, Generic[T_co]):
    """Run ``work(context)`` in the global thread pool; see the module docstring.

    The ``on_*`` methods connect callbacks (several of each kind may be given; connect them
    before :meth:`start`, since a fast task may finish before a later connection). Success and
    failure callbacks run before the ``finished`` ones; after ``finished`` :attr:`done` is True.
    """

    def __init__(self, work: Callable[[TaskContext], T_co]) -> None:
        super().__init__()
        self.setAutoDelete(False)
        # The worker's signal object and the callbacks' (see the module docstring): the second
        # lives on the GUI thread, so each forwarded signal is queued there.
        self._emitter = TaskSignals()
        self.signals = TaskSignals()
        for name in ("progress", "succeeded", "failed", "finished"):
            getattr(self._emitter, name).connect(getattr(self.signals, name))
        self.context = TaskContext(self._emitter)
        self._left_run = threading.Event()  # set when the worker returned from its last emit
        self._work = work
        self._running: set[Task[object]] | None = None
        self._started = False
        self.done = False

    # Configuration (before start) ---------------------------------------------------------

    def on_success(self, callback: Callable[[T_co], object]) -> Self:
        """``callback(result)`` on the GUI thread when the work returned."""
        self.signals.succeeded.connect(callback)
        return self

    def on_failure(self, callback: Callable[[BaseException], object]) -> Self:
        """``callback(error)`` on the GUI thread when the work raised (``Cancelled`` included)."""
        self.signals.failed.connect(callback)
        return self

    def on_progress(self, callback: Callable[[int, int], object]) -> Self:
        """``callback(done, total)`` for each :meth:`TaskContext.progress` report."""
        self.signals.progress.connect(callback)
        return self

    def on_finished(self, callback: Callable[[], object]) -> Self:
        """``callback()`` after success or failure."""
        self.signals.finished.connect(callback)
        return self

    def owned_by(self, owner: QObject, running: set[Task[object]] | None = None) -> Self:
        """Parent the signal object to ``owner`` (callbacks die with it) and, with ``running``,
        keep the task in that set until it finished (for "is anything still running?")."""
        self.signals.setParent(owner)
        return self if running is None else self.tracked_in(running)

    def tracked_in(self, running: set[Task[object]]) -> Self:
        """Keep the task in ``running`` from :meth:`start` until it finished."""
        self._running = running
        return self

    def with_progress(self, label: str, parent: QWidget) -> Self:
        """A window-modal progress dialog over ``parent`` (after 300 ms) whose Cancel cancels."""
        dialog = QProgressDialog(label, "Cancel", 0, 0, parent)
        dialog.setObjectName("progressDialog")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(300)
        dialog.canceled.connect(self.context.cancel)

        def show_progress(done: int, total: int) -> None:
            if total:
                dialog.setMaximum(total)
            dialog.setValue(done)

        def close() -> None:
            dialog.reset()
            dialog.deleteLater()

        self.signals.progress.connect(show_progress)
        self.signals.finished.connect(close)
        return self

    # Running ------------------------------------------------------------------------------

    def start(self, pool: QThreadPool | None = None) -> Self:
        """Start the work in ``pool``, by default the global thread pool (once); returns the task."""
        if self._started:
            raise RuntimeError("a task starts once")
        self._started = True
        app = QCoreApplication.instance()
        if app is not None:
            self._emitter.setParent(app)
            if self.signals.parent() is None:
                self.signals.setParent(app)
        _RUNNING.add(self)
        if self._running is not None:
            self._running.add(self)
        # Connected after the forwarding to ``signals``: its ``finished`` callbacks run first. On
        # the emitter, not on ``signals``, so the task is let go even when its owner is gone.
        self._emitter.finished.connect(self._release)
        (pool if pool is not None else QThreadPool.globalInstance()).start(self)
        return self

    def cancel(self) -> None:
        """Ask the work to stop (see :meth:`TaskContext.cancel`)."""
        self.context.cancel()

    def run(self) -> None:  # QRunnable API; runs in a pool thread
        try:
            result = self._work(self.context)
        except BaseException as error:  # every failure goes back to the GUI
            # An attribute of our own on the exception (mypy: BaseException has no such attribute).
            error.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]  # ours, read by the crash report
            self._deliver("failed", error)
        else:
            self._deliver("succeeded", result)
        finally:
            self._deliver("finished")
            self._left_run.set()

    def _deliver(self, name: str, *args: object) -> None:
        """Emit ``<name>`` on the worker's signal object (alive until :meth:`_release`). A
        dialog closed while its work ran wants no result: its ``signals`` went with it, and
        Qt drops the forwarded delivery."""
        getattr(self._emitter, name).emit(*args)

    def _release(self) -> None:  # GUI thread, after ``finished``
        _RUNNING.discard(self)
        if self._running is not None:
            self._running.discard(self)
        self.done = True
        # The worker posted ``finished`` and is returning from that emit; the emitter is not
        # deleted under it (a wait of microseconds; the bound is a guard, never reached).
        self._left_run.wait(5.0)
        self._emitter.deleteLater()
        if isValid(self.signals):  # else it went with its owner
            self.signals.deleteLater()


def running_tasks() -> int:
    """How many started tasks have not yet delivered ``finished`` (for tests and shutdown)."""
    return len(_RUNNING)
