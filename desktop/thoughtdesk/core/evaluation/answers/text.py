"""Free-text answers: SQuAD-style normalisation, exact match and token F1."""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from functools import lru_cache

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’“”–—…")
_TRAILING = re.compile(r"[\s.!?,;:*\"'”’)]+$")


def normalize_text(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


#: :func:`normalize_text` remembered: scoring normalises each gold answer for every answer to its
#: question, and each answer two or three times (value, F1, containment).
normalized = lru_cache(maxsize=4096)(normalize_text)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 (0..1) between two answers after :func:`normalize_text`."""
    predicted = normalized(prediction).split()
    expected = normalized(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    # The common exact and unrelated answers without counting (the same figures: 1.0 and 0.0).
    if predicted == expected:
        return 1.0
    if set(predicted).isdisjoint(expected):
        return 0.0
    common = Counter(predicted) & Counter(expected)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted)
    recall = overlap / len(expected)
    return 2 * precision * recall / (precision + recall)


def answer_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``text[start:end]`` without surrounding space and trailing punctuation; None if empty."""
    while start < end and text[start] in " \t\n\"'“*:":
        start += 1
    match = _TRAILING.search(text, start, end)
    if match:
        end = match.start()
    return (start, end) if end > start else None


def contains_phrase(haystack: str, needle: str) -> bool:
    """Whether normalised ``needle`` occurs in normalised ``haystack`` as whole tokens."""
    hay, need = normalized(haystack), normalized(needle)
    if not need:
        return False
    return f" {need} " in f" {hay} "
