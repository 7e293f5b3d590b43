"""One advance of a batch run (:class:`BatchAdvance`, driven by :func:`.batch.advance_batch_run`):
poll the run's batches and store what finished ones answered, find a batch a kill left without
its id (and adopt it), submit what is ready in chunks within the provider's limits; and the
custom ids that name each request in its batch (``td-<batch tag>-<request id>``)."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from thoughtdesk.core.generation.backends import (
    AnthropicBackend,
    BackendError,
    OpenAICompatBackend,
    PriceTable,
    Request,
    Response,
)
from thoughtdesk.core.generation.backends.batches import BatchFound, BatchLookup, BatchResult, BatchState, ResultLimits
from thoughtdesk.core.generation.prompts import Exemplar, PromptMode
from thoughtdesk.core.generation.runs.batch_common import (
    MAX_BATCH_ATTEMPTS,
    BatchApi,
    BatchProgress,
    batch_deadline,
    check_batch_spec,
)
from thoughtdesk.core.generation.runs.commit import store_cached_answer, store_cached_cot, store_result
from thoughtdesk.core.generation.runs.commit_base import call_record, has_output
from thoughtdesk.core.generation.runs.kind_specs import spec_from_document
from thoughtdesk.core.generation.runs.lease import Claim, StaleClaim
from thoughtdesk.core.generation.runs.plan import extraction_prompt, fingerprint, model_request
from thoughtdesk.core.generation.runs.providers import build_backend
from thoughtdesk.core.generation.runs.read import REQUEST_SELECT, RequestRow, RunStatus, request_row
from thoughtdesk.core.generation.runs.samples import sample_refs
from thoughtdesk.core.generation.runs.spec import ModelSpec, RunSpec
from thoughtdesk.core.generation.runs.tally import set_run_status
from thoughtdesk.core.generation.runs.variants import variant_from_provenance
from thoughtdesk.core.library.prompt_refs import expand_prompt, prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.settings.logs import redact

log = logging.getLogger(__name__)

#: A request's custom id in a batch: ``td-<batch tag>-<request id>`` (before the tag, ``td-<id>``).
_CUSTOM_ID = re.compile(r"td-(?:([0-9a-f]{10})-)?([0-9]+)")


def batch_tag(batch_pk: int, submitted: str, requests: list[tuple[int, str | None]]) -> str:
    """Ten hex digits naming one batch of one library: its row, its submission time and its
    requests (id and prompt), so a batch another library (or another row) sent cannot share
    its custom ids unless it asks exactly the same."""
    digest = hashlib.sha256(f"{batch_pk}/{submitted}".encode())
    for request_id, prompt in sorted(requests, key=lambda item: item[0]):
        digest.update(f"/{request_id}:".encode())
        digest.update((prompt or "").encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:10]


def custom_id(tag: str, request_id: int) -> str:
    """``td-<tag>-<request id>``: at most 64 characters of [a-z0-9-] (Anthropic's rule)."""
    return f"td-{tag}-{request_id}"


def request_id_of(value: str) -> int | None:
    """The request id in a custom id this code wrote (with or without a tag), else None."""
    match = _CUSTOM_ID.fullmatch(value)
    return int(match.group(2)) if match else None


@dataclass(frozen=True, slots=True)
class _Item:
    """A request on its way into a batch: its endpoint, body and line size."""

    request: RequestRow
    url: str
    body: dict[str, Any]
    size: int


def _looking(found: BatchFound) -> str:
    """What a batch row left without its id says while batches that may be it process."""
    shown = ", ".join(found.waiting[:3]) + (f" and {len(found.waiting) - 3} more" if len(found.waiting) > 3 else "")
    return (
        f"a kill cut this batch's submission short; {shown} (same size, created then) may be it and "
        "is looked at again when it ends (nothing is sent again meanwhile)"
    )


class BatchAdvance:
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
                found = await client.find(self._lookup(batch_pk, model_index))
                if found is not None and found.remote_id is not None:  # created before the kill: adopted
                    with self.lib.transaction() as conn:
                        conn.execute(
                            "UPDATE batch SET remote_id = ?, input_file_id = ?, status = 'submitted', error = NULL "
                            "WHERE id = ?",
                            (found.remote_id, found.file_id or None, batch_pk),
                        )
                    remote_id = found.remote_id
                elif found is not None:  # batches that may be it are still processing: wait for them
                    with self.lib.transaction() as conn:
                        conn.execute(
                            "UPDATE batch SET status = 'looking', checked = ?, error = ? WHERE id = ?",
                            (now_iso(), _looking(found), batch_pk),
                        )
                    continue
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
                    (state.status, json.dumps(state.counts), now_iso(), state.message or state.note, batch_pk),
                )
            if state.final:
                limits = self._limits(batch_pk, model_index)
                await self._store_results(batch_pk, model_index, state, client.results(state, limits))

    def _limits(self, batch_pk: int, model_index: int) -> ResultLimits:
        """What the results of a batch of this row's size may take (see ResultLimits.for_batch)."""
        (size,) = self.lib.conn.execute("SELECT requests FROM batch WHERE id = ?", (batch_pk,)).fetchone()
        model = self.spec.models[model_index]
        return ResultLimits.for_batch(size, max(model.max_tokens, model.extraction_max_tokens))

    def _lookup(self, batch_pk: int, model_index: int) -> BatchLookup:
        """What a batch row left without its id by a kill is looked for by at the provider."""
        (submitted,) = self.lib.conn.execute("SELECT submitted FROM batch WHERE id = ?", (batch_pk,)).fetchone()
        requests = [  # the prompts as submitted: whole (a stored reference rebuilt, see prompt_refs)
            (request_id, expand_prompt(self.lib.conn, prompt))
            for request_id, prompt in self.lib.conn.execute(
                "SELECT id, prompt FROM request WHERE batch_pk = ? AND status = 'batched'", (batch_pk,)
            )
        ]
        tag = batch_tag(batch_pk, submitted, requests)
        known = frozenset(
            remote for (remote,) in self.lib.conn.execute("SELECT remote_id FROM batch WHERE remote_id IS NOT NULL")
        )
        return BatchLookup(
            marker=self._marker(batch_pk),
            # as submitted now, or (a row from before custom ids were tagged) as before
            custom_ids=(
                frozenset(custom_id(tag, request_id) for request_id, _ in requests),
                frozenset(f"td-{request_id}" for request_id, _ in requests),
            ),
            submitted=submitted,
            known=known,
            limits=self._limits(batch_pk, model_index),
        )

    async def _store_results(
        self, batch_pk: int, model_index: int, state: BatchState, results: AsyncIterator[BatchResult]
    ) -> None:
        model = self.spec.models[model_index]
        backend = self.backends[model_index]
        assert isinstance(backend, (OpenAICompatBackend, AnthropicBackend))  # check_batch_spec
        refs: dict[int, Any] = {}
        seen: set[int] = set()
        unreadable: list[int] = []  # numbers of results lines naming no request of ours
        async for result in results:
            request_id = request_id_of(result.custom_id)
            if request_id is None:
                if result.line is not None:
                    unreadable.append(result.line)
                continue  # not one of ours
            request = self._request_or_none(request_id, batch_pk)
            if request is None:
                continue  # stored already (a fetch repeated after a kill) or not in this batch
            seen.add(request_id)
            if result.line is not None:  # its line cannot be read: a bad answer, failed (sent again only --direct)
                self._failed(request, result.error or f"line {result.line} of the batch results could not be read")
                continue
            if result.body is None:
                self._back_to_pending(request, result.error or "no result", expired=result.expired)
                continue
            call = model_request(model, request.prompt or "", request.step, request.replicate)
            try:
                response = backend.response_from_body(call, result.body, result.raw)
                if not has_output(response):
                    raise BackendError(model.provider, "the model returned an empty text")
            except BackendError as error:
                self._back_to_pending(request, str(error))
                continue
            if request.required_sample_pk not in refs:
                for ref in sample_refs(self.lib, [request.required_sample_pk]):
                    refs[request.required_sample_pk] = ref
            self._commit(request, refs[request.required_sample_pk], model, call, response, batch_pk)
        # Requests the provider returned nothing for (a batch that failed or expired as a whole).
        why = state.message or f"the batch ended {state.status} without its result"
        if unreadable:
            lines = ", ".join(str(number) for number in unreadable[:5]) + (" ..." if len(unreadable) > 5 else "")
            why += f" (line(s) {lines} of its results could not be read)"
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

    def _failed(self, request: RequestRow, why: str) -> None:
        """An item whose result is unusable as it came (an unreadable results line): failed,
        its reason kept; ``thoughtdesk resume N --direct`` sends it as a normal request."""
        with self.lib.transaction() as conn:
            conn.execute(
                "UPDATE request SET status = 'failed', batch_pk = NULL, error = ?, error_kind = 'BadResponse' "
                "WHERE id = ?",
                (redact(f"batch: {why}"), request.id),
            )

    def _commit(
        self, request: RequestRow, sample: Any, model: ModelSpec, call: Request, response: Response, batch_pk: int
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
        try:
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
                claim=Claim.batched(batch_pk),  # still waiting for this batch, checked as it is stored
            )
        except StaleClaim as stale:  # another process stored it meanwhile
            log.warning("run %d: a batch result is not stored again: %s", self.run_id, stale)
            return
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
        sample = next(iter(sample_refs(self.lib, [request.required_sample_pk])))
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
        sample = next(iter(sample_refs(self.lib, [request.required_sample_pk])))
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
        by_model: dict[int, list[_Item]] = {}
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
                # Its size as it will be sent (the custom id's tag is known once the chunk is).
                size = len(client.line(custom_id("0" * 10, request.id), url, body).encode("utf-8")) + 1
                by_model.setdefault(request.model_index, []).append(_Item(request, url, body, size))
        for model_index, items in by_model.items():
            client = self.clients[model_index]
            max_requests, max_bytes = client.limits
            chunk: list[_Item] = []
            size = 0
            for item in items:
                # A batch holds one endpoint (OpenAI): a change of endpoint starts a new chunk.
                if chunk and (len(chunk) >= max_requests or size + item.size > max_bytes or item.url != chunk[0].url):
                    await self._submit_chunk(model_index, client, chunk)
                    chunk, size = [], 0
                chunk.append(item)
                size += item.size
            if chunk:
                await self._submit_chunk(model_index, client, chunk)

    async def _submit_chunk(self, model_index: int, client: BatchApi, chunk: list[_Item]) -> None:
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
                [(batch_pk, sent_at, item.request.id) for item in chunk],
            )
            claimed = {row[0] for row in conn.execute("SELECT id FROM request WHERE batch_pk = ?", (batch_pk,))}
            chunk = [item for item in chunk if item.request.id in claimed]
            conn.execute("UPDATE batch SET requests = ? WHERE id = ?", (len(chunk), batch_pk))
        if not chunk:
            with self.lib.transaction() as conn:
                conn.execute("DELETE FROM batch WHERE id = ?", (batch_pk,))
            return
        tag = batch_tag(batch_pk, sent_at, [(item.request.id, item.request.prompt) for item in chunk])
        lines = [client.line(custom_id(tag, item.request.id), item.url, item.body) for item in chunk]
        try:
            remote_id, file_id = await client.submit(lines, chunk[0].url, self._marker(batch_pk))
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
        remaining, failed, unsent = conn.execute(
            "SELECT coalesce(sum(status != 'done'), 0), coalesce(sum(status = 'failed'), 0), "
            "coalesce(sum(status = 'pending'), 0) FROM request WHERE run_id = ?",
            (self.run_id,),
        ).fetchone()
        progress = partial(
            BatchProgress, self.run_id, self.submitted, self.stored, self.retried, failed, open_batches, remaining
        )
        status: RunStatus
        error: str | None
        if self.cancelled():  # kept: only an explicit resubmit takes a cancelled run up again
            message = (
                f"cancelled; {unsent} request(s) not sent: `thoughtdesk resume {self.run_id} --resubmit` sends them in "
                f"new batches, `--direct` one by one at the normal price"
            )
            if open_batches:
                message += f"; {open_batches} batch(es) still ending at the provider: `thoughtdesk resume {self.run_id}` stores what they answered"
            set_run_status(self.lib, self.run_id, "cancelled", message)
            return progress("cancelled", unsent)
        if open_batches:
            status, error = "batched", None
        elif remaining == 0:
            status, error = "done", None
        elif failed:
            status = "failed"
            error = (
                f"{failed} request(s) failed in batches (after {MAX_BATCH_ATTEMPTS} tries, or with an answer that "
                f"could not be read); `thoughtdesk resume {self.run_id} --direct` sends them one by one"
            )
        else:
            status, error = "batched", None
        set_run_status(self.lib, self.run_id, status, error)
        return progress(status, unsent)


__all__ = ["BatchAdvance", "batch_tag", "custom_id", "request_id_of"]
