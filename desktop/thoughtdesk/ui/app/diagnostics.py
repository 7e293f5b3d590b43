"""What goes wrong below Python ends up in the log folder too.

- **Native crashes.** A segmentation fault in Qt or llama.cpp kills the process before any
  Python handler runs. :func:`enable_native_crash_log` points :mod:`faulthandler` at
  ``<log folder>/native-crash.log`` (appended), so the Python stack of every thread at the
  moment of the crash is kept where the user is told to look (Help > Open log folder).
- **Qt's own messages.** Qt warnings ("QPainter::begin: Paint device returned engine == 0",
  a missing platform plugin...) go to stderr, which a desktop launch discards.
  :func:`route_qt_messages` installs a Qt message handler that writes them to the application
  log (logger ``thoughtdesk.qt``) at the matching level, with secrets redacted like every record.
"""

from __future__ import annotations

import faulthandler
import logging
from pathlib import Path
from typing import IO

from thoughtdesk.core.settings.logs import log_dir
from thoughtdesk.ui.qt import QtMsgType, qInstallMessageHandler

NATIVE_CRASH_LOG = "native-crash.log"

qt_log = logging.getLogger("thoughtdesk.qt")

#: The open crash log: faulthandler writes to its file descriptor, which must stay open.
_crash_file: IO[str] | None = None

_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def enable_native_crash_log(folder: Path | None = None) -> Path:
    """Write Python's stacks on a native crash (SIGSEGV, SIGABRT, SIGFPE...) to
    ``folder/native-crash.log`` (default: the log folder); returns its path."""
    global _crash_file
    path = (folder or log_dir()) / NATIVE_CRASH_LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    if _crash_file is not None:
        _crash_file.close()
    _crash_file = path.open("a", encoding="utf-8")
    faulthandler.enable(file=_crash_file, all_threads=True)
    return path


def disable_native_crash_log() -> None:
    """Stop writing native crashes to the file (tests; the process keeps no open handle)."""
    global _crash_file
    faulthandler.disable()
    if _crash_file is not None:
        _crash_file.close()
        _crash_file = None


def qt_message(kind: QtMsgType, context: object, message: str) -> None:
    """Qt's message handler: one log record per message, at the level Qt gave it."""
    where = getattr(context, "category", None) or "qt"
    qt_log.log(_LEVELS.get(kind, logging.WARNING), "%s: %s", where, message)


def route_qt_messages() -> None:
    """Send Qt's debug, warning and critical messages to the application log."""
    qInstallMessageHandler(qt_message)
