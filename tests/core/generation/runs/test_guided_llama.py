"""Guided generation with the small local model in-process (real sampling, real log-probs):
the stored scores are the scorer's mean token log-probs of each candidate given trajectory +
rationale, the chosen step is their argmax at every step, and a trajectory stopped between
steps resumes at the next step with nothing repeated. Mechanics, not accuracy: the 270M base
model writes poor steps."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from tests.core.generation.runs.conftest import DEMO
from thoughtdesk.core.generation.guide_prompts import GUIDE_TEXTS, fill, join_steps
from thoughtdesk.core.generation.runs import (
    GuideSpec,
    ModelSpec,
    RunControl,
    RunLimits,
    RunSpec,
    SampleSelection,
    build_backend,
    cot_steps,
    create_run,
    execute_run,
    plan_run,
    resume_run,
)
from thoughtdesk.core.generation.runs.trajectories import request_steps
from thoughtdesk.core.library.store import Library


def _spec(gguf_model, **guide) -> RunSpec:
    model = ModelSpec("llamacpp", str(gguf_model), n_ctx=1024, seed=7, timeout=300)
    return RunSpec(
        samples=SampleSelection(DEMO, datasets=("gsm8k",), limit=1),
        models=(model,),
        guide=GuideSpec(rationale_model=model, max_steps=3, step_max_tokens=16, rationale_max_tokens=16, **guide),
    )


@pytest.mark.slow
@pytest.mark.parametrize("decay", [None, 0.9])
def test_chosen_step_is_the_argmax_of_real_scorer_log_probs(library_path, gguf_model, decay):
    spec = _spec(gguf_model, decay=decay)
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan := plan_run(lib, spec))
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=1))
    assert final.status == "done" and final.done == 1
    with Library.open(library_path) as lib:
        cot_pk, cot = lib.conn.execute("SELECT id, cot FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()
        steps = cot_steps(lib, cot_pk)
    assert 1 <= len(steps) <= 3 and cot == " ".join(s.chosen_text for s in steps if s.chosen_text)
    prompt = plan.requests[0].prompt or ""

    async def rescore() -> list[list[float]]:
        # The scorer's scores again, outside the run: same prefix, same candidates.
        backend = build_backend(spec.models[0])
        try:
            out = []
            for index, step in enumerate(steps):
                trajectory = join_steps(prompt, [s.chosen_text for s in steps[:index]])
                prefix = fill(GUIDE_TEXTS["scorer"], {"TRAJECTORY": trajectory, "RATIONALE": step.rationale or ""})
                scored = await backend.score(prefix, [" " + c.text for c in step.candidates])
                out.append([s.decayed_mean(decay) if decay is not None else s.mean for s in scored])
            return out
        finally:
            await backend.aclose()

    expected = asyncio.run(rescore())
    for step, scores in zip(steps, expected, strict=True):
        assert step.rationale is not None and len(step.candidates) == 3
        stored = [c.score for c in step.candidates]
        for got, want, candidate in zip(stored, scores, step.candidates, strict=True):
            if candidate.text:
                assert got is not None and math.isclose(got, want, abs_tol=1e-3)
        best = max(range(3), key=lambda i: (stored[i] if stored[i] is not None else -math.inf, -i))
        assert step.chosen == best  # the argmax at every step
        assert step.prompt_tokens > 0 and step.completion_tokens > 0
        assert step.extra is not None and set(step.extra["usage"]) == {"rationale", "agent", "scorer"}


@pytest.mark.slow
def test_stopped_between_steps_then_resumed_continues_at_the_next_step(library_path, gguf_model):
    spec = _spec(gguf_model)  # implicit: with seed 7 the small model writes 3 steps (explicit: 1)
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
        request_id = lib.conn.execute("SELECT id FROM request WHERE run_id = ?", (run_id,)).fetchone()[0]
    control = RunControl()
    reports = []

    def progress(p) -> None:
        reports.append(p)
        if len(reports) == 2:  # the first report is the start, the second follows the first step
            control.cancel()

    stopped = execute_run(library_path, run_id, limits=RunLimits(concurrency=1), control=control, progress=progress)
    assert stopped.status == "cancelled"
    with Library.open(library_path) as lib:
        first = request_steps(lib, request_id)
        rows_before = lib.conn.execute("SELECT id, candidates FROM trajectory_step ORDER BY id").fetchall()
        assert lib.conn.execute("SELECT status FROM request WHERE id = ?", (request_id,)).fetchone()[0] == "pending"
    assert len(first) == 1 and not first[0].final
    final = resume_run(library_path, run_id, limits=RunLimits(concurrency=1))
    assert final.status == "done"
    with Library.open(library_path) as lib:
        rows_after = lib.conn.execute("SELECT id, candidates FROM trajectory_step ORDER BY id").fetchall()
        steps = request_steps(lib, request_id)
    assert rows_after[: len(rows_before)] == rows_before  # the stored step is kept, not redone
    assert [s.index for s in steps] == list(range(len(steps))) and len(steps) >= 2
    # the resumed run's counts include the step stored before the stop, once
    assert final.prompt_tokens == sum(s.prompt_tokens for s in steps)
    assert final.completion_tokens == sum(s.completion_tokens for s in steps)


@pytest.mark.slow
def test_roles_on_one_gguf_load_it_once_for_generation_and_once_for_scoring(library_path, gguf_model, monkeypatch):
    """The agent samples at 0.7 and the helpers (as the CLI builds them) are greedy: their
    specs differ, and each role loaded the same file again (three llama.cpp instances: agent,
    rationale model, scoring copy). Roles on one file with the same load settings share it."""
    from llama_cpp import Llama

    loads: list[bool] = []
    original = Llama.__init__

    def counting(self, *args, **kwargs):
        loads.append(bool(kwargs.get("logits_all")))
        original(self, *args, **kwargs)

    monkeypatch.setattr(Llama, "__init__", counting)
    agent = ModelSpec("llamacpp", str(gguf_model), n_ctx=512, seed=7, temperature=0.7, timeout=300)
    helper = ModelSpec("llamacpp", str(gguf_model), n_ctx=512, seed=7, temperature=0.0, timeout=300)
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("gsm8k",), limit=1),
        models=(agent,),
        guide=GuideSpec(rationale_model=helper, candidates=2, max_steps=1, step_max_tokens=8, rationale_max_tokens=8),
    )
    assert spec.all_models()[0] != spec.all_models()[1]  # the roles' specs differ
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    final = execute_run(library_path, run_id, limits=RunLimits(concurrency=1))
    assert final.status == "done"
    assert sorted(loads) == [False, True]  # one generation instance, one scoring copy


@pytest.mark.slow
def test_killed_mid_trajectory_with_the_real_model_then_resumed(library_path, gguf_model):
    """SIGKILL of `generate --guide rationalyst` on the small model in-process once a step is
    stored; the resume keeps the stored steps as they are, writes the rest, stores each once.
    Steps of 4 tokens: with 12, the seed's first step said "The answer is 27." and ended the
    trajectory at once, so the kill always came too late (the test skipped itself)."""
    import signal
    import sqlite3
    import time

    from tests.core.generation.runs.test_resume_and_secrets import _cli, _count

    model = f"llamacpp:{gguf_model}"
    process = _cli(
        library_path,
        "generate",
        DEMO,
        "--model",
        model,
        "--guide",
        "rationalyst",
        "--rationale-model",
        model,
        "--dataset",
        "gsm8k",
        "--limit",
        "1",
        "--candidates",
        "2",
        "--max-steps",
        "3",
        "--step-max-tokens",
        "4",
        "--n-ctx",
        "512",
        "--model-seed",
        "7",
    )
    # The kill must land mid-trajectory. Each poll takes the library's write lock for a moment;
    # once a step is stored, the lock is kept until the process is dead, so the child cannot store
    # another step (nor finish the trajectory) between the look and the kill, however slow this
    # machine is: it waits on its busy timeout (10 s), and the kill comes well before.
    deadline = time.monotonic() + 600
    stored = 0
    watcher = sqlite3.connect(library_path, timeout=60, isolation_level=None)
    try:
        while time.monotonic() < deadline and process.poll() is None:
            try:
                watcher.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                time.sleep(0.02)  # the library not made yet, or the child writing for longer
                continue
            try:
                stored = watcher.execute("SELECT count(*) FROM trajectory_step").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0  # the table not there yet
            if stored:
                break  # the write lock is held from here to the kill
            watcher.execute("ROLLBACK")
            time.sleep(0.02)
        assert process.poll() is None and stored >= 1, process.communicate()
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        watcher.close()  # rolls back: nothing was written

    def rows():
        conn = sqlite3.connect(f"file:{library_path}?mode=ro", uri=True)
        try:
            return conn.execute(
                "SELECT id, request_id, step_index, rationale, candidates, chosen, final, prompt_tokens "
                "FROM trajectory_step ORDER BY step_index"
            ).fetchall()
        finally:
            conn.close()

    before = rows()
    assert len(before) == stored and not before[-1][6], before  # killed with the trajectory unfinished
    assert _count(library_path, "SELECT count(*) FROM request WHERE status = 'done'") == 0
    resumed = _cli(library_path, "resume", "1", "--json")
    out, err = resumed.communicate(timeout=900)
    assert resumed.returncode == 0, err
    summary = json.loads(out)
    after = rows()
    assert summary["status"] == "done"
    assert after[: len(before)] == before  # the stored steps are kept as they were, not redone
    assert [r[2] for r in after] == list(range(len(after))) and len(after) > len(before)
    assert after[-1][6] == 1 and all(not r[6] for r in after[:-1])
    assert all(r[3] for r in after)  # every step has its rationale
    assert summary["prompt_tokens"] == sum(r[7] for r in after)  # each step counted once
    assert _count(library_path, "SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'") == 1
    assert _count(library_path, "SELECT count(*) FROM trajectory_step WHERE cot_pk IS NULL") == 0
