"""``generate --batch``, ``resume`` of a batch run, ``runs`` showing batch state and
``runs --cancel`` against a local server with OpenAI's batch endpoints (issue 17, point 1)."""

from __future__ import annotations

import asyncio
import json

from tests.core.generation.runs.batch_support import PRICES, batch_spec, counts, create, stored
from tests.helpers.batch_server import BatchServer
from tests.helpers.libraries import DEMO
from thoughtdesk.cli.main import main
from thoughtdesk.core.generation.backends.batches import OpenAIBatches
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import advance_batch_run
from thoughtdesk.core.library.store import Library

KEY = "sk-cli-batch-71c2"


def _generate(library_path, server, *extra):
    return main(
        [
            "--library",
            str(library_path),
            "generate",
            DEMO,
            "--model",
            "openai:m",
            "--base-url",
            server.base_url + "/v1",
            "--dataset",
            "med_qa",
            "--one-step",
            "--batch",
            *extra,
        ]
    )


def test_generate_batch_then_resume_fetches_and_runs_shows_state(library_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with BatchServer(polls_before_done=0) as server:
        assert _generate(library_path, server) == 0
        captured = capsys.readouterr()
        assert "submitted" in captured.out and "batched" in captured.out
        assert "`thoughtdesk resume 1` fetches what is ready" in captured.err
        assert main(["--library", str(library_path), "runs"]) == 0
        listing = capsys.readouterr().out
        assert "\tbatched\t" in listing and "\tbatch openai batch_" in listing and "due 20" in listing
        assert main(["--library", str(library_path), "resume", "1", "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["status"] == "done" and result["stored"] > 0 and result["submitted"] == 0
        assert main(["--library", str(library_path), "runs", "--json"]) == 0
        runs = json.loads(capsys.readouterr().out)
        assert runs[0]["status"] == "done" and runs[0]["batches"][0]["status"] == "completed"
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM request WHERE status != 'done'").fetchone()[0] == 0
    assert KEY not in library_path.read_bytes().decode("utf-8", "replace")


def test_plan_only_shows_batch_price_and_deadline(library_path, capsys):
    with BatchServer() as server:
        assert _generate(library_path, server, "--plan-only") == 0
    err = capsys.readouterr().err
    assert "at the batch price" in err and "results due within 24 h, by 20" in err


def test_batch_with_a_local_model_is_refused_in_one_line(library_path, capsys, tmp_path):
    code = main(["--library", str(library_path), "generate", DEMO, "--model", f"llamacpp:{tmp_path}/m.gguf", "--batch"])
    err = capsys.readouterr().err
    assert code != 0 and "has no batch API" in err and err.count("\n") == 1
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM run").fetchone()[0] == 0


def test_runs_cancel_cancels_open_batches(library_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with BatchServer(polls_before_done=10) as server:
        assert _generate(library_path, server) == 0
        capsys.readouterr()
        assert main(["--library", str(library_path), "runs", "--cancel", "1"]) == 0
        assert "1 batch(es) cancelled" in capsys.readouterr().out
        assert all(job.cancelled for job in server.jobs.values())


def _status(library_path, run_id=1) -> str:
    with Library.open(library_path) as lib:
        return lib.conn.execute("SELECT status FROM run WHERE id = ?", (run_id,)).fetchone()[0]


def test_resume_after_a_cancel_stores_what_was_answered_and_sends_nothing_unless_asked(
    library_path, capsys, monkeypatch
):
    """Before, ``runs --cancel`` said resume "stores what they answered", and resume also
    submitted every unanswered request again as a new paid batch."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with BatchServer(polls_before_done=10, answered_when_cancelled=2) as server:
        assert _generate(library_path, server) == 0
        total = len(server.submitted)
        capsys.readouterr()
        assert main(["--library", str(library_path), "runs", "--cancel", "1"]) == 0
        said = capsys.readouterr().out
        assert "`thoughtdesk resume 1` stores what they answered before the cancel and sends nothing" in said
        assert "--resubmit" in said and "--direct" in said
        assert main(["--library", str(library_path), "resume", "1"]) == 0
        captured = capsys.readouterr()
        assert len(server.jobs) == 1  # nothing submitted again
        assert f"2 answer(s) its batches gave were stored now; {total - 2} request(s) were not answered" in captured.err
        assert "`thoughtdesk resume 1 --resubmit` sends them in new batches" in captured.err
        assert _status(library_path) == "cancelled"
        with Library.open(library_path) as lib:
            done = lib.conn.execute("SELECT count(*) FROM request WHERE status = 'done'").fetchone()[0]
        assert done == 2
        # Asked for: the rest goes in a new batch.
        assert main(["--library", str(library_path), "resume", "1", "--resubmit"]) == 0
        assert len(server.jobs) == 2 and len(server.submitted) == total + (total - 2)
        assert _status(library_path) == "batched"


def test_resume_direct_stores_ended_batches_first_and_keeps_polling_the_open_ones(library_path, capsys, monkeypatch):
    """Before, ``resume N --direct`` left requests in open batches alone and ended the run as
    if nothing waited (neither done nor batched): the app stopped polling, their results were
    never stored; and an item a finished batch had failed was not sent."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with BatchServer(polls_before_done=0) as server:
        run_id = create(library_path, batch_spec(server, "openai", mode=PromptMode.ONE_STEP))
        total = sum(counts(library_path, run_id).values())
        client = OpenAIBatches(server.base_url + "/v1", KEY)
        client.limits = (3, 10**9)  # two batches: 3 requests and the rest
        try:
            advance_batch_run(library_path, run_id, clients={0: client}, prices=PRICES)
        finally:
            asyncio.run(client.aclose())
        first, second = server.jobs
        server.hold = {second}  # still processing
        server.fail_ids = {server.jobs[first].requests[0]["custom_id"]}  # one item of the first fails
        capsys.readouterr()
        assert main(["--library", str(library_path), "resume", str(run_id), "--direct"]) == 0
        err = capsys.readouterr().err
        assert len(server.direct_calls) == 1  # the failed item, sent directly
        assert f"{total - 3} request(s) still wait in open batches" in err
        assert _status(library_path, run_id) == "batched"  # the app keeps polling it
        server.hold.clear()
        assert main(["--library", str(library_path), "resume", str(run_id)]) == 0
        assert _status(library_path, run_id) == "done" and len(server.jobs) == 2 and len(server.direct_calls) == 1
    assert stored(library_path, run_id) == (total, total)


def test_resume_direct_of_a_two_step_run_whose_cot_batch_is_open_says_so_and_exits(library_path):
    """Issue 23, point 6: ``resume N --direct`` on a two-step batch run whose first batch (the
    CoTs) was still open hung for ever and sent nothing: its extractions, which wait for those
    CoTs, were counted as work to do. Now it says how many requests wait in open batches, in
    one line, and leaves the run waiting for them."""
    import os
    import subprocess
    import sys

    from tests.helpers.paths import ROOT

    with BatchServer(polls_before_done=0) as server:
        run_id = create(library_path, batch_spec(server, "openai"))  # two-step: CoTs, then extractions
        total = sum(counts(library_path, run_id).values())
        client = OpenAIBatches(server.base_url + "/v1", KEY)
        try:
            advance_batch_run(library_path, run_id, clients={0: client}, prices=PRICES)
        finally:
            asyncio.run(client.aclose())
        (first,) = server.jobs
        server.hold = {first}  # the CoTs' batch is still processing
        env = {**os.environ, "PYTHONPATH": str(ROOT / "desktop"), "OPENAI_API_KEY": KEY, "NO_PROXY": "127.0.0.1"}
        result = subprocess.run(
            [sys.executable, "-m", "thoughtdesk", "--library", str(library_path), "resume", str(run_id), "--direct"],
            capture_output=True,
            text=True,
            timeout=120,  # it hung for ever before
            env=env,
        )
        assert result.returncode == 0, result.stderr
        assert server.direct_calls == []  # nothing could go: every CoT waits in the open batch
        lines = [line for line in result.stderr.splitlines() if line.startswith("thoughtdesk:")]
        assert len(lines) == 1, result.stderr
        assert f"{total // 2} request(s) still wait in open batches" in lines[0]
        assert f"and {total // 2} extraction(s) wait for their CoTs from them" in lines[0]
        assert "Traceback" not in result.stderr
        assert _status(library_path, run_id) == "batched"  # the app keeps polling it
        server.hold.clear()
        assert main(["--library", str(library_path), "resume", str(run_id)]) == 0  # CoTs stored, extractions submitted
        assert main(["--library", str(library_path), "resume", str(run_id)]) == 0
        assert _status(library_path, run_id) == "done"
    assert stored(library_path, run_id) == (total // 2, total // 2)
