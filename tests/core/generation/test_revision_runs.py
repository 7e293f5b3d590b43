"""Revision runs (issue 26, point 5): a critiqued CoT and its critique's feedback go to a model
that writes a revised CoT, stored linked to both and scored; planned, exactly once, answered
from the store; accuracy before and after with McNemar's test. Against a local server whose
critic writes the answer key into its feedback and whose reviser follows the feedback
deterministically, and the in-process small model for plumbing."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import cli_process, run_cli
from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.servers import FakeModelServer, Recorded, Reply
from thoughtdesk.core.evaluation.evaluate import evaluate
from thoughtdesk.core.evaluation.revisions import EXACT_BELOW, mcnemar, revision_outcomes
from thoughtdesk.core.generation.runs import (
    CotSelection,
    CritiqueSpec,
    ModelSpec,
    RunLimits,
    RunSpecError,
    create_critique_run,
    execute_run,
    plan_critique_run,
    resume_run,
    run_requests,
)
from thoughtdesk.core.generation.runs.kind_specs import RevisionSpec
from thoughtdesk.core.generation.runs.revision import create_revision_run, plan_revision_run
from thoughtdesk.core.library.store import Library

N_COTS, N_CORRECT, N_INCORRECT = 33, 23, 10  # the demo collection's generated CoTs

CRITIQUE = """The explanation states or suggests the following:
* Main flaw (standalone statement): "The explanation does not check its result."
* Dimension: incorrect_reasoning

Consider these points for revising the explanation:
* General: Check the result against the question before answering.
* Specific: The correct answer is {key}.

Explanation score: 2"""


class ReviseServer(FakeModelServer):
    """``key-judge`` critiques, putting the answer key it was given into its specific feedback;
    ``fixer`` revises to the answer the feedback names; ``stubborn`` keeps its earlier answer."""

    def _normal(self, record: Recorded, anthropic: bool) -> Reply:
        payload = record.json if isinstance(record.json, dict) else {}
        model = payload.get("model", "")
        prompt = "\n".join(str(m.get("content", "")) for m in payload.get("messages", []))
        if model == "key-judge":
            key = re.search(r"Correct answer: (.*)", prompt)
            text = CRITIQUE.format(key=key.group(1).strip() if key else "?")
        elif model == "fixer":
            said = re.search(r"Specific: The correct answer is (.*)\.", prompt)
            text = f"Following the feedback, I rechecked each step. So the answer is {said.group(1) if said else '?'}."
        elif model == "stubborn":
            said = re.search(r"Your earlier answer: (.*)", prompt)
            text = f"I keep my reasoning. So the answer is {said.group(1).strip() if said else '?'}."
        else:
            return super()._normal(record, anthropic)
        return Reply(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
            },
        )


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    return demo_library(tmp_path / "library.thoughtdesk")


@pytest.fixture
def server():
    with ReviseServer() as running:
        yield running


def model(server: FakeModelServer, name: str) -> ModelSpec:
    return ModelSpec("openai", name, base_url=server.base_url, max_tokens=200)


def _critique_all(library_path: Path, server: FakeModelServer, **selection: Any) -> None:
    with Library.open(library_path) as lib:
        spec = CritiqueSpec(CotSelection(DEMO, **selection), (model(server, "key-judge"),))
        run_id = create_critique_run(lib, plan_critique_run(lib, spec))
    assert execute_run(library_path, run_id).status == "done"


def _revise(library_path: Path, spec: RevisionSpec) -> int:
    with Library.open(library_path) as lib:
        return create_revision_run(lib, plan_revision_run(lib, spec))


def _count(library: Path, sql: str, params: tuple = ()) -> int:
    conn = sqlite3.connect(f"file:{library}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


def test_plan_needs_critiques_and_gives_the_feedback_never_the_key_or_score(library_path, server):
    spec = RevisionSpec(CotSelection(DEMO), (model(server, "fixer"),))
    with Library.open(library_path) as lib, pytest.raises(RunSpecError, match="has a critique.*thoughtdesk critique"):
        plan_revision_run(lib, spec)
    _critique_all(library_path, server, datasets=("gsm8k",))
    with Library.open(library_path) as lib:
        plan = plan_revision_run(lib, spec)
        assert plan.total == 11 and plan.n_cots == 11 and plan.without_critique == N_COTS - 11
        assert "11 revision request(s) for 11 CoT(s) (22 selected CoT(s) without a critique left out)" in plan.summary()
        prompt = plan.requests[0].prompt
        assert "Main flaw: The explanation does not check its result." in prompt
        assert "Specific: The correct answer is" in prompt  # the critic's feedback, as it wrote it
        assert "Correct answer:" not in prompt and "Explanation score" not in prompt
        with pytest.raises(RunSpecError, match="has a critique by other-judge"):
            plan_revision_run(lib, RevisionSpec(CotSelection(DEMO), spec.models, critique_models=("other-judge",)))


def test_revisions_are_stored_linked_scored_once_and_measured_with_mcnemar(library_path, server):
    _critique_all(library_path, server)
    sent_before = len(server.requests)
    spec = RevisionSpec(CotSelection(DEMO), (model(server, "fixer"), model(server, "stubborn")))
    run_id = _revise(library_path, spec)
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=4))
    assert final.status == "done" and final.done == 2 * N_COTS
    assert len(server.requests) - sent_before == 2 * N_COTS
    # exactly one revised CoT per request, naming the CoT and the critique it revises
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE revision_of IS NOT NULL") == 2 * N_COTS
    checks = {
        "requests without their revision": "SELECT count(*) FROM request q JOIN generated_cot c "
        "ON c.id = q.result_cot_pk WHERE q.run_id = ? AND (c.revision_of != q.target_cot_pk OR "
        "c.revision_critique != json_extract(q.params, '$.critique_pk'))",
        "revisions without an answer": "SELECT count(*) FROM generated_cot c WHERE c.revision_of IS NOT NULL AND "
        "NOT EXISTS (SELECT 1 FROM answer a WHERE a.cot_pk = c.id AND a.correct_answer IS NOT NULL) AND ? > 0",
    }
    for what, sql in checks.items():
        assert _count(library_path, sql, (run_id,)) == 0, what
    with Library.open(library_path) as lib:
        groups = revision_outcomes(lib, DEMO)
    by_reviser: dict[str, list] = {}
    for group in groups:
        by_reviser.setdefault(group.reviser, []).append(group)
        assert group.critique_model == "key-judge"
    fixed = by_reviser["fixer"]
    assert sum(g.n for g in fixed) == N_COTS and sum(g.before_correct for g in fixed) == N_CORRECT
    assert sum(g.after_correct for g in fixed) == N_COTS  # the feedback named the key: all fixed
    assert sum(g.test().fixed for g in fixed) == N_INCORRECT and all(g.test().broken == 0 for g in fixed)
    stubborn = by_reviser["stubborn"]
    assert sum(g.after_correct for g in stubborn) == sum(g.before_correct for g in stubborn)
    assert all(g.test().p_value == 1.0 for g in stubborn)
    # the revised CoTs are a prompt condition of their own in evaluate: "revised after key-judge: ..."
    with Library.open(library_path) as lib:
        conditions = {
            json.loads(extra)["thoughtdesk"]["revision"]["label"]
            for (extra,) in lib.conn.execute("SELECT extra FROM generated_cot WHERE revision_of IS NOT NULL")
        }
    assert conditions == {"revised after key-judge"}
    with Library.open(library_path) as lib:
        rows = evaluate(lib, DEMO, comparisons=False).rows
    revised = [r for r in rows if r.condition.startswith("revised after key-judge: ")]
    assert {r.model for r in revised} == {"fixer", "stubborn"} and sum(r.n for r in revised) == 2 * N_COTS
    # a resume sends nothing; the same plan again is answered from the store, nothing duplicated
    assert resume_run(library_path, run_id).done == 2 * N_COTS and len(server.requests) - sent_before == 2 * N_COTS
    again = execute_run(library_path, _revise(library_path, spec))
    assert again.cached == 2 * N_COTS and len(server.requests) - sent_before == 2 * N_COTS
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE revision_of IS NOT NULL") == 2 * N_COTS


def test_cot_or_critique_deleted_after_planning(library_path, server):
    """A deleted CoT takes its revision requests with it; a deleted critique does not stop its
    revision (the prompt holds the feedback): the revision names no critique."""
    _critique_all(library_path, server, datasets=("gsm8k",))
    run_id = _revise(library_path, RevisionSpec(CotSelection(DEMO), (model(server, "fixer"),)))
    with Library.open(library_path) as lib, lib.transaction() as conn:
        requests = run_requests(lib, run_id)
        conn.execute("DELETE FROM generated_cot WHERE id = ?", (requests[0].target_cot_pk,))
        conn.execute("DELETE FROM critique WHERE id = ?", (json.loads(requests[1].params)["critique_pk"],))
    final = execute_run(library_path, run_id)
    assert final.status == "done" and final.done == 10 and final.failed == 0
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE revision_of IS NOT NULL") == 10
    assert (
        _count(
            library_path,
            "SELECT count(*) FROM generated_cot WHERE revision_of = ? AND revision_critique IS NULL",
            (requests[1].target_cot_pk,),
        )
        == 1
    )


def test_mcnemar_is_exact_for_few_discordant_pairs_and_chi_square_above():
    few = mcnemar([False] * 10 + [True] * 5, [True] * 10 + [True] * 5)
    assert few.method == "exact" and few.fixed == 10 and few.broken == 0
    assert few.p_value == pytest.approx(2 * 0.5**10)
    n = EXACT_BELOW + 5  # 20 fixed, 10 broken
    many = mcnemar([False] * 20 + [True] * 10, [True] * 20 + [False] * 10)
    assert many.method == "chi2" and many.fixed == 20 and many.broken == 10 and n == 30
    assert many.p_value == pytest.approx(0.1003482, rel=1e-5)  # (|20-10|-1)^2/30 = 2.7 on 1 df
    assert mcnemar([True, False], [True, False]).p_value == 1.0


def test_cli_revise_plan_only_run_and_revisions_json(library_path, server):
    _critique_all(library_path, server, datasets=("gsm8k",))
    common = ("--model", "openai:fixer", "--base-url", server.base_url, "--critique-model", "key-judge")
    planned = run_cli("revise", DEMO, *common, "--plan-only", library=library_path)
    assert planned.returncode == 0, planned.stderr
    assert "11 revision request(s) for 11 CoT(s)" in planned.stderr and "--- revision |" in planned.stdout
    assert _count(library_path, "SELECT count(*) FROM run WHERE spec LIKE '%\"revision\"%'") == 0
    done = run_cli("revise", DEMO, *common, library=library_path)
    assert done.returncode == 0, done.stderr
    assert "thoughtdesk revisions" in done.stderr
    shown = run_cli("revisions", DEMO, "--json", library=library_path)
    assert shown.returncode == 0, shown.stderr
    rows = json.loads(shown.stdout)["revisions"]
    assert sum(r["pairs"] for r in rows) == 11 and sum(r["after_correct"] for r in rows) == 11
    assert {r["mcnemar_method"] for r in rows} == {"exact"} and all(r["critique_model"] == "key-judge" for r in rows)
    text = run_cli("revisions", DEMO, library=library_path)
    assert "McNemar p" in text.stdout and "fixer" in text.stdout


def test_sigkill_mid_revision_run_then_resume_stores_exactly_one_revision_per_request(library_path, server):
    _critique_all(library_path, server)
    server.script(*[Reply(delay=0.3) for _ in range(200)])
    process = cli_process(
        "revise",
        DEMO,
        "--model",
        "openai:fixer",
        "--base-url",
        server.base_url,
        "--concurrency",
        "2",
        library=library_path,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
        try:
            if _count(library_path, "SELECT count(*) FROM request WHERE step = 'revision' AND status = 'done'") >= 6:
                break
        except sqlite3.OperationalError:
            continue
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_at_kill = _count(library_path, "SELECT count(*) FROM request WHERE step = 'revision' AND status = 'done'")
    assert 6 <= done_at_kill < N_COTS
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE revision_of IS NOT NULL") == done_at_kill
    server.replies.clear()
    run_id = _count(library_path, "SELECT max(run_id) FROM request WHERE step = 'revision'")
    resumed = cli_process("resume", str(run_id), "--concurrency", "8", library=library_path)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE revision_of IS NOT NULL") == N_COTS
    assert _count(library_path, "SELECT count(*) FROM request WHERE step = 'revision' AND status != 'done'") == 0
    assert (
        _count(
            library_path,
            "SELECT count(*) - count(DISTINCT result_cot_pk) FROM request WHERE step = 'revision'",
        )
        == 0
    )


def test_cli_without_critiques_says_so_in_one_line(library_path, server):
    result = run_cli("revise", DEMO, "--model", "openai:fixer", "--base-url", server.base_url, library=library_path)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "has a critique" in lines[0] and "thoughtdesk critique" in lines[0]
    shown = run_cli("revisions", DEMO, library=library_path)
    assert shown.returncode == 0 and "no revised CoTs" in shown.stdout
    missing = run_cli("revisions", "no-such-collection", library=library_path)
    assert (
        missing.returncode != 0 and "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    )


@pytest.mark.slow
def test_revision_run_in_process_llamacpp(library_path, server, gguf_model):
    pytest.importorskip("llama_cpp")
    _critique_all(library_path, server, datasets=("gsm8k",), limit=2)
    reviser = ModelSpec.parse(f"llamacpp:{gguf_model}", max_tokens=24, n_ctx=2048, seed=3)
    run_id = _revise(library_path, RevisionSpec(CotSelection(DEMO, datasets=("gsm8k",)), (reviser,)))
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=2))
    assert final.status == "done" and final.done == 2
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE revision_of IS NOT NULL") == 2
    with Library.open(library_path) as lib:
        assert sum(g.n + g.unscored for g in revision_outcomes(lib, DEMO)) == 2
