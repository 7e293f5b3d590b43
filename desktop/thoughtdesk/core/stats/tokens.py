"""The one tokenisation of the statistics, and n-grams of it as 64-bit hashes (numpy).

A *token* is a maximal run of word characters (Python's ``\\w``: Unicode letters, digits and
the underscore) in the case-folded text; punctuation and whitespace separate tokens and are
dropped. "Let's say 3.5 mg/kg." is 7 tokens: let, s, say, 3, 5, mg, kg. These are words, not
a model's sub-word tokens (those differ per model; words compare across models and datasets).

N-grams are hashed, not stored: each distinct token gets a stable 64-bit value (BLAKE2b of its
UTF-8 bytes), and an n-gram is the polynomial ``t0*B^(n-1) + ... + t(n-1)`` modulo 2^64, computed
for a whole batch of texts at once with numpy. Two different n-grams share a hash with
probability about 2^-64 per pair: negligible for the sizes counted here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from itertools import chain

import numpy as np

WORD = re.compile(r"\w+")
#: The multiplier of the polynomial hash (odd, so multiplying by it is a bijection mod 2^64).
_BASE = np.uint64(0x100000001B3)
_BASE_INT = int(_BASE)
_MASK = (1 << 64) - 1
#: Mixed into the hash of a text shorter than n, so it is not read as an n-gram of n tokens.
_SHORT_TAG = 0x9E3779B97F4A7C15


def tokens(text: str | None) -> list[str]:
    """The tokens of ``text`` (see the module docstring); [] for None or an empty text."""
    return WORD.findall(text.casefold()) if text else []


def token_count(text: str | None) -> int:
    """How many tokens ``text`` has: ``len(tokens(text))``."""
    return len(WORD.findall(text.casefold())) if text else 0


class NgramHasher:
    """Hashes of the word n-grams of texts; keeps the token values it has seen (the vocabulary)."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"n-gram length must be at least 1, not {n}")
        self.n = n
        self._ids: dict[str, int] = {}  # token -> row of _values
        self._values = np.zeros(1024, dtype=np.uint64)

    def _learn(self, new: set[str]) -> None:
        """Give each new token its id and stable 64-bit value."""
        start = len(self._ids)
        needed = start + len(new)
        if needed > len(self._values):
            grown = np.zeros(max(needed, 2 * len(self._values)), dtype=np.uint64)
            grown[:start] = self._values[:start]
            self._values = grown
        for offset, token in enumerate(sorted(new)):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            self._values[start + offset] = int.from_bytes(digest, "little")
            self._ids[token] = start + offset

    def hashes(self, texts: Sequence[str | None]) -> np.ndarray:
        """The n-gram hashes of ``texts`` (uint64, with repeats). A text with at least one token
        but fewer than n gives one hash of all its tokens (short questions still count)."""
        return self.hashes_of_tokens([tokens(text) for text in texts])

    def hashes_of_tokens(self, per_text: Sequence[list[str]]) -> np.ndarray:
        """:meth:`hashes` of texts already split by :func:`tokens` (one token list per text)."""
        n = self.n
        lengths = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
        total = int(lengths.sum())
        if not total:
            return np.zeros(0, dtype=np.uint64)
        new = set(chain.from_iterable(per_text)).difference(self._ids)
        if new:
            self._learn(new)
        # Token values looked up in C (map over the dict), then gathered with numpy.
        ids = np.fromiter(map(self._ids.__getitem__, chain.from_iterable(per_text)), dtype=np.int64, count=total)
        values = self._values[ids]
        text_of = np.repeat(np.arange(len(per_text)), lengths)
        ends = np.cumsum(lengths)
        out = []
        windows = len(values) - n + 1
        if windows > 0:
            acc = np.zeros(windows, dtype=np.uint64)
            for k in range(n):  # uint64 arithmetic wraps: the hash is modulo 2^64
                acc = acc * _BASE + values[k : k + windows]
            # A window is an n-gram of one text when it ends inside the text it starts in.
            out.append(acc[text_of[:windows] == text_of[n - 1 :]])
        short = np.flatnonzero((lengths > 0) & (lengths < n))
        if len(short):
            out.append(
                np.array(
                    [self._short_hash(values, int(ends[i] - lengths[i]), int(ends[i])) for i in short], dtype=np.uint64
                )
            )
        return np.concatenate(out) if out else np.zeros(0, dtype=np.uint64)

    @staticmethod
    def _short_hash(values: np.ndarray, start: int, end: int) -> int:
        """The hash of a whole text shorter than n, tagged with its length."""
        h = (end - start) * _SHORT_TAG & _MASK
        for value in values[start:end].tolist():
            h = (h * _BASE_INT + value) & _MASK
        return h
