"""A second process writing to the library (issue 15, point 5): a write used to fail after 10 s
with a raw "database is locked" traceback, and a running generation crashed mid-run. Now a write
waits for the other process, saying for whom it waits; a run keeps going."""

from __future__ import annotations

import subprocess
import sys
import textwrap
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

HOLD_SECONDS = 13  # past SQLite's own 10 s busy timeout


@pytest.fixture
def library_path(tmp_path):
    return demo_library(tmp_path / "library.thoughtdesk")


def _hold_the_library(path) -> subprocess.Popen:
    """Another process that writes for HOLD_SECONDS, with the note an import leaves."""
    script = textwrap.dedent(
        f"""
        import json, os, sqlite3, sys, time
        path = {str(path)!r}
        open(path + "-writer.json", "w").write(json.dumps({{"pid": os.getpid(), "what": "importing big.json",
                                                            "since": time.time()}}))
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        print("holding", flush=True)
        time.sleep({HOLD_SECONDS})
        conn.execute("COMMIT")
        os.remove(path + "-writer.json")
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


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
        holder = _hold_the_library(library_path)
        reports: list[RunProgress] = []
        started = time.monotonic()
        final = execute_run(library_path, run_id, progress=reports.append)
        holder.wait(timeout=60)
    assert final.status == "done" and final.failed == 0
    assert time.monotonic() - started >= HOLD_SECONDS - 3  # it really waited
    waits = [r.last_error for r in reports if r.last_error and "waiting" in r.last_error]
    assert waits and "importing big.json (process" in waits[0]


def test_the_command_line_says_for_whom_it_waits(library_path):
    holder = _hold_the_library(library_path)
    result = subprocess.run(
        [sys.executable, "-m", "thoughtdesk", "--library", str(library_path), "import"]
        + [str(FIXTURES / "thoughtsource" / "edge_cases.json"), "--collection", "edge"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    holder.wait(timeout=60)
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
