"""The unhandled-exception dialog: the error is logged, and the user is told where.

:func:`install_crash_handler` replaces ``sys.excepthook`` (PySide6 hands exceptions raised in
slots to it). The dialog is plain text and names the log file; the library needs no rescue,
since every write is a transaction that either happened whole or not at all.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
import traceback
from pathlib import Path
from types import TracebackType

from thoughtdesk.core.library.file_faults import library_error
from thoughtdesk.core.settings.logs import log_file, redact
from thoughtdesk.ui.qt import QApplication, QMessageBox, Qt

log = logging.getLogger("thoughtdesk.crash")

#: The crash dialog shown last: a window without a parent, held here so it is not collected.
_dialog: QMessageBox | None = None
#: The library the window shows, so an SQLite failure can be told with its name.
_library: Path | None = None


def set_crash_library(path: Path | None) -> None:
    """Name the open library for the crash dialog (the main window calls this when it opens one)."""
    global _library
    _library = path


_previous_hook = sys.excepthook


def crash_message(error: BaseException, library: Path | None = None) -> str:
    """The dialog's text: what happened, where the details are, and that the data is safe. An
    SQLite failure that comes from the library file's state (damaged, read-only, disk full) is
    told in words with what to do (``library``: the open library's path)."""
    if isinstance(error, sqlite3.Error) and library is not None:
        translated = library_error(error, library)
        if translated is not None:
            return f"{translated}.\n\nThe details were written to the log file:\n{log_file()}"
    summary = redact(f"{type(error).__name__}: {error}")[:500]
    return (
        "ThoughtDesk hit an unexpected error and could not finish what it was doing.\n\n"
        f"{summary}\n\n"
        f"The details were written to the log file:\n{log_file()}\n\n"
        "Your library is safe: every change is saved as a whole or not at all. If this happens "
        "again, please send the log file with a description of what you did (API keys are "
        "removed from it)."
    )


def handle_exception(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
    """Log the exception with its traceback and show the crash dialog (when a GUI runs)."""
    global _dialog
    if issubclass(kind, KeyboardInterrupt):
        _previous_hook(kind, error, tb)
        return
    log.critical("unhandled exception", exc_info=(kind, error, tb))
    if QApplication.instance() is None:
        traceback.print_exception(kind, error, tb)
        return
    box = QMessageBox(
        QMessageBox.Icon.Critical,
        "ThoughtDesk: unexpected error",
        crash_message(error, _library),
        QMessageBox.StandardButton.Ok,
    )
    box.setObjectName("crashDialog")
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    _dialog = box
    box.show()  # not exec(): the hook may run inside a slot, and a nested loop there is fragile


def install_crash_handler() -> None:
    """Route unhandled exceptions to :func:`handle_exception`."""
    sys.excepthook = handle_exception
