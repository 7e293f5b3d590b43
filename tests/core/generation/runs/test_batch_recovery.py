"""Batch runs after a kill, and against a hostile batch server, for both providers: a process
killed after submitting resumes by fetching; one killed after the provider created the batch but
before its id was stored adopts that batch (OpenAI by its metadata tag, Anthropic by size,
creation time and exact custom ids) instead of paying for it twice; results that go on past what
the batch's requests can produce stop with a message; Anthropic's key never goes to a
``results_url`` on another host."""

from __future__ import annotations

import asyncio
import itertools
import socket
from datetime import datetime, timedelta

import pytest

from tests.core.generation.runs.batch_support import (
    KEY,
    PROVIDERS,
    advance,
    advance_killed,
    batch_spec,
    counts,
    create,
    stored,
)
from tests.helpers.batch_server import BatchServer
from tests.helpers.raw_http import raw_server, read_request
from thoughtdesk.core.generation.backends import BadResponse
from thoughtdesk.core.generation.backends.batches import AnthropicBatches
from thoughtdesk.core.generation.prompts import PromptMode
from thoughtdesk.core.generation.runs import batch_work, list_batches, run_info
from thoughtdesk.core.library.store import Library


def _one_step(server: BatchServer, provider: str):
    return batch_spec(server, provider, mode=PromptMode.ONE_STEP)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_kill_between_submit_and_fetch_then_resume_stores_each_result_once(library_path, provider):
    with BatchServer(polls_before_done=0) as server:
        run_id = create(library_path, _one_step(server, provider))
        total = sum(counts(library_path, run_id).values())
        assert advance_killed(library_path, run_id, server, provider, "submitted") == 9
        assert len(server.submitted) == total and len(server.jobs) == 1
        resumed = advance(library_path, run_id, server, provider)
        assert resumed.stored == total and resumed.submitted == 0 and resumed.status == "done"
        # Killed again after storing the results but before the batch was marked fetched.
        with Library.open(library_path) as lib, lib.transaction() as conn:
            conn.execute("UPDATE batch SET fetched = NULL")
        again = advance(library_path, run_id, server, provider)
        assert again.stored == 0 and again.status == "done"
    assert stored(library_path, run_id) == (total, total)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_kill_after_the_provider_created_the_batch_adopts_it_instead_of_sending_again(library_path, provider):
    """Killed between the provider's answer to "create" and storing the batch's id: the batch
    is found again at the provider, not paid for twice (before, for Anthropic, its requests
    were submitted again and the first batch was never fetched)."""
    with BatchServer(polls_before_done=0) as server:
        run_id = create(library_path, _one_step(server, provider))
        total = sum(counts(library_path, run_id).values())
        assert advance_killed(library_path, run_id, server, provider, "created") == 9
        assert len(server.jobs) == 1
        with Library.open(library_path) as lib:
            assert [b.remote_id for b in list_batches(lib, run_id)] == [None]  # what the kill left
        resumed = advance(library_path, run_id, server, provider)
        assert resumed.submitted == 0 and resumed.stored == total and resumed.status == "done"
        assert len(server.jobs) == 1 and len(server.submitted) == total
        with Library.open(library_path) as lib:
            assert [b.remote_id for b in list_batches(lib, run_id)] == list(server.jobs)
    assert stored(library_path, run_id) == (total, total)


def test_an_anthropic_batch_still_processing_after_the_kill_is_waited_for_then_adopted(library_path):
    """Its custom ids can only be read once it ended: meanwhile nothing is sent again, the run
    stays waiting, and ``thoughtdesk runs`` says what it waits for."""
    with BatchServer(polls_before_done=1) as server:
        run_id = create(library_path, _one_step(server, "anthropic"))
        total = sum(counts(library_path, run_id).values())
        assert advance_killed(library_path, run_id, server, "anthropic", "created") == 9
        (ident,) = server.jobs
        waiting = advance(library_path, run_id, server, "anthropic")
        assert waiting.submitted == 0 and waiting.status == "batched" and waiting.open_batches == 1
        with Library.open(library_path) as lib:
            (info,) = list_batches(lib, run_id)
            assert info.status == "looking" and ident in info.describe() and "\n" not in info.describe()
            assert run_info(lib, run_id).status == "batched"  # the app keeps polling it
        adopted = advance(library_path, run_id, server, "anthropic")
        assert adopted.stored == total and adopted.status == "done" and len(server.jobs) == 1
    assert stored(library_path, run_id) == (total, total)


def test_another_anthropic_batch_of_the_same_size_and_time_is_not_adopted(library_path):
    """A batch of the workspace that is not this row's (another library, another tool) has
    other custom ids: left alone (not adopted, not cancelled), and the requests go again."""
    with BatchServer(polls_before_done=0) as server:
        run_id = create(library_path, _one_step(server, "anthropic"))
        total = sum(counts(library_path, run_id).values())
        assert advance_killed(library_path, run_id, server, "anthropic", "submitted") == 9
        (theirs,) = server.jobs
        # This library's row for another batch of the same size, submitted a second later and
        # left without its id by a kill before the provider had it: the batch above is not it.
        with Library.open(library_path) as lib, lib.transaction() as conn:
            (submitted,) = conn.execute("SELECT submitted FROM batch").fetchone()
            later = datetime.fromisoformat(submitted.replace("Z", "+00:00")) + timedelta(seconds=1)
            conn.execute(
                "UPDATE batch SET remote_id = NULL, status = 'submitting', submitted = ?",
                (later.strftime("%Y-%m-%dT%H:%M:%SZ"),),
            )
        progress = advance(library_path, run_id, server, "anthropic")
        assert progress.submitted == total and len(server.jobs) == 2
        assert not server.jobs[theirs].cancelled
        done = advance(library_path, run_id, server, "anthropic")
        assert done.status == "done" and done.stored == total
    assert stored(library_path, run_id) == (total, total)


def test_batches_submitted_with_untagged_custom_ids_are_still_fetched(library_path, monkeypatch):
    """A run submitted by the version before custom ids named their batch (``td-<request>``)
    resumes: its results are stored."""
    with BatchServer(polls_before_done=0) as server:
        run_id = create(library_path, _one_step(server, "anthropic"))
        total = sum(counts(library_path, run_id).values())
        with monkeypatch.context() as patched:
            patched.setattr(batch_work, "custom_id", lambda tag, request_id: f"td-{request_id}")
            assert advance(library_path, run_id, server, "anthropic").submitted == total
        assert all(c.count("-") == 1 for c in server.submitted)
        done = advance(library_path, run_id, server, "anthropic")
        assert done.stored == total and done.status == "done"


# --- a hostile batch server ----------------------------------------------------------------------


def _endless() -> itertools.repeat[bytes]:
    return itertools.repeat(b'{"custom_id": "td-1", "result": {"type": "errored"}}\n' * 100)


def _one_endless_line() -> itertools.chain[bytes]:
    return itertools.chain(
        [b'{"custom_id": "td-1", "result": {"type": "errored", "x": "'], itertools.repeat(b"y" * 65536)
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(("tail", "said"), [(_endless, "in all"), (_one_endless_line, "bytes one result may have")])
def test_results_that_go_on_past_what_the_batch_can_produce_stop_with_a_message(library_path, provider, tail, said):
    """Before, results were read whole into memory, however large."""
    with BatchServer(polls_before_done=0) as server:
        run_id = create(library_path, _one_step(server, provider))
        total = sum(counts(library_path, run_id).values())
        advance(library_path, run_id, server, provider)
        server.results_tail = tail
        with pytest.raises(BadResponse) as caught:
            advance(library_path, run_id, server, provider)
        message = str(caught.value)
        assert f"larger than {total} answers of at most 256 tokens can be" in message and said in message
        assert "\n" not in message
        with Library.open(library_path) as lib:
            info = run_info(lib, run_id)
        assert info.status == "batched" and "polled again" in (info.last_error or "")
        server.results_tail = None  # the provider mends its ways: the results are stored
        assert advance(library_path, run_id, server, provider).status == "done"
    assert stored(library_path, run_id) == (total, total)


def test_anthropic_results_url_on_another_host_never_gets_the_key(library_path):
    with BatchServer(polls_before_done=0) as server, BatchServer() as elsewhere:
        server.results_url = lambda ident: f"{elsewhere.base_url}/v1/messages/batches/{ident}/results"
        run_id = create(library_path, _one_step(server, "anthropic"))
        total = sum(counts(library_path, run_id).values())
        advance(library_path, run_id, server, "anthropic")
        done = advance(library_path, run_id, server, "anthropic")
        assert done.status == "done" and done.stored == total
        assert elsewhere.headers_seen == []  # nothing sent there, let alone the key
        assert any(path.endswith("/results") for path in server.paths_seen)
        assert all(h.get("x-api-key") == KEY for h in server.headers_seen)
        with Library.open(library_path) as lib:
            (info,) = list_batches(lib, run_id)
        assert "the API key is not sent there" in (info.error or "") and elsewhere.base_url in (info.error or "")


def test_a_results_url_on_the_same_host_is_used_as_given(library_path):
    with BatchServer(polls_before_done=0) as server:
        server.results_url = lambda ident: f"{server.base_url}/v1/messages/batches/{ident}/results?page=1"
        run_id = create(library_path, _one_step(server, "anthropic"))
        advance(library_path, run_id, server, "anthropic")
        assert advance(library_path, run_id, server, "anthropic").status == "done"
        assert any(path.endswith("/results?page=1") for path in server.paths_seen)


def test_an_endless_answer_to_a_state_read_is_cut_off():
    """Any other answer (a batch's state, a list, an error) is read within 16 MB, not whole."""
    sent = [0]

    def handle(conn: socket.socket, number: int) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"x" * 65536
        while True:
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            sent[0] += len(piece)

    with raw_server(handle) as (url, _):
        client = AnthropicBatches(KEY, url)

        async def go() -> None:
            try:
                await client.state("msgbatch_1")
            finally:
                await client.aclose()

        with pytest.raises(BadResponse, match=r"too large \(it went on past the 16,777,216 bytes allowed\)"):
            asyncio.run(go())
    assert sent[0] < 64 * 1024 * 1024
