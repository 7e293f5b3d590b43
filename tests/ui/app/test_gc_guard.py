"""The cycle collector runs on the GUI thread only (thoughtdesk.ui.app.gc_guard)."""

from __future__ import annotations

import gc
import threading

from thoughtdesk.ui.app import gc_guard
from thoughtdesk.ui.qt import QObject


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it
        self.freed_on: list[str] = []


def test_collects_on_the_gui_thread_when_the_threshold_passes(qapp):
    owner = QObject()
    try:
        collector = gc_guard.GarbageCollector(owner, interval_ms=10_000)
        assert not gc.isenabled()
        gc.collect()
        assert collector.check() == 0  # nothing due yet
        before = collector.collections
        freed_threads = []

        class Tracked(Node):
            def __del__(self) -> None:
                freed_threads.append(threading.current_thread().name)

        for _ in range(collector.threshold[0] + 50):
            Tracked()
        assert collector.check() > 0
        assert collector.collections == before + 1
        assert freed_threads and set(freed_threads) == {threading.main_thread().name}
    finally:
        del owner
    assert not gc.isenabled()  # the session's setting (disabled by conftest) is kept


def test_install_is_idempotent(qapp):
    first = gc_guard.install(qapp)
    assert gc_guard.install(qapp) is first
    assert first.timer.isActive()
    first.setParent(None)  # leave the session's application as the fixture made it
    first.deleteLater()


def test_freezing_startup_objects_makes_a_full_collection_cheap(qapp):
    try:
        frozen = gc_guard.freeze_startup_objects()
        assert frozen > 1000  # the interpreter, PySide6 and thoughtdesk modules at least
        assert gc.get_freeze_count() == frozen
        assert len(gc.get_objects(generation=2)) < frozen
    finally:
        gc.unfreeze()  # later tests make their own garbage
