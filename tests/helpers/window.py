"""The main window for tests: one way to open it, one to close it, and the fixtures built on them.

Fixtures (registered for the whole suite in ``tests/conftest.py``):

- ``window``: the real :class:`MainWindow` shown offscreen on ``window_library``;
- ``window_library``: the library file ``window`` opens. By default a new library in the
  test's folder, which gets the demo collection (as at a first start); a test folder overrides
  this fixture to open its own library (e.g. ``tests/ui/generation/conftest.py``);
- ``make_window``: a factory for tests that need another size, an active window or several
  windows (``make_window(path, size=(1500, 900), active=True)``).

Every window :func:`open_window` made is closed after its test (:func:`close_window` closes one
earlier, e.g. to start the app again on the same library).

Messages are found as a user sees them: :func:`message_boxes` lists the window's message boxes,
newest last.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from PySide6.QtTest import QTest

from thoughtdesk.ui.qt import QMessageBox, QWidget

if TYPE_CHECKING:  # imported when a window is made: a plugin of the whole suite, core tests too
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.ui.app.main_window import MainWindow


#: Windows open_window made and close_window has not closed yet.
_open: list[MainWindow] = []


def open_window(qtbot, library: Library, *, size: tuple[int, int] | None = None, active: bool = False) -> MainWindow:
    """Show a main window on ``library`` and wait until it is exposed (and active, if asked:
    window shortcuts such as Ctrl+2 need the active window)."""
    from thoughtdesk.ui.app.main_window import MainWindow

    window = MainWindow(library)
    _open.append(window)  # not qtbot.addWidget: close_window deletes it, and qtbot would again
    if size is not None:
        window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    if active:
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    return window


def close_window(window: MainWindow) -> None:
    """Close ``window`` once its background work settled, free its widgets while Qt is alive
    (pyqtgraph items collected at interpreter exit crash), then close its library."""
    if window not in _open:
        return
    _open.remove(window)
    deadline = time.monotonic() + 30
    # Only a Results tab already built: asking for it builds it, which reads the library (a test
    # may have damaged it on purpose).
    while window.evaluation_built and not window.evaluation.is_idle() and time.monotonic() < deadline:
        QTest.qWait(10)
    # Runs still at work (a test that failed mid-run): cancelled and waited for, up to 2 minutes
    # (a local model's step cannot be interrupted; on a loaded machine it took longer than the
    # window's own 5 s, and a window freed with its run thread alive aborted the test process).
    # Only a Generate feature already made: a test that never opened it does not make it here.
    generation = vars(window).get("generation")
    panel = getattr(generation, "runs_panel", None)
    if panel is not None:
        panel.shutdown(wait_ms=120_000)
    library = window.library
    window.close()
    window.deleteLater()
    QTest.qWait(10)  # runs the deferred delete
    gc.collect()
    if library is not None:
        library.close()


@pytest.fixture(autouse=True)
def _close_windows_after_the_test() -> Iterator[None]:
    """Every window a test opened is closed after it, even when the test failed."""
    yield
    while _open:
        close_window(_open[-1])


def message_boxes(window: QWidget) -> list[QMessageBox]:
    """The message boxes the window opened (error, shortcuts...), oldest first."""
    return window.findChildren(QMessageBox)


def last_message(window: QWidget) -> QMessageBox:
    """The message box the window opened last (fails the test when there is none)."""
    boxes = message_boxes(window)
    assert boxes, "the window showed no message"
    return boxes[-1]


def imported_outcomes(window: MainWindow) -> list:
    """The ``ImportOutcome`` of every import the window finishes from now on (File ▸ Import's
    ``imported`` signal), oldest first: call before starting the import."""
    reports: list = []
    window.importing.imported.connect(reports.append)
    return reports


@pytest.fixture
def window_library(tmp_path: Path) -> Path:
    """The library ``window`` opens: a new one, which gets the demo collection."""
    return tmp_path / "lib.thoughtdesk"


@pytest.fixture
def make_window(qtbot) -> Callable[..., MainWindow]:
    """``make_window(path, size=None, active=False)``: a shown main window on the library file at
    ``path`` (created with the demo collection when new); closed after the test."""
    from thoughtdesk.ui.app.startup import open_library_for_gui

    def make(path: Path, *, size: tuple[int, int] | None = None, active: bool = False) -> MainWindow:
        return open_window(qtbot, open_library_for_gui(path), size=size, active=active)

    return make


@pytest.fixture
def window(make_window, window_library: Path) -> MainWindow:
    """The main window on ``window_library``, shown offscreen."""
    return make_window(window_library)
