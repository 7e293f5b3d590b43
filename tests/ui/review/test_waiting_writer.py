"""While another process writes to the library, the Review tab never freezes and says why it waits
(issue 15, point 5: a rating or label written on the GUI thread could block the window up to
120 s with nothing shown)."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import Qt

from thoughtdesk.core.library.store import Library


class OtherWriter:
    """Another process's long import, played by a thread with its own connection: it holds the
    library's write lock (and says what it writes, as an import does) until released."""

    def __init__(self, path) -> None:
        self.path = path
        self.holding = threading.Event()
        self.release = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with Library.open(self.path) as lib, lib.long_write("importing ward.json"), lib.transaction():
            self.holding.set()
            self.release.wait(30)

    def __enter__(self) -> OtherWriter:
        self.thread.start()
        assert self.holding.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.thread.join(10)


def test_a_label_waits_off_the_gui_thread_and_the_wait_is_shown(session, qtbot) -> None:
    view, window = session.view, session.window
    cot_pk = view.current_cot_pk()
    status = window.statusBar()
    with OtherWriter(session.path):
        started = time.monotonic()
        session.key(Qt.Key.Key_1)  # toggle the first label: the library is locked
        session.key(Qt.Key.Key_S)  # and "preferred": queued behind it, in order
        blocked = time.monotonic() - started
        assert blocked < 2.0, f"the window was blocked {blocked:.1f} s"
        assert "Waiting for another ThoughtDesk process: importing ward.json" in status.currentMessage()
        assert not view.later.is_idle()
        # The worker's own wait is reported too (every 2 s), the window still answering.
        qtbot.waitUntil(lambda: " s; this window stays usable" in status.currentMessage(), timeout=8000)
        assert "importing ward.json (process" in status.currentMessage()
        assert session.review(cot_pk).labels == {}  # nothing written yet
    qtbot.waitUntil(view.later.is_idle, timeout=20000)
    review = session.review(cot_pk)
    assert review.labels == {"Incorrect reasoning": True} and review.preferred  # both, in order
    assert view.undo_stack.count() == 2
    session.key(Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo works as usual afterwards
    assert not session.review(cot_pk).preferred
