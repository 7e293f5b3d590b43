"""A response's text is stored once (issue 15, point 6: a 20 MB answer was stored three times and
more; two such CoTs made a 173 MB library). The raw body keeps everything else, with a reference
in place of the text, and gives the full body back on demand."""

from __future__ import annotations

import json

from tests.core.generation.runs.conftest import DEMO
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.datasets.ts_extras import load_with_extras
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.generation.runs.commit_base import TEXT_REF_KEY, restore_raw_body, slim_raw_body
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import FTS_CHARS

MB = 1_000_000
FAST = RunLimits(concurrency=1, max_attempts=1, initial_wait=0.05)


def used_bytes(lib: Library) -> int:
    """Bytes of the library's pages in use (after a checkpoint, so the WAL is counted in)."""
    lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages, free, size = (
        lib.conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count", "page_size")
    )
    return (pages - free) * size


def big_answer(text: str) -> dict:
    return {
        "id": "cmpl-big",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 90_000, "total_tokens": 90_010},
    }


def test_a_20mb_answer_grows_the_library_by_about_20mb(library_path, fake_server: FakeModelServer) -> None:
    # Words and line breaks (JSON escapes the breaks: the raw body differs from the text).
    text = ("The patient has a fever and a cough.\n" * (20 * MB // 37 + 1))[: 20 * MB]
    with Library.open(library_path) as lib:
        spec = RunSpec(
            samples=SampleSelection(DEMO, datasets=("med_qa",), limit=1),
            models=(ModelSpec("openai", "m", base_url=fake_server.base_url, timeout=30.0, max_tokens=100_000),),
            instructions=("qa-01",),
            cot_triggers=("kojima-01",),
            answer_extractions=("kojima-A-D",),
            mode=PromptMode.ONE_STEP,
        )
        run_id = create_run(lib, plan_run(lib, spec))
        before = used_bytes(lib)
    fake_server.script(Reply(body=big_answer(text)))
    final = execute_run(library_path, run_id, limits=FAST)
    assert final.status == "done" and final.failed == 0
    with Library.open(library_path) as lib:
        grown = used_bytes(lib) - before
        cot, extra = lib.conn.execute("SELECT cot, extra FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()
        raw = lib.conn.execute("SELECT raw_response FROM request WHERE run_id = ?", (run_id,)).fetchone()[0]
        indexed = lib.conn.execute(
            "SELECT length(generated) FROM sample_fts WHERE rowid = "
            "(SELECT sample_pk FROM generated_cot WHERE cot_id LIKE 'td-%')"
        ).fetchone()[0]
    assert cot == text  # the text itself, whole
    assert 20 * MB <= grown < 21 * MB, f"the library grew by {grown / MB:.1f} MB for a 20 MB answer"
    # Everything else the server sent is kept, with a reference in place of the text.
    provenance = json.loads(extra)["thoughtdesk"]["raw_response"]
    assert provenance == raw and len(raw) < 1000
    slim = json.loads(raw)
    assert slim["choices"][0]["message"]["content"] == {TEXT_REF_KEY: "generated_cot.cot"}
    assert slim["usage"]["completion_tokens"] == 90_000 and slim["choices"][0]["finish_reason"] == "length"
    assert json.loads(restore_raw_body(raw, cot)) == big_answer(text)
    assert indexed < FTS_CHARS + 10_000  # its first part (beside the demo CoTs), not a second copy


def test_slimming_keeps_bodies_it_cannot_or_need_not_slim() -> None:
    long = "x" * 5000
    body = json.dumps(big_answer(long))
    assert slim_raw_body(body, "short", "generated_cot.cot") == body  # a short text: kept exactly
    assert slim_raw_body("not json " + long, long, "generated_cot.cot") == "not json " + long
    other = json.dumps(big_answer("y" * 5000))
    assert slim_raw_body(other, long, "generated_cot.cot") == other  # not the stored text: kept
    slim = slim_raw_body(body, long, "answer.answer")
    assert len(slim) < 400 and json.loads(restore_raw_body(slim, long)) == json.loads(body)
    assert restore_raw_body(other, long) == other


def test_two_step_mode_stores_the_cot_once(library_path, fake_server: FakeModelServer, tmp_path) -> None:
    """Issue 15, point 6 (audit): in the default two-step mode a 3 MB CoT grew the library by
    9.2 MB: the answer-extraction prompt quoting it was stored in the request row and again in
    the answer's provenance. Both now hold a reference; readers get the prompt as it was sent."""
    from thoughtdesk.core.generation.runs.read import get_request
    from thoughtdesk.core.importing.importer import export_thoughtsource
    from thoughtdesk.core.library.reader import load_sample

    text = ("The patient has a fever and a cough.\n" * (3 * MB // 37 + 1))[: 3 * MB]
    with Library.open(library_path) as lib:
        spec = RunSpec(
            samples=SampleSelection(DEMO, datasets=("med_qa",), limit=1),
            models=(ModelSpec("openai", "m", base_url=fake_server.base_url, timeout=30.0, max_tokens=100_000),),
            instructions=("qa-01",),
            cot_triggers=("kojima-01",),
            answer_extractions=("kojima-A-D",),
            mode=PromptMode.TWO_STEP,
        )
        run_id = create_run(lib, plan_run(lib, spec))
        before = used_bytes(lib)
    fake_server.script(Reply(body=big_answer(text)), Reply(body=big_answer("The answer is B.")))
    final = execute_run(library_path, run_id, limits=FAST)
    assert final.status == "done" and final.failed == 0 and final.done == 2
    sent = fake_server.requests[1].json["messages"][-1]["content"]  # the extraction prompt as sent
    assert text in sent
    with Library.open(library_path) as lib:
        grown = used_bytes(lib) - before
        request_id, stored, sample_pk = lib.conn.execute(
            "SELECT q.id, q.prompt, q.sample_pk FROM request q WHERE run_id = ? AND step = 'extraction'", (run_id,)
        ).fetchone()
        assert len(stored) < 10_000  # a reference, not the CoT again
        assert get_request(lib, request_id).prompt == sent  # read back whole
        stored_sample = load_sample(lib, sample_pk)
        assert stored_sample is not None
        (cot,) = [c for c in stored_sample.sample.generated_cot if (c.id or "").startswith("td-")]
        assert cot.cot == text and cot.answers[0].extra["thoughtdesk"]["prompt"] == sent
        export_thoughtsource(lib, DEMO, tmp_path / "out.json")
    assert grown < 1.2 * len(text), f"the library grew by {grown / MB:.1f} MB for a 3 MB CoT"
    exported = load_with_extras(tmp_path / "out.json")
    answers = [
        a
        for split in exported["med_qa"].values()
        for s in split
        for c in s["generated_cot"]
        if c["id"].startswith("td-")
        for a in c["answers"]
    ]
    assert answers[0]["thoughtdesk"]["prompt"] == sent  # the export shows the prompt as before
