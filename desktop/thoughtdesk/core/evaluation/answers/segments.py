"""Where in a text the answer is stated: answer cues, ``\\boxed{}``, ``####``, closing sentences.

Every function works on offsets into the original text and never copies or rewrites it, so the
span of whatever is found later points at the characters the user sees.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

#: Parts of prompts and extraction triggers that name letters or labels without choosing one:
#: "among A through E", "(Yes or No)", "(A-E)", "(arabic numerals)". Mentions inside are ignored.
_PROMPT_ECHO = re.compile(
    r"among\s+[A-Za-z]\s+(?:through|to|and|-)\s+[A-Za-z]\b"
    r"|between\s+[A-Z]\s+and\s+[A-Z]\b"
    r"|\(\s*(?:yes\s+or\s+no(?:\s+or\s+maybe)?|yes/no(?:/maybe)?|true\s+or\s+false|[A-Z]\s*(?:-|to|through)\s*[A-Z]"
    r"|arabic\s+numerals?)\s*\)",
    re.IGNORECASE,
)

#: "the answer is", "Answer:", "the correct option would be", "the answer (Yes or No) is:".
_STRONG_CUE = re.compile(
    r"\b(?:(?:final\s+|correct\s+|right\s+|best\s+)?answers?(?:\s+(?:choice|option))?"
    r"|(?:correct|right|best)\s+(?:option|choice|response))"
    r"(?:\s*\([^()\n]{0,40}\))?"
    r"(?:\s+(?:here|then|therefore|thus))?"
    r"\s*(?:(?:is|are|was|would\s+be|will\s+be|should\s+be|must\s+be|seems\s+to\s+be)\b|[:=])"
    r"(?:\s*:)?"
    r"(?:\s*(?:most\s+likely|more\s+likely|probably|likely|definitely|clearly|therefore|then|still))?"
    r"[\s:,]*",
    re.IGNORECASE,
)

#: "Answer B", "The correct answer B" (no verb): only when a capital letter follows directly.
_WEAK_CUE = re.compile(r"\banswers?\s*(?=(?-i:[(\[{*]*[A-Z](?![a-z])))", re.IGNORECASE)

#: A closing sentence: "Therefore, ...", "So ...", "In conclusion, ...".
_CLOSING = re.compile(
    r"(?:^|(?<=[.!?\n]))\s*(?:therefore|thus|so|hence|in\s+conclusion|overall|in\s+summary)\b[,:]?\s*",
    re.IGNORECASE,
)

# Cheap pre-check before the echo regex, in any case as the echo regex ("BETWEEN A AND E").
_ECHO_WORD = re.compile(r"among|between", re.IGNORECASE)
# Cheap pre-check before the cue regex: the words a strong cue without "answer" needs.
_ANY_STRONG_WORD = re.compile(r"(?:option|choice|response)", re.IGNORECASE)
_STRONG_WORDS = ("option", "choice", "response")


def _has_word(text: str, pattern: re.Pattern[str], words: tuple[str, ...]) -> bool:
    """Whether ``pattern`` (``words`` in any case) occurs in ``text``. ASCII text is lower-cased
    and searched with ``in`` (a case-insensitive regex tries every position; ASCII letters fold
    only to each other); other text goes to the pattern, whose case folding also matches
    "ı", "ſ" and the Kelvin sign to "i", "s" and "k"."""
    if text.isascii():
        lower = text.lower()
        for word in words:
            if word in lower:
                return True
        return False
    return pattern.search(text) is not None


_SENTENCE_END = re.compile(r"\n|[.!?](?=\s|$)")
_LONE_LETTER = re.compile(r"\s*[(\[{*]*[A-Za-z][)\]}*]*\.")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_HASHES = re.compile(r"####[ \t]*")


class Segment(NamedTuple):
    """A stretch ``text[start:end]`` that should hold the answer, and the rule that chose it (a
    named tuple: immutable, made quickly for every answer)."""

    start: int
    end: int
    locator: str


def prompt_echo_spans(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that repeat the prompt's list of options ("among A through E")."""
    if _has_word(text, _ECHO_WORD, ("among", "between")):
        return [m.span() for m in _PROMPT_ECHO.finditer(text)]
    # Without "among" and "between" only the bracketed forms can match, and they start with
    # "(": tried there alone, not at every position of the CoT (the same spans).
    spans = []
    pos = text.find("(")
    while pos >= 0:
        match = _PROMPT_ECHO.match(text, pos)
        if match is not None:
            spans.append(match.span())
            pos = text.find("(", match.end())
        else:
            pos = text.find("(", pos + 1)
    return spans


def sentence_end(text: str, start: int) -> int:
    """Offset just past the sentence that begins at ``start`` (end of line or ". ")."""
    match = _SENTENCE_END.search(text, start)
    return match.end() if match else len(text)


def first_sentence(text: str) -> Segment:
    """The first non-empty sentence or line of ``text``."""
    start = len(text) - len(text.lstrip())
    end = sentence_end(text, start)
    # A lone "B." or "(C)." is a whole answer; so is "B. trees": keep going past a one-letter
    # sentence so the text after it is part of the same segment.
    if _LONE_LETTER.fullmatch(text, start, end):
        end = sentence_end(text, end)
    return Segment(start, end, "first_sentence")


def cue_segments(text: str) -> Iterator[Segment]:
    """Segments after answer cues, last cue first (the final statement is the one that counts).

    Strong cues ("the answer is", "Answer:") come before weak ones ("Answer B"). Lazy: most
    answers are settled by the first segment.
    """
    if "nswer" not in text and "NSWER" not in text and not _has_word(text, _ANY_STRONG_WORD, _STRONG_WORDS):
        return
    for match in reversed(list(_STRONG_CUE.finditer(text))):
        yield Segment(match.end(), _cue_end(text, match.end()), "the_answer_is")
    for match in reversed(list(_WEAK_CUE.finditer(text))):
        yield Segment(match.end(), _cue_end(text, match.end()), "answer_letter")


def _cue_end(text: str, start: int) -> int:
    end = sentence_end(text, start)
    # "The answer is B." then "Trees ..." -- a sentence that is only a letter continues with
    # the option's text on the same line ("The answer is C. inspiration").
    if _LONE_LETTER.fullmatch(text, start, end) and end < len(text) and text[end - 1] != "\n":
        line_end = text.find("\n", end)
        end = len(text) if line_end < 0 else line_end
    return end


def closing_segments(text: str) -> Iterator[Segment]:
    """Closing sentences ("Therefore, ...", "So ..."), last first."""
    for match in reversed(list(_CLOSING.finditer(text))):
        yield Segment(match.end(), sentence_end(text, match.end()), "therefore")


def boxed_segment(text: str) -> Segment | None:
    """The content of the last ``\\boxed{...}`` (braces balanced), or None."""
    matches = list(_BOXED.finditer(text))
    for match in reversed(matches):
        depth, pos = 1, match.end()
        while pos < len(text):
            char = text[pos]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    return Segment(match.end(), pos, "boxed")
            pos += 1
    return None


def hashes_segment(text: str) -> Segment | None:
    """The rest of the line after the last ``####`` (GSM8K's answer marker), or None."""
    last = None
    for match in _HASHES.finditer(text):
        last = match
    if last is None:
        return None
    line_end = text.find("\n", last.end())
    return Segment(last.end(), len(text) if line_end < 0 else line_end, "####")


def cot_segments(text: str) -> Iterator[Segment]:
    """Where a CoT states its answer, most trustworthy first: boxed, ####, cues, closing sentences."""
    if "\\" in text:
        boxed = boxed_segment(text)
        if boxed is not None:
            yield boxed
    if "####" in text:
        hashes = hashes_segment(text)
        if hashes is not None:
            yield hashes
    yield from cue_segments(text)
    yield from closing_segments(text)


def extraction_segments(text: str) -> Iterator[Segment]:
    """Where an answer-extraction output states its answer: cues, first sentence, everything."""
    yield from cue_segments(text)
    first = first_sentence(text)
    yield first
    if first.start > 0 or first.end < len(text):
        yield Segment(0, len(text), "anywhere")
