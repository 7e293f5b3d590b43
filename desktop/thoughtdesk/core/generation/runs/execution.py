"""One execution of a run, the part every step shares: the claim before a call and the check
of it where the result is stored, the call (a local model's stopped by a pause), storing a
result while the worker goes on, answering a request from an identical one done, failures,
the counts, and a feature's steps (:mod:`.kinds`) driven through the same claim and commit.
:mod:`.execute` adds the loop (workers, pause, cancel, the run's status) and each step's
processing.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
from collections.abc import Callable
from functools import partial
from typing import Any

from thoughtdesk.core.generation.backends import (
    AuthError,
    Backend,
    BackendError,
    BadResponse,
    ModelFileError,
    ModelNotFound,
    PriceTable,
    Request,
    Response,
    ServerDown,
)
from thoughtdesk.core.generation.backends.base import ScoringUnsupported
from thoughtdesk.core.generation.prompts import Exemplar, PromptMode
from thoughtdesk.core.generation.runs.commit import store_cached_answer, store_cached_cot, store_failure, store_result
from thoughtdesk.core.generation.runs.commit_base import CallRecord, call_record, has_output, redact_call
from thoughtdesk.core.generation.runs.commit_group import CommitGroup
from thoughtdesk.core.generation.runs.commit_judged import store_cached_critique, store_cached_verdict
from thoughtdesk.core.generation.runs.control import RunControl
from thoughtdesk.core.generation.runs.kind_specs import AnySpec
from thoughtdesk.core.generation.runs.kinds import StepHandler
from thoughtdesk.core.generation.runs.lease import Claim, Lease, StaleClaim
from thoughtdesk.core.generation.runs.read import (
    REQUEST_SELECT,
    RequestRow,
    RunProgress,
    request_row,
)
from thoughtdesk.core.generation.runs.samples import SampleRef, sample_refs
from thoughtdesk.core.generation.runs.spec import ModelSpec, RunSpec
from thoughtdesk.core.generation.runs.tally import RunTally
from thoughtdesk.core.generation.runs.variants import variant_from_provenance
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso

log = logging.getLogger(__name__)

ProgressCallback = Callable[[RunProgress], None]
#: Errors that no retry fixes and that would fail every further request the same way: the run
#: stops (status ``failed``, message kept) so the user can fix the cause and resume.
STOPPING_ERRORS = (AuthError, ModelNotFound, ModelFileError, ServerDown, ScoringUnsupported)
ATTEMPTS: contextvars.ContextVar[int] = contextvars.ContextVar("attempts", default=1)


class Interrupted(Exception):
    """A local model's call stopped by a pause (sent again after the resume)."""


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not only a call it awaited)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class Execution:
    """One execution of a run on one asyncio loop (see :func:`.execute.execute_run_async`), the
    part every step shares."""

    def __init__(
        self,
        lib: Library,
        run_id: int,
        backends: dict[int, Backend],
        spec: AnySpec,
        document: dict[str, Any],
        control: RunControl,
        progress: ProgressCallback | None,
        force: bool,
        prices: PriceTable,
    ) -> None:
        self.lib, self.run_id, self.backends, self.spec = lib, run_id, backends, spec
        self.control, self.progress, self.force, self.prices = control, progress, force, prices
        self.variants_json = document.get("variants", [])
        self.variants = [variant_from_provenance(v) for v in self.variants_json]
        self.exemplars = {
            d: [Exemplar(e["question"], e["cot"], e["answer"], tuple(e["answer_choices"]), e["context"]) for e in ex]
            for d, ex in document.get("exemplars", {}).items()
        }
        self.one_step = isinstance(spec, RunSpec) and spec.mode is PromptMode.ONE_STEP
        # A critique run: the template its prompts were filled from (stored with each critique).
        self.template_key: str = (document.get("template") or {}).get("key", "")
        # A guided run: the guide prompts it was planned with.
        self.guide_texts: dict[str, str] = document.get("guide_texts") or {}
        self.tally = RunTally(lib, run_id)
        self.queue: asyncio.Queue[int | None] = asyncio.Queue()
        self.outstanding = 0
        self.samples: dict[int, SampleRef] = {}
        # Extractions counted in ``outstanding`` that wait for their CoT, by the CoT's request.
        self.dependents: dict[int, list[int]] = {}
        self.in_flight: dict[str | None, asyncio.Future[None]] = {}  # by fingerprint
        self.stop_error: BackendError | None = None
        self.workers = 0
        self.lease: Lease | None = None  # this process's hold on the run (set by execute_run_async)
        # Claims (at the next turn) and results (a little later), committed in groups.
        self.commits = CommitGroup(lib)
        # Results being stored while their worker goes on to its next request (see _send).
        self.stores: set[asyncio.Task[None]] = set()
        #: Calls to a local model under way, by request id: a pause interrupts them (the model
        #: stops at its next token) and sends them again after the resume.
        self.interruptible: dict[int, asyncio.Task[Any]] = {}
        self.interrupted: set[int] = set()
        self.store_error: BaseException | None = None
        self.discarded = 0  # answers not stored: another process took their requests over

    # --- bookkeeping --------------------------------------------------------------------

    def _sample(self, pk: int) -> SampleRef:
        if pk not in self.samples:
            for ref in sample_refs(self.lib, [pk]):
                self.samples[pk] = ref
        return self.samples[pk]

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self.tally.snapshot())

    def _finished(self, count: int = 1) -> None:
        self.outstanding -= count
        if self.outstanding <= 0:
            self._stop_workers()

    def _stop_workers(self) -> None:
        for _ in range(self.workers):
            self.queue.put_nowait(None)

    # --- a feature's steps (kinds.py): the StepContext a handler sees ------------------------

    def backend_of(self, request: RequestRow) -> Backend:
        return self.backends[request.model_index]

    def model_of(self, request: RequestRow) -> ModelSpec:
        return self.spec.models[request.model_index]

    async def complete(self, request: RequestRow, call: Request) -> Response:
        return await self._call(request.id, self.backends[request.model_index], call)

    def record(self, request: RequestRow, call: Request, response: Response, sent_at: str) -> CallRecord:
        model = self.model_of(request)
        price = partial(self.prices.cost, model.price_provider, model.model_name)
        return redact_call(call_record(call, response, sent_at=sent_at, price=price))

    async def _process_step(self, request: RequestRow, handler: StepHandler) -> None:
        """Claim ``request``, let ``handler`` make its calls, commit its outcome under the claim."""
        sent_at = now_iso()
        token = await self.commits.write(partial(self._claim, request.id, sent_at), urgent=True)
        if token is None:
            self._finished()
            return
        self.tally.in_flight += 1
        attempts = ATTEMPTS.set(1)
        try:
            try:
                outcome = await handler(self, request)
            except Interrupted:  # paused mid-generation: pending again, queued for the resume
                await self.commits.write(partial(self._unclaim, request.id, token), urgent=True)
                self.tally.in_flight -= 1
                self.queue.put_nowait(request.id)
                return
        except BackendError as error:
            self._call_failed(request, error, sent_at, token)
            return
        finally:
            ATTEMPTS.reset(attempts)
        self.tally.in_flight -= 1
        try:
            await self.commits.write(partial(outcome.write, Claim.sent(token)))
        except StaleClaim as stale:
            self._discarded(request, stale)
            return
        self.tally.prompt_tokens += outcome.prompt_tokens
        self.tally.completion_tokens += outcome.completion_tokens
        self.tally.cost += outcome.cost
        if outcome.error is None:
            self.tally.done += 1
            self._after_done(request)
            return
        self.tally.failed += 1
        self.tally.last_error = str(outcome.error)
        if isinstance(outcome.error, STOPPING_ERRORS):
            self.stop_error = self.stop_error or outcome.error
            self._stop_workers()
        self._after_failed(request)

    async def _send_once(
        self,
        request: RequestRow,
        sample: SampleRef,
        model: ModelSpec,
        call: Request,
        cot_pk: int | None,
        cot_text: str | None,
    ) -> None:
        """Send ``call``; identical requests arriving meanwhile wait for it and reuse its result."""
        waiter = asyncio.get_running_loop().create_future()
        self.in_flight[request.fingerprint] = waiter

        def release(_stored: object = None) -> None:  # identical requests go on once this is stored
            if self.in_flight.get(request.fingerprint) is waiter:
                del self.in_flight[request.fingerprint]
            waiter.set_result(None)

        store = None
        try:
            store = await self._send(request, sample, model, call, cot_pk, cot_text)
        finally:
            if store is None:
                release()
            else:
                store.add_done_callback(release)

    async def _answer_from_store(self, request: RequestRow, sample: SampleRef, cot_pk: int | None) -> bool:
        other = self.in_flight.get(request.fingerprint)
        if other is not None:
            await other  # an identical call is under way: wait for it, then reuse its result
        row = self.lib.conn.execute(
            REQUEST_SELECT + " WHERE fingerprint = ? AND status = 'done' AND id != ? AND "
            "(result_cot_pk IS NOT NULL OR result_answer_pk IS NOT NULL OR result_critique_pk IS NOT NULL "
            "OR result_verdict_pk IS NOT NULL) "
            "ORDER BY id LIMIT 1",
            (request.fingerprint, request.id),
        ).fetchone()
        if row is None:
            return False
        source = request_row(self.lib.conn, row)
        try:
            if not self._store_from(request, source, sample, cot_pk):
                return False
        except StaleClaim as stale:  # no longer pending: another process has it
            self._discarded(request, stale)
            return True
        self.tally.done += 1
        self.tally.cached += 1
        self._after_done(request)
        return True

    def _store_from(self, request: RequestRow, source: RequestRow, sample: SampleRef, cot_pk: int | None) -> bool:
        """Answer ``request`` from ``source``, an identical request done; False when it cannot be."""
        if request.step == "judge":
            return source.result_verdict_pk is not None and (
                store_cached_verdict(self.lib, request, source.id, source.result_verdict_pk, run_id=self.run_id)
                is not None
            )
        if request.step == "critique":
            if source.result_critique_pk is None:
                return False
            if (
                store_cached_critique(self.lib, request, source.id, source.result_critique_pk, run_id=self.run_id)
                is None
            ):
                return False
        elif request.step in ("cot", "revision"):  # a revision's fingerprint names the CoT and critique it revises
            if source.result_cot_pk is None:
                return False
            store_cached_cot(self.lib, request, source.id, source.result_cot_pk, source.result_answer_pk, sample=sample)
        else:
            if source.result_answer_pk is None or cot_pk is None:  # cot_pk: set for every extraction
                return False
            store_cached_answer(self.lib, request, source.id, source.result_answer_pk, sample=sample, cot_pk=cot_pk)
        return True

    async def _send(
        self,
        request: RequestRow,
        sample: SampleRef,
        model: ModelSpec,
        call: Request,
        cot_pk: int | None,
        cot_text: str | None,
    ) -> asyncio.Task[None] | None:
        """Claim, call, and hand the result to a task that stores it (returned; None when
        nothing is stored): the worker goes on to its next request at once, so that its claim
        and call do not wait for the storing of every answer that arrived with this one. A
        result not committed when the process dies leaves its request 'sent': sent again on
        resume, stored once."""
        backend = self.backends[request.model_index]
        sent_at = now_iso()
        # Claimed atomically, and committed before the call: a request that is no longer
        # pending (another executor took it, whatever went wrong elsewhere) is never sent a
        # second time.
        token = await self.commits.write(partial(self._claim, request.id, sent_at), urgent=True)
        if token is None:
            self._finished()
            return None
        self.tally.in_flight += 1
        attempts = ATTEMPTS.set(1)
        try:
            try:
                response = await self._call(request.id, backend, call)
            except Interrupted:
                # Paused mid-generation: the request goes back to pending under its claim, and
                # into the queue, where the workers wait for the resume.
                await self.commits.write(partial(self._unclaim, request.id, token), urgent=True)
                self.tally.in_flight -= 1
                self.queue.put_nowait(request.id)
                return None
            if request.step not in ("judge", "rollout") and not has_output(response):
                # (a judge answering nothing is stored as an unparseable verdict: counted, not retried;
                # an empty rollout is one that does not reach the gold answer)
                raise BadResponse(
                    backend.provider,
                    "the model returned an empty text",
                    hint="the raw answer is kept with the failed request",
                    raw_body=response.raw_body,
                )
        except BackendError as error:
            self._call_failed(request, error, sent_at, token)
            return None
        finally:
            ATTEMPTS.reset(attempts)

        record = call_record(
            call, response, sent_at=sent_at, price=partial(self.prices.cost, model.price_provider, model.model_name)
        )
        self.tally.in_flight -= 1
        write = partial(
            store_result,
            self.lib,
            run_id=self.run_id,
            request=request,
            sample=sample,
            model=model,
            variants=self.variants_json,
            call=record,
            one_step=self.one_step,
            template_key=self.template_key,
            cot_pk=cot_pk,
            cot_text=cot_text,
            claim=Claim.sent(token),
        )
        store = asyncio.get_running_loop().create_task(self._store(request, write, record))
        self.stores.add(store)
        store.add_done_callback(self._stored)
        return store

    async def _store(self, request: RequestRow, write: Any, record: CallRecord) -> None:
        """Commit one result (in a group with the others of its burst), then count it and queue
        what depended on it. A result whose request another process took over meanwhile (this
        one was suspended, and the run resumed elsewhere) is discarded: stored once, by the
        holder of the request's current claim."""
        try:
            await self.commits.write(write)
        except StaleClaim as stale:
            self._discarded(request, stale)
            return
        self.tally.done += 1
        self.tally.prompt_tokens += record.prompt_tokens
        self.tally.completion_tokens += record.completion_tokens
        self.tally.cost += record.cost or 0.0
        self._after_done(request)

    def _stored(self, task: asyncio.Task[None]) -> None:
        """A result's storing ended: a failure (the library cannot be written) stops the run,
        raised once the workers have stopped."""
        self.stores.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self.store_error = self.store_error or error
            self._stop_workers()

    async def _call(self, request_id: int, backend: Any, call: Request) -> Response:
        """``backend.complete(call)``; a local model's call can be interrupted by a pause
        (raises :class:`Interrupted`), a remote one is left to answer (it is paid for)."""
        if backend.provider != "llamacpp":
            return await backend.complete(call)
        task = asyncio.ensure_future(backend.complete(call))
        self.interruptible[request_id] = task
        try:
            return await task
        except asyncio.CancelledError:
            if request_id in self.interrupted and not _cancelling():
                raise Interrupted from None
            raise
        finally:
            self.interruptible.pop(request_id, None)
            self.interrupted.discard(request_id)

    def _unclaim(self, request_id: int, token: str) -> None:
        """Give an interrupted request back (pending, its attempt not counted), if still ours."""
        self.lib.conn.execute(
            "UPDATE request SET status = 'pending', attempts = max(attempts - 1, 0), claim = NULL "
            "WHERE id = ? AND status = 'sent' AND claim = ?",
            (request_id, token),
        )

    def _claim(self, request_id: int, sent_at: str) -> str | None:
        """Mark a pending request sent (inside a transaction) with a new claim token, returned;
        None if it was no longer pending. Only the holder of the token stores its result."""
        token = secrets.token_hex(8)
        claimed = self.lib.conn.execute(
            "UPDATE request SET status = 'sent', sent_at = ?, attempts = attempts + 1, claim = ? "
            "WHERE id = ? AND status = 'pending'",
            (sent_at, token, request_id),
        ).rowcount
        return token if claimed == 1 else None

    def _release_dependents(self, request_id: int, *, send: bool) -> int:
        """The extractions counted here that wait for CoT ``request_id``: queued (``send``, and
        still pending), else dropped from what this execution waits for; returns how many were
        dropped."""
        dropped = 0
        for dependent in self.dependents.pop(request_id, []):
            row = self.lib.conn.execute("SELECT status FROM request WHERE id = ?", (dependent,)).fetchone()
            if send and row is not None and row[0] == "pending":
                self.queue.put_nowait(dependent)
            else:
                dropped += 1
        return dropped

    def _after_done(self, request: RequestRow) -> None:
        self.tally.finished_now += 1
        dropped = self._release_dependents(request.id, send=True)
        self._report()
        self._finished(1 + dropped)

    def _discarded(self, request: RequestRow, stale: StaleClaim) -> None:
        """A result (or failure) of ``request`` not stored: another process holds its claim."""
        log.warning(
            "run %d: the answer to request %d is discarded, not stored: %s (the run was taken over by another "
            "process while this one was stopped; that process sends and stores it)",
            self.run_id,
            request.id,
            stale,
        )
        self.discarded += 1
        self._finished(1 + self._release_dependents(request.id, send=False))

    def _call_failed(self, request: RequestRow, error: BackendError, sent_at: str, token: str) -> None:
        """A call failed for good (retries spent): stored as the request's failure; an error that
        stops the run (a bad key, no credit) stops the workers."""
        self.tally.in_flight -= 1
        try:
            store_failure(
                self.lib, request.id, error, sent_at=sent_at, attempts=ATTEMPTS.get(), claim=Claim.sent(token)
            )
        except StaleClaim as stale:
            self._discarded(request, stale)
            return
        self.tally.failed += 1
        self.tally.last_error = str(error)
        if isinstance(error, STOPPING_ERRORS):
            self.stop_error = self.stop_error or error
            self._stop_workers()
        self._after_failed(request)

    def _after_failed(self, request: RequestRow) -> None:
        self.tally.finished_now += 1
        # Its extractions cannot be sent; they stay pending for a resume.
        waiting = self._release_dependents(request.id, send=False)
        self._report()
        self._finished(1 + waiting)
