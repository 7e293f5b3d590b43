"""Sentence splitting of CoT text, with character offsets into the original string.

CoTs are short, model-written English with a few habits that trip naive splitters: abbreviations
("e.g.", "Dr.", "vs."), decimals ("3.5 mg"), answer letters ("the answer is D. So..."),
numbered or lettered lists ("1. First...", "A) carpet") and line breaks used as step separators.
The rules here are deliberately simple and predictable (a regex scan plus a few checks), because
a reviewer must be able to guess where a highlight starts and ends:

* a line break always ends a sentence (models use it to separate steps; hard-wrapped prose
  is rare in CoT data and would only be split into more, still correct, pieces);
* ``.``, ``!``, ``?`` or ``…`` (with closing quotes or brackets after them) followed by
  whitespace ends a sentence, unless the next word starts with a lower-case letter, the word
  before is a known abbreviation, or the text before it on the line is only a list marker.

Reference CoTs in ThoughtSource are lists of steps that are sentences already; see
:func:`cot_segments`, which keeps each step whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of a text: ``text == source[start:end]`` (offsets in characters, end exclusive)."""

    start: int
    end: int
    text: str


#: Abbreviations after which a full stop never ends a sentence (lower case, without the final dot).
ALWAYS_ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "cf",
        "vs",
        "viz",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "approx",
        "esp",
        "incl",
        "resp",
        "sr",
        "jr",
        "mt",
        "ca",
        "dept",
        "est",
        "min",
        "max",
    }
)
#: Abbreviations that end a sentence only when followed by a word that is not a number.
NUMBER_ABBREVIATIONS = frozenset({"no", "fig", "figs", "eq", "eqs", "vol", "p", "pp", "sec", "ch", "ref"})

# A sentence terminator: one or more end marks, then any closing quotes/brackets, then whitespace
# (or the end of the line).
_TERMINATOR = re.compile(r"[.!?\u2026]+[\"'\u2019\u201d)\]]*(?=\s|$)")
# Text that is only a list marker: "1.", "12.", "a.", "iv.", "(a).", "Step 3." is not one.
_LIST_MARKER = re.compile(r"^\s*(?:\(?\d{1,3}|\(?[A-Za-z]|\(?[ivxlcIVXLC]{1,5})[.)]?$")
_LAST_WORD = re.compile(r"(\S+)$")


def split_sentences(text: str) -> list[Span]:
    """Split ``text`` into sentences, as spans with character offsets into ``text``.

    Spans are trimmed of surrounding whitespace, never empty, in order and non-overlapping.
    """
    if not isinstance(text, str):
        raise TypeError(f"split_sentences needs a str, got {type(text).__name__}")
    spans: list[Span] = []
    line_start = 0
    for line in text.splitlines(keepends=True):
        _split_line(text, line_start, line_start + len(line.rstrip("\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029")), spans)
        line_start += len(line)
    return spans


def _split_line(text: str, start: int, end: int, spans: list[Span]) -> None:
    """Append the sentences of ``text[start:end]`` (one line, no line break) to ``spans``."""
    line = text[start:end]
    sentence_start = 0
    for match in _TERMINATOR.finditer(line):
        cut = match.end()
        if not _ends_sentence(line, sentence_start, match.start(), cut):
            continue
        _append_trimmed(text, start + sentence_start, start + cut, spans)
        sentence_start = cut
    _append_trimmed(text, start + sentence_start, end, spans)


def _ends_sentence(line: str, sentence_start: int, mark_start: int, cut: int) -> bool:
    """Whether the end mark at ``line[mark_start:cut]`` really ends the sentence."""
    rest = line[cut:].lstrip()
    if not rest:
        return True
    before = line[sentence_start:mark_start]
    if line[mark_start] == "." and cut - mark_start == 1:
        # Only a single plain full stop can be an abbreviation or a list marker.
        if _LIST_MARKER.match(line[sentence_start:cut]):
            return False
        word = _LAST_WORD.search(before)
        last = word.group(1).lower().lstrip("([\"'") if word else ""
        if last in ALWAYS_ABBREVIATIONS:
            return False
        if last in NUMBER_ABBREVIATIONS and rest[0].isdigit():
            return False
    # "etc. and so on", "approx. three": the next word in lower case continues the sentence.
    return not rest[0].islower()


def _append_trimmed(text: str, start: int, end: int, spans: list[Span]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    first = start + lead
    spans.append(Span(first, first + len(stripped), stripped))


def cot_segments(cot: str | Sequence[str]) -> tuple[str, list[Span]]:
    """The display text of a CoT and its sentence spans.

    A string is split with :func:`split_sentences`. A list of steps (a reference CoT) is shown
    one step per line (joined with ``"\\n"``) and each non-blank step is one span, because the
    dataset authors wrote them as steps already.
    """
    if isinstance(cot, str):
        return cot, split_sentences(cot)
    if not isinstance(cot, Sequence):
        raise TypeError(f"a CoT is a str or a list of step strings, got {type(cot).__name__}")
    parts: list[str] = []
    spans: list[Span] = []
    offset = 0
    for index, step in enumerate(cot):
        if not isinstance(step, str):
            raise TypeError(f"CoT step {index} is {type(step).__name__}, not str")
        step_text = step.replace("\r\n", " ").replace("\n", " ")
        if index:
            offset += 1  # the "\n" joining steps
        stripped = step_text.strip()
        if stripped:
            first = offset + len(step_text) - len(step_text.lstrip())
            spans.append(Span(first, first + len(stripped), stripped))
        parts.append(step_text)
        offset += len(step_text)
    return "\n".join(parts), spans
