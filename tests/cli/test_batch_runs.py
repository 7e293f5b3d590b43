"""``generate --batch``, ``resume`` of a batch run, ``runs`` showing batch state and
``runs --cancel`` against a local server with OpenAI's batch endpoints (issue 17, point 1)."""

from __future__ import annotations

import json

from tests.helpers.batch_server import BatchServer
from tests.helpers.libraries import DEMO
from thoughtdesk.cli.main import main
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
