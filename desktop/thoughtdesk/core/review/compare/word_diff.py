"""Word-level diff between two CoT texts, with character offsets into both.

The texts are cut into tokens (words, single punctuation marks, whitespace runs) and compared
with :class:`difflib.SequenceMatcher`, which favours long common runs and so reads better to
people than a minimal edit script. Whitespace is kept exactly: joining the text of the
``equal`` and ``delete`` operations gives ``a`` back, joining ``equal`` and ``insert`` gives
``b`` back. A replaced stretch is reported as a ``delete`` followed by an ``insert``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

DiffKind = Literal["equal", "insert", "delete"]

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True, slots=True)
class DiffOp:
    """One stretch of a word diff.

    ``a_start:a_end`` is the stretch in ``a`` and ``b_start:b_end`` in ``b`` (characters, end
    exclusive); an insert is empty in ``a`` and a delete empty in ``b``. ``text`` is the
    stretch's text: from ``a`` for ``equal`` and ``delete``, from ``b`` for ``insert``.
    """

    kind: DiffKind
    a_start: int
    a_end: int
    b_start: int
    b_end: int
    text: str


def tokenize_words(text: str) -> list[str]:
    """Words, single punctuation marks and whitespace runs of ``text``; they join back to it."""
    return _TOKEN.findall(text)


def word_diff(a: str, b: str) -> list[DiffOp]:
    """The word-level differences that turn ``a`` into ``b`` (see the module docstring)."""
    if not isinstance(a, str) or not isinstance(b, str):
        raise TypeError("word_diff compares two str values")
    a_tokens, b_tokens = tokenize_words(a), tokenize_words(b)
    a_offsets, b_offsets = _offsets(a_tokens), _offsets(b_tokens)
    # Whitespace tokens are "junk": a match may run through them but never start on one. Without
    # this, every space is a candidate match start and difflib slows down ~10x on long CoTs.
    matcher = difflib.SequenceMatcher(str.isspace, a_tokens, b_tokens, autojunk=False)
    blocks = _drop_whitespace_only_matches(matcher.get_matching_blocks(), a_tokens)
    ops: list[DiffOp] = []
    i = j = 0
    for block_a, block_b, size in blocks:
        if i < block_a:
            _emit(ops, "delete", a_offsets[i], a_offsets[block_a], b_offsets[j], b_offsets[j], a)
        if j < block_b:
            _emit(ops, "insert", a_offsets[block_a], a_offsets[block_a], b_offsets[j], b_offsets[block_b], b)
        if size:
            _emit(
                ops,
                "equal",
                a_offsets[block_a],
                a_offsets[block_a + size],
                b_offsets[block_b],
                b_offsets[block_b + size],
                a,
            )
        i, j = block_a + size, block_b + size
    return ops


def _offsets(tokens: list[str]) -> list[int]:
    """Start offset of each token, plus the total length at the end."""
    offsets = [0]
    for token in tokens:
        offsets.append(offsets[-1] + len(token))
    return offsets


def _drop_whitespace_only_matches(blocks: list[difflib.Match], a_tokens: list[str]) -> list[tuple[int, int, int]]:
    """Matching blocks without lone whitespace matches between two changes.

    Otherwise "red car" vs "blue bike" reads as delete "red", equal " ", insert "blue", ...:
    a single shared space splitting one change into two. The final (sentinel) block is kept.
    """
    kept: list[tuple[int, int, int]] = []
    for index, (block_a, block_b, size) in enumerate(blocks):
        is_last = index == len(blocks) - 1
        only_space = size > 0 and all(token.isspace() for token in a_tokens[block_a : block_a + size])
        if only_space and not is_last:
            previous_end = (kept[-1][0] + kept[-1][2], kept[-1][1] + kept[-1][2]) if kept else (0, 0)
            touches_change_before = previous_end != (block_a, block_b)
            following = blocks[index + 1]
            touches_change_after = (following.a, following.b) != (block_a + size, block_b + size)
            if touches_change_before and touches_change_after:
                continue
        kept.append((block_a, block_b, size))
    return kept


def _emit(ops: list[DiffOp], kind: DiffKind, a0: int, a1: int, b0: int, b1: int, source: str) -> None:
    """Append an operation, merging it into the previous one of the same kind."""
    text = source[a0:a1] if kind != "insert" else source[b0:b1]
    if not text:
        return
    if ops and ops[-1].kind == kind and ops[-1].a_end == a0 and ops[-1].b_end == b0:
        last = ops.pop()
        ops.append(DiffOp(kind, last.a_start, a1, last.b_start, b1, last.text + text))
        return
    ops.append(DiffOp(kind, a0, a1, b0, b1, text))
