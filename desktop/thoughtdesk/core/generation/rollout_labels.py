"""Automatic step labels the Math-Shepherd way (Wang et al., arXiv 2312.08935; docs/steps.md):
from each step prefix of a CoT a completer model samples K continuations, and the step is
labelled by whether any of them reaches the gold answer (hard: +1, else -1) and by the share
that do (soft: ``extra["soft"]``, with ``extra["correct"]`` of ``extra["k"]``).

The labels are the completer's own step labels of the CoT (kind ``model``, author
``"<model> rollouts"``), beside the human ones, and compared with them by ``thoughtdesk
agreement COLLECTION --steps --models``. Each CoT's labels are written in one transaction as
soon as its rollouts are back, and a CoT already labelled by that author is skipped, so a
killed labelling resumes where it stopped (at most the CoT in flight is asked again).
Correctness is ThoughtDesk's own answer extraction against the sample's gold answers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from thoughtdesk.core.evaluation.answers import CORRECT, extract_answer
from thoughtdesk.core.generation.backends import Backend, ChatMessage, Request
from thoughtdesk.core.generation.runs.spec import ModelSpec
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso
from thoughtdesk.core.steps.split import Step, cot_steps
from thoughtdesk.core.steps.store import StepLabel, StepReview, StepTarget, put_review, review_of


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


@dataclass
class RolloutReport:
    """What a labelling did: CoTs labelled, skipped (labelled before), steps, model calls."""

    labelled: int = 0
    skipped: int = 0
    steps: int = 0
    calls: int = 0


@dataclass(frozen=True)
class _Cot:
    sample_pk: int
    cot_pk: int
    question: str
    answer_type: str
    choices: list[object]
    gold: list[object]
    steps: list[Step]


def _cots(library: Library, collection: str, limit: int | None) -> list[_Cot]:
    cid = library.require_collection(collection)
    rows = library.conn.execute(
        "SELECT s.id, c.id, s.question, s.type, s.choices, s.answer, c.cot, c.extra FROM generated_cot c "
        "JOIN sample s ON s.id = c.sample_pk WHERE s.collection_id = ? ORDER BY s.position, c.position",
        (cid,),
    ).fetchall()
    out = []
    for sample_pk, cot_pk, question, kind, choices, gold, text, extra in rows[: limit or None]:
        fields = json.loads(extra) if extra else None
        steps = cot_steps(text, fields if isinstance(fields, dict) else None)
        out.append(
            _Cot(
                sample_pk,
                cot_pk,
                question or "",
                kind or "text",
                json.loads(choices) if choices else [],
                json.loads(gold) if gold else [],
                steps,
            )
        )
    return out


def _request(model: ModelSpec, prompt: str, k: int, seed: int | None) -> Request:
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


async def _label(backend: Backend, model: ModelSpec, cot: _Cot, k: int, seed: int | None) -> tuple[StepLabel, ...]:
    texts = [step.text for step in cot.steps]
    calls = [_request(model, rollout_prompt(cot.question, texts[: i + 1]), k, seed) for i in range(len(texts))]
    responses = await asyncio.gather(*(backend.complete(call) for call in calls))
    labels = []
    for step, response in zip(cot.steps, responses, strict=True):
        samples = list(response.texts)[:k]
        correct = sum(
            1
            for text in samples
            if extract_answer(
                cot.answer_type, extraction_output=None, cot=text, choices=cot.choices, gold=cot.gold
            ).outcome
            == CORRECT
        )
        labels.append(
            StepLabel(
                step.index,
                step.id,
                rating=1 if correct else -1,
                extra={"soft": correct / len(samples) if samples else 0.0, "correct": correct, "k": len(samples)},
            )
        )
    return tuple(labels)


def label_collection(
    library: Library,
    collection: str,
    model: ModelSpec,
    backend: Backend,
    *,
    k: int = 4,
    limit: int | None = None,
    seed: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RolloutReport:
    """Label every generated CoT of ``collection`` (the first ``limit``) with ``model``'s
    rollouts, K per step (see the module notes); resumable."""
    if k < 1:
        raise ValueError("k must be at least 1")
    author = author_for(model)
    report = RolloutReport()
    cots = _cots(library, collection, limit)

    async def run() -> None:
        try:
            for done, cot in enumerate(cots, start=1):
                target = StepTarget(cot.sample_pk, cot.cot_pk)
                if not cot.steps or review_of(library.conn, target, author) is not None:
                    report.skipped += 1
                else:
                    labels = await _label(backend, model, cot, k, seed)
                    review = StepReview(
                        author, labels, kind="model", extra={"method": "math-shepherd", "k": k}, date=now_iso()
                    )
                    with library.transaction() as conn:
                        put_review(conn, target, author, review)
                    report.labelled += 1
                    report.steps += len(labels)
                    report.calls += len(labels)
                if progress is not None:
                    progress(done, len(cots))
        finally:
            await backend.aclose()

    asyncio.run(run())
    return report
