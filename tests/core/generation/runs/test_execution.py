"""Executing runs against real servers on 127.0.0.1: results, provenance, faults, dedup, resume."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import replace
from typing import Any

import pytest

from tests.core.generation.runs.conftest import DEMO
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import AuthError, ModelNotFound, ModelPrice, PriceTable
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunControl,
    RunLimits,
    RunProgress,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
    resume_run,
    run_info,
    run_requests,
)
from thoughtdesk.core.library.store import Library

FAST = RunLimits(concurrency=4, max_attempts=4, initial_wait=0.05)


def _run(path, spec):
    with Library.open(path) as lib:
        return create_run(lib, plan_run(lib, spec))


def _spec(server: FakeModelServer, **changes) -> RunSpec:
    options: dict[str, Any] = dict(
        samples=SampleSelection(DEMO, datasets=("med_qa",)),
        models=(ModelSpec("openai", "m", base_url=server.base_url, timeout=2.0),),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D",),
    )
    options.update(changes)
    return RunSpec(**options)


def _cot_rows(path):
    with Library.open(path) as lib:
        return lib.conn.execute(
            "SELECT cot_id, sample_pk, cot, extra FROM generated_cot WHERE cot_id LIKE 'td-%' ORDER BY id"
        ).fetchall()


def test_two_step_run_stores_cots_answers_and_provenance(library_path, fake_server):
    run_id = _run(library_path, _spec(fake_server, n=2))
    seen: list[RunProgress] = []
    prices = PriceTable([ModelPrice("local", "m", 1000.0, 2000.0)])  # USD per million tokens
    final = execute_run(library_path, run_id, limits=FAST, progress=seen.append, prices=prices)
    assert final.status == "done" and final.done == final.total == 20 and final.failed == 0
    assert seen[-1].remaining == 0 and seen[-1].eta == 0
    assert len(fake_server.requests) == 20
    cots = _cot_rows(library_path)
    assert len(cots) == 10 and len({c[0] for c in cots}) == 10
    extra = json.loads(cots[0][3])["thoughtdesk"]
    assert extra["provider"] == "openai" and extra["model"] == "m"
    assert extra["params"]["temperature"] == 0.0 and extra["params"]["max_tokens"] == 256
    assert extra["fragments"]["cot_trigger"] == {
        "key": "kojima-01",
        "text": "Answer: Let's think step by step.",
        "citation": extra["fragments"]["cot_trigger"]["citation"],
    }
    assert extra["prompt"].endswith("Answer: Let's think step by step.")
    assert extra["raw_response"].startswith("{") and extra["latency"] > 0
    assert extra["prompt_tokens"] > 0 and extra["sent_at"] <= extra["finished_at"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", extra["finished_at"])  # core.library.timestamps
    assert extra["completion_tokens"] > 0 and extra["tokens_reported"] is True
    assert extra["cost"] == pytest.approx((extra["prompt_tokens"] * 1000.0 + extra["completion_tokens"] * 2000.0) / 1e6)
    assert extra["base_url"] == fake_server.base_url and extra["step"] == "cot" and extra["attempts"] == 1
    assert extra["params"]["seed_used"] is None and extra["fragments"]["instruction"]["key"] == "qa-01"
    assert extra["fragments"]["cot_template"]["text"].startswith("{instruction}")
    assert final.cost == pytest.approx(
        sum(
            (p * 1000.0 + c * 2000.0) / 1e6
            for p, c in zip(*[[r[i] for r in _token_rows(library_path, run_id)] for i in (0, 1)], strict=False)
        )
    )
    with Library.open(library_path) as lib:
        answers = lib.conn.execute(
            "SELECT a.answer_extraction, a.answer_extraction_text, a.td_outcome, a.answer FROM answer a "
            "JOIN generated_cot c ON c.id = a.cot_pk WHERE c.cot_id LIKE 'td-%'"
        ).fetchall()
        counters = lib.conn.execute(
            "SELECT sum(n_cots), sum(n_answers) FROM sample WHERE dataset = 'med_qa'"
        ).fetchone()
        info = run_info(lib, run_id)
    assert len(answers) == 10 and all(a[0] == "kojima-A-D" and a[2] for a in answers)
    # The extraction prompt carried the CoT: the echo server returns it inside the answer.
    assert all("Therefore, among A through D" in a[3] for a in answers)
    assert counters[0] == 10 + 10 and counters[1] >= 10  # demo samples came with 2 CoTs each
    assert info.status == "done" and info.done == 20 and info.models == ("openai:m",)


def _token_rows(path, run_id):
    with Library.open(path) as lib:
        return lib.conn.execute(
            "SELECT prompt_tokens, completion_tokens FROM request WHERE run_id = ?", (run_id,)
        ).fetchall()


def test_one_step_scores_the_cot(library_path, fake_server):
    run_id = _run(
        library_path, _spec(fake_server, mode=PromptMode.ONE_STEP, samples=SampleSelection(DEMO, datasets=("gsm8k",)))
    )
    assert execute_run(library_path, run_id, limits=FAST).done == 5
    with Library.open(library_path) as lib:
        rows = lib.conn.execute(
            "SELECT r.result_answer_pk, a.td_outcome, a.answer_extraction FROM request r "
            "JOIN answer a ON a.id = r.result_answer_pk WHERE r.run_id = ?",
            (run_id,),
        ).fetchall()
    assert len(rows) == 5 and all(r[1] in ("correct", "incorrect", "unextractable") and r[2] is None for r in rows)


def test_one_step_answers_keep_the_number_the_cot_wrote(library_path, fake_server):
    """Seen in the app: a one-step answer stored the float it was scored as ("0.6666666666666666"
    for a CoT ending "2/3", "27.0" for "27") as the answer text shown and exported."""
    texts = iter(["So it takes 2/3 of a bolt. The answer is 2/3.", "The answer is 27."] + ["The answer is 1,200."] * 3)
    fake_server.responder = lambda _record: Reply(
        body={"choices": [{"message": {"role": "assistant", "content": next(texts)}, "finish_reason": "stop"}]}
    )
    spec = _spec(fake_server, mode=PromptMode.ONE_STEP, samples=SampleSelection(DEMO, datasets=("gsm8k",)))
    run_id = _run(library_path, spec)
    assert execute_run(library_path, run_id, limits=RunLimits(concurrency=1, max_attempts=1)).done == 5
    with Library.open(library_path) as lib:
        answers = [
            row[0]
            for row in lib.conn.execute(
                "SELECT a.answer FROM request r JOIN answer a ON a.id = r.result_answer_pk WHERE r.run_id = ? "
                "ORDER BY r.id",
                (run_id,),
            )
        ]
    assert answers == ["2/3", "27", "1,200", "1,200", "1,200"]


def test_faults_are_retried_and_garbage_is_a_failed_request(library_path, fake_server):
    fake_server.script(
        Reply(200, "this is not json {"),  # not retryable: a failed request with the raw body
        Reply(200, {"id": "x", "choices": []}),  # empty choices: also failed
        Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0.2"}),
        Reply(500, {"error": {"message": "boom"}}),
        Reply(hang=True),  # no answer until the client gives up: a timeout on any machine
        Reply(drop_after=10),
    )
    # 4 s for each answer: a loaded machine must not turn a normal answer into a sixth fault
    # (the timeout's reply holds the request until then; a fixed 3 s delay raced the old 2 s).
    model = ModelSpec("openai", "m", base_url=fake_server.base_url, timeout=4.0)
    run_id = _run(library_path, _spec(fake_server, mode=PromptMode.ONE_STEP, models=(model,)))
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=1, max_attempts=5, initial_wait=0.05))
    assert final.total == 5 and final.failed == 2 and final.done == 3 and final.status == "failed"
    with Library.open(library_path) as lib:
        failed = run_requests(lib, run_id, status="failed")
        done = run_requests(lib, run_id, status="done")
    assert {f.raw_response for f in failed} == {"this is not json {", '{"id": "x", "choices": []}'}
    assert all(f.result_cot_pk is None and "openai" in (f.error or "") for f in failed)
    assert max(d.attempts for d in done) == 5  # 429, 500, timeout, dropped, then success
    assert fake_server.requests[5].time - fake_server.requests[4].time >= 4.0  # the client's timeout, not a hang-up
    assert len(_cot_rows(library_path)) == 3  # never a CoT from garbage
    final = resume_run(library_path, run_id, limits=FAST)
    assert final.status == "done" and final.done == 5 and len(_cot_rows(library_path)) == 5


def test_identical_requests_are_answered_from_the_store(library_path, fake_server):
    spec = _spec(fake_server)
    first = _run(library_path, spec)
    execute_run(library_path, first, limits=FAST)
    sent = len(fake_server.requests)
    second = _run(library_path, spec)
    final = execute_run(library_path, second, limits=FAST)
    assert final.done == 10 and final.cached == 10 and len(fake_server.requests) == sent
    assert len(_cot_rows(library_path)) == 5  # reused on the same samples, not copied
    forced = _run(library_path, replace(spec, force=True))
    execute_run(library_path, forced, limits=FAST)
    assert len(fake_server.requests) == 2 * sent and len(_cot_rows(library_path)) == 10


def test_wrong_key_and_unknown_model_stop_the_run_resumably(library_path):
    with FakeModelServer(api_key="sk-right", models=("known",)) as server:
        spec = _spec(server, models=(ModelSpec("openai", "known", base_url=server.base_url),))
        run_id = _run(library_path, spec)
        with pytest.raises(AuthError, match="openai: the API key was refused"):
            execute_run(library_path, run_id, limits=FAST)
        with Library.open(library_path) as lib:
            info = run_info(lib, run_id)
        assert info.status == "failed" and "API key" in (info.last_error or "") and info.done == 0
        from thoughtdesk.core.settings.config import store_api_key

        store_api_key("openai", "sk-right", server.base_url)
        assert resume_run(library_path, run_id, limits=FAST).status == "done"
        other = _run(library_path, _spec(server, models=(ModelSpec("openai", "nope", base_url=server.base_url),)))
        with pytest.raises(ModelNotFound, match="model 'nope' was not found"):
            execute_run(library_path, other, limits=FAST)


def test_pause_and_cancel_between_requests(library_path):
    with FakeModelServer() as server:
        server.script(*[Reply(delay=0.1) for _ in range(40)])
        run_id = _run(library_path, _spec(server, samples=SampleSelection(DEMO)))  # 32 requests
        control = RunControl()
        statuses = []
        paused_once = threading.Event()

        def progress(p):
            statuses.append(p.status)
            # Once: the report that follows the resume still says done == 4, and pausing again
            # on it raced the worker's wake-up (on a busy machine, pause/resume for minutes).
            if p.done == 4 and not paused_once.is_set():
                paused_once.set()
                control.pause()
                threading.Timer(0.5, control.resume).start()
            if p.done >= 10:
                control.cancel()

        final = execute_run(library_path, run_id, limits=RunLimits(concurrency=1), progress=progress, control=control)
        assert "paused" in statuses and final.status == "cancelled"
        assert 10 <= final.done < 32
        final = resume_run(library_path, run_id, limits=FAST)
        assert final.status == "done" and final.done == 32
        assert len(server.requests) == 32  # nothing done was sent twice


def test_time_spent_paused_does_not_count_towards_the_eta(library_path, fake_server):
    import time

    from thoughtdesk.core.generation.runs.tally import RunTally

    run_id = _run(library_path, _spec(fake_server))  # 10 requests, none sent
    with Library.open(library_path) as lib:
        tally = RunTally(lib, run_id)
    now = time.monotonic()
    tally.started, tally.done, tally.finished_now = now - 104.0, 2, 2  # 2 done in 104 s ...
    tally.set_paused(True)
    tally.paused_since = now - 100.0  # ... 100 of which were a pause
    assert tally.snapshot().eta == pytest.approx(8 * 4.0 / 2, abs=0.5)
    tally.set_paused(False)
    assert tally.paused_seconds == pytest.approx(100.0, abs=0.5)
    assert tally.snapshot().eta == pytest.approx(8 * 4.0 / 2, abs=0.5)
    assert tally.snapshot().elapsed >= 104.0  # elapsed stays the wall-clock time


def test_a_result_the_library_refuses_stops_the_run_and_resume_stores_each_once(library_path, fake_server):
    """Results are committed while their workers go on (runs/commit_group.py): a write the
    library refuses mid-run (here a trigger, as a full disk would) still stops the run with that
    error, every answer stored before it stays, and a resume stores the rest once."""
    run_id = _run(library_path, _spec(fake_server, mode=PromptMode.ONE_STEP, samples=SampleSelection(DEMO)))
    with Library.open(library_path) as lib, lib.transaction() as conn:
        total = conn.execute("SELECT count(*) FROM request WHERE run_id = ?", (run_id,)).fetchone()[0]
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON generated_cot WHEN "
            "(SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%') >= 3 "
            "BEGIN SELECT RAISE(ABORT, 'the library refused the write'); END"
        )
    with pytest.raises(Exception, match="the library refused the write"):
        execute_run(library_path, run_id, limits=FAST)
    assert len(_cot_rows(library_path)) == 3
    with Library.open(library_path) as lib, lib.transaction() as conn:
        conn.execute("DROP TRIGGER refuse")
        assert run_info(lib, run_id).done == 3
    final = resume_run(library_path, run_id, limits=FAST)
    assert final.status == "done" and final.done == total
    rows = _cot_rows(library_path)
    assert len(rows) == total and len({sample for _, sample, _, _ in rows}) == total  # one per sample


def test_a_request_claimed_elsewhere_meanwhile_is_not_sent_again(library_path, fake_server):
    """A request is sent only by whoever turns it from pending to sent (the claim's "only if still
    pending" guard): here another process claims one while this execution is busy with the first
    request. Without the guard the request was sent and stored a second time."""
    run_id = _run(library_path, _spec(fake_server, mode=PromptMode.ONE_STEP))
    with Library.open(library_path) as lib:
        ids = [r[0] for r in lib.conn.execute("SELECT id FROM request WHERE run_id = ? ORDER BY id", (run_id,))]
        taken_prompt = lib.conn.execute("SELECT prompt FROM request WHERE id = ?", (ids[-1],)).fetchone()[0]
    assert len(ids) == 5

    def other_process_claims(record):
        if len(fake_server.requests) == 1:  # while the first request is out: another process claims the last
            import sqlite3

            conn = sqlite3.connect(library_path, timeout=30)
            with conn:
                conn.execute(
                    "UPDATE request SET status = 'sent', sent_at = '2026-01-01T00:00:00Z', attempts = 7 WHERE id = ?",
                    (ids[-1],),
                )
            conn.close()
        return None

    fake_server.responder = other_process_claims
    execute_run(library_path, run_id, limits=replace(FAST, concurrency=1))
    sent = [r.json["messages"][-1]["content"] for r in fake_server.requests]
    assert len(sent) == 4 and taken_prompt not in sent
    with Library.open(library_path) as lib:
        row = lib.conn.execute("SELECT status, sent_at, attempts FROM request WHERE id = ?", (ids[-1],)).fetchone()
        cots = lib.conn.execute("SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0]
    assert row == ("sent", "2026-01-01T00:00:00Z", 7)  # the other process's claim, untouched
    assert cots == 4
