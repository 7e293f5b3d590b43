"""Small text helpers shared by the loaders: numbers, capitals, detokenisation.

Sentences are split by the one splitter, :func:`thoughtdesk.core.sentences.split_sentences`.
"""

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
