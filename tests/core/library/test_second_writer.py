"""A second process writing to the library (issue 15, point 5): a write used to fail after 10 s
with a raw "database is locked" traceback, and a running generation crashed mid-run. Now a write
waits for the other process, saying for whom it waits; a run keeps going."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.paths import FIXTURES
from tests.helpers.servers import FakeModelServer
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunProgress,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.library.store import Library

BUSY_TIMEOUT_SECONDS = 10  # SQLite's own busy timeout (store.py): a write used to fail after it
WAIT_TIMEOUT = 300  # generous: on a loaded 2-core machine a Python child takes seconds to start


@pytest.fixture
def library_path(tmp_path):
    return demo_library(tmp_path / "library.thoughtdesk")


class Holder:
    """Another process that holds a write, with the note an import leaves, until :meth:`release`:
    the test lets it go once the writer under test says it waits (past SQLite's own busy
    timeout), however long that writer took to start (it used to hold a fixed 13 s, which a
    loaded machine spent starting the child, so nothing waited and the test failed)."""

    def __init__(self, path) -> None:
        script = textwrap.dedent(
            f"""
            import json, os, sqlite3, sys, time
            path = {str(path)!r}
            open(path + "-writer.json", "w").write(json.dumps({{"pid": os.getpid(), "what": "importing big.json",
                                                                "since": time.time()}}))
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
            print("holding", flush=True)
            sys.stdin.readline()  # until the test releases it (or closes the pipe)
            conn.execute("COMMIT")
            os.remove(path + "-writer.json")
            """
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "holding"
        self.released = threading.Event()

    def release(self) -> None:
        if not self.released.is_set():
            self.released.set()
            assert self.process.stdin is not None
            self.process.stdin.write("release\n")
            self.process.stdin.flush()

    def __enter__(self) -> Holder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.stdin is not None and not self.released.is_set():
            self.released.set()
            self.process.stdin.close()  # its readline returns: it commits and ends
        try:
            self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def test_a_run_waits_for_another_writer_and_finishes(library_path):
    with FakeModelServer() as server:
        spec = RunSpec(
            samples=SampleSelection(DEMO, datasets=("gsm8k",)),
            models=(ModelSpec("openai", "m", base_url=server.base_url, timeout=5.0),),
            instructions=("qa-01",),
            cot_triggers=("kojima-01",),
            answer_extractions=(None,),
        )
        with Library.open(library_path) as lib:
            run_id = create_run(lib, plan_run(lib, spec))
        reports: list[RunProgress] = []
        with Holder(library_path) as holder:

            def progress(report: RunProgress) -> None:
                reports.append(report)
                if report.last_error and "waiting" in report.last_error:
                    holder.release()  # the run said it waits: the other process finishes its write

            started = time.monotonic()
            final = execute_run(library_path, run_id, progress=progress)
            assert holder.released.is_set(), "the run never said it waited"
    assert final.status == "done" and final.failed == 0
    assert time.monotonic() - started >= BUSY_TIMEOUT_SECONDS  # it really waited, past SQLite's own timeout
    waits = [r.last_error for r in reports if r.last_error and "waiting" in r.last_error]
    assert waits and "importing big.json (process" in waits[0]


def test_the_command_line_says_for_whom_it_waits(library_path):
    command = [sys.executable, "-m", "thoughtdesk", "--library", str(library_path), "import"]
    command += [str(FIXTURES / "thoughtsource" / "edge_cases.json"), "--collection", "edge"]
    with Holder(library_path) as holder:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines: list[str] = []

        def read_errors() -> None:  # the child's error lines, the holder released at the first wait
            assert child.stderr is not None
            for line in child.stderr:
                lines.append(line)
                if "waiting for another ThoughtDesk process" in line:
                    holder.release()

        reader = threading.Thread(target=read_errors, daemon=True)
        reader.start()
        try:
            holder.released.wait(timeout=WAIT_TIMEOUT)
            holder.release()  # (when it never said so: the assertions below tell what it said)
            child.wait(timeout=WAIT_TIMEOUT)
        finally:
            if child.poll() is None:
                child.kill()
        reader.join(timeout=60)
    result = subprocess.CompletedProcess(command, child.returncode, "", "".join(lines))
    assert result.returncode == 0, result.stderr
    assert "waiting for another ThoughtDesk process to finish writing" in result.stderr
    assert "importing big.json (process" in result.stderr and "Traceback" not in result.stderr
    with Library.open(library_path) as lib:
        assert lib.require_collection("edge")


def test_a_writer_marks_that_it_waits_only_while_another_connection_holds_a_long_write(library_path):
    """A staged import pauses between its transactions only when a writer waits (it used to
    pause after every one, costing an import alone ~5 %)."""
    waiting = library_path.with_name(library_path.name + "-waiting")
    with Library.open(library_path) as importer, Library.open(library_path) as other:
        with other.transaction():  # nobody holds a long write: no mark, nothing to pause for
            pass
        assert not waiting.exists() and not importer.writers_waiting()
        with importer.long_write("importing big.json"):
            with importer.transaction():  # the long writer's own writes mark nothing
                pass
            assert not importer.writers_waiting()
            with other.transaction():  # another connection's write marks that it waited
                pass
            assert importer.writers_waiting()
        assert not waiting.exists()  # the long write removes the mark when it ends
