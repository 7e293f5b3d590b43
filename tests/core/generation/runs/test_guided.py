"""Guided generation on the run engine against a real HTTP server on 127.0.0.1: the stepwise and
process-supervision loops, each step stored as chosen, the finished CoT scored like any other,
the trajectory read back, and a real kill-and-resume of the CLI mid-trajectory."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import time
from dataclasses import replace
from typing import Any

import pytest

from tests.core.generation.runs.conftest import DEMO
from tests.core.generation.runs.test_resume_and_secrets import _cli, _count
from tests.helpers.servers import FakeModelServer, Reply, toy_echo_logprobs
from thoughtdesk.core.generation.runs import (
    GuideSpec,
    ModelSpec,
    RunLimits,
    RunSpec,
    RunSpecError,
    SampleSelection,
    collection_trajectories,
    cot_steps,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.library.store import Library

ONE = RunLimits(concurrency=1, max_attempts=2, initial_wait=0.05)


def _chat(*texts: str) -> Reply:
    """A chat-completions answer with one choice per text."""
    return Reply(
        body={
            "id": "x",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                for i, t in enumerate(texts)
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5 * len(texts), "total_tokens": 10 + 5 * len(texts)},
        }
    )


def _spec(server: FakeModelServer, guide: GuideSpec | None, **changes: Any) -> RunSpec:
    options: dict[str, Any] = dict(
        samples=SampleSelection(DEMO, datasets=("med_qa",), limit=1),
        models=(ModelSpec("openai", "agent", base_url=server.base_url, timeout=5.0),),
        guide=guide,
    )
    options.update(changes)
    return RunSpec(**options)


def _run(path, spec: RunSpec) -> int:
    with Library.open(path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    execute_run(path, run_id, limits=ONE)
    return run_id


def test_stepwise_writes_one_sentence_per_step_until_the_answer(library_path, fake_server):
    fake_server.script(
        _chat("The patient has a fever. And more text that is cut."),
        _chat("\nFever with a rash suggests measles.\nIgnored line."),
        _chat("The answer is B. Trailing."),
    )
    _run(library_path, _spec(fake_server, GuideSpec(method="stepwise", max_steps=10)))
    assert len(fake_server.requests) == 3  # stopped at "The answer is", not at the step limit
    sent = [r.json for r in fake_server.requests]
    assert all(body["n"] == 1 and body["temperature"] == 0.7 for body in sent)
    # every step's context is the question prompt plus the steps chosen so far
    last_prompt = sent[2]["messages"][-1]["content"]
    assert last_prompt.endswith("The patient has a fever. Fever with a rash suggests measles.")
    with Library.open(library_path) as lib:
        (cot_pk, cot, extra) = lib.conn.execute(
            "SELECT id, cot, extra FROM generated_cot WHERE cot_id LIKE 'td-%'"
        ).fetchone()
        assert cot == "The patient has a fever. Fever with a rash suggests measles. The answer is B."
        provenance = json.loads(extra)["thoughtdesk"]
        assert provenance["guide"]["label"] == "stepwise" and provenance["guide"]["steps"] == 3
        assert provenance["prompt_tokens"] == 30 and provenance["completion_tokens"] == 15  # summed over steps
        answer = lib.conn.execute("SELECT td_value FROM answer WHERE cot_pk = ?", (cot_pk,)).fetchone()
        assert answer is not None and answer[0].startswith("B")  # scored like any one-step CoT
        steps = cot_steps(lib, cot_pk)
        assert [s.index for s in steps] == [0, 1, 2] and [s.final for s in steps] == [False, False, True]
        assert all(s.rationale is None and len(s.candidates) == 1 and s.prompt_tokens == 10 for s in steps)
        (trajectory,) = collection_trajectories(lib, DEMO)
        assert trajectory.method == "stepwise"
        assert trajectory.to_json()["steps"][1] == {
            "rationale": None,
            "candidates": [{"text": "Fever with a rash suggests measles.", "score": None}],
            "chosen": "Fever with a rash suggests measles.",
        }


class RatingServer(FakeModelServer):
    """A rater on 127.0.0.1 whose answer depends on the candidate it is asked about (the
    candidates of a step are rated concurrently, so scripted answers would arrive in any order)."""

    def __init__(self, ratings: dict[str, str]) -> None:
        super().__init__()
        self.ratings = ratings

    def _normal(self, record, anthropic):
        prompt = record.json["messages"][-1]["content"]
        candidate = prompt.split("Next step: ", 1)[1].split("\n", 1)[0]
        return _chat(self.ratings[candidate])


def test_process_supervision_keeps_the_best_rated_candidate(library_path, fake_server):
    ratings = {
        "Option one is weak.": "1",
        "Option two is strong.": "Rating: 3",
        "Option three is fine.": "10",  # not a 0-3 rating (its first digit 0-3 was read as 1)
        "So the answer is A.": "2",
        "Answer: C": "2",
        "Maybe.": "4/3",  # neither (was read as 3)
    }
    with RatingServer(ratings) as rating_server:
        rater = ModelSpec("openai", "rater", base_url=rating_server.base_url, timeout=5.0)
        fake_server.script(
            _chat("Option one is weak.", "Option two is strong.", "Option three is fine."),
            _chat("So the answer is A.", "Answer: C", "Maybe."),
        )
        _run(
            library_path, _spec(fake_server, GuideSpec(method="process", rater_model=rater, candidates=3, max_steps=5))
        )
        rater_prompts = [r.json["messages"][-1]["content"] for r in rating_server.requests]
    with Library.open(library_path) as lib:
        (cot_pk, cot) = lib.conn.execute("SELECT id, cot FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()
        steps = cot_steps(lib, cot_pk)
    assert [c.score for c in steps[0].candidates] == [1.0, 3.0, None]
    assert steps[0].chosen == 1 and steps[0].chosen_text == "Option two is strong."
    assert [c.score for c in steps[1].candidates] == [2.0, 2.0, None]
    assert steps[1].chosen == 0  # a tie goes to the earlier candidate
    # unparseable replies are kept with their step and counted
    assert steps[0].extra is not None and steps[0].extra["unparsed_ratings"] == [{"candidate": 2, "reply": "10"}]
    assert steps[1].unparsed_rating(2) == "4/3" and steps[1].unparsed_ratings == 1
    from thoughtdesk.cli.trajectories import format_text

    with Library.open(library_path) as lib:
        text = format_text(collection_trajectories(lib, DEMO))
    assert '[no rating in "10"] Option three is fine.' in text
    assert "2 rater repl(ies) held no 0-3 rating" in text
    assert steps[1].final and len(steps) == 2
    assert cot == "Option two is strong. So the answer is A."
    assert len(rater_prompts) == 6 and all(p.startswith("Here is a partial solution") for p in rater_prompts)
    # the step's tokens count the agent's and the rater's calls
    assert steps[0].prompt_tokens == 40 and steps[0].extra["usage"]["rater"]["calls"] == 3


def test_guide_needs_its_helper_models(fake_server):
    with pytest.raises(RunSpecError, match="--rationale-model"):
        GuideSpec(method="rationalyst")
    with pytest.raises(RunSpecError, match="--rater-model"):
        GuideSpec(method="process")


def test_plan_counts_guided_requests_and_the_helper_models(library_path, fake_server):
    rationale = ModelSpec("openai", "rationale", base_url=fake_server.base_url)
    spec = _spec(fake_server, GuideSpec(rationale_model=rationale, max_steps=4), samples=SampleSelection(DEMO, limit=1))
    with Library.open(library_path) as lib:
        plan = plan_run(lib, spec)
    assert plan.n_guided_requests == plan.n_samples == 4
    assert "rationalyst-implicit" in plan.summary() and "4 guided CoT(s)" in plan.summary()
    steps = [p.step for p in plan.previews(1)]
    assert steps == ["rationale", "guided step", "scorer prefix"]
    # the scorer defaults to the rationale model, asked on the endpoint that echoes log-probs
    assert spec.all_models()[1:] == [rationale, replace(rationale, endpoint="completions")]
    assert RunSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec


def test_kill_mid_trajectory_then_resume_repeats_and_duplicates_nothing(library_path):
    with FakeModelServer() as server:
        server.script(*[Reply(delay=0.15) for _ in range(400)])
        process = _cli(
            library_path,
            "generate",
            DEMO,
            "--model",
            "openai:slow-model",
            "--base-url",
            server.base_url,
            "--guide",
            "stepwise",
            "--max-steps",
            "5",
            "--concurrency",
            "2",
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
            try:
                stored = _count(library_path, "SELECT count(*) FROM trajectory_step")
            except sqlite3.OperationalError:
                continue
            if stored >= 12:
                break
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGKILL)
        process.wait()
        steps_at_kill = _count(library_path, "SELECT count(*) FROM trajectory_step")
        unfinished = _count(library_path, "SELECT count(*) FROM request WHERE status != 'done'")
        assert unfinished > 0
        # killed mid-trajectory: some CoT has steps stored but is not finished
        assert _count(library_path, "SELECT count(DISTINCT request_id) FROM trajectory_step WHERE cot_pk IS NULL") > 0
        server.replies.clear()
        sent_before = len(server.requests)
        resumed = _cli(library_path, "resume", "1", "--concurrency", "4")
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        assert "run 1: done" in out
        steps_total = _count(library_path, "SELECT count(*) FROM trajectory_step")
        # each step is one agent call: the resume sent exactly the steps that were not stored
        assert len(server.requests) - sent_before == steps_total - steps_at_kill
    checks = {
        "requests not done": "SELECT count(*) FROM request WHERE status != 'done' OR result_cot_pk IS NULL",
        "steps without their CoT": "SELECT count(*) FROM trajectory_step WHERE cot_pk IS NULL",
        "step indexes with gaps": "SELECT count(*) FROM (SELECT request_id FROM trajectory_step GROUP BY request_id "
        "HAVING max(step_index) + 1 != count(*))",
        "CoTs stored twice": "SELECT count(*) - count(DISTINCT cot_id) FROM generated_cot",
        "answers per CoT not 1": "SELECT count(*) FROM (SELECT c.id FROM generated_cot c LEFT JOIN answer a "
        "ON a.cot_pk = c.id WHERE c.cot_id LIKE 'td-%' GROUP BY c.id HAVING count(a.id) != 1)",
    }
    for what, sql in checks.items():
        assert _count(library_path, sql) == 0, what
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'") == 16


def test_guided_stepwise_and_one_shot_are_separate_conditions_in_evaluate(library_path, fake_server):
    from thoughtdesk.core.evaluation.evaluate import evaluate
    from thoughtdesk.core.generation.prompts import PromptMode

    fake_server.script(_chat("The answer is B."), _chat("The answer is B."), _chat("The answer is B."))
    rationale = ModelSpec("openai", "rationale", base_url=fake_server.base_url, timeout=5.0)
    _run(library_path, _spec(fake_server, GuideSpec(method="stepwise")))
    _run(library_path, _spec(fake_server, None, mode=PromptMode.ONE_STEP))
    _run(
        library_path,
        _spec(fake_server, GuideSpec(method="rationalyst", supervision="explicit", rationale_model=rationale)),
    )
    with Library.open(library_path) as lib:
        result = evaluate(lib, DEMO, n_resamples=99)
    conditions = sorted(row.condition for row in result.rows if row.model == "agent")
    assert conditions == ["- / - / -", "rationalyst-explicit: - / - / -", "stepwise: - / - / -"]
    ours = [c for c in result.comparisons if c.model_a == c.model_b == "agent"]
    assert len(ours) == 3  # every pair of the three compared on the same question


def test_a_scorer_that_cannot_score_stops_the_run_in_one_line_and_nothing_is_approximated(library_path, fake_server):
    from thoughtdesk.core.generation.backends.base import ScoringUnsupported
    from thoughtdesk.core.generation.runs import run_info

    with pytest.raises(RunSpecError, match="cannot score text: Anthropic"):
        GuideSpec(rationale_model=ModelSpec("anthropic", "claude"))
    # A /completions answer without log-probs, as llama.cpp's own llama-server gives.
    no_logprobs = Reply(
        body={
            "id": "x",
            "object": "text_completion",
            "model": "rationale",
            "choices": [{"index": 0, "text": "!", "finish_reason": "length"}],
        }
    )
    fake_server.script(_chat("A rationale."), _chat("One.", "Two.", "Three."), no_logprobs, no_logprobs, no_logprobs)
    rationale = ModelSpec("openai", "rationale", base_url=fake_server.base_url, timeout=5.0)
    guide = GuideSpec(rationale_model=rationale)
    assert guide.scorer is not None and guide.scorer.endpoint == "completions"  # the endpoint that can echo
    spec = _spec(fake_server, guide, samples=SampleSelection(DEMO, datasets=("med_qa",), limit=1))
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    with pytest.raises(ScoringUnsupported) as raised:
        execute_run(library_path, run_id, limits=ONE)
    assert "cannot score text" in str(raised.value) and "\n" not in str(raised.value)
    with Library.open(library_path) as lib:
        info = run_info(lib, run_id)
        assert info.status == "failed" and "cannot score text" in (info.last_error or "")
        assert lib.conn.execute("SELECT count(*) FROM trajectory_step").fetchone()[0] == 0  # no unscored step kept
        assert lib.conn.execute("SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0] == 0


def test_implicit_supervision_keeps_the_candidate_the_scorer_finds_likeliest(library_path, fake_server):
    # The scorer is a second server whose /completions echoes log-probs from a toy model: a word
    # seen before in the text scores -0.5, an unseen one -3.0 (tests/helpers/servers.py).
    fake_server.script(
        _chat("Multiply the muffins by their price."),
        _chat("Bananas fly quickly.", "Multiply the muffins by their price.", "Multiply bananas."),
        _chat("State it."),
        _chat("The answer is B.", "The answer is B.", "The answer is B."),
    )
    with FakeModelServer() as scorer_server:
        rationale = ModelSpec("openai", "rationale", base_url=fake_server.base_url, timeout=5.0)
        scorer = ModelSpec("openai", "scorer", base_url=scorer_server.base_url, timeout=5.0)
        _run(library_path, _spec(fake_server, GuideSpec(rationale_model=rationale, scorer_model=scorer)))
        scored = [r.json for r in scorer_server.requests]
    with Library.open(library_path) as lib:
        (cot_pk, cot) = lib.conn.execute("SELECT id, cot FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()
        steps = cot_steps(lib, cot_pk)
    first = steps[0]
    assert first.rationale == "Multiply the muffins by their price."
    scores = [c.score for c in first.candidates]
    assert scores[1] == pytest.approx(-0.5)  # every word was in the rationale
    assert scores[2] is not None
    assert scores[0] == pytest.approx(-3.0) and -3.0 < scores[2] < -0.5
    assert first.chosen == 1 and steps[1].final and cot == "Multiply the muffins by their price. The answer is B."
    assert len(scored) == 6 and all(body["echo"] is True and body["logprobs"] == 1 for body in scored)
    assert all("(Rationale: Multiply the muffins by their price.)" in body["prompt"] for body in scored[:3])
    assert first.extra is not None and set(first.extra["usage"]) == {"rationale", "agent", "scorer"}


def test_a_local_models_template_wraps_a_guided_prompt_once(tmp_path):
    """The backend applies a local model's completion template to every raw prompt; guided
    generation wrapped its prompts once more (the model read the turn markers twice)."""
    from thoughtdesk.core.generation.backends.llamacpp import LlamaCppBackend
    from thoughtdesk.core.generation.runs import build_backend
    from thoughtdesk.core.generation.runs.guided import GuidedWriter

    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 16)  # checked by its header; nothing is loaded
    model = ModelSpec("llamacpp", str(gguf), completion_template="<turn>{prompt}</turn>")
    backend = build_backend(model)
    assert isinstance(backend, LlamaCppBackend)
    call = GuidedWriter._request(model, "Q: 2 + 3?", temperature=0.7, max_tokens=8)
    assert backend.prompt_text(call) == "<turn>Q: 2 + 3?</turn>"


# --- kill and resume of a RATIONALYST run -----------------------------------------------------

_STEP = re.compile(r"Step(\d+)opt\d+")


class GuidedServer(FakeModelServer):
    """Agent, rationale model and scorer on one server on 127.0.0.1, each answer after ``delay``
    seconds. The agent's candidates name the step they are for ("Step1opt0 holds."), so every
    request tells which step of which trajectory it serves; step 2's candidates state the answer.
    The scorer's /completions echoes log-probs from the toy model."""

    def __init__(self) -> None:
        super().__init__()
        self.delay = 0.1
        self.responder = self._guided

    def _guided(self, record):
        body = record.json
        if record.path.endswith("/chat/completions"):
            prompt = body["messages"][-1]["content"]
            step = len(_STEP.findall(prompt))
            if prompt.startswith("Here is a solution being written"):
                texts = [f"Recall fact {step}."]
            else:
                end = ", so the answer is A." if step == 2 else "."
                texts = [f"Step{step}opt{i} holds{end}" for i in range(body.get("n", 1))]
            reply = _chat(*texts)
            reply.delay = self.delay
            return reply
        if body.get("echo"):
            return Reply(body=toy_echo_logprobs(body["prompt"], body["model"]), delay=self.delay)
        return None

    def served(self, questions: dict[str, int], since: int = 0) -> list[tuple[int, int, str]]:
        """(sample pk, step index, role) of each request from the ``since``-th on."""
        out = []
        for record in self.requests[since:]:
            body = record.json
            prompt = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
            sample = max((q for q in questions if q in prompt), key=len)
            steps = len(_STEP.findall(prompt))
            if "messages" not in body:
                out.append((questions[sample], steps - 1, "scorer"))  # the prompt ends with its candidate
            elif prompt.startswith("Here is a solution being written"):
                out.append((questions[sample], steps, "rationale"))
            else:
                out.append((questions[sample], steps, "agent"))
        return out


def test_kill_mid_rationalyst_trajectory_then_resume_repeats_no_finished_step(library_path):
    from collections import Counter

    from thoughtdesk.core.generation.backends import ModelPrice, PriceTable
    from thoughtdesk.core.generation.backends.pricing import default_price_path

    prices = PriceTable()
    prices.set(ModelPrice("local", "agent", 1000.0, 2000.0))  # the local server priced, so cost counts
    prices.set(ModelPrice("local", "rationale", 500.0, 500.0))
    default_price_path().parent.mkdir(parents=True, exist_ok=True)
    prices.save(default_price_path())
    with Library.open(library_path) as lib:
        questions = {q: pk for pk, q in lib.conn.execute("SELECT id, question FROM sample")}
    with GuidedServer() as server:
        process = _cli(
            library_path,
            "generate",
            DEMO,
            "--model",
            "openai:agent",
            "--base-url",
            server.base_url,
            "--guide",
            "rationalyst",
            "--rationale-model",
            "openai:rationale",
            "--candidates",
            "2",
            "--max-steps",
            "5",
            "--concurrency",
            "2",
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
            try:
                stored = _count(library_path, "SELECT count(*) FROM trajectory_step")
            except sqlite3.OperationalError:
                continue
            if stored >= 10:
                break
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGKILL)
        process.wait()
        conn = sqlite3.connect(f"file:{library_path}?mode=ro", uri=True)
        at_kill = set(
            conn.execute(
                "SELECT q.sample_pk, t.step_index FROM trajectory_step t JOIN request q ON q.id = t.request_id"
            )
        )
        partial = conn.execute(
            "SELECT count(DISTINCT request_id) FROM trajectory_step WHERE cot_pk IS NULL"
        ).fetchone()[0]
        conn.close()
        assert partial > 0  # killed mid-trajectory: some CoT has steps stored but is not finished
        server.delay = 0.0
        sent_before = len(server.requests)
        resumed = _cli(library_path, "resume", "1", "--concurrency", "4", "--json")
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        summary = json.loads(out)
        assert summary["status"] == "done" and summary["failed"] == 0
        after = server.served(questions, since=sent_before)
    # no finished step was asked again, by any role
    assert not [served for served in after if served[:2] in at_kill]
    # every step finished after the kill asked each role exactly once (the scorer once a candidate)
    per_step = Counter(after)
    resumed_steps = {(sample, step) for sample, step, _ in after}
    for sample, step in resumed_steps:
        assert [per_step[(sample, step, role)] for role in ("rationale", "agent", "scorer")] == [1, 1, 2]
    conn = sqlite3.connect(f"file:{library_path}?mode=ro", uri=True)
    try:
        steps = conn.execute(
            "SELECT request_id, step_index, final, prompt_tokens, completion_tokens, cost FROM trajectory_step"
        ).fetchall()
        assert len(steps) == len({(r, i) for r, i, *_ in steps}) == 16 * 3  # each step once
        assert {(r, i, f) for r, i, f, *_ in steps} == {(r, i, int(i == 2)) for r, i, *_ in steps}
        assert at_kill | resumed_steps == {
            (pk, i) for (pk,) in conn.execute("SELECT sample_pk FROM request") for i in range(3)
        }
        assert not at_kill & resumed_steps
        # tokens and cost: each step counted once, in its CoT and in the run's totals
        for request_id, tokens_in, tokens_out, cost in conn.execute(
            "SELECT id, prompt_tokens, completion_tokens, cost FROM request"
        ):
            mine = [s for s in steps if s[0] == request_id]
            assert tokens_in == sum(s[3] for s in mine) and tokens_out == sum(s[4] for s in mine)
            assert cost == pytest.approx(sum(s[5] for s in mine)) and cost > 0
        assert summary["prompt_tokens"] == sum(s[3] for s in steps)
        assert summary["completion_tokens"] == sum(s[4] for s in steps)
        assert summary["cost"] == f"${sum(s[5] for s in steps):.4f}"
        assert conn.execute("SELECT count(*) - count(DISTINCT cot_id) FROM generated_cot").fetchone()[0] == 0
    finally:
        conn.close()


class StepJudgeRater(FakeModelServer):
    """A ProcessBench-style step judge on 127.0.0.1: it answers the first tagged paragraph that
    holds "wrong" (-1 when none does), in \\boxed{}; "mumble" gets no box (unparseable)."""

    def _normal(self, record, anthropic):
        import re

        prompt = record.json["messages"][-1]["content"]
        paragraphs = re.findall(r"<paragraph_(\d+)>\n(.*?)\n</paragraph_\1>", prompt, re.DOTALL)
        if any("mumble" in text for _, text in paragraphs):
            return _chat("Hard to say.")
        wrong = next((i for i, text in paragraphs if "wrong" in text), "-1")
        return _chat(f"Reasoning... \\boxed{{{wrong}}}")


def test_process_supervision_with_a_processbench_step_judge(library_path, fake_server):
    with StepJudgeRater() as judge_server:
        judge = ModelSpec("openai", "judge", base_url=judge_server.base_url, timeout=5.0)
        fake_server.script(
            _chat("A wrong start.", "A sound start.", "Mumble mumble."),
            _chat("This step is wrong too.", "So the answer is A.", "Answer: C"),
        )
        guide = GuideSpec(method="process", rater_model=judge, candidates=3, max_steps=5, rater_style="processbench")
        assert GuideSpec.from_json(guide.to_json()) == guide
        _run(library_path, _spec(fake_server, guide))
        prompts = [r.json["messages"][-1]["content"] for r in judge_server.requests]
    with Library.open(library_path) as lib:
        (cot_pk, cot) = lib.conn.execute("SELECT id, cot FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()
        steps = cot_steps(lib, cot_pk)
    # step 1: the first wrong paragraph is the candidate (0), none (1), no readable answer (None)
    assert [c.score for c in steps[0].candidates] == [0.0, 1.0, None]
    assert steps[0].chosen == 1 and steps[0].unparsed_rating(2) == "Hard to say." and steps[0].unparsed_ratings == 1
    assert [c.score for c in steps[1].candidates] == [0.0, 1.0, 1.0]
    assert cot == "A sound start. So the answer is A."
    assert all(p.startswith("The following is a math problem and a solution") for p in prompts)
    assert any(
        "<paragraph_0>\nA sound start.\n</paragraph_0>\n\n<paragraph_1>\nSo the answer is A." in p for p in prompts
    )
    with pytest.raises(RunSpecError, match="--rater-style"):
        GuideSpec(method="process", rater_model=judge, rater_style="nope")
