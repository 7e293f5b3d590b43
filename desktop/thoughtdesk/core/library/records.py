"""Typed records of the ThoughtSource schema, as ThoughtDesk stores them.

A collection is ``{dataset: {split: [Sample, ...]}}``. Each sample has reference CoT steps and
zero or more generated CoTs; each generated CoT has answers and annotations.

Round-trip fidelity: ThoughtSource files are not uniform. Keys are sometimes absent (older
files lack ``cot_trigger_template``), values are sometimes ``null`` instead of a list, and tools
add keys of their own (``subsetType``, ``sentences`` from the annotator). Every record therefore
keeps ``extra`` (unknown keys with their JSON values, in file order) and ``missing`` (known keys
the source did not have), so an export writes back exactly what was read.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

#: The answer types ThoughtSource uses.
ANSWER_TYPES = ("multiplechoice", "bool", "number", "text", "collection")

#: Known keys, in ThoughtSource's order. Export writes known keys in this order, then extras.
SAMPLE_KEYS = (
    "id",
    "ref_id",
    "question",
    "type",
    "choices",
    "context",
    "cot",
    "answer",
    "generated_cot",
    "feedback",
)
COT_KEYS = (
    "id",
    "fragments_version",
    "instruction",
    "cot_trigger",
    "cot_trigger_template",
    "prompt_text",
    "cot",
    "answers",
    "author",
    "date",
    "api_service",
    "model",
    "comment",
    "annotations",
)
ANSWER_KEYS = (
    "id",
    "answer_extraction",
    "answer_extraction_template",
    "answer_extraction_text",
    "answer",
    "correct_answer",
)
ANNOTATION_KEYS = ("author", "date", "key", "value")


@dataclass(slots=True)
class Annotation:
    """A label, comment or mark one author put on a generated CoT.

    ``value`` is any JSON value: ThoughtSource writes label flags as the strings "true"/"false",
    comments as text and ``preferred`` as a JSON boolean; all are kept as they were.
    """

    key: str
    value: Any = None
    author: str | None = ""
    date: str | None = ""
    extra: dict[str, Any] = field(default_factory=dict)
    missing: tuple[str, ...] = ()


#: The answer extension field that carries ThoughtDesk's scoring through a ThoughtSource file
#: (see docs/answer-extraction.md, "Scored answers in ThoughtSource files").
SCORING_KEY = "thoughtdesk_scoring"
#: ThoughtDesk's three scoring outcomes.
OUTCOMES = ("correct", "incorrect", "unextractable")


@dataclass(slots=True)
class Scoring:
    """ThoughtDesk's own scoring of an answer (the ``td_*`` columns): ``outcome`` is one of
    :data:`OUTCOMES`; ``reason`` says why an answer is not extractable; ``span`` is
    (source, start, end) of the extracted text; ``original`` is what the answer held before
    ThoughtDesk first re-scored it (``{"correct_answer": ..., "answer_from_choices": ...}``), or
    None when ThoughtDesk scored it from the start (a generation run)."""

    outcome: str
    value: str | None = None
    method: str | None = None
    reason: str | None = None
    span: tuple[str | None, int | None, int | None] | None = None
    original: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The extension field's value: outcome first, empty parts left out."""
        out: dict[str, Any] = {"outcome": self.outcome}
        if self.reason:
            out["reason"] = self.reason
        if self.value is not None:
            out["value"] = self.value
        if self.method:
            out["method"] = self.method
        if self.span is not None and any(part is not None for part in self.span):
            out["span"] = list(self.span)
        if self.original is not None:
            out["original"] = self.original
        return out


@dataclass(slots=True)
class Answer:
    """One extracted answer of a generated CoT. ``scoring`` is ThoughtDesk's scoring where it
    scored the answer (not a ThoughtSource field: exported as :data:`SCORING_KEY`)."""

    id: str | None = ""
    answer_extraction: str | None = ""
    answer_extraction_template: str | None = ""
    answer_extraction_text: str | None = ""
    answer: str | None = ""
    correct_answer: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    scoring: Scoring | None = None


def thoughtsource_unextractable(answer: Answer) -> bool:
    """True when ThoughtSource's evaluate graded ``answer`` and could extract nothing from it.

    ThoughtSource writes ``correct_answer: null`` both for "never evaluated" and for "evaluated,
    nothing extracted"; what tells them apart is ``answer_from_choices``: its generate and its
    other writers set ``""`` (its loader adds ``""`` where the key is absent), and its evaluate
    sets the chosen letter, or ``null`` when it could extract nothing (``is_correct`` returned
    ``(None, None)``). So ``correct_answer`` null with ``answer_from_choices`` present and null
    means graded, not extractable: not correct, in the denominator, as ThoughtSource counts it
    (docs/evaluation.md, "Where correctness comes from"). ThoughtDesk's own scoring, where it
    has one, wins."""
    return (
        answer.correct_answer is None
        and answer.scoring is None
        and "answer_from_choices" in answer.extra
        and answer.extra["answer_from_choices"] is None
    )


#: SQL of :func:`thoughtsource_unextractable` for an ``answer`` row aliased ``a``.
THOUGHTSOURCE_UNEXTRACTABLE_SQL = (
    "(a.td_outcome IS NULL AND a.correct_answer IS NULL AND a.extra IS NOT NULL AND json_valid(a.extra) "
    "AND json_type(a.extra, '$.answer_from_choices') = 'null')"
)


@dataclass(slots=True)
class GeneratedCot:
    """A CoT produced by a model for a sample, with the prompt fragments that produced it.

    ``model`` is the raw ThoughtSource string, a Python repr of a dict such as
    ``"{'name': 'gpt-4', 'temperature': 0, 'max_tokens': 512}"``; see :func:`model_name`.
    """

    id: str | None = ""
    cot: str | None = ""
    fragments_version: str | None = ""
    instruction: str | None = None
    cot_trigger: str | None = None
    cot_trigger_template: str | None = ""
    prompt_text: str | None = ""
    answers: list[Answer] = field(default_factory=list)
    author: str | None = ""
    date: str | None = ""
    api_service: str | None = ""
    model: str | None = ""
    comment: str | None = ""
    annotations: list[Annotation] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    #: A reasoning model's thinking, apart from ``cot`` (the visible text); None: none or not known.
    reasoning: str | None = None
    #: Why generation stopped as the provider said it ("stop", "length", ...); None: not known.
    finish_reason: str | None = None
    #: Reasoning tokens (the provider's count, or counted locally); None: not known.
    reasoning_tokens: int | None = None


@dataclass(slots=True)
class Sample:
    """One question with its gold answer(s), reference CoT steps and generated CoTs."""

    id: str
    question: str
    type: str | None = "multiplechoice"
    choices: list[Any] | None = field(default_factory=list)
    answer: list[Any] | None = field(default_factory=list)
    cot: list[Any] | None = field(default_factory=list)
    context: str | None = ""
    ref_id: str | None = ""
    generated_cot: list[GeneratedCot] = field(default_factory=list)
    feedback: Any = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    missing: tuple[str, ...] = ()


@dataclass(slots=True)
class CollectionInfo:
    """A collection in the library with its size."""

    id: int
    name: str
    created: str
    samples: int
    source: str = ""


@dataclass(slots=True)
class SplitStats:
    """Counts of one dataset split inside a collection."""

    dataset: str
    split: str
    samples: int
    generated_cots: int
    answers: int
    annotations: int


def model_repr(name: str, **params: Any) -> str:
    """The ``model`` field the way ThoughtSource writes it: the Python repr of a dict."""
    return repr({"name": name, **params})


@lru_cache(maxsize=4096)
def model_name(model: str | None) -> str:
    """The model's name from a ThoughtSource ``model`` field.

    The field is usually a Python-repr dict (``"{'name': 'gpt-4', ...}"``); plain names and
    anything unparsable are returned unchanged, so a strange value is shown, not lost.
    Cached: a collection repeats a handful of model strings thousands of times.
    """
    if not model:
        return ""
    text = model.strip()
    if text.startswith("{"):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return model
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return value["name"]
    return model
