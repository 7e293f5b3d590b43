"""One setup for the two mining passes, used by ``thoughtdesk rationales extract|filter`` and by
Generate > Mine rationales… alike (issue 28: the two had drifted; the dialog hard-coded its
concurrency, named no retry policy, and only it probed the scorer).

:func:`extraction_setup` and :func:`filter_setup` turn the choices (a model, a fragment, markers,
a layout, a concurrency) into a frozen setup with the same defaults for both callers;
:func:`run_extraction` and :func:`run_filter` run the pass as runs of the generation engine
(core/rationales/runs.py: planned, listed by ``thoughtdesk runs`` and the Runs tab, pausable,
resumable, each request stored once) with the one retry policy and gate: an unfinished run of
the same model and options is resumed first, then a new run takes what is left. :func:`run_filter` refuses a scorer that cannot score and asks a server scorer to score
a few tokens once first (:func:`~thoughtdesk.core.generation.runs.probe_scorer`), so a server that
ignores echo stops the pass with one line instead of failing every rationale.
"""

from __future__ import annotations

import json
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
from thoughtdesk.core.generation.runs.control import RunControl
from thoughtdesk.core.generation.runs.execute import execute_run_async
from thoughtdesk.core.generation.runs.kind_specs import RationaleRunSpec
from thoughtdesk.core.generation.runs.providers import build_backend
from thoughtdesk.core.generation.runs.read import RunProgress
from thoughtdesk.core.generation.runs.spec import RunLimits
from thoughtdesk.core.generation.scoring import DEFAULT_DECAY
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.extraction import DEFAULT, DEFAULT_PROMPT_KEY, Markers, RationaleError
from thoughtdesk.core.rationales.filtering import DEFAULT_HORIZON, DEFAULT_LAYOUT, LAYOUTS, scorer_key
from thoughtdesk.core.rationales.mining import ExtractionSettings, PassSummary, Progress
from thoughtdesk.core.rationales.runs import (
    EXTRACTION,
    FILTER,
    RationalePlan,
    create_rationale_run,
    plan_extraction_run,
    plan_filter_run,
    unfinished_runs,
)
from thoughtdesk.core.rationales.store import documents, done_keys, rationales

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
    """``backend`` behind the passes' retry policy and a gate of ``concurrency`` requests (for a
    call outside a run: ``thoughtdesk logprobs``)."""
    return ResilientBackend(backend, retry=retry, gate=ProviderGate(ProviderLimits(concurrency=concurrency)))


def extraction_spec(collection: str, setup: ExtractionSetup) -> RationaleRunSpec:
    """The run an extraction pass with ``setup`` plans (core/rationales/runs.py)."""
    settings = setup.settings
    return RationaleRunSpec(
        EXTRACTION,
        collection,
        (setup.model,),
        options={
            "source": setup.source,
            "template": settings.template,
            "fragment_key": settings.fragment_key,
            "markers": [settings.markers.begin, settings.markers.end],
            "temperature": settings.temperature,
        },
    )


def filter_spec(collection: str, setup: FilterSetup) -> RationaleRunSpec:
    """The run a filter pass with ``setup`` plans (core/rationales/runs.py)."""
    return RationaleRunSpec(
        FILTER,
        collection,
        (setup.scorer,),
        options={
            "label": setup.label,
            "layout": setup.layout,
            "markers": [setup.markers.begin, setup.markers.end],
            "decay": setup.decay,
            "horizon": setup.horizon,
        },
    )


def plan_extraction(lib: Library, collection: str, setup: ExtractionSetup) -> RationalePlan:
    """What an extraction pass would send now (nothing is sent or written): requests, the
    documents done before or left to an unfinished run, tokens and cost."""
    spec = extraction_spec(collection, setup)
    return plan_extraction_run(lib, spec, resumed=unfinished_runs(lib, spec))


def plan_filter(lib: Library, collection: str, setup: FilterSetup) -> RationalePlan:
    """What a filter pass would send now (nothing is sent or written)."""
    spec = filter_spec(collection, setup)
    return plan_filter_run(lib, spec, limit=setup.limit, resumed=unfinished_runs(lib, spec))


class _Progress:
    """The engine's progress of the pass's runs, one after the other, as (finished, total)."""

    def __init__(self, progress: Progress | None, before: int, requests: int) -> None:
        self.progress, self.before, self.total = progress, before, before + requests
        self.finished = 0  # by the runs executed before this one
        self.current = 0  # by this one
        self.base: dict[int, int] = {}  # a run's requests done when this pass took it up

    def __call__(self, state: RunProgress) -> None:
        base = self.base.setdefault(state.run_id, state.done)
        self.current = state.done - base + state.failed
        if self.progress is not None:
            self.progress(self.before + self.finished + self.current, self.total)

    def next_run(self) -> None:
        self.finished += self.current
        self.current = 0


async def _execute(
    lib: Library,
    run_ids: list[int],
    backend: Backend,
    *,
    concurrency: int,
    retry: RetryPolicy,
    progress: _Progress,
    control: RunControl | None,
) -> None:
    """Execute (or resume) ``run_ids`` in turn on the engine, with ``backend`` behind the
    pass's retry policy and a gate of ``concurrency`` requests."""
    limits = RunLimits(concurrency=concurrency, max_attempts=retry.max_attempts, initial_wait=retry.initial_wait)
    for run_id in run_ids:
        if control is not None and control.cancelled:
            return
        await execute_run_async(
            lib.path, run_id, backends={0: backend}, limits=limits, progress=progress, control=control
        )
        progress.next_run()


def _requests_left(lib: Library, run_ids: list[int]) -> int:
    if not run_ids:
        return 0
    return int(
        lib.conn.execute(
            f"SELECT count(*) FROM request WHERE status != 'done' AND run_id IN ({', '.join('?' * len(run_ids))})",
            run_ids,
        ).fetchone()[0]
    )


def _failures(lib: Library, run_ids: list[int]) -> list[tuple[dict[str, object], str]]:
    """The failed requests of ``run_ids``: (parameters, error)."""
    if not run_ids:
        return []
    rows = lib.conn.execute(
        "SELECT params, coalesce(error, '') FROM request WHERE status = 'failed' "
        f"AND run_id IN ({', '.join('?' * len(run_ids))}) ORDER BY id",
        run_ids,
    ).fetchall()
    return [(json.loads(params), error) for params, error in rows]


async def run_extraction(
    lib: Library,
    collection: str,
    setup: ExtractionSetup,
    *,
    progress: Progress | None = None,
    control: RunControl | None = None,
) -> PassSummary:
    """One extraction pass with ``setup`` (see :func:`extraction_pass`) on the model it names."""
    documents(lib, collection, setup.source)  # a bad file stops here, before a model is built
    backend = build_backend(setup.model)
    try:
        return await extraction_pass(lib, collection, setup, backend, progress=progress, control=control)
    finally:
        await backend.aclose()


async def extraction_pass(
    lib: Library,
    collection: str,
    setup: ExtractionSetup,
    backend: Backend,
    *,
    progress: Progress | None = None,
    control: RunControl | None = None,
) -> PassSummary:
    """An extraction pass as runs of the engine, calling ``backend`` (the run's retry policy
    and gate around it unless it has its own): the unfinished extraction runs of the same model
    and options are resumed, then a new run rewrites the documents left."""
    spec = extraction_spec(collection, setup)
    docs = documents(lib, collection, setup.source)
    keys = {doc.doc_key for doc in docs}
    collection_id = lib.require_collection(collection)
    before = done_keys(lib, collection_id, setup.model.label) & keys
    resumed = unfinished_runs(lib, spec)
    plan = plan_extraction_run(lib, spec, resumed=resumed)
    run_ids = resumed + ([create_rationale_run(lib, plan)] if plan.rows else [])
    await _execute(
        lib,
        run_ids,
        backend,
        concurrency=setup.concurrency,
        retry=setup.retry,
        progress=_Progress(progress, len(before), _requests_left(lib, run_ids)),
        control=control,
    )
    new = (done_keys(lib, collection_id, setup.model.label) & keys) - before
    summary = PassSummary(total=len(docs), skipped=len(before), done=len(new))
    for params, error in _failures(lib, run_ids):
        summary.failed += 1
        if len(summary.errors) < 5:
            summary.errors.append(f"{params.get('doc_key')}: {error}")
    if new:
        marks = ", ".join("?" * len(new))
        valid, records = lib.conn.execute(
            "SELECT coalesce(sum(d.valid), 0), coalesce(sum((SELECT count(*) FROM rationale r WHERE r.doc_id = d.id "
            f"AND d.valid)), 0) FROM rationale_doc d WHERE d.collection_id = ? AND d.model = ? AND d.doc_key IN ({marks})",
            (collection_id, setup.model.label, *new),
        ).fetchone()
        summary.valid, summary.records = int(valid), int(records)
    return summary


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
    control: RunControl | None = None,
) -> PassSummary:
    """One filter pass with ``setup`` (see :func:`filter_pass`): the scorer is checked and, on a
    server, probed first; ``note`` is told what a local model's scoring copy costs before it
    loads."""
    require_scorer(setup.scorer)
    # A server that ignores echo would fail every rationale: one tiny request says so first.
    await probe_scorer(setup.scorer)
    backend = build_backend(setup.scorer)
    try:
        if note is not None and isinstance(backend, LlamaCppBackend):
            note(f"{backend.label}: {(await backend.scoring_memory()).describe()}")
        return await filter_pass(lib, collection, setup, backend, progress=progress, control=control)
    finally:
        await backend.aclose()


async def filter_pass(
    lib: Library,
    collection: str,
    setup: FilterSetup,
    backend: Backend,
    *,
    progress: Progress | None = None,
    control: RunControl | None = None,
) -> PassSummary:
    """A filter pass as runs of the engine, scoring with ``backend``: unfinished filter runs of
    the same scorer and options are resumed, then a new run scores the rationales left (the
    first ``setup.limit``). ``progress`` counts requests (one a rewrite)."""
    spec = filter_spec(collection, setup)
    before = {r.id for r in rationales(lib, collection, scorer=setup.label, decay=setup.decay) if r.score}
    total = sum(1 for _ in rationales(lib, collection))
    resumed = unfinished_runs(lib, spec)
    plan = plan_filter_run(lib, spec, limit=setup.limit, resumed=resumed)
    run_ids = resumed + ([create_rationale_run(lib, plan)] if plan.rows else [])
    await _execute(
        lib,
        run_ids,
        backend,
        concurrency=setup.concurrency,
        retry=setup.retry,
        progress=_Progress(progress, 0, _requests_left(lib, run_ids)),
        control=control,
    )
    after = {r.id for r in rationales(lib, collection, scorer=setup.label, decay=setup.decay) if r.score}
    summary = PassSummary(total=total, skipped=len(before), done=len(after - before))
    for params, error in _failures(lib, run_ids):
        ids = params.get("rationale_ids")
        missed = [i for i in ids if i not in after] if isinstance(ids, list) else []
        summary.failed += len(missed)
        if len(summary.errors) < 5:
            summary.errors.append(error)  # it names the document and how many of its rationales failed
    return summary
