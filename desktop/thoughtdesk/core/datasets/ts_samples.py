"""One ThoughtSource sample's JSON and ThoughtDesk's records, both ways, losslessly.

In: a sample with exactly ThoughtSource's keys and types is decoded and validated by msgspec in C
(:data:`STRICT_DECODER`, :func:`from_strict`); anything unusual (extra or missing keys, nulls,
wrong types) is read field by field (:func:`sample_from_json`), which keeps unknown keys in
``extra`` and the known keys the sample lacked in ``missing``, and names the field that is wrong.
Out: :func:`sample_to_json` writes the known keys in ThoughtSource's order, then the extras, so a
sample read and written back is the same JSON. ThoughtDesk's own keys (its answer scoring,
:data:`REASONING_KEY`) ride along as extras. The collection file around the samples is
:mod:`.thoughtsource`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, overload

import msgspec

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import (
    ANNOTATION_KEYS,
    ANSWER_KEYS,
    COT_KEYS,
    OUTCOMES,
    SAMPLE_KEYS,
    SCORING_KEY,
    Annotation,
    Answer,
    GeneratedCot,
    Sample,
    Scoring,
)


class _StrictAnswer(msgspec.Struct, forbid_unknown_fields=True):
    id: str | None
    answer_extraction: str | None
    answer_extraction_template: str | None
    answer_extraction_text: str | None
    answer: str | None
    correct_answer: bool | None


class _StrictAnnotation(msgspec.Struct, forbid_unknown_fields=True):
    author: str | None
    date: str | None
    key: str
    value: Any


class _StrictCot(msgspec.Struct, forbid_unknown_fields=True):
    id: str | None
    fragments_version: str | None
    instruction: str | None
    cot_trigger: str | None
    cot_trigger_template: str | None
    prompt_text: str | None
    cot: str | None
    answers: list[_StrictAnswer]
    author: str | None
    date: str | None
    api_service: str | None
    model: str | None
    comment: str | None
    annotations: list[_StrictAnnotation]


class _StrictSample(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    ref_id: str | None
    question: str
    type: str | None
    choices: list[Any] | None
    context: str | None
    cot: list[Any] | None
    answer: list[Any] | None
    generated_cot: list[_StrictCot]
    feedback: Any


STRICT_DECODER = msgspec.json.Decoder(_StrictSample)


def from_strict(s: _StrictSample) -> Sample:
    cots = [
        GeneratedCot(
            id=c.id,
            cot=c.cot,
            fragments_version=c.fragments_version,
            instruction=c.instruction,
            cot_trigger=c.cot_trigger,
            cot_trigger_template=c.cot_trigger_template,
            prompt_text=c.prompt_text,
            answers=[
                Answer(
                    a.id,
                    a.answer_extraction,
                    a.answer_extraction_template,
                    a.answer_extraction_text,
                    a.answer,
                    a.correct_answer,
                )
                for a in c.answers
            ],
            author=c.author,
            date=c.date,
            api_service=c.api_service,
            model=c.model,
            comment=c.comment,
            annotations=[Annotation(n.key, n.value, n.author, n.date) for n in c.annotations],
        )
        for c in s.generated_cot
    ]
    return Sample(
        id=s.id,
        question=s.question,
        type=s.type,
        choices=s.choices,
        answer=s.answer,
        cot=s.cot,
        context=s.context,
        ref_id=s.ref_id,
        generated_cot=cots,
        feedback=s.feedback,
    )


def json_kind(python_type: str) -> str:
    return {
        "dict": "an object",
        "list": "a list",
        "str": "a string",
        "int": "a number",
        "float": "a number",
        "bool": "a boolean",
        "NoneType": "null",
    }.get(python_type, python_type)


class _Fields:
    """Reads known fields of one JSON object, remembering extras and missing keys."""

    def __init__(self, obj: Any, known: tuple[str, ...], path: Path | None, where: str, what: str):
        if not isinstance(obj, dict):
            raise DataFileError(path, f"{what} must be an object, not {json_kind(type(obj).__name__)}", where=where)
        self.obj, self.path, self.where = obj, path, where
        self.extra = {k: v for k, v in obj.items() if k not in known}
        self.missing = tuple(k for k in known if k not in obj)

    def error(self, key: str, message: str) -> DataFileError:
        return DataFileError(self.path, message, where=f"{self.where}, field {key}")

    @overload
    def text(self, key: str, default: str | None = "", *, required: Literal[True]) -> str: ...
    @overload
    def text(self, key: str, default: str | None = "", *, required: bool = False) -> str | None: ...

    def text(self, key: str, default: str | None = "", *, required: bool = False) -> str | None:
        """The text field ``key``: ``default`` when absent, None when null; ``required`` fields
        are never absent or null (an error is raised), so they are always text."""
        if key not in self.obj:
            if required:
                raise self.error(key, "is missing")
            return default
        value = self.obj[key]
        if value is None and not required:
            return None
        if isinstance(value, str):
            return value
        if required and isinstance(value, int) and not isinstance(value, bool):
            raise self.error(key, f"must be text, not a number ({value})")
        raise self.error(key, f"must be text, not {json_kind(type(value).__name__)}")

    def items(self, key: str) -> list[Any] | None:
        """A list field that may also be null or absent (stored as it was)."""
        value = self.obj.get(key, [])
        if value is None or isinstance(value, list):
            return value
        raise self.error(key, f"must be a list, not {json_kind(type(value).__name__)}")

    def records(self, key: str) -> list[Any]:
        value = self.obj.get(key, [])
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, f"must be a list, not {json_kind(type(value).__name__)}")
        return value


def sample_from_json(obj: Any, path: Path | None, where: str) -> Sample:
    """Validate one ThoughtSource sample object and turn it into a :class:`Sample`."""
    f = _Fields(obj, SAMPLE_KEYS, path, where, "a sample")
    raw_cots = f.records("generated_cot")
    if obj.get("generated_cot", []) is None:
        raise f.error("generated_cot", "must be a list, not null")
    cots = [_cot_from_json(c, path, f"{where}, generated_cot {i}") for i, c in enumerate(raw_cots)]
    return Sample(
        id=f.text("id", required=True),
        question=f.text("question", required=True),
        type=f.text("type", "multiplechoice"),
        choices=f.items("choices"),
        answer=f.items("answer"),
        cot=f.items("cot"),
        context=f.text("context"),
        ref_id=f.text("ref_id"),
        generated_cot=cots,
        feedback=obj.get("feedback", []),
        extra=f.extra,
        missing=f.missing,
    )


#: The ``correct_answer`` a ThoughtDesk export writes for each outcome.
_EXPORTED_CORRECT = {"correct": True, "incorrect": False, "unextractable": False}


def _scoring_from_json(fa: _Fields, correct: bool | None) -> Scoring | None:
    """ThoughtDesk's scoring carried in the answer's :data:`SCORING_KEY` field, or None.

    The field is checked strictly (a clear error names it). It is restored only when it still
    agrees with ``correct_answer``: a file whose answers another tool re-graded keeps that
    tool's verdict, and the stale field stays in the answer's extras, unchanged.
    """
    if SCORING_KEY not in fa.extra:
        return None
    value = fa.extra[SCORING_KEY]
    field = SCORING_KEY
    if not isinstance(value, dict):
        raise fa.error(field, f"must be an object, not {json_kind(type(value).__name__)}")
    outcome = value.get("outcome")
    if outcome not in OUTCOMES:
        raise fa.error(f"{field}.outcome", f"must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    texts: dict[str, str | None] = {}
    for key in ("value", "method", "reason"):
        text = value.get(key)
        if text is not None and not isinstance(text, str):
            raise fa.error(f"{field}.{key}", f"must be text or null, not {json_kind(type(text).__name__)}")
        texts[key] = text
    span = value.get("span")
    if span is not None:
        if (
            not isinstance(span, list)
            or len(span) != 3
            or not (span[0] is None or isinstance(span[0], str))
            or not all(p is None or (isinstance(p, int) and not isinstance(p, bool)) for p in span[1:])
        ):
            raise fa.error(f"{field}.span", "must be [source, start, end] (text, whole numbers or nulls)")
        span = (span[0], span[1], span[2])
    original = value.get("original")
    if original is not None and not isinstance(original, dict):
        raise fa.error(f"{field}.original", f"must be an object or null, not {json_kind(type(original).__name__)}")
    if correct is not _EXPORTED_CORRECT[outcome]:
        return None
    return Scoring(outcome, texts["value"], texts["method"], texts["reason"], span, original)


def _cot_from_json(obj: Any, path: Path | None, where: str) -> GeneratedCot:
    f = _Fields(obj, COT_KEYS, path, where, "a generated CoT")
    answers = []
    for i, a in enumerate(f.records("answers")):
        fa = _Fields(a, ANSWER_KEYS, path, f"{where}, answer {i}", "an answer")
        correct = a.get("correct_answer")
        if correct is not None and not isinstance(correct, bool):
            raise fa.error("correct_answer", "must be true, false or null")
        scoring = _scoring_from_json(fa, correct)
        if scoring is not None:
            del fa.extra[SCORING_KEY]  # held in ``scoring`` now; written back from it on export
            if scoring.outcome == "unextractable":
                correct = None  # ThoughtDesk keeps "not extractable" apart from "incorrect"
        answers.append(
            Answer(
                id=fa.text("id"),
                answer_extraction=fa.text("answer_extraction"),
                answer_extraction_template=fa.text("answer_extraction_template"),
                answer_extraction_text=fa.text("answer_extraction_text"),
                answer=fa.text("answer"),
                correct_answer=correct,
                extra=fa.extra,
                missing=fa.missing,
                scoring=scoring,
            )
        )
    annotations = []
    for i, n in enumerate(f.records("annotations")):
        fn = _Fields(n, ANNOTATION_KEYS, path, f"{where}, annotation {i}", "an annotation")
        annotations.append(
            Annotation(
                key=fn.text("key", required=True),
                value=n.get("value"),
                author=fn.text("author"),
                date=fn.text("date"),
                extra=fn.extra,
                missing=fn.missing,
            )
        )
    if "answers" in obj and obj["answers"] is None or "annotations" in obj and obj["annotations"] is None:
        raise f.error("answers" if obj.get("answers", []) is None else "annotations", "must be a list, not null")
    reasoning, finish_reason, reasoning_tokens = _reasoning_from_json(f)
    return GeneratedCot(
        id=f.text("id"),
        cot=f.text("cot"),
        fragments_version=f.text("fragments_version"),
        instruction=f.text("instruction", None),
        cot_trigger=f.text("cot_trigger", None),
        cot_trigger_template=f.text("cot_trigger_template"),
        prompt_text=f.text("prompt_text"),
        answers=answers,
        author=f.text("author"),
        date=f.text("date"),
        api_service=f.text("api_service"),
        model=f.text("model"),
        comment=f.text("comment"),
        annotations=annotations,
        extra=f.extra,
        missing=f.missing,
        reasoning=reasoning,
        finish_reason=finish_reason,
        reasoning_tokens=reasoning_tokens,
    )


#: The key of a CoT object that carries its thinking, finish reason and reasoning tokens
#: (outside ThoughtSource's schema: the export's side file holds it, see ts_extras).
REASONING_KEY = "thoughtdesk_reasoning"


def _reasoning_from_json(f: _Fields) -> tuple[str | None, str | None, int | None]:
    """The thinking, finish reason and reasoning tokens a CoT's :data:`REASONING_KEY` holds
    (taken out of its extras); a value of the wrong type is left in the extras, not guessed."""
    value = f.extra.get(REASONING_KEY)
    if not isinstance(value, dict):
        return None, None, None
    reasoning, finish, tokens = value.get("reasoning"), value.get("finish_reason"), value.get("reasoning_tokens")
    if not (
        (reasoning is None or isinstance(reasoning, str))
        and (finish is None or isinstance(finish, str))
        and (tokens is None or (isinstance(tokens, int) and not isinstance(tokens, bool)))
    ):
        return None, None, None
    del f.extra[REASONING_KEY]
    return reasoning, finish, tokens


def _reasoning_to_json(c: GeneratedCot) -> dict[str, Any]:
    if c.reasoning is None and c.finish_reason is None and c.reasoning_tokens is None:
        return {}
    return {
        REASONING_KEY: {
            "reasoning": c.reasoning,
            "finish_reason": c.finish_reason,
            "reasoning_tokens": c.reasoning_tokens,
        }
    }


def _known(record: Any, keys: tuple[str, ...], values: dict[str, Any]) -> dict[str, Any]:
    out = {k: values[k] for k in keys if k not in record.missing}
    out.update(record.extra)
    return out


def _answer_to_json(a: Answer) -> dict[str, Any]:
    """An answer's JSON object. An answer ThoughtDesk scored carries that scoring in
    :data:`SCORING_KEY`, and one it found not extractable is written ``correct_answer: false``
    (graded, not correct), because ThoughtSource reads null as "never evaluated"."""
    correct = a.correct_answer
    if a.scoring is not None and correct is None and a.scoring.outcome == "unextractable":
        correct = False
    out = _known(
        a,
        ANSWER_KEYS,
        {
            "id": a.id,
            "answer_extraction": a.answer_extraction,
            "answer_extraction_template": a.answer_extraction_template,
            "answer_extraction_text": a.answer_extraction_text,
            "answer": a.answer,
            "correct_answer": correct,
        },
    )
    if a.scoring is not None:
        if "correct_answer" not in out:  # the source file had no such key: the verdict needs it
            out["correct_answer"] = correct
        out[SCORING_KEY] = a.scoring.to_json()
    return out


def sample_to_json(s: Sample) -> dict[str, Any]:
    """The ThoughtSource JSON object of a sample: known keys in ThoughtSource's order, then extras."""
    cots = []
    for c in s.generated_cot:
        answers = [_answer_to_json(a) for a in c.answers]
        annotations = [
            _known(n, ANNOTATION_KEYS, {"author": n.author, "date": n.date, "key": n.key, "value": n.value})
            for n in c.annotations
        ]
        cots.append(
            _known(
                c,
                COT_KEYS,
                {
                    "id": c.id,
                    "fragments_version": c.fragments_version,
                    "instruction": c.instruction,
                    "cot_trigger": c.cot_trigger,
                    "cot_trigger_template": c.cot_trigger_template,
                    "prompt_text": c.prompt_text,
                    "cot": c.cot,
                    "answers": answers,
                    "author": c.author,
                    "date": c.date,
                    "api_service": c.api_service,
                    "model": c.model,
                    "comment": c.comment,
                    "annotations": annotations,
                },
            )
            | _reasoning_to_json(c)
        )
    return _known(
        s,
        SAMPLE_KEYS,
        {
            "id": s.id,
            "ref_id": s.ref_id,
            "question": s.question,
            "type": s.type,
            "choices": s.choices,
            "context": s.context,
            "cot": s.cot,
            "answer": s.answer,
            "generated_cot": cots,
            "feedback": s.feedback,
        },
    )
