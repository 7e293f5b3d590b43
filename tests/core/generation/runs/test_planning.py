"""Planning: counts, token/cost estimates and exact prompt previews, without sending anything."""

from __future__ import annotations

import json

import pytest

from tests.core.generation.runs.conftest import DEMO
from thoughtdesk.core.generation.backends import PriceTable, estimate_tokens
from thoughtdesk.core.generation.prompts import FragmentLibrary, PromptMode, render_cot_prompt
from thoughtdesk.core.generation.runs import (
    FewShotSpec,
    ModelSpec,
    RunSpec,
    RunSpecError,
    SampleSelection,
    create_run,
    list_runs,
    plan_run,
    run_requests,
)
from thoughtdesk.core.library.store import Library

GPT = ModelSpec("openai", "gpt-4o-mini", max_tokens=100, extraction_max_tokens=10)
LOCAL = ModelSpec("openai", "local-model", base_url="http://127.0.0.1:1/v1")


def test_counts_multiply_every_dimension(library_path):
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("med_qa", "gsm8k")),
        models=(GPT, LOCAL),
        instructions=("qa-01", "qa-02"),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D", "kojima-01"),
        n=3,
    )
    with Library.open(library_path) as lib:
        plan = plan_run(lib, spec)
        before = lib.conn.execute("SELECT count(*) FROM generated_cot").fetchone()[0]
    samples = 5 + 5
    variants = 2 * 1 * 2
    assert plan.n_samples == samples and len(plan.variants) == variants
    assert plan.n_cot_requests == samples * variants * 2 * 3
    assert plan.n_extraction_requests == plan.n_cot_requests
    assert plan.total == 2 * plan.n_cot_requests
    # Nothing was written by planning.
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM generated_cot").fetchone()[0] == before
        assert list_runs(lib) == []


def test_one_step_has_no_extraction_requests(library_path):
    spec = RunSpec(
        samples=SampleSelection(DEMO),
        models=(GPT,),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D", "kojima-01"),
        mode=PromptMode.ONE_STEP,
    )
    with Library.open(library_path) as lib:
        plan = plan_run(lib, spec)
    assert plan.n_extraction_requests == 0 and plan.n_cot_requests == 16


def test_preview_is_the_exact_prompt_and_estimates_add_up(library_path):
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("med_qa",), limit=2),
        models=(GPT,),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D",),
    )
    fragments = FragmentLibrary.defaults()
    with Library.open(library_path) as lib:
        plan = plan_run(lib, spec)
        row = lib.conn.execute("SELECT question, choices FROM sample WHERE id = ?", (plan.samples[0].pk,)).fetchone()
    expected = render_cot_prompt(
        question=row[0],
        answer_choices=json.loads(row[1]),
        instruction=fragments.text("instruction", "qa-01"),
        cot_trigger=fragments.text("cot_trigger", "kojima-01"),
    )
    previews = plan.previews(1)
    assert [p.step for p in previews] == ["cot", "extraction"]
    assert previews[0].prompt == expected
    assert previews[1].prompt.startswith(expected)
    extraction = fragments.text("answer_extraction", "kojima-A-D")
    assert extraction and previews[1].prompt.endswith(extraction)
    cot_prompts = [r.prompt for r in plan.requests if r.step == "cot"]
    assert cot_prompts and None not in cot_prompts
    cot_tokens = sum(estimate_tokens(prompt or "") for prompt in cot_prompts)
    assert plan.estimated_prompt_tokens > cot_tokens
    assert plan.estimated_completion_tokens == 2 * 100 + 2 * 10
    price = PriceTable().price_for("openai", "gpt-4o-mini")
    assert price is not None
    expected_cost = (
        plan.estimated_prompt_tokens * price.input_per_million
        + plan.estimated_completion_tokens * price.output_per_million
    ) / 1e6
    assert plan.estimated_cost == pytest.approx(expected_cost)
    assert "4 request(s)" in plan.summary()


def test_unpriced_model_makes_cost_unknown(library_path):
    spec = RunSpec(samples=SampleSelection(DEMO, limit=1), models=(ModelSpec("openai", "mystery"),))
    with Library.open(library_path) as lib:
        plan = plan_run(lib, spec)
    assert plan.estimated_cost is None and plan.unpriced_models == ["openai:mystery"]


def test_limit_with_seed_is_reproducible_and_differs_from_first(library_path):
    def pks(seed):
        spec = RunSpec(samples=SampleSelection(DEMO, datasets=("med_qa",), limit=2, seed=seed), models=(GPT,))
        with Library.open(library_path) as lib:
            return [s.pk for s in plan_run(lib, spec).samples]

    assert pks(7) == pks(7)
    assert len({tuple(pks(s)) for s in range(6)}) > 1


def test_few_shot_exemplars_come_before_the_question(library_path):
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("med_qa",), limit=1),
        models=(GPT,),
        instructions=("qa-01",),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-A-D",),
        few_shot=FewShotSpec(2, split="test", seed=1),
    )
    with Library.open(library_path) as lib:
        plan = plan_run(lib, spec)
    exemplars = plan.exemplars["med_qa"]
    prompt = plan.requests[0].prompt
    assert prompt is not None and len(exemplars) == 2
    assert prompt.index(exemplars[0].cot[:40]) < prompt.rindex(plan.samples[0].question[:40])


def test_bad_selection_names_what_is_wrong(library_path):
    with Library.open(library_path) as lib:
        with pytest.raises(RunSpecError, match="no dataset 'nope'"):
            plan_run(lib, RunSpec(samples=SampleSelection(DEMO, datasets=("nope",)), models=(GPT,)))
        with pytest.raises(Exception, match="no cot trigger fragment with key 'kojima-99'"):
            plan_run(lib, RunSpec(samples=SampleSelection(DEMO), models=(GPT,), cot_triggers=("kojima-99",)))
        with pytest.raises(RunSpecError, match="PROVIDER:MODEL"):
            ModelSpec.parse("gpt-4")


def test_create_run_writes_every_request_before_sending(library_path):
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("gsm8k",)),
        models=(LOCAL,),
        cot_triggers=("kojima-01",),
        answer_extractions=("kojima-numerals",),
        n=2,
    )
    with Library.open(library_path) as lib:
        plan = plan_run(lib, spec)
        run_id = create_run(lib, plan)
        rows = run_requests(lib, run_id, limit=1000)
        stored = json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])
    assert len(rows) == plan.total == 20
    assert all(r.status == "pending" for r in rows)
    cots = [r for r in rows if r.step == "cot"]
    assert all(r.prompt and r.fingerprint for r in cots)
    assert len({r.fingerprint for r in cots}) == len(cots)  # replicates stay distinct
    extractions = [r for r in rows if r.step == "extraction"]
    assert all(r.prompt is None and r.depends_on in {c.id for c in cots} for r in extractions)
    assert stored["variants"][0]["cot_trigger"]["text"] == "Answer: Let's think step by step."
