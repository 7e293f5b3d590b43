"""One helper for "refresh soon, once": debounce, fold requests into a running refresh, wait
until shown (after qutebrowser's ``misc/throttle.py``, plus background work and visibility).

A view asks for a refresh with :meth:`Throttle.request` as often as it likes; the refresh runs

- after ``delay_ms`` without a further request (a debounce; ``None`` runs it at once);
- one at a time: a refresh that needs background work returns its
  :class:`~thoughtdesk.ui.base.tasks.Task` configured but not started (the throttle connects to
  its end, then starts it), and requests until that task finished are folded into one more
  refresh after it;
- with ``visible_only``, only while the widget is shown: requests while it is hidden mark it
  stale, and the refresh runs when it is shown again.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.qt import QEvent, QObject, QTimer, QWidget, Signal


class Throttle(QObject):
    """Runs ``refresh()`` on request, debounced and one at a time; see the module docstring.

    ``refresh`` does its work at once and returns None, or returns an unstarted task.
    """

    #: A refresh finished and no other is waiting.
    idle = Signal()

    def __init__(
        self,
        widget: QWidget,
        refresh: Callable[[], Task[object] | None],
        *,
        delay_ms: int | None = 0,
        visible_only: bool = False,
    ) -> None:
        super().__init__(widget)
        self._widget = widget
        self._refresh = refresh
        self._delay_ms = delay_ms
        self._visible_only = visible_only
        self._running: Task[object] | None = None
        self._wanted = False
        #: A request came while the widget was hidden: refresh when it is shown.
        self.stale = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms or 0)
        self._timer.timeout.connect(self._fire)
        if visible_only:
            widget.installEventFilter(self)

    def request(self) -> None:
        """Refresh soon (see the module docstring)."""
        if self._visible_only and not self._widget.isVisible():
            self.stale = True
            return
        self._wanted = True
        if self._running is not None:
            return  # folded: one more refresh after the running one
        if self._delay_ms is None:
            self._fire()
        else:
            self._timer.start()

    def busy(self) -> bool:
        """A refresh is running or waiting for its delay."""
        return self._running is not None or self._timer.isActive()

    def _fire(self) -> None:
        self._timer.stop()
        self._wanted = False
        self.stale = False
        task = self._refresh()
        if task is None:
            self._settled()
            return
        self._running = task
        task.on_finished(self._finished).start()

    def _finished(self) -> None:
        self._running = None
        self._settled()

    def _settled(self) -> None:
        if self._wanted:
            self._wanted = False
            self.request()
        elif not self._timer.isActive():
            self.idle.emit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt API
        if watched is self._widget and event.type() == QEvent.Type.Show and self.stale:
            # After the widget's own show handling (e.g. a sample it was asked to show meanwhile).
            QTimer.singleShot(0, self, self.request)
        return False
