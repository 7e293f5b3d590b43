"""Runs on a server pool (issue 17, point 2): a model named with several base URLs is served by
all of them, and a server killed mid-run costs no request and stores none twice."""

from __future__ import annotations

import json
import threading

import pytest

from tests.core.generation.runs.conftest import DEMO
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.backends import PooledBackend
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    build_backend,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.generation.runs.kind_specs import spec_from_document
from thoughtdesk.core.generation.runs.spec import RunSpecError
from thoughtdesk.core.library.store import Library


def pool_spec(*urls: str) -> RunSpec:
    return RunSpec(
        samples=SampleSelection(DEMO),
        models=(ModelSpec("openai", "m", base_url=urls[0], more_base_urls=urls[1:], timeout=5.0),),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D",),
        mode=PromptMode.ONE_STEP,
    )


def test_a_server_killed_mid_run_loses_no_request_and_stores_none_twice(library_path) -> None:
    with FakeModelServer() as first, FakeModelServer() as second:
        first.responder = second.responder = lambda recorded: Reply(delay=0.05)
        killed = threading.Event()

        def kill_after_three(recorded):
            if len(second.requests) >= 3 and not killed.is_set():
                killed.set()
                threading.Thread(target=second.kill).start()  # not from its own handler thread
            return Reply(delay=0.05)

        second.responder = kill_after_three
        with Library.open(library_path) as lib:
            run_id = create_run(lib, plan_run(lib, pool_spec(first.base_url, second.base_url)))
            planned = lib.conn.execute("SELECT COUNT(*) FROM request WHERE run_id = ?", (run_id,)).fetchone()[0]
        final = execute_run(library_path, run_id, limits=RunLimits(concurrency=2, max_attempts=3, initial_wait=0.05))
        assert killed.is_set()
    assert final.status == "done" and final.failed == 0
    with Library.open(library_path) as lib:
        statuses = lib.conn.execute(
            "SELECT status, COUNT(*) FROM request WHERE run_id = ? GROUP BY status", (run_id,)
        ).fetchall()
        cots = lib.conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT q.id) FROM generated_cot g JOIN request q ON q.result_cot_pk = g.id "
            "WHERE q.run_id = ?",
            (run_id,),
        ).fetchone()
        stored = lib.conn.execute("SELECT COUNT(*) FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0]
    assert statuses == [("done", planned)]
    assert cots[0] == cots[1] == stored == planned  # one CoT per request, none twice
    # The first server answered the rest (including what was lost on the second).
    assert len(first.requests) >= planned - 3


def test_both_servers_share_a_run_at_the_concurrency_set_per_server(library_path) -> None:
    with FakeModelServer() as first, FakeModelServer() as second:
        first.responder = second.responder = lambda recorded: Reply(delay=0.05)
        with Library.open(library_path) as lib:
            run_id = create_run(lib, plan_run(lib, pool_spec(first.base_url, second.base_url)))
        final = execute_run(library_path, run_id, limits=RunLimits(concurrency=2, max_attempts=1))
        assert final.status == "done"
        assert first.requests and second.requests
        assert first.max_in_flight <= 2 and second.max_in_flight <= 2
        assert first.max_in_flight + second.max_in_flight >= 3


def test_a_pool_spec_round_trips_and_an_old_spec_still_reads() -> None:
    pooled = ModelSpec("openai", "m", base_url="http://a:8000/v1", more_base_urls=("http://b:8000/v1",))
    data = json.loads(json.dumps(pooled.to_json()))
    assert ModelSpec.from_json(data) == pooled
    assert pooled.backend_id() == "openai@http://a:8000/v1,http://b:8000/v1#chat"
    single = ModelSpec("openai", "m", base_url="http://a:8000/v1")
    # One endpoint: the JSON and the fingerprint id are what they were before pools.
    assert "more_base_urls" not in single.to_json()
    assert single.backend_id() == "openai@http://a:8000/v1#chat"
    assert ModelSpec.from_json(single.to_json()).base_urls == ("http://a:8000/v1",)
    spec = pool_spec("http://a:8000/v1", "http://b:8000/v1")
    assert spec_from_document({"spec": json.loads(json.dumps(spec.to_json()))}) == spec


def test_a_pool_is_built_for_several_base_urls_and_only_for_openai_compatible_servers() -> None:
    pooled = ModelSpec("openai", "m", base_url="http://127.0.0.1:1/v1", more_base_urls=("http://127.0.0.1:2/v1",))
    backend = build_backend(pooled, api_key="")
    assert isinstance(backend, PooledBackend) and len(backend.members) == 2
    assert pooled.price_provider == "local"
    with pytest.raises(RunSpecError, match="only with OpenAI-compatible"):
        ModelSpec("anthropic", "c", base_url="http://a/v1", more_base_urls=("http://b/v1",))
    with pytest.raises(RunSpecError, match="named twice"):
        ModelSpec("openai", "m", base_url="http://a/v1", more_base_urls=("http://a/v1/",))
    with pytest.raises(RunSpecError, match="first base URL"):
        ModelSpec("openai", "m", more_base_urls=("http://a/v1",))
