"""Automatic step labels the Math-Shepherd way (Wang et al., arXiv 2312.08935; docs/steps.md):
from each step prefix of a CoT a completer model samples K continuations, and the step is
labelled by whether any of them reaches the gold answer (hard: +1, else -1) and by the share
that do (soft: ``extra["soft"]``, with ``extra["correct"]`` of ``extra["k"]``).

The labels are the completer's own step labels of the CoT (kind ``model``, author
``"<model> rollouts"``), beside the human ones, and compared with them by ``thoughtdesk
agreement COLLECTION --steps --models``. The rollouts are a run of the run engine
(:mod:`thoughtdesk.core.generation.runs.rollouts` plans it; one ``rollout`` request per step,
each label committed with its request: planned, priced, pausable, resumable, exactly once).
This module holds what planning and committing share: the author, the prompt, the request and
the label of one step. Correctness is ThoughtDesk's own answer extraction against the sample's
gold answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from thoughtdesk.core.generation.backends import ChatMessage, Request
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.steps.store import StepLabel

#: How the labels were made (the review's ``extra["method"]``).
METHOD = "math-shepherd"


def author_for(model: ModelSpec) -> str:
    """The author of a completer's rollout labels."""
    return f"{model.model_name} rollouts"


def rollout_prompt(question: str, prefix: Sequence[str]) -> str:
    """The completer's prompt: the question and the solution up to and including a step."""
    so_far = "\n".join(prefix)
    return (
        f"Question:\n{question}\n\nSolution so far:\n{so_far}\n\n"
        'Continue this solution from where it stops, step by step, and end with "The answer is X."'
    )


def rollout_request(model: ModelSpec, prompt: str, k: int, seed: int | None) -> Request:
    """One step's request: ``k`` continuations of ``prompt`` in one call (``n`` = k)."""
    common = dict(
        model=model.model_name,
        temperature=model.temperature,
        max_tokens=model.max_tokens,
        n=k,
        seed=seed,
        timeout=model.timeout,
    )
    if model.chat:
        return Request(messages=(ChatMessage("user", prompt),), **common)  # type: ignore[arg-type]  # the fields above
    return Request(prompt=prompt, **common)  # type: ignore[arg-type]  # the fields above


def rollout_label(step: int, step_id: str, outcomes: Sequence[bool]) -> StepLabel:
    """A step's label from whether each of its rollouts reached the gold answer: +1 when any
    did, else -1; the share that did in ``extra``."""
    correct = sum(1 for ok in outcomes if ok)
    return StepLabel(
        step,
        step_id,
        rating=1 if correct else -1,
        extra={"soft": correct / len(outcomes) if outcomes else 0.0, "correct": correct, "k": len(outcomes)},
    )
