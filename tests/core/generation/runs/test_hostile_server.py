"""A run against a server that answers with malformed bodies (issue 15, point 12): each such
answer is a failed request with its raw body kept; the run ends (never stuck "running"), and a
resume against a healthy server completes exactly the failed requests."""

from __future__ import annotations

import json

from tests.core.generation.runs.conftest import DEMO
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
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

ONCE = RunLimits(concurrency=1, max_attempts=1, initial_wait=0.01)
MIXED_INDEXES = {"choices": [{"index": "x", "text": "b"}, {"index": 0, "text": "a"}], "usage": {"prompt_tokens": -3}}
NOT_OBJECTS = {"choices": [7, "eight"]}


def test_malformed_answers_fail_their_requests_and_the_run_ends(library_path, fake_server: FakeModelServer):
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("med_qa",), limit=3),
        models=(ModelSpec("openai", "m", base_url=fake_server.base_url, endpoint="completions", timeout=2.0),),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=(None,),
    )
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    fake_server.replies.extend([Reply(body=NOT_OBJECTS), Reply(body=MIXED_INDEXES), Reply(body=b"\xff\xfe garbage")])

    final = execute_run(library_path, run_id, limits=ONCE)

    assert final.status == "failed" and final.total == 3
    with Library.open(library_path) as lib:
        assert run_info(lib, run_id).status == "failed"
        rows = run_requests(lib, run_id)
        statuses = sorted(r.status for r in rows)
        # the mixed-index answer is readable (index "x" sorts by its place); the other two fail
        assert statuses == ["done", "failed", "failed"]
        failed = [r for r in rows if r.status == "failed"]
        assert all(r.error for r in failed)
        kept = lib.conn.execute(
            "SELECT raw_response FROM request WHERE run_id = ? AND status = 'failed' ORDER BY id", (run_id,)
        ).fetchall()
        assert json.loads(kept[0][0]) == NOT_OBJECTS
        tokens = lib.conn.execute(
            "SELECT prompt_tokens FROM request WHERE run_id = ? AND status = 'done'", (run_id,)
        ).fetchall()
        assert tokens and all(t is not None and t > 0 for (t,) in tokens)  # -3 was replaced by the estimate

    fake_server.replies.clear()  # healthy again
    final = resume_run(library_path, run_id, limits=ONCE)
    assert final.status == "done" and final.failed == 0
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0] == 3
