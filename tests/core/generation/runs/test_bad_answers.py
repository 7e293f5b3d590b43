"""Answers that cannot be read are bad answers of their request, never a stuck run (issue 23,
points 7 and 8): a model answer nested ~950 levels deep gave "internal error (RecursionError)"
on every resume, directly and in a batch's results; one unreadable line of a batch's results
stopped every fetch at that line, so the valid results after it were never stored. Now each is
a failed request naming the problem (and the line), and everything valid is stored."""

from __future__ import annotations

import json

import pytest

from tests.core.generation.runs.batch_support import PROVIDERS, advance, batch_spec, counts, create, stored
from tests.core.generation.runs.conftest import DEMO
from tests.helpers.batch_server import BatchJob, BatchServer
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
    resume_run,
    run_requests,
)
from thoughtdesk.core.library.store import Library

#: backends.http.MAX_JSON_DEPTH, not imported: these tests also run on the code before it.
MAX_JSON_DEPTH = 100
ONCE = RunLimits(concurrency=1, max_attempts=1, initial_wait=0.01)
DEPTH = 950


def _deep(depth: int = DEPTH) -> str:
    return "[" * depth + "]" * depth


def _deep_answer(depth: int = DEPTH, text: str = "Let us think. " * 100 + "So the answer is A.") -> bytes:
    """A valid chat answer with a field nested ``depth`` levels deep (and a text long enough to
    be stored once, referenced from the raw body: the walk that does it recursed)."""
    head = json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
    )
    return (head[:-1] + ', "extra": ' + _deep(depth) + "}").encode()


@pytest.mark.parametrize("depth", [900, DEPTH])
def test_a_deeply_nested_direct_answer_fails_its_request_and_resume_does_not_crash(library_path, depth):
    with FakeModelServer() as server:
        spec = RunSpec(
            samples=SampleSelection(DEMO, datasets=("med_qa",), limit=3),
            models=(ModelSpec("openai", "m", base_url=server.base_url, timeout=10.0),),
            instructions=("qa-01",),
            cot_triggers=("kojima-01",),
            answer_extractions=(None,),
        )
        with Library.open(library_path) as lib:
            run_id = create_run(lib, plan_run(lib, spec))
        server.script(Reply(body=_deep_answer(depth)), Reply(), Reply())
        final = execute_run(library_path, run_id, limits=ONCE)
        assert final.status == "failed" and final.done == 2 and final.failed == 1
        with Library.open(library_path) as lib:
            (failed,) = [r for r in run_requests(lib, run_id) if r.status == "failed"]
        assert f"nested more than {MAX_JSON_DEPTH} levels deep" in (failed.error or "")
        assert failed.error_kind == "BadResponse"
        server.script(Reply(body=_deep_answer(depth)))  # resumed against the same server: the same bad answer
        again = resume_run(library_path, run_id, limits=ONCE)
        assert again.status == "failed" and again.failed == 1
        final = resume_run(library_path, run_id, limits=ONCE)  # now a good answer
        assert final.status == "done" and final.done == 3


class _BadLines(BatchServer):
    """A batch server whose results have some lines replaced: ``bad`` maps a line number (from
    1) to a function of that line's custom id giving the bytes sent instead."""

    bad: dict = {}

    def _mangle(self, text: bytes) -> bytes:
        lines = text.split(b"\n")
        for number, make in self.bad.items():
            custom_id = json.loads(lines[number - 1])["custom_id"]
            lines[number - 1] = make(custom_id)
        return b"\n".join(lines)

    def _write_openai_files(self, job: BatchJob) -> None:
        super()._write_openai_files(job)
        self.files[f"{job.ident}_out"] = self._mangle(self.files[f"{job.ident}_out"])

    def _anthropic_results(self, job: BatchJob) -> str:
        return self._mangle(super()._anthropic_results(job).encode()).decode("utf-8", "surrogateescape")


def _cut_short(custom_id: str) -> bytes:
    return ('{"custom_id": "' + custom_id + '", "response": {"status_code": 200, "bo').encode()


def _nested(custom_id: str) -> bytes:
    return ('{"custom_id": "' + custom_id + '", "result": ' + _deep() + ', "response": ' + _deep() + "}").encode()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unreadable_results_lines_fail_their_requests_and_the_rest_are_stored(library_path, provider):
    server = _BadLines(polls_before_done=0)
    server.bad = {2: _cut_short, 3: _nested}
    with server:
        run_id = create(library_path, batch_spec(server, provider, mode=PromptMode.ONE_STEP))
        total = sum(counts(library_path, run_id).values())
        assert total >= 4
        advance(library_path, run_id, server, provider)  # submitted
        progress = advance(library_path, run_id, server, provider)  # fetched: two lines unreadable
        assert progress.stored == total - 2
        assert counts(library_path, run_id) == {"done": total - 2, "failed": 2}
        with Library.open(library_path) as lib:
            errors = dict(
                lib.conn.execute("SELECT error_kind, group_concat(error, ' | ') FROM request WHERE status = 'failed'")
            )
        (error,) = errors.values()
        assert "batch: line 2 of the batch results could not be read (not valid JSON" in error
        assert (
            f"batch: line 3 of the batch results could not be read (not valid JSON: it is nested more than {MAX_JSON_DEPTH} levels deep)"
            in error
        )
        assert progress.status == "failed"
        again = advance(library_path, run_id, server, provider)  # a resume does not stop at them again
        assert again.status == "failed" and again.stored == 0
    assert stored(library_path, run_id) == (total - 2, total - 2)


def test_a_line_naming_no_request_sends_the_missing_one_again_saying_which_line(library_path):
    server = _BadLines(polls_before_done=0)
    server.bad = {1: lambda _custom_id: b"\x00\xff not json at all"}
    with server:
        run_id = create(library_path, batch_spec(server, "openai", mode=PromptMode.ONE_STEP))
        total = sum(counts(library_path, run_id).values())
        advance(library_path, run_id, server, "openai")
        progress = advance(library_path, run_id, server, "openai")
        assert progress.stored == total - 1 and progress.retried == 1
        with Library.open(library_path) as lib:
            # sent again in a new batch at once, its reason kept
            (error,) = lib.conn.execute("SELECT error FROM request WHERE status = 'batched'").fetchone()
        assert "line(s) 1 of its results could not be read" in error
        server.bad = {}
        done = advance(library_path, run_id, server, "openai")
        assert done.status == "done"
    assert stored(library_path, run_id) == (total, total)
