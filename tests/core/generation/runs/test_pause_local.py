"""Pause stops a local model at its next token (issue 28, point 4: "paused (6 in flight)" while
the model generated on for ~90 s). The call in flight is interrupted, its request goes back to
pending (sent again after the resume, its attempt not counted) and the run resumes to the end,
each request stored once. With the small model in-process, through the chat template (the path
a headless run takes: no streaming) and through a streaming tap (the Runs tab's)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.core.generation.runs.conftest import DEMO
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    ModelSpec,
    RunControl,
    RunLimits,
    RunSpec,
    SampleSelection,
    build_backend,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.library.store import Library


class _Counting:
    """A backend around the local one that streams and counts tokens (as the Runs tab's tap)."""

    def __init__(self, inner: Any, tokens: list[str]) -> None:
        self.inner, self.tokens, self.provider = inner, tokens, inner.provider

    def label(self) -> str:
        return self.inner.label()

    async def complete(self, request: Any, on_token: Any = None) -> Any:
        return await self.inner.complete(request, on_token=lambda _index, piece: self.tokens.append(piece))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _request(library_path, run_id) -> tuple[str, int, Any]:
    with Library.open(library_path) as lib:
        return lib.conn.execute("SELECT status, attempts, claim FROM request WHERE run_id = ?", (run_id,)).fetchone()


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["headless chat", "streaming tap"])
def test_pause_interrupts_the_local_model_and_resume_finishes_the_run(library_path, gguf_model, streaming):
    model = ModelSpec("llamacpp", str(gguf_model), max_tokens=160, n_ctx=1024, seed=5, timeout=600)
    spec = RunSpec(
        samples=SampleSelection(DEMO, datasets=("gsm8k",), limit=1), models=(model,), mode=PromptMode.ONE_STEP
    )
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    control = RunControl()
    tokens: list[str] = []
    seen: dict[str, Any] = {}
    ran = threading.Event()

    def pause_mid_call_then_resume() -> None:
        """Pause once the request is in flight (and, streaming, has written a token), wait for
        what a pause leaves (the request pending again, or, on a model that cannot be stopped,
        its result), look, resume."""
        while not ran.is_set():
            status = _request(library_path, run_id)[0]
            if status == "sent" and (not streaming or tokens):
                break
            if status == "done":
                return
            threading.Event().wait(0.02)
        seen["paused_at"] = len(tokens)
        control.pause()
        while not ran.is_set() and _request(library_path, run_id)[0] == "sent":
            threading.Event().wait(0.02)
        seen["tokens_at_stop"] = len(tokens)
        seen["while_paused"] = _request(library_path, run_id)
        with Library.open(library_path) as lib:
            seen["cots_while_paused"] = lib.conn.execute(
                "SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'"
            ).fetchone()[0]
        control.resume()

    backends = {0: _Counting(build_backend(model), tokens)} if streaming else None
    watcher = threading.Thread(target=pause_mid_call_then_resume)
    watcher.start()
    try:
        final = execute_run(library_path, run_id, limits=RunLimits(concurrency=1), control=control, backends=backends)
    finally:
        ran.set()
        watcher.join()
    assert "paused_at" in seen, "the request was never seen in flight"
    # Paused mid-call: the request was pending again, its attempt not counted, nothing stored.
    assert seen["while_paused"] == ("pending", 0, None) and seen["cots_while_paused"] == 0, seen
    if streaming:  # stopped at its next token (a piece or two may be on their way)
        assert seen["tokens_at_stop"] - seen["paused_at"] <= 3, seen
    assert final.status == "done" and final.done == 1 and final.failed == 0
    with Library.open(library_path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM generated_cot WHERE cot_id LIKE 'td-%'").fetchone()[0] == 1
    assert _request(library_path, run_id)[:2] == ("done", 1)
