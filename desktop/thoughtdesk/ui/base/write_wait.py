"""Writes that wait for another ThoughtDesk process, shown in the window (issue 15, point 5).

Every write of this process that waits for another process's write (an import in another
window or a ``thoughtdesk import`` in a terminal) is told to :func:`write_wait_relay`'s signal,
from whatever thread it waits on; the main window shows it in the status bar ("Waiting for
another ThoughtDesk process: importing ward.json (process 4711), 20 s"). The GUI thread's own
connection waits at most :data:`GUI_WRITE_PATIENCE` seconds, so the window never freezes: a
change it could not write in that time is written by a worker, which waits with the message.
"""

from __future__ import annotations

from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import QObject, Signal

#: Seconds a write on the GUI thread waits for another process before it is handed to a worker.
GUI_WRITE_PATIENCE = 0.4
#: Seconds a worker that took over such a write waits (then the change is reported unsaved).
WORKER_WRITE_PATIENCE = 900.0


def waiting_text(seconds: float | None, what: str | None) -> str:
    """``Waiting for another ThoughtDesk process: importing x.json (process 12), 20 s``."""
    doing = f": {what}" if what else ""
    waited = f", {seconds:.0f} s" if seconds else ""
    return f"Waiting for another ThoughtDesk process{doing}{waited}"


class WriteWaitRelay(QObject):
    """Carries write waits of any thread to the GUI thread (see the module docstring)."""

    #: ``(float, str | None)``: seconds waited so far, what the other process said it does.
    waiting = Signal(float, object)

    def report(self, seconds: float, what: str | None) -> None:
        self.waiting.emit(seconds, what)


_relay: list[WriteWaitRelay] = []


def write_wait_relay() -> WriteWaitRelay:
    """The process's relay, made (on the GUI thread) and installed for every connection at first use."""
    if not _relay:
        _relay.append(WriteWaitRelay())
        Library.report_write_waits(_relay[0].report)
    return _relay[0]
