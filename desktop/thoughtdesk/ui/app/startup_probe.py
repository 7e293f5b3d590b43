"""Cold-start measurement: quit as soon as the main window is first painted.

Used with ``THOUGHTDESK_QUIT_WHEN_SHOWN=1`` by ``tests/benchmarks/bench_cold_start.py`` and the
frozen-app smoke test: prints ``window-shown <seconds>`` (seconds since the process started,
from the kernel's process start time where available) and exits 0.
"""

from __future__ import annotations

import os
import sys

from thoughtdesk.ui.qt import QApplication, QEvent, QObject, QTimer, QWidget


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
            QTimer.singleShot(0, QApplication.quit)
        return False


def quit_when_shown(window: QWidget) -> None:
    """Print the time and quit after the first paint of ``window``."""
    window.installEventFilter(_FirstPaint(window))
