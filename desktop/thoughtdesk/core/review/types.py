"""Records of the review workbench: labels, spans, stored annotations, operations, reports.

Everything here is a plain dataclass so the GUI can hold, compare and queue them (an
:class:`AnnotationOp` is planned here and written as a review edit, ``core/review/undo.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Annotation keys that are not labels (ThoughtSource's annotator uses ``comment`` and
#: ``preferred``; ThoughtDesk adds ``quality``).
COMMENT_KEY = "comment"
PREFERRED_KEY = "preferred"
QUALITY_KEY = "quality"
NON_LABEL_KEYS = frozenset({COMMENT_KEY, PREFERRED_KEY, QUALITY_KEY, "score"})

#: Label values as ThoughtSource's annotator writes them (strings, not JSON booleans).
LABEL_ON = "true"
LABEL_OFF = "false"


def label_value(value: Any) -> bool | None:
    """The one rule for reading a label's stored value as true or false.

    JSON ``true``/``false``, or the strings ``"true"``/``"false"`` in any case and with any
    surrounding whitespace (ThoughtSource's annotator writes the lower-case strings; other tools
    and hand-edited files write booleans or ``"True"``). Anything else (a number, free text,
    ``None``) is not a label value: ``None``.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        word = value.strip().lower()
        if word == LABEL_ON:
            return True
        if word == LABEL_OFF:
            return False
    return None


@dataclass(frozen=True, slots=True)
class Label:
    """One label of a label set.

    ``key`` is what is stored as the annotation key (and exported); ``name`` is what people
    read; ``colour`` is ``#rrggbb`` (the GUI may adjust it per theme); ``shortcut`` is the digit
    1-9 that toggles it, or ``None``.
    """

    key: str
    name: str
    colour: str = "#999999"
    shortcut: int | None = None


@dataclass(frozen=True, slots=True)
class LabelSet:
    """A named, ordered set of labels. ``builtin`` sets are seeded by the migration."""

    name: str
    labels: tuple[Label, ...]
    builtin: bool = False
    id: int | None = None

    def by_shortcut(self, digit: int) -> Label | None:
        """The label toggled by number key ``digit`` (1-9), if any."""
        return next((label for label in self.labels if label.shortcut == digit), None)


@dataclass(frozen=True, slots=True)
class Span:
    """A character range ``[start, end)`` of a generated CoT's text (Python str indices, i.e.
    Unicode code points; a ``QTextCursor`` position is a UTF-16 unit and must be converted for
    text outside the Basic Multilingual Plane) with the text it covered when it was labelled."""

    start: int
    end: int
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text}

    @classmethod
    def from_json(cls, obj: Any) -> Span | None:
        if not isinstance(obj, dict):
            return None
        start, end = obj.get("start"), obj.get("end")
        if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
            return None
        text = obj.get("text")
        return cls(start, end, text if isinstance(text, str) else "")


@dataclass(frozen=True, slots=True)
class StoredAnnotation:
    """One row of the ``annotation`` table as the workbench sees it.

    ``value`` is decoded (``"true"``/``"false"`` strings for labels, text for comments, a JSON
    ``true`` for preferred, an int 1-5 for quality); ``date`` is ISO 8601 UTC for annotations made
    in ThoughtDesk, whatever the file had for imported ones.
    """

    pk: int
    cot_pk: int
    author: str
    date: str
    key: str
    value: Any
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class AnnotationOp:
    """One reversible change of one annotation slot.

    A slot is (``cot_pk``, ``author``, ``key``, span offsets or none). ``before`` and ``after``
    are the slot's value before and after the change; ``None`` means "no annotation". Applying
    sets the slot to ``after``, reverting sets it to ``before``
    (:meth:`AnnotationStore.apply`, :meth:`AnnotationStore.revert`); the Review tab writes it as
    a review edit (``core/review/undo.py``), whose undo puts the stored rows back exactly.
    ``description`` is the text for an Edit menu ("Toggle Too verbose").
    """

    cot_pk: int
    author: str
    key: str
    before: Any
    after: Any
    span: Span | None = None
    description: str = ""


@dataclass(slots=True)
class CotReview:
    """One author's review of one generated CoT, for drawing a card.

    ``labels``: label key -> True/False for whole-CoT labels (absent = never touched);
    ``spans``: (label key, span) pairs, in text order; ``quality`` 1-5 or None.
    """

    cot_pk: int
    author: str
    labels: dict[str, bool] = field(default_factory=dict)
    spans: list[tuple[str, Span]] = field(default_factory=list)
    comment: str = ""
    preferred: bool = False
    quality: int | None = None

    @property
    def touched(self) -> bool:
        return bool(self.labels or self.spans or self.comment or self.preferred or self.quality is not None)
