"""Review changes written by a worker while another process writes (issue 15, point 5).

An edit (or its undo or redo) is written on the GUI thread, which waits at most
``ui.base.write_wait.GUI_WRITE_PATIENCE`` for another process's write (an import elsewhere). A
change that could not be written in that time is queued here and written, in order, by one
worker at a time on its own connection, which waits as long as it takes (the window's status bar
says for what); changes made meanwhile join the queue, so they are written in the order they were
made. A change that cannot be written at all is reported and its undo entry dropped
(:meth:`~thoughtdesk.ui.review.commands.ReviewCommand.failed`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from thoughtdesk.core.library.store import Library, read_writer_note
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.write_wait import WORKER_WRITE_PATIENCE, waiting_text
from thoughtdesk.ui.qt import QObject
from thoughtdesk.ui.review.commands import ReviewCommand, Write


@dataclass
class _Later:
    command: ReviewCommand
    write: Write


class LaterWrites(QObject):
    """The queue of changes waiting for another process (see the module docstring);
    ``say(text)`` tells the user what happens."""

    def __init__(self, say: Callable[[str], None], parent: QObject) -> None:
        super().__init__(parent)
        self._say = say
        self._queue: deque[_Later] = deque()
        self._running: set[Task[object]] = set()
        self.path: Path | None = None

    @property
    def pending(self) -> bool:
        """Changes wait to be written: a new one must queue behind them, not go first."""
        return bool(self._queue)

    def add(self, command: ReviewCommand, write: Write) -> None:
        """Write ``command``'s change (``write``) once the changes before it are written."""
        if self.path is None:
            return
        self._queue.append(_Later(command, write))
        what = read_writer_note(self.path)
        self._say(f"{waiting_text(None, what)}: “{command.text()}” is saved when it has finished")
        if len(self._queue) == 1:
            self._next()

    def _next(self) -> None:
        if not self._queue or self.path is None:
            return
        item, path = self._queue[0], self.path

        def work(_ctx: TaskContext) -> None:
            with Library.open(path, create=False) as library:
                library.set_write_patience(WORKER_WRITE_PATIENCE, report_every=2.0)  # the window shows each wait
                item.write(library)

        def saved(_result: object) -> None:
            self._queue.popleft()
            self._say(f"Saved “{item.command.text()}”")
            item.command.written()
            self._next()

        def failed(error: BaseException) -> None:
            self._queue.popleft()
            item.command.failed(error)
            self._next()

        Task(work).on_success(saved).on_failure(failed).owned_by(self, self._running).start()

    def is_idle(self) -> bool:
        """Nothing queued and no worker at work (tests wait for this)."""
        return not self._queue and not self._running
