"""What the batch-run modules share: the providers with a batch API, the client protocol
(:class:`BatchApi`, met by :mod:`thoughtdesk.core.generation.backends.batches`), where an advance
left a run (:class:`BatchProgress`), the check that refuses a run a batch API cannot take, and
the 24 h deadline. See :mod:`.batch`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.backends.batches import (
    BATCH_WINDOW_HOURS,
    BatchFound,
    BatchLookup,
    BatchResult,
    BatchState,
    ResultLimits,
)
from thoughtdesk.core.generation.runs.spec import RunSpec

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
    async def find(self, lookup: BatchLookup) -> BatchFound | None: ...
    async def state(self, remote_id: str) -> BatchState: ...
    def results(self, state: BatchState, limits: ResultLimits) -> AsyncIterator[BatchResult]: ...
    async def cancel(self, remote_id: str) -> None: ...
    async def aclose(self) -> None: ...


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
    unsent: int = 0  # requests waiting to be submitted (a cancelled run's: until resubmitted)


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


__all__ = [
    "BATCH_PROVIDERS",
    "MAX_BATCH_ATTEMPTS",
    "BatchApi",
    "BatchProgress",
    "BatchRunError",
    "batch_deadline",
    "check_batch_spec",
]
