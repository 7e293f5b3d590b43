"""Controlling an execution from other threads: pause, resume, cancel."""

from __future__ import annotations

import threading


class RunControl:
    """Pause, resume and cancel a running execution from any thread (GUI, signal handler).

    Honoured between requests: calls in flight finish and are stored; no new call starts while
    paused; after ``cancel()`` the executor returns with status ``cancelled`` (resumable).
    """

    def __init__(self) -> None:
        self._paused = threading.Event()
        self._cancelled = threading.Event()

    def pause(self) -> None:
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def paused(self) -> bool:
        return self._paused.is_set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()
