"""Critiques of a reasoning model's thinking (issue 24, point 7): a critique run judges the
visible explanation by default (Digital Socrates) or, when asked, the thinking; CoTs without
thinking are then left out, the prompt quotes the thinking, and the critique says what it judged."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.core.generation.test_critique_runs import CritiqueServer, judge
from tests.helpers.cli import run_cli
from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.critiques import critiques_for_cots
from thoughtdesk.core.generation.runs import (
    CotSelection,
    CritiqueSpec,
    RunLimits,
    RunSpecError,
    create_critique_run,
    execute_run,
    plan_critique_run,
    run_requests,
)
from thoughtdesk.core.generation.runs.kind_specs import spec_from_document
from thoughtdesk.core.library.store import Library


def _thinking(pk: int) -> str:
    # Long enough (> prompt_refs.SHARED_CHARS) that a reference to the visible CoT would be tempting.
    return f"Thinking of CoT {pk}. Wait, the dose matters.\n\n" + "Let me check the numbers again. " * 60


@pytest.fixture
def library_path(tmp_path: Path) -> Path:
    path = demo_library(tmp_path / "library.thoughtdesk")
    with Library.open(path) as lib, lib.transaction() as conn:
        pks = [row[0] for row in conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT 3")]
        for pk in pks:
            conn.execute("UPDATE generated_cot SET reasoning = ? WHERE id = ?", (_thinking(pk), pk))
    return path


@pytest.fixture
def server():
    with CritiqueServer() as running:
        yield running


def test_the_thinking_is_judged_when_asked_and_the_explanation_by_default(library_path, server):
    spec = CritiqueSpec(CotSelection(DEMO), models=(judge(server),), judge="thinking")
    with Library.open(library_path) as lib:
        plan = plan_critique_run(lib, spec)
        visible = {pk: text for pk, text in lib.conn.execute("SELECT id, cot FROM generated_cot")}
        default = plan_critique_run(lib, replace(spec, judge="explanation"))
    assert plan.n_cots == 3 and "judging the thinking" in plan.summary()
    for request in plan.requests:
        assert _thinking(request.cot_pk) in request.prompt and visible[request.cot_pk] not in request.prompt
    assert default.n_cots == 33 and "judging" not in default.summary()
    explained = next(r for r in default.requests if r.cot_pk == plan.requests[0].cot_pk)
    assert visible[explained.cot_pk] in explained.prompt and "Thinking of CoT" not in explained.prompt

    with Library.open(library_path) as lib:
        run_id = create_critique_run(lib, plan)
        document = lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0]
    import json

    resumed = spec_from_document(json.loads(document))
    assert isinstance(resumed, CritiqueSpec) and resumed.judge == "thinking"  # a resume judges the same
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=2))
    assert final.status == "done" and final.done == 3
    sent = [m["content"] for r in server.requests for m in r.json["messages"] if m["role"] == "user"]
    assert all("Thinking of CoT" in text for text in sent)
    with Library.open(library_path) as lib:
        rows = run_requests(lib, run_id)
        targets = [r.target_cot_pk for r in rows]
        assert None not in targets
        critiques = critiques_for_cots(lib, [pk for pk in targets if pk is not None])
    for row in rows:
        assert row.target_cot_pk is not None
        (critique,) = critiques[row.target_cot_pk]
        assert critique.llm_options["judged"] == "thinking"
        assert critique.prompt_text == row.prompt and critique.prompt_text is not None
        assert _thinking(row.target_cot_pk) in critique.prompt_text


def test_judging_the_thinking_of_cots_without_one_says_so(tmp_path, server):
    path = demo_library(tmp_path / "plain.thoughtdesk")
    with Library.open(path) as lib:
        with pytest.raises(RunSpecError, match="no CoTs with thinking of collection"):
            plan_critique_run(lib, CritiqueSpec(CotSelection(DEMO), (judge(server),), judge="thinking"))
        with pytest.raises(RunSpecError, match="or have no thinking"):
            plan_critique_run(lib, CritiqueSpec(CotSelection(DEMO, cot_pks=(1,)), (judge(server),), judge="thinking"))
    with pytest.raises(RunSpecError, match="--judge 'answer'"):
        CritiqueSpec(CotSelection(DEMO), (judge(server),), judge="answer")  # type: ignore[arg-type]


def test_the_critique_command_judges_the_thinking(library_path, server):
    args = ("critique", DEMO, "--model", "openai:tidy-judge", "--base-url", server.base_url, "--plan-only")
    done = run_cli(*args, "--judge", "thinking", library=library_path)
    assert done.returncode == 0, done.stderr
    assert "3 critique request(s) for 3 CoT(s)" in done.stderr and "judging the thinking" in done.stderr
    assert "Thinking of CoT" in done.stdout  # the exact prompt previewed
    assert server.requests == []
