"""Executing a stored run: asyncio workers send pending requests through retrying, rate-limited
backends and commit each result the moment it returns (the claims and results of one turn of
the event loop in one transaction: :mod:`.commit_group`).

Crash safety comes from the order of writes: a request is ``sent`` before the call, and its
result rows plus ``done`` are one transaction after it. A kill between the two leaves ``sent``,
which the next execution simply sends again; nothing is stored twice. Identical requests
(same fingerprint) already done anywhere in the library are answered from the store unless
``force``.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends import (
    AuthError,
    Backend,
    BackendError,
    BadResponse,
    ModelFileError,
    ModelNotFound,
    PooledBackend,
    PriceTable,
    ProviderGate,
    ProviderLimits,
    Request,
    ResilientBackend,
    Response,
    RetryPolicy,
    ServerDown,
)
from thoughtdesk.core.generation.backends.base import ScoringUnsupported
from thoughtdesk.core.generation.guide_prompts import answer_stated
from thoughtdesk.core.generation.prompts import Exemplar, PromptMode
from thoughtdesk.core.generation.rollout_labels import rollout_request
from thoughtdesk.core.generation.runs.commit import (
    CallRecord,
    call_record,
    has_output,
    redact_call,
    store_cached_answer,
    store_cached_cot,
    store_cached_critique,
    store_cached_verdict,
    store_failure,
    store_result,
)
from thoughtdesk.core.generation.runs.commit_group import CommitGroup
from thoughtdesk.core.generation.runs.control import RunControl
from thoughtdesk.core.generation.runs.critique import critique_request
from thoughtdesk.core.generation.runs.guided import GuidedWriter, Helper
from thoughtdesk.core.generation.runs.judge import judge_request
from thoughtdesk.core.generation.runs.kinds import StepHandler, step_handler
from thoughtdesk.core.generation.runs.lease import Claim, Lease, StaleClaim, claim_run, describe_holder
from thoughtdesk.core.generation.runs.plan import (
    SampleRef,
    extraction_prompt,
    fingerprint,
    model_request,
    sample_refs,
)
from thoughtdesk.core.generation.runs.providers import build_shared_backend
from thoughtdesk.core.generation.runs.read import (
    REQUEST_SELECT,
    RequestRow,
    RunProgress,
    RunStatus,
    get_request,
    request_row,
)
from thoughtdesk.core.generation.runs.spec import (
    RATIONALE_KINDS,
    AnySpec,
    ModelSpec,
    RunLimits,
    RunSpec,
    spec_from_document,
)
from thoughtdesk.core.generation.runs.tally import RunTally, set_run_status
from thoughtdesk.core.generation.runs.trajectories import request_steps, store_step
from thoughtdesk.core.generation.runs.variants import variant_from_provenance
from thoughtdesk.core.library.prompt_refs import prompt_ref
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso

log = logging.getLogger(__name__)

ProgressCallback = Callable[[RunProgress], None]
#: Seconds a run's write waits for another process's write before the run stops (resumable).
RUN_WRITE_WAIT = 3600.0
#: Errors that no retry fixes and that would fail every further request the same way: the run
#: stops (status ``failed``, message kept) so the user can fix the cause and resume.
STOPPING_ERRORS = (AuthError, ModelNotFound, ModelFileError, ServerDown, ScoringUnsupported)
_attempts: contextvars.ContextVar[int] = contextvars.ContextVar("attempts", default=1)


class _Interrupted(Exception):
    """A local model's call stopped by a pause (sent again after the resume)."""


def _cancelling() -> bool:
    """Whether the current task itself is being cancelled (not only a call it awaited)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class _Execution:
    """One execution of a run on one asyncio loop (see :func:`execute_run_async`)."""

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

    # --- the loop -----------------------------------------------------------------------

    async def run(self, concurrency: int) -> RunProgress:
        conn = self.lib.conn
        with self.lib.transaction():
            # A crash leaves 'sent' rows: they were never answered, so they are sent again.
            conn.execute(
                "UPDATE request SET status = 'pending' WHERE run_id = ? AND status IN ('sent', 'failed')",
                (self.run_id,),
            )
        self.tally = RunTally(self.lib, self.run_id)
        pending = conn.execute(
            "SELECT q.id, q.depends_on, d.status FROM request q LEFT JOIN request d ON d.id = q.depends_on "
            "WHERE q.run_id = ? AND q.status = 'pending' ORDER BY q.id",
            (self.run_id,),
        ).fetchall()
        # An extraction whose CoT waits in an open batch (a batch run resumed --direct) cannot go
        # in this execution: not counted, or the workers waited for it for ever.
        here = {request_id for request_id, _, _ in pending}
        pending = [row for row in pending if row[2] in (None, "done") or row[1] in here]
        self.outstanding = len(pending)
        log.info(
            "run %d: %d request(s) to send of %d (%s), %d worker(s) per endpoint",
            self.run_id,
            len(pending),
            self.tally.total,
            ", ".join(model.label for model in self.spec.models),
            max(1, concurrency),
        )
        set_run_status(self.lib, self.run_id, "running")
        self._report()
        if not pending:
            return await self._finish()
        for request_id, depends_on, dependency_status in pending:
            # Extractions wait for their CoT; those whose CoT is done can go now.
            if dependency_status is None or dependency_status == "done":
                self.queue.put_nowait(request_id)
            else:
                self.dependents.setdefault(depends_on, []).append(request_id)
        # Workers per agent model: a guided run's helper backends (rationale, scorer, rater) are
        # called from inside its trajectories, not fed requests of their own.
        # A model served by a pool gets workers for every endpoint.
        self.workers = max(1, concurrency) * sum(max(1, len(model.base_urls)) for model in self.spec.models)
        watcher = asyncio.create_task(self._watch())
        try:
            await asyncio.gather(*(self._worker() for _ in range(self.workers)))
            while self.stores:  # results still being stored (the workers stopped on a cancel)
                await asyncio.wait(set(self.stores))
        finally:
            watcher.cancel()
        if self.store_error is not None:
            raise self.store_error
        if self.stop_error is not None:
            return await self._close("failed", str(self.stop_error))
        if self.control.cancelled:
            return await self._close("cancelled")
        return await self._finish()

    async def _finish(self) -> RunProgress:
        """Close a run whose workers are done: done, failed, or waiting for open batches."""
        left, waiting, after = self.lib.conn.execute(
            "SELECT coalesce(sum(q.status != 'done'), 0), coalesce(sum(q.status = 'batched'), 0), "
            "coalesce(sum(q.status = 'pending' AND d.status = 'batched'), 0) FROM request q "
            "LEFT JOIN request d ON d.id = q.depends_on WHERE q.run_id = ?",
            (self.run_id,),
        ).fetchone()
        if waiting:  # a batch run resumed --direct: what waits in open batches is theirs, still polled
            then = f", and {after} extraction(s) wait for their CoTs from them" if after else ""
            return await self._close(
                "batched",
                f"{waiting} request(s) still wait in open batches at the provider{then}; the run is polled until "
                f"they end (`thoughtdesk resume {self.run_id}` stores what they answered)",
            )
        return await self._close(
            "done" if left == 0 else "failed", None if left == 0 else f"{left} request(s) failed; resume to retry them"
        )

    def _taken_over(self) -> str | None:
        """Who holds the run now, when another process took it over from this one, else None."""
        if self.lease is None:
            return None
        row = self.lib.conn.execute("SELECT holder FROM run WHERE id = ?", (self.run_id,)).fetchone()
        holder = row[0] if row else None
        return None if holder == self.lease.holder else (holder or "another process (now finished)")

    async def _close(self, status: RunStatus, error: str | None = None) -> RunProgress:
        taken = self._taken_over()
        if taken is not None:  # the run is another process's now: its status is not ours to set
            row = self.lib.conn.execute("SELECT status FROM run WHERE id = ?", (self.run_id,)).fetchone()
            status = row[0] if row else status
            who = describe_holder(taken) if ":" in taken else taken
            error = (
                f"run {self.run_id} was taken over by {who} while this process was stopped; "
                f"{self.discarded} answer(s) this process received were discarded (that process sends and stores "
                "them)"
            )
            log.warning("%s", error)
            self.tally.status = status
            self.tally.last_error = error
            self.tally.taken_over = True
            self._report()
            return self.tally.snapshot()
        set_run_status(self.lib, self.run_id, status, error)
        self.tally.status = status
        self.tally.last_error = error or self.tally.last_error
        self._report()
        final = self.tally.snapshot()
        log.info(
            "run %d %s: %d done (%d from the store), %d failed of %d; %d tokens, $%.4f, %.1f s%s",
            self.run_id,
            status,
            final.done,
            final.cached,
            final.failed,
            final.total,
            final.tokens,
            final.cost,
            final.elapsed,
            f" ({error})" if error else "",
        )
        return final

    def waiting_for_library(self, seconds: float, what: str | None) -> None:
        """A write of this run waits for another process: said in the run's last message."""
        doing = f" ({what})" if what else ""
        self.tally.last_error = f"waiting {seconds:.0f} s for another ThoughtDesk process writing to the library{doing}"
        self._report()

    async def _watch(self) -> None:
        """Turn pause/cancel requests into status changes and wake idle workers on cancel; keep
        the run's lease (every RENEW_SECONDS: the call returns at once in between)."""
        paused = False
        while True:
            await asyncio.sleep(0.05)
            if self.lease is not None and not self.lease.renew():
                self._stop_workers()  # taken over by another process (this one was stopped): stop here
                return
            if self.control.cancelled:
                self._stop_workers()
                return
            if self.control.paused != paused:
                paused = self.control.paused
                if paused:  # a local model would generate on for minutes: stopped at its next token
                    for request_id, call in list(self.interruptible.items()):
                        self.interrupted.add(request_id)
                        call.cancel()
                set_run_status(self.lib, self.run_id, "paused" if paused else "running")
                self.tally.status = "paused" if paused else "running"
                self.tally.set_paused(paused)
                self._report()

    async def _worker(self) -> None:
        while True:
            request_id = await self.queue.get()
            while self.control.paused and not self.control.cancelled:
                await asyncio.sleep(0.05)
            if request_id is None or self.control.cancelled or self.stop_error is not None:
                return
            await self._process(request_id)

    async def _process(self, request_id: int) -> None:
        request = get_request(self.lib, request_id)
        handler = step_handler(request.step)
        if handler is not None:  # a feature's step (core/generation/runs/kinds.py)
            await self._process_step(request, handler)
            return
        sample = self._sample(request.required_sample_pk)
        model = self.spec.models[request.model_index]
        if request.step == "critique":
            await self._process_critique(request, sample, model)
            return
        if request.step == "judge":
            await self._process_judge(request, sample, model)
            return
        if request.step == "revision":
            await self._process_revision(request, sample, model)
            return
        if request.step == "guided":
            await self._process_guided(request, sample, model)
            return
        if request.step == "rollout":
            await self._process_rollout(request, sample, model)
            return
        variant = self.variants[request.variant_index]
        cot_pk, cot_text = None, None
        if request.step == "extraction":
            found = self.lib.conn.execute(
                "SELECT c.id, c.cot FROM request d JOIN generated_cot c ON c.id = d.result_cot_pk WHERE d.id = ?",
                (request.depends_on,),
            ).fetchone()
            if found is None:
                store_failure(
                    self.lib,
                    request_id,
                    "its CoT was deleted from the library; plan a new run for this sample",
                    sent_at=now_iso(),
                    attempts=0,
                )
                self.tally.failed += 1
                self._after_failed(request)
                return
            cot_pk, cot_text = found
            if request.prompt is None:
                prompt = extraction_prompt(variant, sample, cot_text, self.exemplars.get(sample.dataset, []))
                call = model_request(model, prompt or "", "extraction", request.replicate)
                request = dataclasses.replace(
                    request, prompt=prompt, fingerprint=fingerprint(model, call, request.replicate)
                )
                with self.lib.transaction() as conn:  # the CoT it quotes is stored once: a reference here
                    conn.execute(
                        "UPDATE request SET prompt = ?, fingerprint = ? WHERE id = ?",
                        (
                            None if prompt is None else prompt_ref(prompt, cot_text, cot_pk),
                            request.fingerprint,
                            request_id,
                        ),
                    )
        if not self.force and await self._answer_from_store(request, sample, cot_pk):
            return
        call = model_request(model, request.prompt or "", request.step, request.replicate)
        await self._send_once(request, sample, model, call, cot_pk, cot_text)

    async def _process_guided(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        """Write a guided CoT step by step, each step committed as it is chosen; a trajectory
        stopped by a kill, an error or Cancel continues at its next step when the run resumes."""
        assert isinstance(self.spec, RunSpec) and self.spec.guide is not None  # only guided runs plan this step
        guide = self.spec.guide
        sent_at = now_iso()
        token = await self.commits.write(partial(self._claim, request.id, sent_at), urgent=True)
        if token is None:
            self._finished()
            return
        claim = Claim.sent(token)
        self.tally.in_flight += 1
        writer = GuidedWriter(
            guide,
            self.guide_texts,
            Helper(model, self.backends[request.model_index]),
            {role: Helper(m, self.backends[self.spec.role_index(role)]) for role, m in guide.roles().items()},
            self.prices,
        )
        steps = request_steps(self.lib, request.id)
        seed = None if model.seed is None else model.seed + request.replicate
        attempts = _attempts.set(1)
        try:
            while not (steps and steps[-1].final) and len(steps) < guide.max_steps:
                while self.control.paused and not self.control.cancelled:
                    await asyncio.sleep(0.05)
                if self.control.cancelled or self.stop_error is not None:
                    # Stopped between steps: the steps so far are kept; a resume continues here.
                    with self.lib.transaction() as conn:
                        conn.execute(
                            "UPDATE request SET status = 'pending' WHERE id = ? AND status = 'sent' AND claim = ?",
                            (request.id, token),
                        )
                    self.tally.in_flight -= 1
                    self._finished()
                    return
                step = await writer.step(request.prompt or "", [s.chosen_text for s in steps], len(steps), seed=seed)
                try:
                    store_step(self.lib, request.id, step, claim=claim)
                except StaleClaim as stale:
                    self.tally.in_flight -= 1
                    self._discarded(request, stale)
                    return
                steps.append(step)
                self.tally.prompt_tokens += step.prompt_tokens
                self.tally.completion_tokens += step.completion_tokens
                self.tally.cost += step.cost or 0.0
                self._report()
        except BackendError as error:
            self._call_failed(request, error, sent_at, token)
            return
        finally:
            _attempts.reset(attempts)
        text = " ".join(s.chosen_text for s in steps if s.chosen_text)
        costs = [s.cost for s in steps]
        response = Response(
            provider=model.provider,
            model=model.model_name,
            texts=[text],
            finish_reasons=["answer" if steps and answer_stated(steps[-1].chosen_text) else "steps"],
            prompt_tokens=sum(s.prompt_tokens for s in steps),
            completion_tokens=sum(s.completion_tokens for s in steps),
            latency=sum(s.latency for s in steps),
            raw_body=json.dumps({"guided_steps": len(steps)}),
        )
        cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
        record = CallRecord(
            response,
            request.sent_at or sent_at,
            now_iso(),
            response.prompt_tokens or 0,
            response.completion_tokens or 0,
            cost,
        )
        self.tally.in_flight -= 1
        try:
            store_result(
                self.lib,
                run_id=self.run_id,
                request=request,
                sample=sample,
                model=model,
                variants=self.variants_json,
                call=record,
                one_step=True,
                guide={**guide.to_json(), "label": guide.label, "steps": len(steps)},
                claim=claim,
            )
        except StaleClaim as stale:
            self._discarded(request, stale)
            return
        self.tally.done += 1
        self._after_done(request)

    async def _process_critique(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        exists = self.lib.conn.execute("SELECT 1 FROM generated_cot WHERE id = ?", (request.target_cot_pk,)).fetchone()
        if exists is None:  # the CoT was deleted (its request rows cascade; a race with a delete)
            store_failure(self.lib, request.id, "the CoT it judges was deleted", sent_at=now_iso(), attempts=0)
            self.tally.failed += 1
            self._after_failed(request)
            return
        if not self.force and await self._answer_from_store(request, sample, None):
            return
        params = json.loads(request.params)
        call = critique_request(model, request.prompt or "", int(params.get("system_chars", -1)))
        await self._send_once(request, sample, model, call, None, None)

    async def _process_revision(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        exists = self.lib.conn.execute("SELECT 1 FROM generated_cot WHERE id = ?", (request.target_cot_pk,)).fetchone()
        if exists is None:  # the CoT was deleted (its request rows cascade; a race with a delete)
            store_failure(self.lib, request.id, "the CoT it revises was deleted", sent_at=now_iso(), attempts=0)
            self.tally.failed += 1
            self._after_failed(request)
            return
        if not self.force and await self._answer_from_store(request, sample, None):
            return
        params = json.loads(request.params)
        call = critique_request(model, request.prompt or "", int(params.get("system_chars", 0)))
        await self._send_once(request, sample, model, call, None, None)

    async def _process_judge(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        params = json.loads(request.params)
        pair = (request.target_cot_pk, int(params["second_cot_pk"]))
        found = self.lib.conn.execute("SELECT count(*) FROM generated_cot WHERE id IN (?, ?)", pair).fetchone()[0]
        if found != 2:  # a CoT of the pair was deleted (a race with a delete: rows cascade)
            store_failure(
                self.lib, request.id, "a CoT of the pair it judges was deleted", sent_at=now_iso(), attempts=0
            )
            self.tally.failed += 1
            self._after_failed(request)
            return
        if not self.force and await self._answer_from_store(request, sample, None):
            return
        call = judge_request(model, request.prompt or "", int(params.get("system_chars", 0)))
        await self._send_once(request, sample, model, call, None, None)

    async def _process_rollout(self, request: RequestRow, sample: SampleRef, model: ModelSpec) -> None:
        """K continuations of a step prefix (an autolabel run; core/generation/runs/rollouts.py):
        sent, never answered from the store (rollouts are samples, each run draws its own)."""
        exists = self.lib.conn.execute("SELECT 1 FROM generated_cot WHERE id = ?", (request.target_cot_pk,)).fetchone()
        if exists is None:  # the CoT was deleted (its request rows cascade; a race with a delete)
            store_failure(self.lib, request.id, "the CoT it labels was deleted", sent_at=now_iso(), attempts=0)
            self.tally.failed += 1
            self._after_failed(request)
            return
        params = json.loads(request.params)
        call = rollout_request(model, request.prompt or "", int(params.get("k", 1)), params.get("seed_used"))
        await self._send_once(request, sample, model, call, None, None)

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
        attempts = _attempts.set(1)
        try:
            try:
                outcome = await handler(self, request)
            except _Interrupted:  # paused mid-generation: pending again, queued for the resume
                await self.commits.write(partial(self._unclaim, request.id, token), urgent=True)
                self.tally.in_flight -= 1
                self.queue.put_nowait(request.id)
                return
        except BackendError as error:
            self._call_failed(request, error, sent_at, token)
            return
        finally:
            _attempts.reset(attempts)
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
        attempts = _attempts.set(1)
        try:
            try:
                response = await self._call(request.id, backend, call)
            except _Interrupted:
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
            _attempts.reset(attempts)

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
        (raises :class:`_Interrupted`), a remote one is left to answer (it is paid for)."""
        if backend.provider != "llamacpp":
            return await backend.complete(call)
        task = asyncio.ensure_future(backend.complete(call))
        self.interruptible[request_id] = task
        try:
            return await task
        except asyncio.CancelledError:
            if request_id in self.interrupted and not _cancelling():
                raise _Interrupted from None
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
                self.lib, request.id, error, sent_at=sent_at, attempts=_attempts.get(), claim=Claim.sent(token)
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


def _on_retry(error: BackendError, attempt: int, wait: float) -> None:
    _attempts.set(attempt + 1)


async def execute_run_async(
    library_path: str | Path,
    run_id: int,
    *,
    backends: Mapping[int, Backend] | None = None,
    limits: RunLimits | None = None,
    progress: ProgressCallback | None = None,
    control: RunControl | None = None,
    force: bool | None = None,
    prices: PriceTable | None = None,
) -> RunProgress:
    """Send every request of run ``run_id`` that has no result yet and store each result.

    ``backends`` maps a model's index in the spec to a ready backend (default: built from the
    spec with keys from the keyring); each is wrapped in retries and per-provider limits from
    ``limits``. ``force`` (default: the spec's) sends requests even when an identical one is
    stored. ``progress`` is called on this loop's thread after every result. Returns the final
    progress; a run stopped by an error that needs the user (refused key, unknown model, server
    down, bad model file) is recorded as ``failed`` with the message and the error is raised.
    """
    limits = limits or RunLimits()
    control = control or RunControl()
    lib = Library.open(library_path, create=False)
    # A run must not die because another process writes (an import holds the library for as
    # long as it takes): its writes wait, for an hour at most, and say so in the progress.
    lib.max_write_wait = RUN_WRITE_WAIT

    def waiting_to_start(seconds: float, what: str | None) -> None:
        if progress is not None:
            tally = RunTally(lib, run_id)  # a read: it does not wait
            doing = f" ({what})" if what else ""
            tally.last_error = f"waiting {seconds:.0f} s for another ThoughtDesk process writing to the library{doing}"
            progress(tally.snapshot())

    lib.on_write_wait = waiting_to_start
    lease: Lease | None = None
    try:
        lease = claim_run(lib, run_id)  # RunBusyError when another live process executes it
        document = json.loads(lib.conn.execute("SELECT spec FROM run WHERE id = ?", (run_id,)).fetchone()[0])
        spec = spec_from_document(document)
        kind = document.get("kind")
        if kind in RATIONALE_KINDS and step_handler(kind) is None:
            raise ThoughtDeskError(
                f"run {run_id} is a {kind} run, and this process did not load its steps "
                "(core/rationales/runs.py); resume it with `thoughtdesk resume` or the Runs tab"
            )
        built: dict[int, Backend] = {}
        models = spec.all_models() if isinstance(spec, RunSpec) else list(spec.models)
        try:
            for index, model in enumerate(models):
                if backends and index in backends:
                    built[index] = backends[index]
                    continue
                # A guided run's helper roles on the agent's GGUF (or the scorer, by default the
                # rationale model) share its loaded model: one load, not one per role.
                ours = [(models[i], built[i]) for i in built if not (backends and i in backends)]
                built[index] = build_shared_backend(model, ours, endpoint_limits=ProviderLimits(limits.concurrency))
        except (BackendError, ThoughtDeskError) as error:  # e.g. an API key that cannot be sent
            set_run_status(lib, run_id, "failed", str(error))
            raise
        gates: dict[str, ProviderGate] = {}
        wrapped: dict[int, Backend] = {}
        retry = RetryPolicy(max_attempts=limits.max_attempts, initial_wait=limits.initial_wait)
        for index, backend in built.items():
            key = models[index].backend_id()
            if key not in gates:
                concurrency = 1 if models[index].provider == "llamacpp" else limits.concurrency
                if isinstance(backend, PooledBackend):
                    # Each endpoint has its own gate inside the pool; this one only keeps the
                    # user's per-minute limits and must not cap the pool below its endpoints' sum.
                    concurrency = backend.concurrency
                gates[key] = ProviderGate(
                    ProviderLimits(concurrency, limits.requests_per_minute, limits.tokens_per_minute)
                )
            wrapped[index] = (
                backend
                if isinstance(backend, ResilientBackend)
                else ResilientBackend(backend, retry=retry, gate=gates[key], on_retry=_on_retry)
            )
        execution = _Execution(
            lib,
            run_id,
            wrapped,
            spec,
            document,
            control,
            progress,
            spec.force if force is None else force,
            prices or PriceTable(),
        )
        execution.lease = lease
        lib.on_write_wait = execution.waiting_for_library
        try:
            result = await execution.run(limits.concurrency)
        finally:
            closed: set[int] = set()
            for index, backend in wrapped.items():
                if not (backends and index in backends) and id(built[index]) not in closed:
                    closed.add(id(built[index]))
                    await backend.aclose()
        if execution.stop_error is not None:
            raise execution.stop_error
        return result
    finally:
        if lease is not None:
            lease.release()
        lib.close()


def execute_run(library_path: str | Path, run_id: int, **options: Any) -> RunProgress:
    """Blocking :func:`execute_run_async` on a new asyncio loop; call it from a worker thread."""
    return asyncio.run(execute_run_async(library_path, run_id, **options))


def resume_run(library_path: str | Path, run_id: int, **options: Any) -> RunProgress:
    """Complete exactly the requests of a run that have no result (pending, in flight when the
    process died, or failed); finished ones are not sent again. Same options as execute_run."""
    return execute_run(library_path, run_id, **options)


__all__ = ["RunControl", "execute_run", "execute_run_async", "resume_run"]
