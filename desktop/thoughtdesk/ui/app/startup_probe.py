"""Cold-start measurement: quit as soon as the main window is first painted.

Used with ``THOUGHTDESK_QUIT_WHEN_SHOWN=1`` by ``tests/benchmarks/bench_cold_start.py`` and the
frozen-app smoke test: prints ``window-shown <seconds>`` (seconds since the process started,
from the kernel's process start time where available) and exits 0. With
``THOUGHTDESK_MEASURE_STALLS=1`` it first runs a 10 ms heartbeat timer on the GUI thread for
2 s after that paint (what loads after the first paint must not freeze the window) and prints
``longest-stall <ms>``: the longest gap between two beats, less the 10 ms interval.
"""

from __future__ import annotations

import os
import sys
import time

from thoughtdesk.ui.qt import QApplication, QEvent, QObject, Qt, QTimer, QWidget

MEASURE_STALLS_ENV = "THOUGHTDESK_MEASURE_STALLS"
HEARTBEAT_MS = 10
WATCH_SECONDS = 2.0


def seconds_since_process_start() -> float | None:
    """Wall seconds since this process was created (Linux /proc; None elsewhere)."""
    try:
        with open(f"/proc/{os.getpid()}/stat", "rb") as stream:
            fields = stream.read().rsplit(b")", 1)[1].split()
        start_ticks = int(fields[19])  # field 22 of stat: start time in clock ticks after boot
        with open("/proc/uptime", "rb") as stream:
            uptime = float(stream.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _FirstPaint(QObject):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.done = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        if not self.done and event.type() in (QEvent.Type.Paint, QEvent.Type.Expose):
            self.done = True
            elapsed = seconds_since_process_start()
            shown = f"{elapsed:.3f}" if elapsed is not None else "nan"
            sys.stdout.write(f"window-shown {shown}\n")
            sys.stdout.flush()
            if os.environ.get(MEASURE_STALLS_ENV) == "1":
                self._watch_stalls()
            else:
                QTimer.singleShot(0, QApplication.quit)
        return False

    def _watch_stalls(self) -> None:
        self._started = self._last = time.perf_counter()
        self._longest = 0.0
        self._beat = QTimer(self)
        self._beat.setTimerType(Qt.TimerType.PreciseTimer)
        self._beat.timeout.connect(self._on_beat)
        self._beat.start(HEARTBEAT_MS)

    def _on_beat(self) -> None:
        now = time.perf_counter()
        self._longest = max(self._longest, now - self._last - HEARTBEAT_MS / 1000)
        self._last = now
        if now - self._started >= WATCH_SECONDS:
            self._beat.stop()
            sys.stdout.write(f"longest-stall {self._longest * 1000:.0f}\n")
            sys.stdout.flush()
            QTimer.singleShot(0, QApplication.quit)


def quit_when_shown(window: QWidget) -> None:
    """Print the time and quit after the first paint of ``window``."""
    window.installEventFilter(_FirstPaint(window))
