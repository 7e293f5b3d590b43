"""Exactly once whatever the processes do (issue 23, point 3): a generate or critique run stopped
with SIGSTOP (Ctrl+Z), resumed from another process, then continued (SIGCONT, ``fg``) stored
every request it had in flight a second time (48 CoTs for 40 requests). Now a result is stored
only by the holder of its request's current claim (checked in the storing transaction); the
stale process discards what it receives, says so, and leaves the run's status alone."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tests.core.generation.runs.conftest import DEMO
from tests.core.generation.runs.test_resume_and_secrets import _cli, _count
from tests.helpers.servers import FakeModelServer, Recorded, Reply
from thoughtdesk.core.generation.runs.lease import heartbeat_path

CONCURRENCY = 6


def _wait(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class _HeldServer(FakeModelServer):
    """Holds every answer until ``release`` is set (then answers normally)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.responder = self._held

    def _held(self, record: Recorded) -> Reply | None:
        self.release.wait(120)
        return None


def _suspend_resume_elsewhere_continue(library_path, server: _HeldServer, first, run_sql: str) -> tuple[str, str]:
    """SIGSTOP ``first`` with requests in flight, let its lease lapse, resume the run in a second
    process until it ends, then SIGCONT the first; return the first's output."""
    try:
        _wait(lambda: server.in_flight >= CONCURRENCY, f"{CONCURRENCY} requests in flight")
        os.kill(first.pid, signal.SIGSTOP)
        run_id = _count(library_path, run_sql)
        # What 30 s of the first process being stopped does (its lease and heartbeat lapse),
        # without waiting for it: the lease expired, the heartbeat file old.
        import sqlite3

        conn = sqlite3.connect(library_path, timeout=30)
        with conn:
            conn.execute("UPDATE run SET lease_expires = 0 WHERE id = ?", (run_id,))
        conn.close()
        beat = heartbeat_path(library_path, run_id)
        if beat.exists():
            os.utime(beat, (0, 0))
        server.release.set()  # the first's answers wait in its sockets; the second's come at once
        second = _cli(library_path, "resume", str(run_id), "--concurrency", str(CONCURRENCY))
        out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err
        assert "Traceback" not in err
    finally:
        server.release.set()
        os.kill(first.pid, signal.SIGCONT)
    out, err = first.communicate(timeout=300)
    assert "Traceback" not in err, err
    return out, err


@pytest.mark.timeout(900)
def test_a_suspended_generate_run_resumed_elsewhere_stores_each_cot_once(library_path):
    before = _count(library_path, "SELECT count(*) FROM generated_cot")
    with _HeldServer() as server:
        first = _cli(
            library_path,
            "generate",
            DEMO,
            "--model",
            "openai:slow",
            "--base-url",
            server.base_url,
            "--one-step",
            "--n",
            "2",
            "--concurrency",
            str(CONCURRENCY),
        )
        out, err = _suspend_resume_elsewhere_continue(
            library_path, server, first, "SELECT max(id) FROM run WHERE status IN ('running', 'planned')"
        )
        requests = _count(library_path, "SELECT count(*) FROM request")
        assert requests == 32
        assert len(server.requests) >= requests + CONCURRENCY  # the first's were sent again by the second
    assert _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'") == requests
    assert _count(library_path, "SELECT count(*) FROM generated_cot") - before == requests  # 38 before the fix
    assert _count(library_path, "SELECT count(*) FROM answer WHERE answer_id LIKE 'td-%'") == requests
    assert _count(library_path, "SELECT count(*) - count(DISTINCT cot_id) FROM generated_cot") == 0
    assert _count(library_path, "SELECT count(*) FROM run WHERE status = 'done'") == 1
    assert "was taken over by" in err and "discarded" in err, err


@pytest.mark.timeout(900)
def test_a_suspended_critique_run_resumed_elsewhere_stores_each_critique_once(library_path):
    with _HeldServer() as server:
        first = _cli(
            library_path,
            "critique",
            DEMO,
            "--model",
            "openai:judge",
            "--base-url",
            server.base_url,
            "--concurrency",
            str(CONCURRENCY),
        )
        _suspend_resume_elsewhere_continue(
            library_path, server, first, "SELECT max(id) FROM run WHERE status IN ('running', 'planned')"
        )
        requests = _count(library_path, "SELECT count(*) FROM request WHERE step = 'critique'")
        assert requests > CONCURRENCY
    assert _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'") == requests
    assert _count(library_path, "SELECT count(*) FROM critique WHERE run_id IS NOT NULL") == requests
    assert (
        _count(library_path, "SELECT count(*) - count(DISTINCT request_id) FROM critique WHERE run_id IS NOT NULL") == 0
    )
