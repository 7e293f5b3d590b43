"""Runs sent through the providers' batch APIs (OpenAI's Batch API, Anthropic's Message
Batches): about half the price, answered within 24 hours.

A run whose spec says ``batch`` is advanced by :func:`advance_batch_run`, called by
``thoughtdesk generate --batch``, ``thoughtdesk resume N`` and the Runs tab, as often as one
likes: each call

1. polls every batch of the run that is stored and not yet fetched; a finished one's results
   are committed exactly as a normal call's (``commit.store_cot`` / ``store_extraction``: the
   answer extracted and scored, provenance, cost at the batch price), each in one transaction
   with the request's ``done``; items that errored or expired go back to ``pending`` (their
   error kept) and are resubmitted, up to ``MAX_BATCH_ATTEMPTS`` tries, then ``failed`` (a
   normal ``thoughtdesk resume N --direct`` sends those one by one);
2. submits what is ready (CoTs; extractions whose CoT is stored, their prompt filled in) in
   chunks within the provider's limits (requests and bytes per batch); a request identical to
   one already done anywhere in the library is answered from the store instead (unless
   ``force``), as in a direct run.

Crash safety: a batch row (no provider id yet) and its requests' ``batched`` status are written
in one transaction *before* the batch is created at the provider; the provider's id is stored
right after. A kill in between leaves a row without an id: its requests go back to ``pending``
(the provider may then hold a batch nobody fetches: charged, never stored twice). A kill after
submitting leaves the id stored: the next call polls and fetches it. A result is stored only
for a request still ``batched`` in that batch, so fetching twice stores nothing twice.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    BackendError,
    OpenAICompatBackend,
    PriceTable,
    Request,
    Response,
)
from thoughtdesk.core.generation.backends.batches import (
    BATCH_WINDOW_HOURS,
    AnthropicBatches,
    BatchResult,
    BatchState,
    OpenAIBatches,
)
from thoughtdesk.core.generation.prompts import Exemplar, PromptMode
from thoughtdesk.core.generation.runs.commit import (
    call_record,
    store_cached_answer,
    store_cached_cot,
    store_result,
)
from thoughtdesk.core.generation.runs.lease import claim_run
from thoughtdesk.core.generation.runs.plan import extraction_prompt, fingerprint, model_request, sample_refs
from thoughtdesk.core.generation.runs.providers import api_key_for, build_backend
from thoughtdesk.core.generation.runs.read import REQUEST_SELECT, RequestRow, RunStatus, request_row
from thoughtdesk.core.generation.runs.spec import DEFAULT_BASE_URLS, ModelSpec, RunSpec, spec_from_document
from thoughtdesk.core.generation.runs.tally import set_run_status
from thoughtdesk.core.generation.runs.variants import variant_from_provenance
from thoughtdesk.core.library.prompt_refs import prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso

#: Providers with a batch API.
BATCH_PROVIDERS = ("openai", "anthropic")
#: Tries of one request through batches before it is left ``failed``.
MAX_BATCH_ATTEMPTS = 3


class BatchRunError(ThoughtDeskError):
    """A run that cannot go through a batch API (provider, guided run), said in one line."""


class BatchApi(Protocol):
    """What :func:`advance_batch_run` needs of a provider's batch client (see backends.batches)."""

    provider: str
    limits: tuple[int, int]

    @staticmethod
    def line(custom_id: str, url: str, body: dict[str, Any]) -> str: ...
    async def submit(self, lines: list[str], endpoint: str, marker: str = "") -> tuple[str, str]: ...
    async def find(self, marker: str, pages: int = 5) -> tuple[str, str] | None: ...
    async def state(self, remote_id: str) -> BatchState: ...
    async def results(self, state: BatchState) -> list[BatchResult]: ...
    async def cancel(self, remote_id: str) -> None: ...
    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """One stored batch as ``thoughtdesk runs`` and the Runs tab show it."""

    id: int
    run_id: int
    provider: str
    remote_id: str | None
    status: str
    requests: int
    counts: dict[str, int]
    submitted: str
    deadline: str
    fetched: str | None
    error: str | None

    def describe(self) -> str:
        """``openai batch_abc: in_progress, 3/10 completed, due 2026-11-26T08:00Z``."""
        done = self.counts.get("completed", self.counts.get("succeeded"))
        counts = f", {done}/{self.requests} answered" if done is not None else f", {self.requests} request(s)"
        state = "results stored" if self.fetched else f"due {self.deadline[:16]}Z"
        return f"{self.provider} {self.remote_id or '(not submitted)'}: {self.status}{counts}, {state}"


@dataclass(frozen=True, slots=True)
class BatchProgress:
    """What one :func:`advance_batch_run` did and where the run stands."""

    run_id: int
    submitted: int  # requests sent in new batches now
    stored: int  # results committed now
    retried: int  # items that failed in a batch and went back to pending
    failed: int  # requests left failed (tried MAX_BATCH_ATTEMPTS times)
    open_batches: int  # batches the provider still works on
    remaining: int  # requests with no result yet
    status: str  # the run's status now


def check_batch_spec(spec: Any) -> None:
    """Refuse, in one line, a run that cannot be batched (before anything is written)."""
    if not isinstance(spec, RunSpec) or spec.guide is not None:
        raise BatchRunError("--batch works for generation runs without --guide (a guided CoT needs one call per step)")
    for model in spec.models:
        if model.provider not in BATCH_PROVIDERS:
            raise BatchRunError(
                f"--batch: {model.label} has no batch API (only OpenAI's Batch API and Anthropic's Message Batches)"
            )


def batch_deadline(start: datetime | None = None) -> str:
    """ISO time a batch submitted at ``start`` (default now) must be answered by."""
    start = start or datetime.now(UTC)
    return (start + timedelta(hours=BATCH_WINDOW_HOURS)).strftime("%Y-%m-%dT%H:%M:%S")


def batch_client_for(model: ModelSpec) -> BatchApi:
    """The batch client for ``model``'s provider and address, with its key fetched now."""
    base_url = model.base_url or DEFAULT_BASE_URLS.get(model.provider, DEFAULT_BASE_URLS["openai"])
    key = api_key_for(model.provider, base_url)
    if model.provider == "anthropic":
        return AnthropicBatches(key, base_url=base_url)
    return OpenAIBatches(base_url, key)


def list_batches(lib: Library, run_id: int) -> list[BatchInfo]:
    """The batches of a run, oldest first."""
    rows = lib.conn.execute(
        "SELECT id, run_id, provider, remote_id, status, requests, counts, submitted, deadline, fetched, error "
        "FROM batch WHERE run_id = ? ORDER BY id",
        (run_id,),
    ).fetchall()
    return [
        BatchInfo(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6] or "{}"), r[7], r[8], r[9], r[10]) for r in rows
    ]


class _BatchRun:
    """One advance of a batch run (see :func:`advance_batch_run`)."""

    def __init__(
        self,
        lib: Library,
        run_id: int,
        document: dict[str, Any],
        clients: Mapping[int, BatchApi],
        prices: PriceTable,
    ) -> None:
        spec = spec_from_document(document)
        check_batch_spec(spec)
        assert isinstance(spec, RunSpec)  # check_batch_spec refuses others
        self.lib, self.run_id, self.spec, self.clients, self.prices = lib, run_id, spec, clients, prices
        self.variants = document.get("variants", [])
        self.exemplars = {
            d: [Exemplar(e["question"], e["cot"], e["answer"], tuple(e["answer_choices"]), e["context"]) for e in ex]
            for d, ex in document.get("exemplars", {}).items()
        }
        self.prompt_variants = [variant_from_provenance(v) for v in self.variants]
        self.one_step = spec.mode is PromptMode.ONE_STEP
        # Backends build each request's body and read each answer exactly as a direct call does;
        # they send nothing here.
        self.backends = {i: build_backend(m, api_key="") for i, m in enumerate(spec.models)}
        self.stored = self.retried = self.submitted = 0

    def cancelled(self) -> bool:
        """Whether the run is cancelled now (the user may cancel while this advance works)."""
        row = self.lib.conn.execute("SELECT status FROM run WHERE id = ?", (self.run_id,)).fetchone()
        return bool(row and row[0] == "cancelled")

    def _marker(self, batch_pk: int) -> str:
        """What a batch is tagged with at the provider (where it can be): the library's batch
        row, its submission time and its first request, which another library's batch cannot
        share in practice."""
        row = self.lib.conn.execute(
            "SELECT b.submitted, min(q.id) FROM batch b LEFT JOIN request q ON q.batch_pk = b.id WHERE b.id = ?",
            (batch_pk,),
        ).fetchone()
        return f"td-batch-{batch_pk}-{row[0]}-{row[1]}"

    def _request(self, request_id: int) -> RequestRow:
        return request_row(
            self.lib.conn, self.lib.conn.execute(REQUEST_SELECT + " WHERE id = ?", (request_id,)).fetchone()
        )

    # --- polling and fetching --------------------------------------------------------------

    async def poll(self) -> None:
        for batch_pk, model_index, remote_id in self.lib.conn.execute(
            "SELECT id, model_index, remote_id FROM batch WHERE run_id = ? AND fetched IS NULL ORDER BY id",
            (self.run_id,),
        ).fetchall():
            client = self.clients[model_index]
            if remote_id is None:  # killed while submitting: the provider may have it
                found = await client.find(self._marker(batch_pk))
                if found is not None:  # created before the kill: adopted, not sent twice
                    with self.lib.transaction() as conn:
                        conn.execute(
                            "UPDATE batch SET remote_id = ?, input_file_id = ?, status = 'submitted' WHERE id = ?",
                            (found[0], found[1] or None, batch_pk),
                        )
                    remote_id = found[0]
            if remote_id is None:  # never known to the provider: its requests go again
                with self.lib.transaction() as conn:
                    conn.execute(
                        "UPDATE request SET status = 'pending', batch_pk = NULL WHERE batch_pk = ? AND status = 'batched'",
                        (batch_pk,),
                    )
                    conn.execute("DELETE FROM batch WHERE id = ?", (batch_pk,))
                continue
            state = await client.state(remote_id)
            with self.lib.transaction() as conn:
                conn.execute(
                    "UPDATE batch SET status = ?, counts = ?, checked = ?, error = ? WHERE id = ?",
                    (state.status, json.dumps(state.counts), now_iso(), state.message, batch_pk),
                )
            if state.final:
                results = await client.results(state)
                self._store_results(batch_pk, model_index, state, results)

    def _store_results(self, batch_pk: int, model_index: int, state: BatchState, results: list[BatchResult]) -> None:
        model = self.spec.models[model_index]
        backend = self.backends[model_index]
        assert isinstance(backend, (OpenAICompatBackend, AnthropicBackend))  # check_batch_spec
        refs: dict[int, Any] = {}
        seen: set[int] = set()
        for result in results:
            if not result.custom_id.startswith("td-") or not result.custom_id[3:].isdigit():
                continue  # not one of ours
            request_id = int(result.custom_id[3:])
            request = self._request_or_none(request_id, batch_pk)
            if request is None:
                continue  # stored already (a fetch repeated after a kill) or not in this batch
            seen.add(request_id)
            if result.body is None:
                self._back_to_pending(request, result.error or "no result", expired=result.expired)
                continue
            call = model_request(model, request.prompt or "", request.step, request.replicate)
            try:
                response = backend.response_from_body(call, result.body, result.raw)
                if not response.texts or not response.texts[0].strip():
                    raise BackendError(model.provider, "the model returned an empty text")
            except BackendError as error:
                self._back_to_pending(request, str(error))
                continue
            if request.sample_pk not in refs:
                for ref in sample_refs(self.lib, [request.sample_pk]):
                    refs[request.sample_pk] = ref
            self._commit(request, refs[request.sample_pk], model, call, response, state)
        # Requests the provider returned nothing for (a batch that failed or expired as a whole).
        why = state.message or f"the batch ended {state.status} without its result"
        for (request_id,) in self.lib.conn.execute(
            "SELECT id FROM request WHERE batch_pk = ? AND status = 'batched'", (batch_pk,)
        ).fetchall():
            if request_id not in seen:
                self._back_to_pending(self._request(request_id), why, expired=state.status == "expired")
        with self.lib.transaction() as conn:
            conn.execute("UPDATE batch SET fetched = ? WHERE id = ?", (now_iso(), batch_pk))

    def _request_or_none(self, request_id: int, batch_pk: int) -> RequestRow | None:
        """The request, if it is this run's and still waits for this batch's result."""
        row = self.lib.conn.execute(
            REQUEST_SELECT + " WHERE id = ? AND run_id = ? AND status = 'batched' AND batch_pk = ?",
            (request_id, self.run_id, batch_pk),
        ).fetchone()
        return None if row is None else request_row(self.lib.conn, row)

    def _back_to_pending(self, request: RequestRow, why: str, *, expired: bool = False) -> None:
        """An item the batch did not answer: resubmitted next time, or failed after MAX tries."""
        status = "failed" if request.attempts >= MAX_BATCH_ATTEMPTS and not expired else "pending"
        with self.lib.transaction() as conn:
            conn.execute(
                "UPDATE request SET status = ?, batch_pk = NULL, error = ?, error_kind = ? WHERE id = ?",
                (status, f"batch: {why}", "BatchExpired" if expired else "BatchItemFailed", request.id),
            )
        self.retried += status == "pending"

    def _commit(
        self, request: RequestRow, sample: Any, model: ModelSpec, call: Request, response: Response, state: BatchState
    ) -> None:
        record = call_record(
            call,
            response,
            sent_at=request.sent_at or now_iso(),
            price=partial(self.prices.batch_cost, model.price_provider, model.model_name),
        )
        cot_pk, cot_text = None, None
        if request.step != "cot":
            found = self.lib.conn.execute(
                "SELECT c.id, c.cot FROM request d JOIN generated_cot c ON c.id = d.result_cot_pk WHERE d.id = ?",
                (request.depends_on,),
            ).fetchone()
            if found is None:
                self._back_to_pending(request, "its CoT was deleted from the library")
                return
            cot_pk, cot_text = found
        store_result(
            self.lib,
            run_id=self.run_id,
            request=request,
            sample=sample,
            model=model,
            variants=self.variants,
            call=record,
            one_step=self.one_step,
            cot_pk=cot_pk,
            cot_text=cot_text,
        )
        self.stored += 1

    # --- submitting ----------------------------------------------------------------------

    def _ready(self) -> list[RequestRow]:
        """Pending requests that can go now: CoTs, and extractions whose CoT is stored."""
        ids = self.lib.conn.execute(
            "SELECT q.id FROM request q LEFT JOIN request d ON d.id = q.depends_on "
            "WHERE q.run_id = ? AND q.status = 'pending' AND (q.depends_on IS NULL OR d.status = 'done') ORDER BY q.id",
            (self.run_id,),
        ).fetchall()
        return [self._request(request_id) for (request_id,) in ids]

    def _fill_extraction(self, request: RequestRow) -> RequestRow | None:
        """An extraction's prompt from its stored CoT (None when the CoT is gone)."""
        found = self.lib.conn.execute(
            "SELECT c.cot, c.id FROM request d JOIN generated_cot c ON c.id = d.result_cot_pk WHERE d.id = ?",
            (request.depends_on,),
        ).fetchone()
        if found is None:
            return None
        sample = next(iter(sample_refs(self.lib, [request.sample_pk])))
        variant = self.prompt_variants[request.variant_index]
        model = self.spec.models[request.model_index]
        prompt = extraction_prompt(variant, sample, found[0], self.exemplars.get(sample.dataset, []))
        call = model_request(model, prompt or "", "extraction", request.replicate)
        filled = replace(request, prompt=prompt, fingerprint=fingerprint(model, call, request.replicate))
        with self.lib.transaction() as conn:
            conn.execute(
                "UPDATE request SET prompt = ?, fingerprint = ? WHERE id = ?",
                (None if prompt is None else prompt_ref(prompt, found[0], found[1]), filled.fingerprint, request.id),
            )
        return filled

    def _from_store(self, request: RequestRow) -> bool:
        """Answer ``request`` from an identical one already done anywhere in the library (as a
        direct run does, unless ``force``); True when it was."""
        row = self.lib.conn.execute(
            REQUEST_SELECT + " WHERE fingerprint = ? AND status = 'done' AND id != ? AND "
            "(result_cot_pk IS NOT NULL OR result_answer_pk IS NOT NULL) ORDER BY id LIMIT 1",
            (request.fingerprint, request.id),
        ).fetchone()
        if row is None or request.fingerprint is None:
            return False
        source = request_row(self.lib.conn, row)
        sample = next(iter(sample_refs(self.lib, [request.sample_pk])))
        if request.step == "cot" and source.result_cot_pk is not None:
            store_cached_cot(self.lib, request, source.id, source.result_cot_pk, source.result_answer_pk, sample=sample)
            return True
        if request.step == "extraction" and source.result_answer_pk is not None:
            cot = self.lib.conn.execute(
                "SELECT result_cot_pk FROM request WHERE id = ?", (request.depends_on,)
            ).fetchone()
            if cot is None or cot[0] is None:
                return False
            store_cached_answer(self.lib, request, source.id, source.result_answer_pk, sample=sample, cot_pk=cot[0])
            return True
        return False

    async def submit(self) -> None:
        by_model: dict[int, list[tuple[RequestRow, str, str]]] = {}
        queued: set[int] = set()
        answered = True
        while answered:  # a CoT answered from the store makes its extraction ready: look again
            answered = False
            for request in self._ready():
                if request.id in queued:
                    continue
                if request.step == "extraction" and request.prompt is None:
                    filled = self._fill_extraction(request)
                    if filled is None:
                        continue
                    request = filled
                if not self.spec.force and self._from_store(request):
                    answered = True
                    continue
                queued.add(request.id)
                model = self.spec.models[request.model_index]
                backend = self.backends[request.model_index]
                assert isinstance(backend, (OpenAICompatBackend, AnthropicBackend))  # check_batch_spec
                url, body = backend.batch_body(
                    model_request(model, request.prompt or "", request.step, request.replicate)
                )
                client = self.clients[request.model_index]
                by_model.setdefault(request.model_index, []).append(
                    (request, url, client.line(f"td-{request.id}", url, body))
                )
        for model_index, items in by_model.items():
            client = self.clients[model_index]
            max_requests, max_bytes = client.limits
            chunk: list[tuple[RequestRow, str, str]] = []
            size = 0
            for item in items:
                line_bytes = len(item[2].encode("utf-8")) + 1
                # A batch holds one endpoint (OpenAI): a change of endpoint starts a new chunk.
                if chunk and (len(chunk) >= max_requests or size + line_bytes > max_bytes or item[1] != chunk[0][1]):
                    await self._submit_chunk(model_index, client, chunk)
                    chunk, size = [], 0
                chunk.append(item)
                size += line_bytes
            if chunk:
                await self._submit_chunk(model_index, client, chunk)

    async def _submit_chunk(self, model_index: int, client: BatchApi, chunk: list[tuple[RequestRow, str, str]]) -> None:
        sent_at = now_iso()
        with self.lib.transaction() as conn:
            # Checked in the transaction that claims the requests: a cancel committed before it
            # stops the submission; one committed after it finds this batch (below).
            if self.cancelled():
                return
            cursor = conn.execute(
                "INSERT INTO batch (run_id, model_index, provider, status, requests, submitted, deadline) "
                "VALUES (?, ?, ?, 'submitting', ?, ?, ?)",
                (self.run_id, model_index, client.provider, len(chunk), sent_at, batch_deadline()),
            )
            batch_pk = cursor.lastrowid
            assert batch_pk is not None  # an INSERT's rowid
            conn.executemany(
                "UPDATE request SET status = 'batched', batch_pk = ?, sent_at = ?, attempts = attempts + 1 "
                "WHERE id = ? AND status = 'pending'",
                [(batch_pk, sent_at, request.id) for request, _, _ in chunk],
            )
        try:
            remote_id, file_id = await client.submit(
                [line for _, _, line in chunk], chunk[0][1], self._marker(batch_pk)
            )
        except BackendError:
            with self.lib.transaction() as conn:  # never reached the provider: as before
                conn.execute(
                    "UPDATE request SET status = 'pending', batch_pk = NULL, attempts = attempts - 1 WHERE batch_pk = ?",
                    (batch_pk,),
                )
                conn.execute("DELETE FROM batch WHERE id = ?", (batch_pk,))
            raise
        with self.lib.transaction() as conn:
            conn.execute(
                "UPDATE batch SET remote_id = ?, input_file_id = ?, status = 'submitted' WHERE id = ?",
                (remote_id, file_id or None, batch_pk),
            )
        self.submitted += len(chunk)
        if self.cancelled():  # cancelled while this batch was on its way: cancel it too
            try:
                await client.cancel(remote_id)
            except BackendError:
                pass  # still open at the provider: its results are fetched on resume

    # --- the run's status ----------------------------------------------------------------

    def finish(self) -> BatchProgress:
        conn = self.lib.conn
        open_batches = conn.execute(
            "SELECT count(*) FROM batch WHERE run_id = ? AND fetched IS NULL", (self.run_id,)
        ).fetchone()[0]
        counts = conn.execute(
            "SELECT coalesce(sum(status != 'done'), 0), coalesce(sum(status = 'failed'), 0) FROM request WHERE run_id = ?",
            (self.run_id,),
        ).fetchone()
        remaining, failed = counts
        status: RunStatus
        error: str | None
        if self.cancelled():  # kept: only an explicit resume takes a cancelled run up again
            return BatchProgress(
                self.run_id, self.submitted, self.stored, self.retried, failed, open_batches, remaining, "cancelled"
            )
        if open_batches:
            status, error = "batched", None
        elif remaining == 0:
            status, error = "done", None
        elif failed:
            status = "failed"
            error = f"{failed} request(s) failed in {MAX_BATCH_ATTEMPTS} batches; `thoughtdesk resume {self.run_id} --direct` sends them one by one"
        else:
            status, error = "batched", None
        set_run_status(self.lib, self.run_id, status, error)
        return BatchProgress(
            self.run_id, self.submitted, self.stored, self.retried, failed, open_batches, remaining, status
        )


async def advance_batch_run_async(
    library_path: str | Path,
    run_id: int,
    *,
    clients: Mapping[int, BatchApi] | None = None,
    prices: PriceTable | None = None,
    submit: bool = True,
    resume: bool = False,
) -> BatchProgress:
    """Poll a batch run's open batches, store the results of finished ones, and submit what is
    ready (unless ``submit`` is False). ``clients`` maps a model's index to its batch client
    (default: built from the spec, keys from the keyring). A cancelled run stays cancelled:
    its ended batches are fetched but nothing is submitted, unless ``resume`` (the user asked
    to resume it). Returns where the run stands."""
    lib = Library.open(library_path, create=False)
    lease = None
    built: dict[int, BatchApi] = {}
    try:
        lease = claim_run(lib, run_id)  # RunBusyError when another live process executes it
        document = json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])
        spec = spec_from_document(document)
        check_batch_spec(spec)
        for index, model in enumerate(spec.models):
            built[index] = clients[index] if clients and index in clients else batch_client_for(model)
        work = _BatchRun(lib, run_id, document, built, prices or PriceTable())
        if resume and work.cancelled():
            set_run_status(lib, run_id, "batched")
        try:
            await work.poll()
            if submit and not work.cancelled():
                await work.submit()
        except BackendError as error:
            # Batches still open stay 'batched' (polled again later, also by the app); a run
            # with none open failed to submit: 'failed' until resumed.
            still_open = lib.conn.execute(
                "SELECT count(*) FROM batch WHERE run_id = ? AND fetched IS NULL", (run_id,)
            ).fetchone()[0]
            set_run_status(
                lib,
                run_id,
                "batched" if still_open else "failed",
                f"{error} (the run's batches are kept; they are polled again on resume)",
            )
            raise
        return work.finish()
    finally:
        for index, client in built.items():
            if not (clients and index in clients):
                await client.aclose()
        if lease is not None:
            lease.release()
        lib.close()


def advance_batch_run(library_path: str | Path, run_id: int, **options: Any) -> BatchProgress:
    """Blocking :func:`advance_batch_run_async`; call it from a worker thread."""
    return asyncio.run(advance_batch_run_async(library_path, run_id, **options))


async def cancel_batch_run_async(
    library_path: str | Path, run_id: int, *, clients: Mapping[int, BatchApi] | None = None
) -> int:
    """Ask the provider to cancel every open batch of a run; returns how many. Results the
    provider still returns are fetched by the next advance; the run is marked cancelled."""
    lib = Library.open(library_path, create=False)
    built: dict[int, BatchApi] = {}
    try:
        spec = spec_from_document(
            json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])
        )
        check_batch_spec(spec)
        # Cancelled first: an advance working at the same time then submits nothing more, and
        # cancels a batch it had on its way (see _BatchRun._submit_chunk).
        previous = lib.conn.execute("SELECT status FROM run WHERE id = ?", (run_id,)).fetchone()[0]
        set_run_status(lib, run_id, "cancelled", "cancelling the batches at the provider")
        rows = lib.conn.execute(
            "SELECT id, model_index, remote_id FROM batch WHERE run_id = ? AND fetched IS NULL AND remote_id IS NOT NULL",
            (run_id,),
        ).fetchall()
        try:
            for _, model_index, remote_id in rows:
                if model_index not in built:
                    built[model_index] = (
                        clients[model_index]
                        if clients and model_index in clients
                        else batch_client_for(spec.models[model_index])
                    )
                await built[model_index].cancel(remote_id)
        except BackendError as error:
            set_run_status(lib, run_id, previous, f"{error} (the batches could not be cancelled; try again)")
            raise
        set_run_status(lib, run_id, "cancelled", f"{len(rows)} batch(es) cancelled at the provider")
        return len(rows)
    finally:
        for index, client in built.items():
            if not (clients and index in clients):
                await client.aclose()
        lib.close()


def is_batch_run(lib: Library, run_id: int) -> bool:
    """Whether a stored run goes through a batch API."""
    row = lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()
    return bool(row and (json.loads(row[0]).get("spec") or {}).get("batch"))


__all__ = [
    "BATCH_PROVIDERS",
    "BatchInfo",
    "BatchProgress",
    "BatchRunError",
    "advance_batch_run",
    "advance_batch_run_async",
    "batch_deadline",
    "cancel_batch_run_async",
    "check_batch_spec",
    "is_batch_run",
    "list_batches",
]
