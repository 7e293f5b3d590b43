"""Rationale mining as runs of the generation engine (issue 28, point 11): ``thoughtdesk
rationales extract|filter`` plan a run (``--plan-only`` shows it and sends nothing), the run is
listed by ``thoughtdesk runs``, a killed pass resumed with ``thoughtdesk resume RUN`` sends each
unfinished request once and stores each rewrite and score once, and the engine's retry policy
retries a 429. Real library files, real ``thoughtdesk`` child processes, a real HTTP server on
127.0.0.1."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.core.rationales.test_mining import rewriting
from tests.helpers.cli import cli_process, run_cli_process
from tests.helpers.libraries import DEMO
from tests.helpers.servers import FakeModelServer, Recorded, Reply
from thoughtdesk.cli.main import main
from thoughtdesk.core.paths import CONFIG_DIR_ENV

DOCUMENTS = 16  # the demo collection's reference CoTs


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def _run(library_path, *args: str) -> int:
    return main(["--library", str(library_path), *args])


def _count(path: Path, sql: str) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def _document_of(record: Recorded) -> str:
    """The document a rewriting request carries (the built-in prompt's text after 'Text:')."""
    content = record.json["messages"][-1]["content"]
    return content.rsplit("Text:\n", 1)[1].rsplit("\n\nAnswer:", 1)[0]


def test_a_pass_is_a_planned_run_listed_by_thoughtdesk_runs(library_path, fake_server: FakeModelServer, capsys):
    fake_server.responder = rewriting
    base = ("--base-url", fake_server.base_url)
    # --plan-only: the counts and cost, nothing sent, no run written.
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", "--plan-only", *base) == 0
    out = capsys.readouterr().out
    assert f"{DOCUMENTS} rationale_extraction request(s): {DOCUMENTS} document(s) of {DEMO!r}" in out
    assert "prompt + at most" in out and "cost" in out
    assert fake_server.requests == [] and _count(library_path, "SELECT count(*) FROM run") == 0

    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", *base) == 0
    capsys.readouterr()
    fake_server.responder = None
    assert _run(library_path, "rationales", "filter", DEMO, "--scorer", "openai:m", "--plan-only", *base) == 0
    assert f"{DOCUMENTS} rationale_filter request(s): {DOCUMENTS} rationale(s)" in capsys.readouterr().out
    assert _run(library_path, "rationales", "filter", DEMO, "--scorer", "openai:m", "--tau", "0", *base) == 0
    capsys.readouterr()

    assert _run(library_path, "runs", "--json") == 0
    runs = {run["kind"]: run for run in json.loads(capsys.readouterr().out)}
    extraction, scoring = runs["rationale_extraction"], runs["rationale_filter"]
    assert (extraction["status"], extraction["total"], extraction["done"]) == ("done", DOCUMENTS, DOCUMENTS)
    assert (scoring["status"], scoring["total"], scoring["done"]) == ("done", DOCUMENTS, DOCUMENTS)
    assert extraction["collection"] == scoring["collection"] == DEMO
    assert _run(library_path, "runs") == 0
    listed = capsys.readouterr().out
    assert f"rationales extract {DEMO}" in listed and f"rationales filter {DEMO}" in listed

    # Everything done: a pass again plans nothing and writes no run.
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", *base) == 0
    assert f"0 done now, {DOCUMENTS} done before" in capsys.readouterr().out
    assert _count(library_path, "SELECT count(*) FROM run") == 2


def test_a_killed_extraction_resumed_sends_each_request_once_and_stores_each_rewrite_once(
    library_path, fake_server: FakeModelServer
):
    def slow(record: Recorded) -> Reply | None:
        reply = rewriting(record)
        assert reply is not None
        reply.delay = 0.3
        return reply

    fake_server.responder = slow
    process = cli_process(
        "rationales",
        "extract",
        DEMO,
        "--model",
        "openai:m",
        "--base-url",
        fake_server.base_url,
        "--concurrency",
        "2",
        library=library_path,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
        try:
            if _count(library_path, "SELECT count(*) FROM rationale_doc") >= 4:
                break
        except sqlite3.OperationalError:  # not created yet, or a write under way
            continue
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_at_kill = _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'")
    assert 4 <= done_at_kill < DOCUMENTS
    assert _count(library_path, "SELECT count(*) FROM rationale_doc") == done_at_kill
    # Resumed by the engine's own command, in a new process.
    fake_server.responder = rewriting
    sent_before = len(fake_server.requests)
    resumed = run_cli_process("resume", "1", library=library_path)
    assert resumed.returncode == 0, resumed.stderr
    # Exactly the requests without a result were sent again, each once.
    after_kill = Counter(_document_of(r) for r in fake_server.requests[sent_before:])
    assert sum(after_kill.values()) == DOCUMENTS - done_at_kill and set(after_kill.values()) == {1}
    checks = {
        "requests not done or without their rewrite": "SELECT count(*) FROM request WHERE status != 'done' "
        "OR result_doc_pk IS NULL",
        "rewrites without their request": "SELECT count(*) FROM rationale_doc WHERE id NOT IN "
        "(SELECT result_doc_pk FROM request)",
        "a document rewritten twice": "SELECT count(*) - count(DISTINCT doc_key) FROM rationale_doc",
        "a rewrite of another document": "SELECT count(*) FROM request q JOIN rationale_doc d ON d.id = q.result_doc_pk "
        "WHERE json_extract(q.params, '$.doc_key') != d.doc_key",
    }
    for what, sql in checks.items():
        assert _count(library_path, sql) == 0, what
    assert _count(library_path, "SELECT count(*) FROM rationale_doc") == DOCUMENTS
    assert _count(library_path, "SELECT count(*) FROM rationale") == DOCUMENTS
    assert _count(library_path, "SELECT count(*) FROM run") == 1


def test_a_killed_filter_resumed_scores_each_rationale_once(library_path, fake_server: FakeModelServer, capsys):
    fake_server.responder = rewriting
    base = ("--base-url", fake_server.base_url)
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", *base) == 0
    capsys.readouterr()

    def slow_scores(record: Recorded) -> Reply | None:
        return Reply(delay=0.3)  # the toy echo model, slowly

    fake_server.responder = slow_scores
    process = cli_process(
        "rationales", "filter", DEMO, "--scorer", "openai:m", *base, "--concurrency", "2", library=library_path
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
        try:
            if _count(library_path, "SELECT count(*) FROM rationale_score") >= 4:
                break
        except sqlite3.OperationalError:
            continue
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGKILL)
    process.wait()
    scored_at_kill = _count(library_path, "SELECT count(*) FROM rationale_score")
    assert 4 <= scored_at_kill < DOCUMENTS
    run_id = _count(library_path, "SELECT max(id) FROM run")
    fake_server.responder = None
    sent_before = len(fake_server.requests)
    resumed = run_cli_process("resume", str(run_id), library=library_path)
    assert resumed.returncode == 0, resumed.stderr
    # One rationale a document here: its two scorings (without, with) for each one not scored.
    assert len(fake_server.requests) - sent_before == 2 * (DOCUMENTS - scored_at_kill)
    assert _count(library_path, "SELECT count(*) FROM rationale_score") == DOCUMENTS
    assert _count(library_path, "SELECT count(DISTINCT rationale_id) FROM rationale_score") == DOCUMENTS
    assert _count(library_path, f"SELECT count(*) FROM request WHERE run_id = {run_id} AND status != 'done'") == 0


def test_the_engines_retry_policy_retries_a_429(library_path, fake_server: FakeModelServer, capsys):
    fake_server.responder = rewriting
    fake_server.script(Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0"}))
    base = ("--base-url", fake_server.base_url)
    assert _run(library_path, "rationales", "extract", DEMO, "--model", "openai:m", "--concurrency", "1", *base) == 0
    assert f"{DOCUMENTS} done now, 0 done before, 0 failed of {DOCUMENTS}" in capsys.readouterr().out
    assert len(fake_server.requests) == DOCUMENTS + 1  # the refused one, sent again
    assert _count(library_path, "SELECT count(*) FROM request WHERE attempts = 2") == 1
    assert _count(library_path, "SELECT count(*) FROM rationale_doc") == DOCUMENTS
