"""PRM800K records (openai/prm800k ``phase1_*.jsonl``, ``phase2_*.jsonl``): read, checked, turned
into ThoughtDesk records and back, equal as JSON to what was read.

A line is one labelled solution: ``labeler``, ``timestamp``, ``generation``, the
``is_*_question`` flags, ``question`` (``problem``, ``ground_truth_solution``,
``ground_truth_answer``, in phase 2 ``pre_generated_*``) and ``label`` (``steps[]``,
``total_time`` in ms, ``finish_reason``). Each step has ``completions[]`` (``text``, ``rating``
-1/0/+1, ``flagged``), ``human_completion`` and ``chosen_completion``.

In ThoughtDesk the solutions of one problem (same problem, reference solution and answer) are
the generated CoTs of one sample. A CoT's steps are the solution's trajectory (the chosen
completion of each step, the human completion where the labeler wrote one, else the first
completion: the step the labelling stopped at). Each step gets a step label by the labeler
(rating and flag of that completion, the human completion as the corrected text); a step
whose shape is not the plain one (one completion, chosen, no human completion) keeps its whole
object in the label's ``extra`` (the alternative completions and their ratings). The total
time and finish reason are the labeler's step review, whose first error is the first step
rated -1. The rest of the line stays in the CoT's ``extra`` under :data:`META`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import GeneratedCot, Sample
from thoughtdesk.core.steps.split import STEPS_KEY, step_id
from thoughtdesk.core.steps.store import ImportedReview, StepReview, encode_entries

META = "prm800k"
DATASET = "prm800k"
#: The author of labels whose line names no labeler.
ANONYMOUS = "prm800k"
_QUESTION_MOVED = ("problem", "ground_truth_solution", "ground_truth_answer")
_LABEL_MOVED = ("steps", "total_time", "finish_reason")
_PLAIN_STEP_KEYS = ["completions", "human_completion", "chosen_completion"]
_PLAIN_COMPLETION_KEYS = ["text", "rating", "flagged"]


def is_record(value: Any) -> bool:
    """Whether ``value`` has the shape of a PRM800K line (a question and a label object)."""
    return isinstance(value, dict) and isinstance(value.get("question"), dict) and isinstance(value.get("label"), dict)


def _type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def record_keys(value: Any) -> int:
    """The keys of a decoded PRM800K line where PRM800K has objects (the line, its question and
    label, each step and its completions): at most all its keys. :func:`decode_line` compares
    it with the key places on the line, so a line of the usual shape needs no other
    duplicate-key check (objects elsewhere, human completions as objects, are not counted: such
    a line takes the general check). Never raises, whatever ``value`` is."""
    if value.__class__ is not dict:
        return 0
    n = len(value)
    question = value.get("question")
    if question.__class__ is dict:
        n += len(question)
    label = value.get("label")
    if label.__class__ is not dict:
        return n
    n += len(label)
    steps = label.get("steps")
    if steps.__class__ is list:
        for step in steps:
            if step.__class__ is dict:
                n += len(step)
                completions = step.get("completions")
                if completions.__class__ is list:
                    for completion in completions:  # (a loop: no generator per step)
                        if completion.__class__ is dict:
                            n += len(completion)
    return n


def check_record(value: Any, path: Path, line: int) -> dict[str, Any]:
    """``value`` as a PRM800K record, or :class:`DataFileError` naming file, line and field."""

    def bad(field: str, message: str) -> DataFileError:
        return DataFileError(path, message, line=line, where=f"field {field}")

    if not isinstance(value, dict):
        raise DataFileError(path, f"a PRM800K record is a JSON object, not {_type(value)}", line=line)
    question = value.get("question")
    if not isinstance(question, dict):
        raise bad("question", f"must be an object with the problem, not {_type(question)}")
    if not isinstance(question.get("problem"), str):
        raise bad("question.problem", f"must be a string, not {_type(question.get('problem'))}")
    for key in ("ground_truth_solution", "ground_truth_answer"):
        if question.get(key) is not None and not isinstance(question[key], str):
            raise bad(f"question.{key}", f"must be a string or null, not {_type(question[key])}")
    label = value.get("label")
    if not isinstance(label, dict):
        raise bad("label", f"must be an object with the steps, not {_type(label)}")
    if "steps" not in label:
        raise bad("label.steps", "missing: a PRM800K record's label lists its steps")
    steps = label["steps"]
    if not isinstance(steps, list):
        raise bad("label.steps", f"must be a list, not {_type(steps)}")
    time = label.get("total_time")
    if time is not None and (isinstance(time, bool) or not isinstance(time, int) or time < 0):
        raise bad("label.total_time", f"must be milliseconds (a whole number >= 0) or null, not {time!r}")
    reason = label.get("finish_reason")
    if reason is not None and not isinstance(reason, str):
        raise bad("label.finish_reason", f"must be a string, not {_type(reason)}")
    labeler = value.get("labeler")
    if labeler is not None and not isinstance(labeler, str):
        raise bad("labeler", f"must be a string, not {_type(labeler)}")
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            raise bad(f"label.steps[{index}]", f"a step is an object, not {_type(step)}")
        completions = step.get("completions")
        if not isinstance(completions, list):
            raise bad(f"label.steps[{index}].completions", f"must be a list, not {_type(completions)}")
        for k, completion in enumerate(completions):
            # The usual case checked at once; the field that is wrong is found only when one is.
            if type(completion) is dict:
                rating = completion.get("rating")
                if (
                    type(completion.get("text")) is str
                    and rating in _RATING_VALUES
                    and type(rating) is not bool
                    and completion.get("flagged") in _FLAG_VALUES
                ):
                    continue
            _bad_completion(completion, f"label.steps[{index}].completions[{k}]", bad)
        chosen = step.get("chosen_completion")
        if chosen is not None and (
            isinstance(chosen, bool) or not isinstance(chosen, int) or not 0 <= chosen < len(completions)
        ):
            raise bad(
                f"label.steps[{index}].chosen_completion",
                f"{chosen!r} is not an index of the step's {len(completions)} completion(s) (or null)",
            )
        human = step.get("human_completion")
        if human is not None and _human_text(human) is None:
            raise bad(
                f"label.steps[{index}].human_completion",
                f"must be a string, an object with a text, or null, not {_type(human)}",
            )
        if chosen is None and human is None and not completions:
            raise bad(
                f"label.steps[{index}]",
                "has no completion, no chosen completion and no human completion: no step to show",
            )
    return value


_RATING_VALUES = (-1, 0, 1, None)
_FLAG_VALUES = (True, False, None)


def _bad_completion(completion: Any, at: str, bad: Any) -> None:
    """Raise the error of a completion that is not a usual one (``bad`` builds it)."""
    if not isinstance(completion, dict):
        raise bad(at, f"a completion is an object, not {_type(completion)}")
    if not isinstance(completion.get("text"), str):
        raise bad(f"{at}.text", f"a step must be a string, not {_type(completion.get('text'))}")
    rating = completion.get("rating")
    if rating is not None and (isinstance(rating, bool) or rating not in (-1, 0, 1)):
        raise bad(f"{at}.rating", f"{rating!r} is not -1, 0 or +1")
    flagged = completion.get("flagged")
    if flagged is not None and not isinstance(flagged, bool):
        raise bad(f"{at}.flagged", f"must be true, false or null, not {_type(flagged)}")


def _human_text(human: Any) -> str | None:
    if isinstance(human, str):
        return human
    if isinstance(human, dict) and isinstance(human.get("text"), str):
        return human["text"]
    return None


def _shown(step: dict[str, Any]) -> int | None:
    """The completion a trajectory step shows (None: the human completion)."""
    chosen = step.get("chosen_completion")
    if isinstance(chosen, int):
        return chosen
    if step.get("human_completion") is not None:
        return None
    return 0


def _plain(step: dict[str, Any]) -> bool:
    """One completion, chosen, no human completion, keys in the usual order: nothing to keep."""
    if len(step) != 3 or step.get("chosen_completion") != 0 or step.get("human_completion", 0) is not None:
        return False
    completions = step["completions"]
    if len(completions) != 1 or list(step) != _PLAIN_STEP_KEYS:
        return False
    completion = completions[0]
    return len(completion) == 3 and list(completion) == _PLAIN_COMPLETION_KEYS


def sample_key(record: dict[str, Any]) -> tuple[Any, ...]:
    """Solutions with equal keys are CoTs of one sample: same problem, reference solution and
    answer (and the same of them present)."""
    question = record["question"]
    return tuple((key in question, question.get(key)) for key in _QUESTION_MOVED)


def sample_for(record: dict[str, Any]) -> Sample:
    """A new sample for the problem of ``record`` (its id a hash of the problem and answers)."""
    question = record["question"]
    digest = hashlib.sha1(repr(sample_key(record)).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    solution = question.get("ground_truth_solution")
    answer = question.get("ground_truth_answer")
    return Sample(
        id=f"p{digest}",
        question=question["problem"],
        type="text",
        choices=[],
        answer=[answer] if isinstance(answer, str) else [],
        cot=[solution] if isinstance(solution, str) else [],
    )


def to_cot(record: dict[str, Any], line: int, date: str) -> tuple[GeneratedCot, ImportedReview]:
    """The CoT of a checked record, with its labeler's step labels (built as the ``steps``
    column's entries directly: an import makes a million of them)."""
    label = record["label"]
    labeler = record.get("labeler")
    author: str = labeler if isinstance(labeler, str) and labeler else ANONYMOUS
    texts: list[str] = []
    entries: list[dict[str, Any]] = []
    first_error: int | None = None
    # _shown, _human_text and _plain inlined (a million steps in PRM800K phase 2).
    for index, step in enumerate(label["steps"]):
        chosen = step.get("chosen_completion")
        human_value = step.get("human_completion")
        human = None if human_value is None else _human_text(human_value)
        completions = step["completions"]
        if isinstance(chosen, int):
            completion = completions[chosen]
        elif human_value is None:
            completion = completions[0]
        else:
            completion = None
        text = completion["text"] if completion is not None else human or ""
        texts.append(text)
        entry: dict[str, Any] = {"id": step_id(index, text)}
        if completion is not None:
            rating = completion.get("rating")
            if rating is not None:
                entry["rating"] = rating
                if rating == -1 and first_error is None:
                    first_error = index
            flagged = completion.get("flagged")
            if flagged is not None:
                entry["flagged"] = flagged
        if human is not None:
            entry["corrected"] = human
        if not (
            chosen == 0
            and human_value is None
            and len(step) == 3
            and len(completions) == 1
            and len(completions[0]) == 3
            and list(step) == _PLAIN_STEP_KEYS
            and list(completions[0]) == _PLAIN_COMPLETION_KEYS
        ):
            entry["extra"] = {"step": step}
        entries.append(entry)
    if first_error is None and label.get("finish_reason") == "solution":
        first_error = -1
    review = ImportedReview(
        author,
        encode_entries(entries),
        first_error,
        label.get("finish_reason"),
        label.get("total_time"),
        date,
        labels=len(entries),
    )
    question = record["question"]
    meta = {
        "line": line,
        "author": author,
        "record": {key: (None if key in ("question", "label") else value) for key, value in record.items()},
        "question": {key: (None if key in _QUESTION_MOVED else value) for key, value in question.items()},
        "label": {key: (None if key in _LABEL_MOVED else value) for key, value in label.items()},
    }
    cot = GeneratedCot(
        id=f"line-{line}",
        cot="\n".join(texts),
        author=record.get("labeler") if isinstance(record.get("labeler"), str) else "",
        date=record.get("timestamp") if isinstance(record.get("timestamp"), str) else "",
        extra={STEPS_KEY: texts, META: meta},
    )
    return cot, review


def record_from(
    sample: Sample, cot: GeneratedCot, steps: list[str], review: StepReview | None
) -> dict[str, Any] | None:
    """The PRM800K line of an imported CoT with its labeler's current labels and review, equal
    as JSON to the line read when nothing was changed; None for a CoT not from PRM800K."""
    meta = cot.extra.get(META) if isinstance(cot.extra, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("record"), dict):
        return None
    question: dict[str, Any] = {}
    for key, value in meta.get("question", {}).items():
        if key == "problem":
            value = sample.question
        elif key == "ground_truth_solution":
            value = sample.cot[0] if sample.cot else None
        elif key == "ground_truth_answer":
            value = sample.answer[0] if sample.answer else None
        question[key] = value
    labels = {label.step: label for label in review.labels} if review is not None else {}
    out_steps = []
    for index, text in enumerate(steps):
        label = labels.get(index)
        kept = label.extra.get("step") if label is not None and label.extra else None
        if isinstance(kept, dict):
            step = {**kept, "completions": [dict(c) for c in kept.get("completions", [])]}
        else:
            step = {
                "completions": [{"text": text, "rating": None, "flagged": None}],
                "human_completion": None,
                "chosen_completion": 0,
            }
        shown = _shown(step)
        if shown is not None and shown < len(step["completions"]):
            completion = step["completions"][shown]
            completion["text"] = text
            completion["rating"] = label.rating if label is not None else None
            completion["flagged"] = label.flagged if label is not None else completion.get("flagged")
        out_steps.append(step)
    label_out: dict[str, Any] = {}
    for key, value in meta.get("label", {}).items():
        if key == "steps":
            value = out_steps
        elif key == "total_time":
            value = review.time_ms if review is not None else None
        elif key == "finish_reason":
            value = review.finish_reason if review is not None else None
        label_out[key] = value
    record: dict[str, Any] = {}
    for key, value in meta["record"].items():
        record[key] = question if key == "question" else label_out if key == "label" else value
    return record
