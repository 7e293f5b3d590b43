"""Runs through the providers' batch APIs, against a local server with OpenAI's files and
batches endpoints and Anthropic's message batches: results stored like a normal run's at the
batch price, partly failed and expired batches, a kill between submit and fetch, cancel."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.core.generation.runs.batch_support import (
    KEY,
    PRICES,
    PROVIDERS,
    advance,
    batch_spec,
    counts,
    create,
    stored,
)
from tests.core.generation.runs.conftest import DEMO
from tests.helpers.batch_server import BatchServer
from thoughtdesk.core.generation.backends import BackendError
from thoughtdesk.core.generation.backends.batches import OpenAIBatches
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import (
    BatchRunError,
    ModelSpec,
    RunSpec,
    SampleSelection,
    advance_batch_run,
    cancel_batch_run_async,
    create_run,
    is_batch_run,
    list_batches,
    plan_run,
    run_info,
)
from thoughtdesk.core.generation.runs.batch_work import request_id_of
from thoughtdesk.core.library.store import Library


def _openai_spec(server: BatchServer, **changes) -> RunSpec:
    return batch_spec(server, "openai", **changes)


_create, _advance, _counts, _stored = create, advance, counts, stored


def test_openai_batch_run_end_to_end_at_half_price(library_path):
    with BatchServer(polls_before_done=0) as server:
        run_id = _create(library_path, _openai_spec(server))
        total = sum(_counts(library_path, run_id).values())
        first = _advance(library_path, run_id, server)
        assert first.submitted == total // 2 and first.status == "batched"  # the CoTs; extractions wait
        assert _counts(library_path, run_id) == {"batched": total // 2, "pending": total // 2}
        second = _advance(library_path, run_id, server)  # CoTs stored, extractions submitted
        assert second.stored == total // 2 and second.submitted == total // 2
        third = _advance(library_path, run_id, server)
        assert third.stored == total // 2 and third.status == "done" and third.remaining == 0
        # The upload was JSONL of {custom_id, method, url, body} with the key in the header only.
        assert all(h.get("authorization") == f"Bearer {KEY}" for h in server.headers_seen)
        lines = [json.loads(x) for x in server.files["file_1"].decode().splitlines()]
        assert {line["url"] for line in lines} == {"/v1/chat/completions"} and lines[0]["method"] == "POST"
        assert lines[0]["body"]["model"] == "m"
    assert _stored(library_path, run_id) == (total // 2, total // 2)
    with Library.open(library_path) as lib:
        costs = [r[0] for r in lib.conn.execute("SELECT cost FROM request WHERE run_id = ?", (run_id,))]
        extra = json.loads(
            lib.conn.execute("SELECT extra FROM generated_cot WHERE cot_id LIKE 'td-%' LIMIT 1").fetchone()[0]
        )
        info = run_info(lib, run_id)
        batches = list_batches(lib, run_id)
        assert is_batch_run(lib, run_id)
    # 10 prompt tokens at $1/M + 5 completion tokens at $2/M, halved.
    assert costs == pytest.approx([(10 * 1.0 + 5 * 2.0) / 1e6 * 0.5] * total)
    assert extra["thoughtdesk"]["run_id"] == run_id
    assert info.status == "done" and info.done == total
    assert [b.status for b in batches] == ["completed", "completed"] and all(b.fetched for b in batches)
    assert KEY not in library_path.read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_partly_failed_batch_resubmits_the_failed_items_only(library_path, provider):
    with BatchServer(polls_before_done=0) as server:
        run_id = _create(library_path, batch_spec(server, provider, mode=PromptMode.ONE_STEP))
        total = sum(_counts(library_path, run_id).values())
        _advance(library_path, run_id, server, provider)
        server.fail_ids = {server.submitted[0]}
        progress = _advance(library_path, run_id, server, provider)  # all stored but one, which goes again
        assert progress.stored == total - 1 and progress.retried == 1 and progress.submitted == 1
        server.fail_ids = set()
        done = _advance(library_path, run_id, server, provider)
        assert done.status == "done" and done.stored == 1
        sent = [request_id_of(custom) for custom in server.submitted]
        assert sent.count(sent[0]) == 2 and len(sent) == total + 1
        assert server.submitted[0] != server.submitted[-1]  # each batch names its items its own way
    assert _stored(library_path, run_id) == (total, total)  # one-step: an answer per CoT, none twice


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_item_failing_in_every_batch_is_left_failed_with_its_reason(library_path, provider):
    with BatchServer(polls_before_done=0) as server:
        run_id = _create(library_path, batch_spec(server, provider, mode=PromptMode.ONE_STEP))
        _advance(library_path, run_id, server, provider)
        for _ in range(3):
            # the item fails in every batch it is sent in (its custom id differs from one to the next)
            server.fail_ids = {c for c in server.submitted if request_id_of(c) == request_id_of(server.submitted[0])}
            progress = _advance(library_path, run_id, server, provider)
    assert progress.status == "failed" and progress.failed == 1
    with Library.open(library_path) as lib:
        error = lib.conn.execute("SELECT error FROM request WHERE status = 'failed'").fetchone()[0]
        info = run_info(lib, run_id)
    assert error.startswith("batch: HTTP 400" if provider == "openai" else "batch: errored: bad") and "\n" not in error
    assert "--direct" in (info.last_error or "")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_expired_batch_goes_again_and_completes(library_path, provider):
    with BatchServer(polls_before_done=0, expire=True) as server:
        run_id = _create(library_path, batch_spec(server, provider, mode=PromptMode.ONE_STEP))
        total = sum(_counts(library_path, run_id).values())
        _advance(library_path, run_id, server, provider)
        again = _advance(library_path, run_id, server, provider)
        assert again.stored == 0 and again.retried == total and again.submitted == total
        server.expire = False
        done = _advance(library_path, run_id, server, provider)
        assert done.status == "done"
        with Library.open(library_path) as lib:
            statuses = [b.status for b in list_batches(lib, run_id)]
            attempts = {row[0] for row in lib.conn.execute("SELECT attempts FROM request WHERE run_id = ?", (run_id,))}
        assert statuses == (["expired", "completed"] if provider == "openai" else ["ended", "ended"])
        assert attempts == {2}
    assert _stored(library_path, run_id) == (total, total)


def test_anthropic_message_batches_end_to_end(library_path):
    with BatchServer(polls_before_done=1) as server:
        spec = _openai_spec(server, models=(ModelSpec("anthropic", "claude-x", base_url=server.base_url),))
        run_id = _create(library_path, spec)
        total = sum(_counts(library_path, run_id).values())
        _advance(library_path, run_id, server, "anthropic")
        server.fail_ids = {server.submitted[1]}
        waiting = _advance(library_path, run_id, server, "anthropic")  # still processing
        assert waiting.stored == 0 and waiting.open_batches == 1
        for _ in range(8):
            progress = _advance(library_path, run_id, server, "anthropic")
            server.fail_ids = set()
            if progress.status == "done":
                break
        assert progress.status == "done"
        assert all(h.get("x-api-key") == KEY and h.get("anthropic-version") for h in server.headers_seen)
    assert _stored(library_path, run_id) == (total // 2, total // 2)
    with Library.open(library_path) as lib:
        costs = [r[0] for r in lib.conn.execute("SELECT cost FROM request WHERE run_id = ?", (run_id,))]
    assert costs == pytest.approx([(10 * 1.0 + 5 * 2.0) / 1e6 * 0.5] * total)


def test_cancel_asks_the_provider_and_marks_the_run(library_path):
    with BatchServer(polls_before_done=5) as server:
        run_id = _create(library_path, _openai_spec(server, mode=PromptMode.ONE_STEP))
        _advance(library_path, run_id, server)
        client = OpenAIBatches(server.base_url + "/v1", KEY)
        assert asyncio.run(cancel_batch_run_async(library_path, run_id, clients={0: client})) == 1
        assert all(job.cancelled for job in server.jobs.values())
        with Library.open(library_path) as lib:
            assert run_info(lib, run_id).status == "cancelled"
        # The app's background poll fetches the cancelled batch (its items back to pending) but
        # sends nothing: the run stays cancelled.
        polled = _advance(library_path, run_id, server)
        assert polled.status == "cancelled" and polled.retried > 0 and polled.submitted == 0
        assert len(server.jobs) == 1
        with Library.open(library_path) as lib:
            assert run_info(lib, run_id).status == "cancelled"
        # An explicit resume takes it up again and sends them.
        progress = _advance(library_path, run_id, server, resubmit=True)
        assert progress.submitted == polled.retried and progress.status == "batched"
    with Library.open(library_path) as lib:
        assert [b.status for b in list_batches(lib, run_id)] == ["cancelled", "submitted"]


class _CancelDuring:
    """A batch client that lets the user cancel the run at one moment of an advance."""

    def __init__(self, inner, library_path, run_id, moment):
        self.inner, self.library_path, self.run_id, self.moment = inner, library_path, run_id, moment
        self.provider, self.limits, self.line = inner.provider, inner.limits, inner.line

    async def _cancel(self, moment):
        if moment == self.moment:
            self.moment = None
            await cancel_batch_run_async(self.library_path, self.run_id, clients={0: self.inner})

    async def state(self, remote_id):
        await self._cancel("poll")
        return await self.inner.state(remote_id)

    async def submit(self, lines, endpoint, marker=""):
        await self._cancel("submit")
        return await self.inner.submit(lines, endpoint, marker)

    async def find(self, lookup):
        return await self.inner.find(lookup)

    def results(self, state, limits):
        return self.inner.results(state, limits)

    async def cancel(self, remote_id):
        await self.inner.cancel(remote_id)

    async def aclose(self):
        await self.inner.aclose()


def test_a_cancel_during_a_background_poll_is_not_undone_by_it(library_path):
    """The Runs tab polled a batch run while the user pressed Cancel: the poll fetched the
    cancelled batch, put its items back to pending and submitted them again in a new batch."""
    with BatchServer(polls_before_done=50) as server:
        run_id = _create(library_path, _openai_spec(server, mode=PromptMode.ONE_STEP))
        _advance(library_path, run_id, server)
        client = _CancelDuring(OpenAIBatches(server.base_url + "/v1", KEY), library_path, run_id, "poll")
        try:
            progress = advance_batch_run(library_path, run_id, clients={0: client}, prices=PRICES)
        finally:
            asyncio.run(client.aclose())
        assert progress.status == "cancelled" and progress.submitted == 0
        assert len(server.jobs) == 1 and all(job.cancelled for job in server.jobs.values())
    with Library.open(library_path) as lib:
        assert run_info(lib, run_id).status == "cancelled"


def test_a_batch_on_its_way_when_the_user_cancels_is_cancelled_too(library_path):
    with BatchServer(polls_before_done=50) as server:
        run_id = _create(library_path, _openai_spec(server, mode=PromptMode.ONE_STEP))
        client = _CancelDuring(OpenAIBatches(server.base_url + "/v1", KEY), library_path, run_id, "submit")
        try:
            progress = advance_batch_run(library_path, run_id, clients={0: client}, prices=PRICES)
        finally:
            asyncio.run(client.aclose())
        assert progress.status == "cancelled"
        assert len(server.jobs) == 1 and all(job.cancelled for job in server.jobs.values())


def test_plan_shows_the_batch_price_and_the_deadline(library_path):
    with BatchServer() as server, Library.open(library_path) as lib:
        plain = plan_run(lib, _openai_spec(server, batch=False), prices=PRICES)
        batched = plan_run(lib, _openai_spec(server), prices=PRICES)
    assert plain.estimated_cost is not None and batched.estimated_cost == plain.estimated_cost
    summary = batched.summary()
    assert f"at most ${plain.estimated_cost * 0.5:.4f} at the batch price" in summary
    assert "within 24 h, by 20" in summary


def test_a_local_model_cannot_be_batched(library_path, tmp_path):
    spec = RunSpec(
        samples=SampleSelection(DEMO),
        models=(ModelSpec("llamacpp", str(tmp_path / "m.gguf")),),
        batch=True,
    )
    with Library.open(library_path) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    with pytest.raises(BatchRunError, match="llamacpp:m.gguf has no batch API"):
        advance_batch_run(library_path, run_id)


def test_a_run_is_cut_in_chunks_within_the_providers_limits(library_path):
    with BatchServer(polls_before_done=0) as server:
        run_id = _create(library_path, _openai_spec(server, mode=PromptMode.ONE_STEP))
        total = sum(_counts(library_path, run_id).values())
        client = OpenAIBatches(server.base_url + "/v1", KEY)
        client.limits = (3, 10**9)  # at most 3 requests per batch
        first = advance_batch_run(library_path, run_id, clients={0: client}, prices=PRICES)
        assert first.submitted == total and first.open_batches == -(-total // 3)
        assert [len(job.requests) for job in server.jobs.values()] == [3] * (total // 3) + (
            [total % 3] if total % 3 else []
        )
        assert advance_batch_run(library_path, run_id, clients={0: client}, prices=PRICES).status == "done"
        longest = max(len(line.encode()) + 1 for line in server.files["file_1"].decode().splitlines())
        client.limits = (10**6, longest * 2)  # bytes: at most two lines per batch
        second = _create(library_path, _openai_spec(server, mode=PromptMode.ONE_STEP, name="again", force=True))
        jobs_before = len(server.jobs)
        advance_batch_run(library_path, second, clients={0: client}, prices=PRICES)
        sizes = [len(job.requests) for job in list(server.jobs.values())[jobs_before:]]
        assert sum(sizes) == total and max(sizes) <= 2
        asyncio.run(client.aclose())
    assert _stored(library_path, run_id) == (total, total)


def test_requests_already_answered_are_taken_from_the_store_not_sent_again(library_path):
    with BatchServer(polls_before_done=0) as server:
        first = _create(library_path, _openai_spec(server))
        for _ in range(3):
            _advance(library_path, first, server)
        sent = len(server.submitted)
        again = _create(library_path, _openai_spec(server, name="again"))
        progress = _advance(library_path, again, server)
        assert progress.submitted == 0 and progress.status == "done" and len(server.submitted) == sent
    with Library.open(library_path) as lib:
        cached = lib.conn.execute(
            "SELECT count(*) FROM request WHERE run_id = ? AND cached_from IS NOT NULL", (again,)
        ).fetchone()[0]
    assert cached == sent


def test_a_server_down_while_polling_keeps_the_run_waiting_and_the_next_poll_fetches(library_path):
    with BatchServer(polls_before_done=0) as server:
        run_id = _create(library_path, _openai_spec(server, mode=PromptMode.ONE_STEP))
        _advance(library_path, run_id, server)
        down = OpenAIBatches("http://127.0.0.1:9/v1", KEY)
        with pytest.raises(BackendError, match="127.0.0.1:9/v1/batches/batch_2 failed"):
            advance_batch_run(library_path, run_id, clients={0: down}, prices=PRICES)
        with Library.open(library_path) as lib:
            info = run_info(lib, run_id)
        assert info.status == "batched" and "polled again" in (info.last_error or "")
        assert _advance(library_path, run_id, server).status == "done"
