"""Step judges measured the way ProcessBench measures them (QwenLM/ProcessBench, arXiv 2412.06559).

A step judge reads a problem and a solution split into paragraphs, tagged and indexed from 0
(:func:`tagged_response`), and names the earliest wrong paragraph, or -1, in ``\\boxed{}``
(:data:`PROCESSBENCH_MAIN`, ProcessBench's own critique template). :func:`parse_first_error`
takes the last ``\\boxed{...}`` of the answer and reads an integer from it; anything else
(no box, not an integer, an index outside -1..len-1) is unparseable and said so, never turned
into a guess. The verdict is stored as the judge model's step labels (kind ``model``, author =
the model's name): the first error, or, for an unparseable answer, why (:func:`judged_review`).

:func:`process_scores` compares each judge's verdicts with the reference: the imported
ProcessBench label where there is one, else the latest human first error. Per judge:
``error_accuracy`` (exact index on solutions with an error), ``correct_accuracy`` (-1 on
solutions without), their harmonic mean ``f1``; an unparseable verdict counts as wrong, as in
ProcessBench's evaluation, and is counted apart (``unparseable``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from thoughtdesk.core.library.timestamps import now_iso

if TYPE_CHECKING:  # the critique prompts import this module; the command line's start stays light
    from thoughtdesk.core.library.store import Library
    from thoughtdesk.core.steps.store import StepReview

#: The critique template key of the ProcessBench step judge.
PROCESSBENCH_KEY = "processbench-critique"
#: The reference labels' author of an imported ProcessBench file (core/steps/processbench.py).
REFERENCE_AUTHOR = "ProcessBench"
#: ProcessBench's critique template (code/templates/critique_template.txt), with ThoughtDesk's
#: placeholders: the problem and the tagged paragraphs.
PROCESSBENCH_MAIN = (
    "The following is a math problem and a solution (split into paragraphs, enclosed with tags and indexed from 0):\n\n"
    "[Math Problem]\n\n[[QUESTION]]\n\n[Solution]\n\n[[STEPS]]\n\n"
    "Your task is to review and critique the solution paragraph by paragraph. Once you identify an error in a "
    "paragraph, return the index of the paragraph where the earliest error occurs. Otherwise, return the index of "
    '-1 (which typically denotes "not found").\n\n'
    "Please put your final answer (i.e., the index) in \\boxed{}."
)
_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


def processbench_prompt(problem: str, steps: Sequence[str]) -> str:
    """ProcessBench's critique prompt for ``problem`` and ``steps`` (one pass: a problem that
    itself holds ``[[STEPS]]`` is not expanded)."""
    values = {"[[QUESTION]]": problem, "[[STEPS]]": tagged_response(steps)}
    return re.sub(r"\[\[(?:QUESTION|STEPS)\]\]", lambda m: values[m.group()], PROCESSBENCH_MAIN)


def candidate_score(verdict: JudgedFirstError, candidate: int) -> float | None:
    """A process guide's score of the candidate at step ``candidate`` from a judge's verdict on
    the steps so far plus the candidate: 1.0 (no wrong step), 0.0 (the candidate is the first
    wrong step), 0.5 (an earlier step is: nothing said of the candidate), None (unparseable)."""
    if verdict.index is None:
        return None
    if verdict.index == -1:
        return 1.0
    return 0.0 if verdict.index == candidate else 0.5


def tagged_response(steps: Sequence[str]) -> str:
    """ProcessBench's ``tagged_response``: each step as ``<paragraph_i>\\n{step}\\n</paragraph_i>``,
    joined by blank lines."""
    return "\n\n".join(f"<paragraph_{i}>\n{step}\n</paragraph_{i}>" for i, step in enumerate(steps))


@dataclass(frozen=True, slots=True)
class JudgedFirstError:
    """A step judge's answer read: ``index`` (-1: no wrong step), or None with ``reason``."""

    index: int | None
    reason: str = ""


def parse_first_error(text: str, n_steps: int) -> JudgedFirstError:
    """The index in the last ``\\boxed{...}`` of ``text``; unparseable (index None) when there
    is none, it holds no integer, or the integer is outside -1..``n_steps``-1."""
    found = _BOXED.findall(text or "")
    if not found:
        return JudgedFirstError(None, "no \\boxed{} answer")
    inside = found[-1].strip()
    try:
        index = int(inside)
    except ValueError:
        return JudgedFirstError(None, f"\\boxed{{{inside[:40]}}} is not an index")
    if not -1 <= index < n_steps:
        return JudgedFirstError(None, f"{index} is outside -1..{n_steps - 1}")
    return JudgedFirstError(index)


def judged_review(model: str, verdict: JudgedFirstError, critique_pk: int | None = None) -> StepReview:
    """The judge's verdict as its step labels (kind model): the first error, or why not."""
    from thoughtdesk.core.steps.store import StepReview

    extra: dict[str, object] = {"critique_pk": critique_pk} if critique_pk is not None else {}
    if verdict.index is None:
        extra["unparseable"] = verdict.reason
    return StepReview(model, first_error=verdict.index, kind="model", extra=extra or None, date=now_iso())


@dataclass
class ProcessScore:
    """One judge against the reference first errors (see the module notes)."""

    n: int = 0
    n_error: int = 0
    n_correct: int = 0
    unparseable: int = 0
    error_accuracy: float | None = None
    correct_accuracy: float | None = None
    f1: float | None = None
    #: [true first error, judged first error (None: unparseable), count], by true then judged.
    confusion: list[list[int | None]] = field(default_factory=list)


def score(pairs: Sequence[tuple[int, int | None]]) -> ProcessScore:
    """ProcessBench's metric over (true, judged) first errors; judged None = unparseable."""
    out = ProcessScore(n=len(pairs))
    errors = [(t, j) for t, j in pairs if t != -1]
    correct = [(t, j) for t, j in pairs if t == -1]
    out.n_error, out.n_correct = len(errors), len(correct)
    out.unparseable = sum(1 for _, j in pairs if j is None)
    if errors:
        out.error_accuracy = sum(1 for t, j in errors if j == t) / len(errors)
    if correct:
        out.correct_accuracy = sum(1 for _, j in correct if j == -1) / len(correct)
    if out.error_accuracy is not None and out.correct_accuracy is not None:
        total = out.error_accuracy + out.correct_accuracy
        out.f1 = 2 * out.error_accuracy * out.correct_accuracy / total if total else 0.0
    counts = Counter(pairs)
    out.confusion = [
        [t, j, c]
        for (t, j), c in sorted(counts.items(), key=lambda kv: (kv[0][0], -2 if kv[0][1] is None else kv[0][1]))
    ]
    return out


def process_scores(library: Library, collection_id: int) -> dict[str, ProcessScore]:
    """Each judge model's :class:`ProcessScore` on the CoTs of a collection (one query)."""
    rows = library.conn.execute(
        "SELECT l.cot_pk, l.author, l.kind, l.first_error, l.extra, l.date FROM step_label l "
        "JOIN generated_cot c ON c.id = l.cot_pk JOIN sample s ON s.id = c.sample_pk "
        "WHERE s.collection_id = ? AND l.trace = 'cot' ORDER BY l.cot_pk",
        (collection_id,),
    ).fetchall()
    truth: dict[int, tuple[int, str, int]] = {}  # cot -> (priority, date, first error)
    judged: dict[str, dict[int, int | None]] = {}
    for cot_pk, author, kind, first, extra, date in rows:
        if kind == "model":
            if first is not None or (extra and "unparseable" in extra):
                judged.setdefault(author, {})[cot_pk] = first
            continue
        if first is None:
            continue
        rank = (1 if author == REFERENCE_AUTHOR else 0, date or "")
        held = truth.get(cot_pk)
        if held is None or rank > (held[0], held[1]):
            truth[cot_pk] = (rank[0], rank[1], first)
    out: dict[str, ProcessScore] = {}
    for model, verdicts in judged.items():
        pairs = [(truth[cot][2], first) for cot, first in verdicts.items() if cot in truth]
        if pairs:
            out[model] = score(pairs)
    return out
