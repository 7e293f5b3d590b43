"""Runs against real models: llama-cpp-python's OpenAI-compatible server and in-process llama.cpp."""

from __future__ import annotations

import json

import pytest

from tests.core.generation.runs.conftest import DEMO, SERVER_KEY
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
    run_requests,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.config import store_api_key


@pytest.mark.slow
def test_run_end_to_end_against_llama_server(library_path, llama_server):
    store_api_key("openai", SERVER_KEY, llama_server.base_url)
    model = ModelSpec(
        "openai",
        llama_server.model_alias,
        base_url=llama_server.base_url,
        max_tokens=24,
        extraction_max_tokens=8,
        timeout=120,
        seed=1,
    )
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("med_qa", "gsm8k"), limit=1),
        models=(model,),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D",),
    )
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=2, initial_wait=0.2))
    assert final.status == "done" and final.done == 4 and final.failed == 0
    assert final.completion_tokens > 0 and final.prompt_tokens > 100
    with Library.open(library_path) as lib:
        requests = run_requests(lib, run_id)
        cots = lib.conn.execute(
            "SELECT cot, extra, api_service, model_name FROM generated_cot WHERE cot_id LIKE 'td-%'"
        ).fetchall()
        answers = lib.conn.execute("SELECT answer, td_outcome FROM answer WHERE answer_id LIKE 'td-%'").fetchall()
    assert len(cots) == 2 and all(c[0].strip() for c in cots)
    extra = json.loads(cots[0][1])["thoughtdesk"]
    assert extra["tokens_reported"] and extra["completion_tokens"] <= 24 and cots[0][2] == "openai"
    assert json.loads(extra["raw_response"])["choices"]
    assert len(answers) == 2 and all(a[1] in ("correct", "incorrect", "unextractable") for a in answers)
    # The extraction prompts hold the model's CoT.
    extraction = next(r for r in requests if r.step == "extraction")
    assert extraction.prompt and any(c[0] in extraction.prompt for c in cots)


@pytest.mark.slow
def test_in_process_llamacpp_one_step(library_path, gguf_model):
    pytest.importorskip("llama_cpp")
    model = ModelSpec.parse(f"llamacpp:{gguf_model}", max_tokens=12, n_ctx=512, seed=3)
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("gsm8k",), limit=2),
        models=(model,),
        cot_triggers=("kojima-01",),
        mode=PromptMode.ONE_STEP,
    )
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=4))
    assert final.status == "done" and final.done == 2 and final.completion_tokens > 0
    with Library.open(library_path) as lib:
        rows = lib.conn.execute(
            "SELECT api_service, model_name, extra FROM generated_cot WHERE cot_id LIKE 'td-%'"
        ).fetchall()
    assert {r[0] for r in rows} == {"llamacpp"} and rows[0][1] == gguf_model.name
    assert json.loads(rows[0][2])["thoughtdesk"]["cost"] == 0.0
