"""Generation runs: plan, store, execute, resume. No Qt here; the GUI calls this from workers.

Typical use (what ``thoughtdesk generate`` and the runs panel do)::

    from thoughtdesk.core.generation.runs import (ModelSpec, RunSpec, SampleSelection, RunControl,
                                       plan_run, create_run, execute_run)

    with Library.open(path) as lib:
        plan = plan_run(lib, RunSpec(
            samples=SampleSelection("my collection", datasets=("med_qa",), limit=50),
            models=(ModelSpec.parse("openai:gpt-4o-mini"),),
            instructions=("qa-01",), cot_triggers=("kojima-01",),
            answer_extractions=("kojima-A-D",)))
        print(plan.summary(), plan.previews(2))   # counts, tokens, cost, exact prompts
        run_id = create_run(lib, plan)            # every request row written; nothing sent
    control = RunControl()                        # control.pause()/resume()/cancel() from any thread
    final = execute_run(path, run_id, progress=callback, control=control)   # blocks; use a worker
    ...
    resume_run(path, run_id)                      # after a crash/kill/cancel: only unfinished requests

Public API (signatures are stable; the GUI's runs panel is built on them):

* spec: :class:`ModelSpec`, :class:`SampleSelection`, :class:`FewShotSpec`, :class:`RunSpec`,
  :class:`RunLimits`, :class:`RunSpecError`.
* planning: :func:`plan_run` ``(lib, spec, *, fragments=None, prices=None) -> RunPlan``;
  :class:`RunPlan` (``total``, ``n_samples``, ``n_cot_requests``, ``n_extraction_requests``,
  ``estimated_prompt_tokens``, ``estimated_completion_tokens``, ``estimated_cost``,
  ``unpriced_models``, ``previews(limit)``, ``summary()``), :class:`PlannedRequest`,
  :class:`PromptPreview`; :func:`create_run` ``(lib, plan, *, name=None) -> int``.
* executing: :func:`execute_run` / :func:`resume_run` ``(library_path, run_id, *, backends=None,
  limits=None, progress=None, control=None, force=None, prices=None) -> RunProgress`` (blocking,
  runs its own asyncio loop: call from a worker thread); :func:`execute_run_async` (same, as a
  coroutine); :class:`RunControl` (``pause()``, ``resume()``, ``cancel()``, thread-safe);
  :class:`RunProgress` (done, failed, remaining, in_flight, cached, tokens, cost, elapsed, eta).
  ``progress`` is called on the executor's thread: the GUI must post it to the GUI thread.
* reading: :func:`list_runs`, :func:`run_info`, :func:`run_requests`, :func:`get_request`,
  :func:`run_spec`, :func:`resolve_run_id`; :class:`RunInfo`,
  :class:`RequestRow`, :class:`RunNotFound`.
* critique runs (the same engine; requests with step ``critique``): :class:`CritiqueSpec`,
  :class:`CotSelection`; :func:`plan_critique_run` ``(lib, spec, *, templates=None, prices=None)
  -> CritiquePlan`` (``total``, ``n_cots``, ``counts_by_correctness()``, estimates, ``previews()``,
  ``summary()``); :func:`create_critique_run` ``(lib, plan, *, name=None) -> int``;
  :func:`parse_summary` ``(lib, run_id) -> str`` (how its critiques parsed); executed and
  resumed by :func:`execute_run` / :func:`resume_run` like any run.
* pairwise judge runs (requests with step ``judge``; docs/judges.md): :class:`JudgeSpec`;
  :func:`plan_judge_run` ``(lib, spec, *, templates=None, prices=None) -> JudgePlan``;
  :func:`create_judge_run` ``(lib, plan, *, name=None) -> int``; :func:`verdict_summary`.
  Written on the planning path every kind of run shares (``planning.insert_run``, ``price_plan``).
* revision runs (requests with step ``revision``; docs/judges.md): :class:`RevisionSpec`;
  :func:`plan_revision_run` ``(lib, spec, *, templates=None, prices=None) -> RevisionPlan``;
  :func:`create_revision_run` ``(lib, plan, *, name=None) -> int``.
* managing: :func:`check_models_ready` ``(models)`` (raises what would stop the run at its first
  request: offline mode, a missing model file; call it before ``create_run``),
  :func:`check_models_exist` ``(models)`` (asks each remote server whether it has the model:
  a misspelled name is refused before the run is written), :func:`offline_pool_warnings`
  ``(models) -> list[str]`` (a pool offline mode cuts to its local servers), :func:`stopped_for_good`
  ``(error, run_id, done) -> str | None`` (advice for a run no resume can fix),
  :func:`rename_run` ``(lib, run, name)``, :func:`delete_run` ``(lib, run) -> (id, requests)``
  (its CoTs and answers stay), :class:`RunInUseError`.
* guided runs (requests with step ``guided``; docs/rationales.md): :class:`GuideSpec` as
  ``RunSpec.guide``; each step stored as it is chosen, read back with :func:`cot_steps`,
  :func:`guided_cot_pks` and :func:`collection_trajectories` (:class:`Trajectory`,
  :class:`TrajectoryStep`, :class:`Candidate`).
* scorers: :func:`scorer_report` ``(model) -> ScorerReport`` (can it score, why not, the
  memory of an in-process scoring copy; blocking), :func:`guide_scorer_report` ``(guide)``,
  :func:`probe_scorer` ``(model)`` (one tiny echo request to an OpenAI-compatible scorer).
* backends: :func:`build_backend` ``(model, *, api_key=None) -> Backend`` and
  :func:`api_key_for` ``(provider) -> str | None`` (keyring, then ``OPENAI_API_KEY`` /
  ``ANTHROPIC_API_KEY``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thoughtdesk.core.lazy import lazy_attribute

if TYPE_CHECKING:
    from thoughtdesk.core.generation.runs.batch import (
        BatchInfo,
        BatchProgress,
        BatchRunError,
        advance_batch_run,
        advance_batch_run_async,
        cancel_batch_run_async,
        check_batch_spec,
        is_batch_run,
        list_batches,
    )
    from thoughtdesk.core.generation.runs.critique import (
        CotRef,
        CritiquePlan,
        PlannedCritique,
        create_critique_run,
        find_template,
        parse_summary,
        plan_critique_run,
    )
    from thoughtdesk.core.generation.runs.execute import RunControl, execute_run, execute_run_async, resume_run
    from thoughtdesk.core.generation.runs.judge import (
        JudgePlan,
        create_judge_run,
        find_judge_template,
        plan_judge_run,
        verdict_summary,
    )
    from thoughtdesk.core.generation.runs.kind_specs import (
        ONLY_CHOICES,
        AnySpec,
        CotSelection,
        CritiqueSpec,
        JudgeSpec,
        RevisionSpec,
    )
    from thoughtdesk.core.generation.runs.manage import (
        RunInUseError,
        check_models_exist,
        check_models_ready,
        delete_run,
        offline_pool_warnings,
        reasoning_budget_warnings,
        rename_run,
        stopped_for_good,
    )
    from thoughtdesk.core.generation.runs.plan import PlannedRequest, PromptPreview, RunPlan, create_run, plan_run
    from thoughtdesk.core.generation.runs.providers import api_key_for, build_backend
    from thoughtdesk.core.generation.runs.read import (
        RequestRow,
        RunInfo,
        RunNotFound,
        RunProgress,
        list_runs,
        resolve_run_id,
        run_info,
        run_requests,
        run_spec,
    )
    from thoughtdesk.core.generation.runs.revision import RevisionPlan, create_revision_run, plan_revision_run
    from thoughtdesk.core.generation.runs.scorer_check import (
        ScorerReport,
        guide_scorer_report,
        probe_scorer,
        scorer_report,
    )
    from thoughtdesk.core.generation.runs.spec import (
        GUIDE_METHODS,
        SUPERVISIONS,
        FewShotSpec,
        GuideSpec,
        ModelSpec,
        RunLimits,
        RunSpec,
        RunSpecError,
        SampleSelection,
    )
    from thoughtdesk.core.generation.runs.trajectories import (
        Candidate,
        Trajectory,
        TrajectoryContext,
        TrajectoryStep,
        collection_trajectories,
        cot_steps,
        guided_cot_pks,
        is_guided,
        trajectory_context,
    )

#: Every public name -> the submodule that defines it, imported when the name is first used
#: (PEP 562). Importing any submodule runs this file first: a caller that needs one part (the
#: runs list, a price table) must not load every part, and with it httpx and the whole engine.
_LAZY: dict[str, str] = {
    "BatchInfo": "read",
    "BatchProgress": "batch",
    "BatchRunError": "batch",
    "advance_batch_run": "batch",
    "advance_batch_run_async": "batch",
    "cancel_batch_run_async": "batch",
    "check_batch_spec": "batch",
    "is_batch_run": "read",
    "list_batches": "read",
    "CotRef": "critique",
    "CritiquePlan": "critique",
    "PlannedCritique": "critique",
    "create_critique_run": "critique",
    "find_template": "critique",
    "parse_summary": "critique",
    "plan_critique_run": "critique",
    "JudgePlan": "judge",
    "create_judge_run": "judge",
    "find_judge_template": "judge",
    "plan_judge_run": "judge",
    "verdict_summary": "judge",
    "JudgeSpec": "kind_specs",
    "RevisionPlan": "revision",
    "create_revision_run": "revision",
    "plan_revision_run": "revision",
    "RunControl": "execute",
    "execute_run": "execute",
    "execute_run_async": "execute",
    "resume_run": "execute",
    "RunInUseError": "manage",
    "check_models_exist": "manage",
    "check_models_ready": "manage",
    "delete_run": "manage",
    "offline_pool_warnings": "manage",
    "reasoning_budget_warnings": "manage",
    "rename_run": "manage",
    "stopped_for_good": "manage",
    "PlannedRequest": "plan",
    "PromptPreview": "plan",
    "RunPlan": "plan",
    "create_run": "plan",
    "plan_run": "plan",
    "api_key_for": "providers",
    "build_backend": "providers",
    "RequestRow": "read",
    "RunInfo": "read",
    "RunNotFound": "read",
    "RunProgress": "read",
    "list_runs": "read",
    "resolve_run_id": "read",
    "run_info": "read",
    "run_requests": "read",
    "run_spec": "read",
    "ScorerReport": "scorer_check",
    "guide_scorer_report": "scorer_check",
    "probe_scorer": "scorer_check",
    "scorer_report": "scorer_check",
    "GUIDE_METHODS": "spec",
    "ONLY_CHOICES": "kind_specs",
    "SUPERVISIONS": "spec",
    "AnySpec": "kind_specs",
    "CotSelection": "kind_specs",
    "CritiqueSpec": "kind_specs",
    "RevisionSpec": "kind_specs",
    "FewShotSpec": "spec",
    "GuideSpec": "spec",
    "ModelSpec": "spec",
    "RunLimits": "spec",
    "RunSpec": "spec",
    "RunSpecError": "spec",
    "SampleSelection": "spec",
    "Candidate": "trajectories",
    "Trajectory": "trajectories",
    "TrajectoryContext": "trajectories",
    "TrajectoryStep": "trajectories",
    "collection_trajectories": "trajectories",
    "cot_steps": "trajectories",
    "guided_cot_pks": "trajectories",
    "is_guided": "trajectories",
    "trajectory_context": "trajectories",
}

__all__ = [
    "ScorerReport",
    "guide_scorer_report",
    "probe_scorer",
    "scorer_report",
    "BatchInfo",
    "BatchProgress",
    "BatchRunError",
    "advance_batch_run",
    "advance_batch_run_async",
    "cancel_batch_run_async",
    "check_batch_spec",
    "is_batch_run",
    "list_batches",
    "RunInUseError",
    "check_models_exist",
    "check_models_ready",
    "offline_pool_warnings",
    "reasoning_budget_warnings",
    "stopped_for_good",
    "delete_run",
    "rename_run",
    "GUIDE_METHODS",
    "ONLY_CHOICES",
    "SUPERVISIONS",
    "Candidate",
    "GuideSpec",
    "Trajectory",
    "TrajectoryContext",
    "TrajectoryStep",
    "collection_trajectories",
    "cot_steps",
    "guided_cot_pks",
    "is_guided",
    "trajectory_context",
    "AnySpec",
    "JudgePlan",
    "JudgeSpec",
    "create_judge_run",
    "find_judge_template",
    "plan_judge_run",
    "verdict_summary",
    "CotRef",
    "CotSelection",
    "CritiquePlan",
    "CritiqueSpec",
    "RevisionPlan",
    "RevisionSpec",
    "create_revision_run",
    "plan_revision_run",
    "FewShotSpec",
    "ModelSpec",
    "PlannedCritique",
    "PlannedRequest",
    "PromptPreview",
    "RequestRow",
    "RunControl",
    "RunInfo",
    "RunLimits",
    "RunNotFound",
    "RunPlan",
    "RunProgress",
    "RunSpec",
    "RunSpecError",
    "SampleSelection",
    "api_key_for",
    "build_backend",
    "create_critique_run",
    "create_run",
    "execute_run",
    "execute_run_async",
    "find_template",
    "list_runs",
    "parse_summary",
    "plan_critique_run",
    "plan_run",
    "resolve_run_id",
    "resume_run",
    "run_info",
    "run_requests",
    "run_spec",
]


def __getattr__(name: str) -> object:
    return lazy_attribute(__name__, _LAZY, globals(), name)
