"""Small text helpers shared by the loaders: numbers, sentences, detokenisation."""

from __future__ import annotations

import re

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def format_number(value: float | int | str) -> str:
    """A number as people write it: ``51.0`` -> ``"51"``, ``0.5`` -> ``"0.5"``, ``"1,000"`` -> ``"1000"``.

    Non-numeric text is returned stripped and otherwise unchanged.
    """
    if isinstance(value, str):
        text = _THOUSANDS.sub("", value.strip())
        try:
            number = float(text)
        except ValueError:
            return text
        if re.fullmatch(r"-?\d+", text):
            return str(int(text))
        value = number
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    rounded = round(value, 6)
    if rounded == int(rounded):
        return str(int(rounded))
    return f"{rounded:.6f}".rstrip("0").rstrip(".")


# Abbreviations after which a full stop does not end a sentence (common in medical text).
_ABBREVIATIONS = (
    "e.g",
    "i.e",
    "vs",
    "viz",
    "etc",
    "Dr",
    "Mr",
    "Mrs",
    "Ms",
    "Prof",
    "Fig",
    "fig",
    "Ans",
    "ans",
    "No",
    "no",
    "approx",
    "Approx",
    "Ref",
    "ref",
    "St",
    "Inc",
    "Ltd",
    "Jr",
    "Sr",
    "mg",
    "ml",
    "Vol",
    "vol",
    "pp",
    "ed",
    "Ed",
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_SENTENCE_END_ANY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Za-z0-9])")


def split_sentences(text: str | None, *, lowercase_starts: bool = False) -> list[str]:
    """Split prose into sentences; newlines always separate. Empty pieces are dropped.

    Conservative on purpose: it does not split after known abbreviations or single capital
    letters (``A. madagascariensis``), since a wrong split is worse than a long sentence.
    With ``lowercase_starts`` a sentence may also start with a small letter (crowd-written text).
    """
    boundary = _SENTENCE_END_ANY if lowercase_starts else _SENTENCE_END
    if not text:
        return []
    sentences: list[str] = []
    for paragraph in text.splitlines():
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        start = 0
        for match in boundary.finditer(paragraph):
            before = paragraph[start : match.start()].rstrip("\"')]")
            word = before.rsplit(None, 1)[-1] if before.split() else ""
            stem = word.rstrip(".!?")
            if stem in _ABBREVIATIONS or re.fullmatch(r"[A-Za-z]", stem):
                continue
            piece = paragraph[start : match.start()].strip()
            if piece:
                sentences.append(piece)
            start = match.end()
        tail = paragraph[start:].strip()
        if tail:
            sentences.append(tail)
    return sentences


def capitalise_first(text: str) -> str:
    """``text`` stripped, with its first letter upper-case (the rest is left alone)."""
    text = text.strip()
    return text[:1].upper() + text[1:]


def as_sentence(text: str) -> str:
    """``text`` with a capital first letter and a final full stop (as ThoughtSource writes facts)."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if text[-1] not in ".!?":
        text += "."
    return text


def untokenize(text: str) -> str:
    """Undo PTB-style tokenisation (``word , word`` -> ``word, word``) for display."""
    text = text.replace("`` ", '"').replace(" ''", '"').replace(". . .", "...")
    text = text.replace(" ( ", " (").replace(" ) ", ") ")
    text = re.sub(r" ([.,:;?!%]+)([ '\"`])", r"\1\2", text)
    text = re.sub(r" ([.,:;?!%]+)$", r"\1", text)
    text = text.replace(" '", "'").replace(" n't", "n't").replace("can not", "cannot")
    text = text.replace(" ` ", " '")
    return text.strip()
