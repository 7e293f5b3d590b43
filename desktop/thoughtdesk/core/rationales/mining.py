"""Mining a collection: every document rewritten with rationales, every rationale scored.

Both passes are resumable and concurrent: documents (or rationales) already done are skipped,
the rest are sent through a :class:`ResilientBackend` (its :class:`ProviderGate` sets how many
requests are in flight, its retry policy handles rate limits and dropped connections), and each
result is committed as it returns. A failed document or rationale is counted and named in the
summary and tried again by the next pass; Ctrl+C or a cancelled task keeps what finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from thoughtdesk.core.generation.backends import Backend, BackendError, ChatMessage, Request, ResilientBackend
from thoughtdesk.core.generation.backends.pricing import estimate_tokens
from thoughtdesk.core.generation.scoring import DEFAULT_DECAY
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.extraction import DEFAULT, Markers, RationaleRecord, read_rewrite, render_prompt
from thoughtdesk.core.rationales.filtering import DEFAULT_HORIZON, DEFAULT_LAYOUT, kept_count, score_document
from thoughtdesk.core.rationales.store import (
    Document,
    StoredRationale,
    add_rewrite,
    add_score,
    documents,
    done_keys,
    rationales,
)
from thoughtdesk.core.settings.logs import redact_secrets

T = TypeVar("T")

#: Called with (finished, total) as results come in.
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class PassSummary:
    """What a pass did: items done now, skipped (done before), failed (with the first reasons)."""

    total: int = 0
    done: int = 0
    skipped: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    valid: int = 0  # extraction: valid rewrites among those done now
    records: int = 0  # extraction: rationale records stored now

    def fail(self, what: str, error: BackendError) -> None:
        self.failed += 1
        if len(self.errors) < 5:
            self.errors.append(f"{what}: {error}")


@dataclass(frozen=True, slots=True)
class ExtractionSettings:
    """How to ask for rewrites: the prompt template (and its fragment key), the markers, the
    model name sent, chat or raw prompt, temperature, timeout."""

    template: str
    model_name: str
    model_label: str
    fragment_key: str | None = None
    markers: Markers = DEFAULT
    chat: bool = False
    temperature: float = 0.0
    timeout: float = 300.0


def in_flight(backend: Backend) -> int:
    """How many documents a pass works on at once: twice the gate's concurrency for a
    :class:`ResilientBackend` (so requests wait while a finished document is stored), else 64."""
    return 2 * max(1, backend.gate.limits.concurrency) if isinstance(backend, ResilientBackend) else 64


async def run_bounded(items: Sequence[T], one: Callable[[T], Awaitable[None]], limit: int) -> None:
    """``one(item)`` for every item, ``limit`` at a time, in order.

    Not all at once: a request waiting for the provider gate is woken whenever another one
    finishes (its condition is notified for all), so thousands of waiting requests cost more
    CPU than the requests themselves; a few more documents than the gate runs keep it full.
    """
    queue = iter(items)

    async def worker() -> None:
        for item in queue:
            await one(item)

    await asyncio.gather(*(worker() for _ in range(min(len(items), limit))))


def extraction_request(settings: ExtractionSettings, document: Document) -> tuple[Request, str]:
    """The request for one document and its prompt text (room for the text twice over plus the rationales)."""
    prompt = render_prompt(settings.template, document.text, settings.markers)
    max_tokens = 2 * estimate_tokens(document.text) + 256
    if settings.chat:
        request = Request(
            model=settings.model_name,
            messages=(ChatMessage("user", prompt),),
            temperature=settings.temperature,
            max_tokens=max_tokens,
            timeout=settings.timeout,
        )
    else:
        request = Request(
            model=settings.model_name,
            prompt=prompt,
            temperature=settings.temperature,
            max_tokens=max_tokens,
            timeout=settings.timeout,
        )
    return request, prompt


async def extract_rationales(
    lib: Library,
    collection: str,
    source: str,
    backend: Backend,
    settings: ExtractionSettings,
    *,
    progress: Progress | None = None,
) -> PassSummary:
    """Rewrite every document of ``source`` not yet rewritten by this model; store each rewrite
    with its validity and records as it returns."""
    collection_id = lib.require_collection(collection)
    docs = documents(lib, collection, source)
    done = done_keys(lib, collection_id, settings.model_label)
    summary = PassSummary(total=len(docs))
    todo = [doc for doc in docs if doc.doc_key not in done]
    summary.skipped = len(docs) - len(todo)

    async def one(document: Document) -> None:
        request, prompt = extraction_request(settings, document)
        try:
            response = await backend.complete(request)
        except BackendError as error:
            summary.fail(document.doc_key, error)
        else:
            output = redact_secrets(response.texts[0])  # a key the server echoed is never stored
            rewrite = read_rewrite(document.text, output, settings.markers)
            add_rewrite(
                lib,
                collection_id,
                document,
                model=settings.model_label,
                markers=settings.markers,
                fragment_key=settings.fragment_key,
                prompt_text=prompt,
                output=output,
                rewrite=rewrite,
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
            )
            summary.done += 1
            summary.valid += int(rewrite.valid)
            summary.records += len(rewrite.rationales) if rewrite.valid else 0
        if progress is not None:
            progress(summary.skipped + summary.done + summary.failed, summary.total)

    await run_bounded(todo, one, in_flight(backend))
    return summary


async def filter_rationales(
    lib: Library,
    collection: str,
    scorer: Backend,
    scorer_label: str,
    *,
    decay: float = DEFAULT_DECAY,
    horizon: int = DEFAULT_HORIZON,
    markers: Markers = DEFAULT,
    limit: int | None = None,
    progress: Progress | None = None,
    layout: str = DEFAULT_LAYOUT,
) -> PassSummary:
    """Score every rationale of ``collection`` that ``scorer_label`` has not scored at ``decay``;
    store each loss reduction as it returns. ``limit`` scores at most that many now. ``layout``
    is the prompt layout (filtering.LAYOUTS); ``scorer_label`` should name it
    (filtering.scorer_key), since scores of the two layouts are not comparable."""
    pending = [r for r in rationales(lib, collection, scorer=scorer_label, decay=decay)]
    summary = PassSummary(total=len(pending))
    todo = [r for r in pending if r.score is None]
    summary.skipped = len(pending) - len(todo)
    if limit is not None:
        todo = todo[:limit]

    # The rationales of one document are scored together: their "without" scorings share a call
    # where the scorer allows (filtering.score_document).
    by_document: dict[int, list[StoredRationale]] = {}
    for record in todo:
        by_document.setdefault(record.doc_id, []).append(record)

    async def one(group: list[StoredRationale]) -> None:
        results = await score_document(
            scorer,
            [RationaleRecord(r.preceding, r.rationale, r.following) for r in group],
            markers=markers,
            decay=decay,
            horizon=horizon,
            layout=layout,
        )
        for record, result in zip(group, results, strict=True):
            if isinstance(result, BackendError):
                summary.fail(f"rationale {record.id} ({record.doc_key})", result)
            else:
                add_score(lib, record.id, scorer=scorer_label, decay=decay, result=result)
                summary.done += 1
            if progress is not None:
                progress(summary.skipped + summary.done + summary.failed, summary.total)

    # As many documents at once as the gate lets requests run keeps it full (2+ requests each).
    await run_bounded(list(by_document.values()), one, in_flight(scorer))
    return summary


@dataclass(frozen=True, slots=True)
class FilterTable:
    """Paper Table 1's columns for one collection: documents, rationales, kept at tau."""

    documents: int
    valid_documents: int
    rationales: int
    scored: int
    kept: int
    tau: float
    reductions: tuple[float, ...]

    def kept_at(self, tau: float) -> int:
        """How many of the scored rationales are kept at another ``tau`` (no model is called)."""
        return kept_count(self.reductions, tau)

    @property
    def dropped(self) -> int:
        return self.scored - self.kept

    @property
    def kept_share(self) -> float:
        return self.kept / self.scored if self.scored else 0.0


def filter_table(lib: Library, collection: str, scorer_label: str, *, tau: float, decay: float) -> FilterTable:
    """The counts of a collection's rationales as scored by ``scorer_label`` and kept at ``tau``."""
    from thoughtdesk.core.rationales.store import extraction_counts

    counts = extraction_counts(lib, collection)
    reductions = tuple(
        r.score.reduction for r in rationales(lib, collection, scorer=scorer_label, decay=decay) if r.score
    )
    return FilterTable(
        documents=counts.documents,
        valid_documents=counts.valid,
        rationales=counts.rationales,
        scored=len(reductions),
        kept=kept_count(reductions, tau),
        tau=tau,
        reductions=reductions,
    )


def histogram(values: Sequence[float], bins: int = 20) -> list[tuple[float, float, int]]:
    """(low, high, count) bins over the values' range (one bin when all are equal)."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high == low:
        return [(low, high, len(values))]
    width = (high - low) / bins
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int((value - low) / width))] += 1
    return [(low + i * width, low + (i + 1) * width, count) for i, count in enumerate(counts)]
