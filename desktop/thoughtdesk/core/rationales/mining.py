"""What a mining pass reports, and the filter's table: the pass summary, the extraction
settings, Table 1's counts and the histogram of loss reductions.

The passes themselves are runs of the generation engine (core/rationales/runs.py, started by
core/rationales/setup.py): this module has no loop of its own any more (issue 28, point 11).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from thoughtdesk.core.generation.backends import BackendError
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.extraction import DEFAULT, Markers
from thoughtdesk.core.rationales.filtering import kept_count
from thoughtdesk.core.rationales.store import (
    rationales,
)

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
