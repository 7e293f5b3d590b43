"""Critique runs on the generation engine: planning (counts, exact prompts, filters), execution
against a local server answering in the Digital Socrates layout (tidy and untidy), a judge
panel, the store as cache, pause/cancel/resume, a kill in a subprocess, and real small models."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import cli_process
from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.models import SERVER_KEY
from tests.helpers.servers import FakeModelServer, Recorded, Reply
from thoughtdesk.core.critiques import critiques_for_cots
from thoughtdesk.core.critiques.prompts import BUILTIN_TEMPLATES, CritiqueInput, ds_wrap, render
from thoughtdesk.core.generation.runs import (
    CotSelection,
    CritiqueSpec,
    ModelSpec,
    RunControl,
    RunLimits,
    RunSpecError,
    create_critique_run,
    execute_run,
    list_runs,
    parse_summary,
    plan_critique_run,
    resume_run,
    run_requests,
)
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.config import store_api_key

N_COTS, N_CORRECT, N_INCORRECT = 33, 23, 10  # the demo collection's generated CoTs

TIDY = """The explanation states or suggests the following:
* Main flaw (standalone statement): "The explanation picks an option without ruling out the others."
* Dimension: incorrect_reasoning

Consider these points for revising the explanation:
* General: Compare every option against the facts given before choosing one.
* Specific: Check which option the stated findings actually support.

Explanation score: 2"""

UNTIDY = """Sure! Here is my critique.

**The explanation states or suggests the following:**
- **Main flaw (standalone statement):** It never says why the other choices are wrong
- **Dimension:** Missing information

**Consider these points for revising the explanation:**
- **General:** Say why the alternatives fail.
- **Specific:** Mention the finding that rules out the distractors.

**Explanation score:** 3/5"""

BAD_SCORE = TIDY.replace("Explanation score: 2", "Explanation score: 7/10")


class CritiqueServer(FakeModelServer):
    """An OpenAI-compatible server whose models critique: ``tidy-judge`` answers in the DS
    layout, ``untidy-judge`` as API models vary it, ``bad-judge`` with an out-of-scale score."""

    texts = {"tidy-judge": TIDY, "untidy-judge": UNTIDY, "bad-judge": BAD_SCORE}

    def _normal(self, record: Recorded, anthropic: bool) -> Reply:
        payload = record.json if isinstance(record.json, dict) else {}
        text = self.texts.get(payload.get("model", ""))
        if text is None:
            return super()._normal(record, anthropic)
        chat = record.path.endswith("/chat/completions")
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
        choice.update({"message": {"role": "assistant", "content": text}} if chat else {"text": text})
        return Reply(
            200,
            {
                "id": "critique",
                "object": "chat.completion" if chat else "text_completion",
                "model": payload["model"],
                "choices": [choice],
                "usage": {"prompt_tokens": 400, "completion_tokens": 80, "total_tokens": 480},
            },
        )


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    return demo_library(tmp_path / "library.thoughtdesk")


@pytest.fixture
def server():
    with CritiqueServer() as running:
        yield running


def judge(server: FakeModelServer, name: str = "tidy-judge", **options: Any) -> ModelSpec:
    return ModelSpec("openai", name, base_url=server.base_url, max_tokens=300, **options)


def _plan_and_create(library_path: Path, spec: CritiqueSpec) -> int:
    with Library.open(library_path) as lib:
        return create_critique_run(lib, plan_critique_run(lib, spec))


def _count(library: Path, sql: str, params: tuple = ()) -> int:
    conn = sqlite3.connect(f"file:{library}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


# --- planning -------------------------------------------------------------------------------


def test_plan_counts_every_cot_per_model_and_fills_the_exact_prompt(library_path, server):
    spec = CritiqueSpec(CotSelection(DEMO), models=(judge(server), judge(server, "untidy-judge")))
    with Library.open(library_path) as lib:
        plan = plan_critique_run(lib, spec)
        assert (plan.n_cots, plan.total, plan.n_samples) == (N_COTS, 2 * N_COTS, 16)
        assert plan.counts_by_correctness() == {"correct": N_CORRECT, "incorrect": N_INCORRECT, "unscored": 0}
        assert plan.estimated_cost == 0.0  # a local server is free
        assert "66 critique request(s) for 33 CoT(s)" in plan.summary()
        # A med_qa CoT: choices inline, the answer key and the predicted answer as letters.
        cot = next(c for c in plan.cots if c.sample.dataset == "med_qa")
        request = next(r for r in plan.requests if r.cot_pk == cot.pk and r.model_index == 0)
        expected = render(
            BUILTIN_TEMPLATES["td-critique-v1"],
            CritiqueInput(
                cot.sample.question + " (A) Insulin glargine (B) Metformin (C) Glipizide (D) Pioglitazone",
                cot.text,
                cot.predicted_answer,
                "B",
            ),
        )
        assert request.prompt == f"{expected.system}\n\n{expected.user}"
        assert request.system_chars == len(expected.system)
        assert len(cot.predicted_answer) == 1 and cot.predicted_answer in "ABCD"
        # pubmed_qa has a context: it comes before the question.
        pubmed = next(c for c in plan.cots if c.sample.dataset == "pubmed_qa")
        prompt = next(r.prompt for r in plan.requests if r.cot_pk == pubmed.pk)
        assert pubmed.sample.context and pubmed.sample.context in prompt
        assert "(A) yes (B) no (C) maybe" in prompt
        run_id = create_critique_run(lib, plan)
        rows = run_requests(lib, run_id)
        assert len(rows) == 66 and {r.step for r in rows} == {"critique"}
        assert [(r.target_cot_pk, r.prompt) for r in rows] == [(p.cot_pk, p.prompt) for p in plan.requests]
        assert all(r.status == "pending" and r.fingerprint for r in rows)
        info = next(r for r in list_runs(lib) if r.id == run_id)
        assert info.kind == "critique" and info.total == 66 and info.status == "planned"
    assert server.requests == []  # planning and creating send nothing


def test_only_limit_and_seed_filters(library_path, server):
    models = (judge(server),)
    with Library.open(library_path) as lib:

        def cots(**selection: Any) -> list[int]:
            return [c.pk for c in plan_critique_run(lib, CritiqueSpec(CotSelection(DEMO, **selection), models)).cots]

        assert len(cots(only="incorrect")) == N_INCORRECT
        assert len(cots(only="correct")) == N_CORRECT
        assert len(cots(limit=1)) == 4  # per dataset split
        assert len(cots(datasets=("gsm8k",), limit=3)) == 3
        drawn = cots(datasets=("gsm8k",), limit=3, seed=5)
        assert drawn == cots(datasets=("gsm8k",), limit=3, seed=5) and set(drawn) <= set(cots(datasets=("gsm8k",)))
        assert drawn != cots(datasets=("gsm8k",), limit=3) or drawn != cots(datasets=("gsm8k",), limit=3, seed=6)
        assert len(cots(splits=("validation",))) == 8
        explicit = cots()[:3]
        assert cots(cot_pks=tuple(reversed(explicit))) == list(reversed(explicit))
        # A bare answer (a CoT with no text) is critiqued too: that is what lack_justification is for.
        with lib.transaction() as conn:
            conn.execute("UPDATE generated_cot SET cot = '' WHERE id = ?", (explicit[0],))
        plan = plan_critique_run(lib, CritiqueSpec(CotSelection(DEMO, cot_pks=(explicit[0],)), models))
        assert plan.total == 1 and "Explanation to review:\n\n\nAnswer the explanation" in plan.requests[0].prompt
        correct = [c.pk for c in plan_critique_run(lib, CritiqueSpec(CotSelection(DEMO, only="correct"), models)).cots]
        with pytest.raises(RunSpecError, match=r"none of the 2 chosen CoT\(s\) is incorrect"):
            cots(cot_pks=tuple(correct[:2]), only="incorrect")
        with pytest.raises(RunSpecError, match=r"no dataset 'nope' \(it has: commonsense_qa, gsm8k"):
            cots(datasets=("nope",))
        with pytest.raises(RunSpecError, match="no critique template 'missing'"):
            plan_critique_run(lib, CritiqueSpec(CotSelection(DEMO), models, template="missing"))
        with pytest.raises(RunSpecError, match="--only 'wrong'"):
            CotSelection(DEMO, only="wrong")  # type: ignore[arg-type]  # a bad value on purpose


def test_ds_wrapper_sends_the_cards_exact_string_to_the_completions_endpoint(library_path, server):
    spec = CritiqueSpec(CotSelection(DEMO, datasets=("commonsense_qa",), limit=1), (judge(server),), wrappers=("ds",))
    assert spec.models[0].endpoint == "completions" and not spec.models[0].chat
    run_id = _plan_and_create(library_path, spec)
    final = execute_run(library_path, run_id)
    assert final.status == "done" and final.done == 1
    (sent,) = server.requests
    assert sent.path.endswith("/v1/completions")
    with Library.open(library_path) as lib:
        (row,) = run_requests(lib, run_id)
        cot = lib.conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (row.target_cot_pk,)).fetchone()[0]
    template = BUILTIN_TEMPLATES["td-critique-v1"]
    assert row.prompt is not None
    assert sent.json["prompt"] == row.prompt and row.prompt.startswith("[INST] <<SYS>>\n" + template.system)
    assert row.prompt.endswith(" [/INST]\n\n") and cot in row.prompt
    assert row.prompt == ds_wrap(template.system, row.prompt.split("<</SYS>", 1)[1][: -len(" [/INST]\n\n")])
    with pytest.raises(RunSpecError, match="Anthropic's API takes chat messages only"):
        CritiqueSpec(CotSelection(DEMO), (ModelSpec("anthropic", "claude"),), wrappers=("ds",))


# --- execution ------------------------------------------------------------------------------


def test_judge_panel_stores_tidy_and_untidy_critiques_parsed_with_outcomes(library_path, server):
    spec = CritiqueSpec(
        CotSelection(DEMO, datasets=("med_qa", "gsm8k")),
        models=(judge(server), judge(server, "untidy-judge"), judge(server, "bad-judge")),
    )
    run_id = _plan_and_create(library_path, spec)
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=4))
    assert final.status == "done" and final.done == 3 * 21 and final.failed == 0
    assert final.prompt_tokens == 63 * 400 and final.completion_tokens == 63 * 80
    chat = server.requests[0].json["messages"]
    assert [m["role"] for m in chat] == ["system", "user"]
    with Library.open(library_path) as lib:
        rows = run_requests(lib, run_id)
        by_cot = critiques_for_cots(lib, [r.target_cot_pk for r in rows if r.target_cot_pk])
    assert len(by_cot) == 21 and all(len(c) == 3 for c in by_cot.values())
    sent = {(m["content"]) for r in server.requests for m in r.json["messages"] if m["role"] == "user"}
    for row in rows:
        assert row.status == "done" and row.result_critique_pk is not None
        assert row.prompt and row.prompt.split("\n\n", 1)[1] in sent  # the stored text is what was sent
    critiques = {c.pk: c for cs in by_cot.values() for c in cs}
    for row in rows:
        critique = critiques[row.result_critique_pk]
        assert (critique.run_id, critique.request_id, critique.cot_pk) == (run_id, row.id, row.target_cot_pk)
        assert critique.prompt_text == row.prompt and critique.fragment_key == "td-critique-v1"
        assert critique.source == "run" and critique.llm_options["wrapper"] == "chat"
        assert critique.critique_model == spec.models[row.model_index].model_name
    tidy = next(c for c in critiques.values() if c.critique_model == "tidy-judge")
    assert tidy.parsed.fully_parsed and tidy.raw_text == TIDY
    assert (tidy.parsed.dimension, tidy.parsed.explanation_score) == ("incorrect_reasoning", 2.0)
    untidy = next(c for c in critiques.values() if c.critique_model == "untidy-judge")
    assert untidy.parsed.fully_parsed and untidy.raw_text == UNTIDY
    assert (untidy.parsed.dimension, untidy.parsed.explanation_score) == ("missing_information", 3.0)
    assert untidy.parsed.main_flaw == "It never says why the other choices are wrong"
    bad = next(c for c in critiques.values() if c.critique_model == "bad-judge")
    outcome = bad.parsed.outcome("explanation_score")
    assert outcome.status == "unparseable" and outcome.raw and "7/10" in outcome.raw and outcome.why
    assert bad.parsed.explanation_score is None and bad.parsed.dimension == "incorrect_reasoning"
    with Library.open(library_path) as lib:
        summary = parse_summary(lib, run_id)
    assert summary == "63 critique(s): 42 fully parsed; not parsed: explanation_score 21 unparseable"


def test_identical_requests_are_answered_from_the_store_unless_forced(library_path, server):
    spec = CritiqueSpec(CotSelection(DEMO, datasets=("gsm8k",)), (judge(server),))
    first = _plan_and_create(library_path, spec)
    assert execute_run(library_path, first).done == 11
    assert len(server.requests) == 11
    second = _plan_and_create(library_path, spec)
    final = execute_run(library_path, second)
    assert final.status == "done" and final.done == 11 and final.cached == 11
    assert len(server.requests) == 11  # nothing sent again
    with Library.open(library_path) as lib:
        one = {r.target_cot_pk: r.result_critique_pk for r in run_requests(lib, first)}
        two = {r.target_cot_pk: r.result_critique_pk for r in run_requests(lib, second)}
        assert one == two and all(r.cached_from for r in run_requests(lib, second))
    assert _count(library_path, "SELECT count(*) FROM critique") == 11  # reused, not duplicated
    forced = _plan_and_create(library_path, CritiqueSpec(spec.cots, spec.models, force=True))
    assert execute_run(library_path, forced).cached == 0
    assert len(server.requests) == 22 and _count(library_path, "SELECT count(*) FROM critique") == 22
    # Critiques deleted from the library are not "in the store": the next identical request is sent.
    with Library.open(library_path) as lib, lib.transaction() as conn:
        conn.execute("DELETE FROM critique")
    again = _plan_and_create(library_path, spec)
    assert execute_run(library_path, again).cached == 0 and len(server.requests) == 33
    assert _count(library_path, "SELECT count(*) FROM critique") == 11


def test_failed_requests_keep_no_critique_and_resume_sends_exactly_them(library_path, server):
    spec = CritiqueSpec(CotSelection(DEMO, datasets=("gsm8k",)), (judge(server),))
    run_id = _plan_and_create(library_path, spec)
    server.script(Reply(400, {"error": {"message": "bad request"}}), Reply(400, {"error": {"message": "no"}}))
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=1, max_attempts=1))
    assert final.status == "failed" and final.failed == 2 and final.done == 9
    assert _count(library_path, "SELECT count(*) FROM critique") == 9
    again = resume_run(library_path, run_id)
    assert again.status == "done" and again.done == 11 and len(server.requests) == 13
    assert _count(library_path, "SELECT count(*) FROM critique") == 11


def test_pause_resume_and_cancel(library_path, server):
    spec = CritiqueSpec(CotSelection(DEMO), (judge(server),))
    run_id = _plan_and_create(library_path, spec)
    server.script(*[Reply(delay=0.15) for _ in range(N_COTS)])
    control = RunControl()
    seen: list = []
    result: dict[str, Any] = {}

    def worker() -> None:
        result["final"] = execute_run(
            library_path, run_id, limits=RunLimits(concurrency=2), control=control, progress=seen.append
        )

    thread = threading.Thread(target=worker)
    thread.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not seen or seen[-1].done < 4):
        time.sleep(0.02)
    control.pause()
    # The run says it is paused and the requests in flight are answered (waited for, not a
    # fixed 0.5 s a loaded machine may overrun); then nothing more is sent.
    while time.monotonic() < deadline and not (
        server.in_flight == 0
        and _count(library_path, "SELECT count(*) FROM run WHERE id = ? AND status = 'paused'", (run_id,)) == 1
    ):
        time.sleep(0.02)
    time.sleep(0.2)  # a request sent as the pause came has arrived by now
    sent_paused = len(server.requests)
    time.sleep(0.6)
    assert len(server.requests) == sent_paused
    assert _count(library_path, "SELECT count(*) FROM run WHERE id = ? AND status = 'paused'", (run_id,)) == 1
    control.resume()
    while time.monotonic() < deadline and len(server.requests) < sent_paused + 4:
        time.sleep(0.02)
    control.cancel()
    thread.join(30)
    final = result["final"]
    assert final.status == "cancelled" and 8 <= final.done < N_COTS
    critiques = _count(library_path, "SELECT count(*) FROM critique")
    assert critiques == final.done  # one critique per finished request, none half-written
    done = resume_run(library_path, run_id)
    assert done.status == "done" and done.done == N_COTS
    assert _count(library_path, "SELECT count(*) FROM critique") == N_COTS


def _cli(library: Path, *args: str) -> subprocess.Popen:
    """A real ``thoughtdesk`` child process (to be killed)."""
    return cli_process(*args, library=library)


def test_sigkill_mid_critique_run_then_resume_stores_exactly_one_critique_per_request(library_path, server):
    server.script(*[Reply(delay=0.3) for _ in range(200)])
    process = _cli(
        library_path,
        "critique",
        DEMO,
        "--model",
        "openai:tidy-judge",
        "--model",
        "openai:untidy-judge",
        "--base-url",
        server.base_url,
        "--concurrency",
        "2",
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        try:
            if _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'") >= 10:
                break
        except sqlite3.OperationalError:
            continue
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGKILL)
    process.wait()
    total = _count(library_path, "SELECT count(*) FROM request")
    done_at_kill = _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'")
    assert total == 2 * N_COTS and 10 <= done_at_kill < total
    assert _count(library_path, "SELECT count(*) FROM critique") == done_at_kill
    server.replies.clear()
    sent_before = len(server.requests)
    resumed = _cli(library_path, "resume", "1", "--concurrency", "8")
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "run 1: done" in out
    assert len(server.requests) - sent_before == total - done_at_kill
    checks = {
        "requests without a critique": "SELECT count(*) FROM request WHERE status != 'done' OR result_critique_pk IS NULL",
        "critiques without a request": "SELECT count(*) FROM critique WHERE request_id IS NULL OR "
        "id NOT IN (SELECT result_critique_pk FROM request)",
        "critiques shared by two requests": "SELECT count(*) - count(DISTINCT result_critique_pk) FROM request",
        "critiques on the wrong CoT": "SELECT count(*) FROM critique c JOIN request q ON q.id = c.request_id "
        "WHERE q.target_cot_pk != c.cot_pk",
    }
    for what, sql in checks.items():
        assert _count(library_path, sql) == 0, what
    assert _count(library_path, "SELECT count(*) FROM critique") == total
    assert _count(library_path, "SELECT count(DISTINCT critique_model) FROM critique") == 2


# --- real small models (a base model: its critiques are garbage, which must not crash anything) ---


def _assert_garbage_is_recorded(library_path: Path, run_id: int, count: int) -> None:
    with Library.open(library_path) as lib:
        rows = run_requests(lib, run_id)
        critiques = [c for cs in critiques_for_cots(lib, [r.target_cot_pk or 0 for r in rows]).values() for c in cs]
    assert len(rows) == count and all(r.status == "done" for r in rows)
    assert len(critiques) == count
    for critique in critiques:
        assert critique.raw_text.strip()
        assert set(critique.parsed.outcomes) == {
            "main_flaw",
            "dimension",
            "general_feedback",
            "specific_feedback",
            "explanation_score",
        }
        for element, outcome in critique.parsed.outcomes.items():
            assert outcome.status in ("parsed", "missing", "unparseable"), element
            if outcome.status == "unparseable":
                assert outcome.why


@pytest.mark.slow
def test_critique_run_against_llama_server(library_path, llama_server):
    store_api_key("openai", SERVER_KEY, llama_server.base_url)
    model = ModelSpec(
        "openai", llama_server.model_alias, base_url=llama_server.base_url, max_tokens=48, timeout=120, seed=1
    )
    spec = CritiqueSpec(CotSelection(DEMO, datasets=("commonsense_qa",), limit=2), (model,), wrappers=("ds",))
    run_id = _plan_and_create(library_path, spec)
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=2, initial_wait=0.2))
    assert final.status == "done" and final.done == 2 and final.completion_tokens > 0
    _assert_garbage_is_recorded(library_path, run_id, 2)


@pytest.mark.slow
def test_critique_run_in_process_llamacpp(library_path, gguf_model):
    pytest.importorskip("llama_cpp")
    model = ModelSpec.parse(f"llamacpp:{gguf_model}", max_tokens=32, n_ctx=2048, seed=3)
    spec = CritiqueSpec(CotSelection(DEMO, datasets=("gsm8k",), limit=2), (model,), wrappers=("ds",))
    run_id = _plan_and_create(library_path, spec)
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=4))
    assert final.status == "done" and final.done == 2
    _assert_garbage_is_recorded(library_path, run_id, 2)
    with Library.open(library_path) as lib:
        stored = json.loads(run_requests(lib, run_id)[0].params)
    assert stored["wrapper"] == "ds" and stored["temperature"] == 0.0
