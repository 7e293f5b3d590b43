"""The one list of steps of a CoT, a reference CoT or a reasoning trace, with stable ids.

Where a record has its own step list it is used as it is: a reference CoT is a list of steps
(``sample.cot``), and a generated CoT imported from a step-labelled file (ProcessBench,
PRM800K) keeps its steps in its ``extra`` under :data:`STEPS_KEY` (a JSON array of strings, so
a ThoughtSource export and a re-import carry it). Otherwise the text is split:

* a reasoning trace by paragraph (blank lines);
* a generated CoT by paragraph when it has more than one, else by :mod:`sentences`
  (line breaks and sentence ends), the splitter the Review tab highlights with.

A step's id is ``s{index}-{hash}``: its 0-based index and the first 8 hex digits of the SHA-1
of its text. It depends on nothing but the step list, so it is the same after an export and a
re-import, in another library and on another machine; a label whose id no longer matches the
step at its index was given to a text that has since changed (:attr:`Step.id`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from thoughtdesk.core.sentences import split_sentences

#: The generated CoT's ``extra`` key holding its own step list.
STEPS_KEY = "steps"

#: What a step list belongs to: a generated CoT's visible text, its reasoning trace, or the
#: sample's reference CoT.
Trace = Literal["cot", "reasoning", "reference"]
TRACES: tuple[Trace, ...] = ("cot", "reasoning", "reference")

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")


@dataclass(frozen=True, slots=True)
class Step:
    """One step: ``index`` (0-based), its stable ``id``, its ``text``, and where it stands in the
    text shown for the trace (``start``/``end`` in characters; both None when the step list is
    the record's own and the step is not found in the text)."""

    index: int
    id: str
    text: str
    start: int | None = None
    end: int | None = None


def step_id(index: int, text: str) -> str:
    """The stable id of the step at ``index`` with ``text``: ``s3-1f2e3d4c``."""
    return f"s{index}-{hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph of ``text`` (blank lines between), trimmed, never empty."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        _trimmed(text, start, match.start(), spans)
        start = match.end()
    _trimmed(text, start, len(text), spans)
    return spans


def _trimmed(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))


def own_steps(extra: dict[str, Any] | None) -> list[str] | None:
    """A generated CoT's own step list (``extra["steps"]``), or None when it has none (or the
    value is not a list of strings)."""
    if not extra:
        return None
    value = extra.get(STEPS_KEY)
    if isinstance(value, list) and value and all(isinstance(step, str) for step in value):
        return value
    return None


def listed_steps(texts: Sequence[str], shown: str | None = None) -> list[Step]:
    """Steps from a list of texts; each is looked for in ``shown`` (after the previous one) for
    its offsets."""
    steps: list[Step] = []
    cursor = 0
    for index, text in enumerate(texts):
        start: int | None = None
        end: int | None = None
        if shown:
            found = shown.find(text.strip(), cursor) if text.strip() else -1
            if found >= 0:
                start, end = found, found + len(text.strip())
                cursor = end
        steps.append(Step(index, step_id(index, text), text, start, end))
    return steps


def text_steps(text: str | None, *, by_paragraph: bool = False) -> list[Step]:
    """Steps of a text without a step list of its own: paragraphs when ``by_paragraph`` or when
    it has more than one, else sentences."""
    if not text:
        return []
    spans = paragraphs(text)
    if not by_paragraph and len(spans) <= 1:
        spans = [(span.start, span.end) for span in split_sentences(text)]
    return [Step(i, step_id(i, text[s:e]), text[s:e], s, e) for i, (s, e) in enumerate(spans)]


def cot_steps(text: str | None, extra: dict[str, Any] | None = None) -> list[Step]:
    """The steps of a generated CoT: its own list where it has one, else its text split."""
    own = own_steps(extra)
    if own is not None:
        return listed_steps(own, text)
    return text_steps(text)


def cot_step_count(text: str | None, extra: dict[str, Any] | None = None) -> int:
    """How many steps :func:`cot_steps` gives, without their ids and offsets (the Review tab's
    "N steps" of every CoT shown)."""
    own = own_steps(extra)
    if own is not None:
        return len(own)
    if not text:
        return 0
    count = len(paragraphs(text))
    return count if count > 1 else len(split_sentences(text))


def reasoning_step_count(reasoning: str | None) -> int:
    """How many steps :func:`reasoning_steps` gives."""
    return len(paragraphs(reasoning)) if reasoning else 0


def reasoning_steps(reasoning: str | None) -> list[Step]:
    """The steps of a reasoning trace: its paragraphs."""
    return text_steps(reasoning, by_paragraph=True)


def reference_steps(cot: Sequence[Any] | None) -> list[Step]:
    """The steps of a sample's reference CoT (its list; non-string items shown as text)."""
    if not cot:
        return []
    return listed_steps([item if isinstance(item, str) else str(item) for item in cot])
