"""One setup for the two mining passes, used by ``thoughtdesk rationales extract|filter`` and by
Generate > Mine rationales… alike (issue 28: the two had drifted; the dialog hard-coded its
concurrency, named no retry policy, and only it probed the scorer).

:func:`extraction_setup` and :func:`filter_setup` turn the choices (a model, a fragment, markers,
a layout, a concurrency) into a frozen setup with the same defaults for both callers;
:func:`run_extraction` and :func:`run_filter` build the backend with the one retry policy and
gate, and :func:`run_filter` refuses a scorer that cannot score and asks a server scorer to score
a few tokens once first (:func:`~thoughtdesk.core.generation.runs.probe_scorer`), so a server that
ignores echo stops the pass with one line instead of failing every rationale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from thoughtdesk.core.generation.backends import (
    Backend,
    LlamaCppBackend,
    ProviderGate,
    ProviderLimits,
    ResilientBackend,
    RetryPolicy,
)
from thoughtdesk.core.generation.fragments import FragmentLibrary
from thoughtdesk.core.generation.runs import ModelSpec, probe_scorer, scorer_report
from thoughtdesk.core.generation.runs.providers import build_backend
from thoughtdesk.core.generation.scoring import DEFAULT_DECAY
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.extraction import DEFAULT, DEFAULT_PROMPT_KEY, Markers, RationaleError
from thoughtdesk.core.rationales.filtering import DEFAULT_HORIZON, DEFAULT_LAYOUT, LAYOUTS, scorer_key
from thoughtdesk.core.rationales.mining import (
    ExtractionSettings,
    PassSummary,
    Progress,
    extract_rationales,
    filter_rationales,
)

#: Requests in flight in all (a pool of servers shares them), by pass.
DEFAULT_EXTRACT_CONCURRENCY = 8
DEFAULT_FILTER_CONCURRENCY = 32
MAX_CONCURRENCY = 1024
#: The retry policy of both passes (rate limits, dropped connections): the engine's default.
MINING_RETRY = RetryPolicy()


@dataclass(frozen=True, slots=True)
class ExtractionSetup:
    """Everything an extraction pass needs besides the library and the collection."""

    model: ModelSpec
    settings: ExtractionSettings
    source: str
    concurrency: int = DEFAULT_EXTRACT_CONCURRENCY
    retry: RetryPolicy = MINING_RETRY


@dataclass(frozen=True, slots=True)
class FilterSetup:
    """Everything a filter pass needs; ``label`` is the name the scores are stored under (the
    scorer's label, with the layout when it is not the default: filtering.scorer_key)."""

    scorer: ModelSpec
    label: str
    layout: str = DEFAULT_LAYOUT
    markers: Markers = DEFAULT
    decay: float = DEFAULT_DECAY
    horizon: int = DEFAULT_HORIZON
    limit: int | None = None
    concurrency: int = DEFAULT_FILTER_CONCURRENCY
    retry: RetryPolicy = MINING_RETRY


def _concurrency(value: int) -> int:
    if not 1 <= value <= MAX_CONCURRENCY:
        raise RationaleError(f"concurrency {value}: give a whole number from 1 to {MAX_CONCURRENCY}")
    return value


def extraction_setup(
    model: ModelSpec,
    fragments: FragmentLibrary,
    *,
    source: str = "reference",
    prompt_key: str = DEFAULT_PROMPT_KEY,
    markers: Markers = DEFAULT,
    temperature: float = 0.0,
    concurrency: int = DEFAULT_EXTRACT_CONCURRENCY,
) -> ExtractionSetup:
    """The setup of an extraction pass: ``model`` rewrites with the ``rationale_extraction``
    fragment ``prompt_key`` of ``fragments``."""
    template = fragments.text("rationale_extraction", prompt_key)
    if template is None:
        raise RationaleError(
            f"no rationale_extraction fragment {prompt_key!r}; see Generate > Fragments… or "
            "`thoughtdesk fragments list --kind rationale_extraction`"
        )
    settings = ExtractionSettings(
        template=template,
        model_name=model.model_name,
        model_label=model.label,
        fragment_key=prompt_key,
        markers=markers,
        chat=model.chat,
        temperature=temperature,
        timeout=model.timeout,
    )
    return ExtractionSetup(model, settings, source, _concurrency(concurrency))


def filter_setup(
    scorer: ModelSpec,
    *,
    layout: str = DEFAULT_LAYOUT,
    markers: Markers = DEFAULT,
    decay: float = DEFAULT_DECAY,
    horizon: int = DEFAULT_HORIZON,
    limit: int | None = None,
    concurrency: int = DEFAULT_FILTER_CONCURRENCY,
) -> FilterSetup:
    """The setup of a filter pass (cheap: the scorer is checked when the pass starts)."""
    if layout not in LAYOUTS:
        raise RationaleError(f"layout {layout!r}: choose one of {', '.join(LAYOUTS)}")
    return FilterSetup(
        scorer=scorer,
        label=scorer_key(scorer.label, layout),
        layout=layout,
        markers=markers,
        decay=decay,
        horizon=horizon,
        limit=limit,
        concurrency=_concurrency(concurrency),
        retry=MINING_RETRY,
    )


def resilient(backend: Backend, concurrency: int, retry: RetryPolicy = MINING_RETRY) -> ResilientBackend:
    """``backend`` behind the passes' retry policy and a gate of ``concurrency`` requests."""
    return ResilientBackend(backend, retry=retry, gate=ProviderGate(ProviderLimits(concurrency=concurrency)))


async def run_extraction(
    lib: Library, collection: str, setup: ExtractionSetup, *, progress: Progress | None = None
) -> PassSummary:
    """One extraction pass with ``setup`` (resumable: documents done are skipped)."""
    backend = build_backend(setup.model)
    try:
        return await extract_rationales(
            lib,
            collection,
            setup.source,
            resilient(backend, setup.concurrency, setup.retry),
            setup.settings,
            progress=progress,
        )
    finally:
        await backend.aclose()


def require_scorer(scorer: ModelSpec) -> None:
    """Refuse a scorer that cannot score (every rationale would fail the same way). Blocking for
    a local model: its GGUF's vocabulary is read, about a second."""
    report = scorer_report(scorer)
    if not report.can_score:
        raise RationaleError(
            f"{report.detail}. Filtering cannot start with this scorer: choose a local .gguf model "
            "(llamacpp:PATH) or an OpenAI-compatible server whose /v1/completions echoes log-probs "
            "(docs/rationales.md)"
        )


async def run_filter(
    lib: Library,
    collection: str,
    setup: FilterSetup,
    *,
    progress: Progress | None = None,
    note: Callable[[str], None] | None = None,
) -> PassSummary:
    """One filter pass with ``setup``: the scorer is checked and, on a server, probed first;
    ``note`` is told what a local model's scoring copy costs before it loads."""
    require_scorer(setup.scorer)
    # A server that ignores echo would fail every rationale: one tiny request says so first.
    await probe_scorer(setup.scorer)
    backend = build_backend(setup.scorer)
    try:
        if note is not None and isinstance(backend, LlamaCppBackend):
            note(f"{backend.label}: {(await backend.scoring_memory()).describe()}")
        return await filter_rationales(
            lib,
            collection,
            resilient(backend, setup.concurrency, setup.retry),
            setup.label,
            decay=setup.decay,
            horizon=setup.horizon,
            markers=setup.markers,
            limit=setup.limit,
            progress=progress,
            layout=setup.layout,
        )
    finally:
        await backend.aclose()
