"""Request steps the engine executes for a feature above it: the feature registers a handler per
step, the engine claims, counts, stores and retries its requests like its own.

Rationale mining (``core/rationales/runs.py``) sits above the engine in the layers (it uses the
backends and the run specs), so the engine cannot import it; it registers its two steps here
instead (``rationale_extraction``, ``rationale_filter``). The entry points that execute stored
runs (``thoughtdesk resume``, the Runs tab's worker) import it, so a run of those kinds resumes
from either; a run whose step has no handler fails with one line naming the step.

A handler gets the request after the engine has claimed it (``sent``, with a fresh claim token)
and returns a :class:`StepOutcome`: the write that stores its result with the request row
(``done``, or ``failed`` for what could not be had) and what it cost. The engine commits that
write with the claim checked first (``lease.Claim``: a request taken over by another process is
never stored twice), counts it and goes on. A :class:`BackendError` the handler raises fails the
request (and stops the run when no retry can fix it), as a direct call's does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from thoughtdesk.core.generation.backends import Backend, BackendError, Request, Response
from thoughtdesk.core.generation.runs.commit_base import CallRecord
from thoughtdesk.core.generation.runs.kind_specs import AnySpec
from thoughtdesk.core.generation.runs.lease import Claim
from thoughtdesk.core.generation.runs.read import RequestRow
from thoughtdesk.core.generation.runs.spec import ModelSpec

if TYPE_CHECKING:
    from thoughtdesk.core.library.store import Library


class StepContext(Protocol):
    """What a handler may use of the execution it runs in."""

    lib: Library
    run_id: int
    spec: AnySpec

    def backend_of(self, request: RequestRow) -> Backend:
        """The request's model's backend: the run's retry policy and provider gate around it."""
        ...

    def model_of(self, request: RequestRow) -> ModelSpec: ...

    async def complete(self, request: RequestRow, call: Request) -> Response:
        """``call`` sent on the request's backend (a local model's call stops at a pause)."""
        ...

    def record(self, request: RequestRow, call: Request, response: Response, sent_at: str) -> CallRecord:
        """The response's tokens and cost at the run's prices, keys redacted (commit_base.call_record)."""
        ...


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What a handler got: ``write(claim)`` stores it and sets the request row ``done`` (or
    ``failed``, with ``error`` set) in the engine's transaction; tokens and USD cost count
    toward the run's progress."""

    write: Callable[[Claim], None]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    error: BackendError | None = None


StepHandler = Callable[[StepContext, RequestRow], Awaitable[StepOutcome]]

_HANDLERS: dict[str, StepHandler] = {}


def register_step(step: str, handler: StepHandler) -> None:
    """Let the engine execute requests of ``step`` with ``handler`` (idempotent)."""
    _HANDLERS[step] = handler


def step_handler(step: str) -> StepHandler | None:
    """The handler registered for ``step``, if any."""
    return _HANDLERS.get(step)
