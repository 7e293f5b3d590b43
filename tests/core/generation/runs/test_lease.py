"""One process executes a run at a time (issue 15, points 3 and 14): two `resume` processes on
one run sent every request twice and stored everything twice; a killed run showed "running" for
ever. Now the second process is refused naming the holder, and a run whose holder is gone is
shown as interrupted, with how to resume it."""

from __future__ import annotations

import itertools
import json
import signal
import threading
import time

from tests.core.generation.runs.conftest import DEMO
from tests.core.generation.runs.test_resume_and_secrets import _cli, _count
from tests.helpers.cli import run_cli
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.runs import ModelSpec, RunSpec, SampleSelection, create_run, list_runs, plan_run
from thoughtdesk.core.generation.runs.lease import RunBusyError, claim_run, holder_alive, is_interrupted
from thoughtdesk.core.library.store import Library, _waiting_path


def _plan(library_path, server: FakeModelServer, timeout: float = 10.0) -> int:
    spec = RunSpec(
        samples=SampleSelection(DEMO),
        models=(ModelSpec("openai", "slow", base_url=server.base_url, timeout=timeout),),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=(None,),
    )
    with Library.open(library_path) as lib:
        return create_run(lib, plan_run(lib, spec))


def _wait_until(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.02)


def _lease_expires(library_path, run_id: int) -> float:
    return _count(library_path, f"SELECT lease_expires FROM run WHERE id = {run_id}")


def _read(path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def _wait_for(library_path, sql: str, at_least: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _count(library_path, sql) >= at_least:
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {sql}")


#: The longest a held request waits (and the client's timeout for it: a request timed out and
#: retried while held would be sent twice).
HELD = 300.0


def _held_until(gate: threading.Event, answered: int):
    """A responder that answers the first ``answered`` requests at once and holds the others
    until ``gate`` is set: a run that is at work for as long as the test needs, however slowly
    the machine starts a process (fixed delays were outrun by a child's start under load)."""
    count = itertools.count()

    def respond(_record):
        if next(count) >= answered:
            gate.wait(HELD)
        return None  # the normal answer

    return respond


def test_a_second_resume_is_refused_and_nothing_is_sent_twice(library_path):
    gate = threading.Event()
    with FakeModelServer() as server:
        server.responder = _held_until(gate, 2)
        run_id = _plan(library_path, server, timeout=HELD)
        first = _cli(library_path, "resume", str(run_id), "--concurrency", "2")
        try:
            _wait_for(library_path, "SELECT count(*) FROM request WHERE status = 'done'", 2)
            second = _cli(library_path, "resume", str(run_id), "--concurrency", "8")
            out, err = second.communicate(timeout=120)
        finally:
            gate.set()  # the first goes on
        assert second.returncode == 1, out
        assert f"run {run_id} is being executed by process {first.pid}" in err and "Traceback" not in err
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        assert len(server.requests) == 16  # each request sent once
    assert _count(library_path, "SELECT count(*) - count(DISTINCT cot_id) FROM generated_cot") == 0
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'") == 16
    assert _count(library_path, "SELECT count(*) FROM run WHERE holder IS NOT NULL") == 0  # released


def test_a_killed_run_is_shown_interrupted_and_resumes(library_path):
    gate = threading.Event()
    with FakeModelServer() as server:
        server.responder = _held_until(gate, 2)  # killed while it waits for its third answer
        run_id = _plan(library_path, server, timeout=HELD)
        process = _cli(library_path, "resume", str(run_id), "--concurrency", "1")
        try:
            _wait_for(library_path, "SELECT count(*) FROM request WHERE status = 'done'", 2)
            process.send_signal(signal.SIGKILL)
            process.wait()
        finally:
            gate.set()
        with Library.open(library_path) as lib:
            (run,) = [r for r in list_runs(lib) if r.id == run_id]
        assert run.status == "running" and run.interrupted and run.shown_status == "interrupted"
        out = run_cli("runs", library=library_path).stdout
        assert f"interrupted - resume with: thoughtdesk resume {run_id}" in out
        out = run_cli("runs", "--json", library=library_path).stdout
        assert json.loads(out)[0]["interrupted"] is True
        resumed = _cli(library_path, "resume", str(run_id))
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
    with Library.open(library_path) as lib:
        (run,) = [r for r in list_runs(lib) if r.id == run_id]
    assert run.status == "done" and not run.interrupted and run.done == 16


def test_the_lease_rules(library_path, tmp_path):
    with FakeModelServer() as server:
        run_id = _plan(library_path, server)
    with Library.open(library_path) as lib:
        lease = claim_run(lib, run_id)
        # This process again (a GUI resuming its own run) may claim it; a live other one may not.
        claim_run(lib, run_id)
        lib.conn.execute("UPDATE run SET holder = ? WHERE id = ?", ("elsewhere:1:abcd", run_id))
        try:
            claim_run(lib, run_id)
        except RunBusyError as error:
            assert "process 1 on elsewhere" in str(error)
        else:
            raise AssertionError("a live holder elsewhere was not respected")
        lib.conn.execute("UPDATE run SET lease_expires = ? WHERE id = ?", (time.time() - 1, run_id))
        claim_run(lib, run_id)  # expired: taken over
        lease.release()
    now = time.time()
    assert not holder_alive(None, None) and not holder_alive("h:1:x", now - 1, now)
    assert is_interrupted("running", None, None) and not is_interrupted("done", None, None)


def test_a_run_waiting_to_write_keeps_its_lease(library_path, monkeypatch):
    """Issue 15, point 3 (audit): the lease is renewed on the run's event loop, which a write
    waiting for another process blocks; holding the library's write lock for longer than the
    lease made the live run list as interrupted, and a second resume could take it over and
    resend its requests in flight. The heartbeat thread keeps the run held while it waits."""
    from thoughtdesk.core.generation.runs import RunLimits, execute_run
    from thoughtdesk.core.generation.runs import lease as lease_module

    monkeypatch.setattr(lease_module, "LEASE_SECONDS", 1.0)  # this process only: the lease, and its renewal
    monkeypatch.setattr(lease_module, "RENEW_SECONDS", 0.2)
    with FakeModelServer() as server:
        server.script(*[Reply(delay=0.1) for _ in range(16)])
        run_id = _plan(library_path, server)
        outcome: list = []
        worker = threading.Thread(
            target=lambda: outcome.append(execute_run(library_path, run_id, limits=RunLimits(concurrency=1))),
            daemon=True,
        )
        worker.start()
        _wait_for(library_path, "SELECT count(*) FROM request WHERE status = 'done'", 2)
        # Another writer holds the library's write lock, as a long import does: it says so
        # beside the library, so each writer that waits for it marks that it waits (with its pid).
        other = Library.open(library_path)
        try:
            with other.long_write("a test holding the write lock"), other.transaction():
                # Until the 1 s lease has run out: the run's next write waits all this time.
                _wait_until(lambda: _lease_expires(library_path, run_id) < time.time() - 0.5)
                with Library.open(library_path) as lib:
                    (run,) = [r for r in list_runs(lib) if r.id == run_id]
                assert _lease_expires(library_path, run_id) < time.time()  # the lease could not be renewed...
                assert run.status == "running" and not run.interrupted  # ...but the run is still held
                second = _cli(library_path, "resume", str(run_id))
                # It waits for the write lock too, to claim the run: released only once it does
                # (it marks that it waits), however long its start takes.
                waiting = _waiting_path(library_path)
                _wait_until(lambda: second.poll() is not None or _read(waiting) == str(second.pid))
        finally:
            other.close()
        out, err = second.communicate(timeout=60)
        assert second.returncode == 1, out
        assert f"run {run_id} is being executed by process" in err
        worker.join(timeout=60)
        assert outcome and outcome[0].done == 16
        assert len(server.requests) == 16  # nothing sent twice
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'") == 16
    assert not lease_module.heartbeat_path(library_path, run_id).exists()  # removed with the lease
