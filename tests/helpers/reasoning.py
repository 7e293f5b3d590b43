"""Reasoning traces in a library for tests (issue 24): CoTs with thinking, finish reasons and
reasoning tokens written through the bulk writer, as a generation run or an import stores them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.writer import OnDuplicate, SampleWriter

CHOICES = ["5", "7", "9"]


def reasoning_cot(
    key: int,
    finish: str | None,
    correct: bool | None,
    *,
    reasoning: str | None,
    tokens: int | None,
    instruction: str = "qa",
) -> GeneratedCot:
    """A CoT whose visible text answers B (correct) or A, with its answer scored accordingly."""
    return GeneratedCot(
        id=f"c{key}",
        cot="The answer is B." if correct else "The answer is A.",
        model="{'name': 'r1'}",
        instruction=instruction,
        reasoning=reasoning,
        finish_reason=finish,
        reasoning_tokens=tokens,
        answers=[Answer(id=f"a{key}", answer="B" if correct else "A", correct_answer=correct)],
    )


def write_samples(path: Path, collection: str, cots_per_sample: Sequence[Sequence[GeneratedCot]]) -> Path:
    """A collection ``collection`` in the library at ``path`` (created if absent), one sample
    ``s<i>`` of dataset ``arith``/``test`` ("3 + 4?", choices 5/7/9, gold 7) per list of CoTs."""
    with Library.open(path) as lib:
        with lib.transaction():
            cid = lib.create_collection(collection)
            writer = SampleWriter(lib, cid, OnDuplicate.FAIL)
            for i, cots in enumerate(cots_per_sample):
                sample = Sample(id=f"s{i}", question="3 + 4?", choices=CHOICES, answer=["7"], generated_cot=list(cots))
                writer.add("arith", "test", sample)
            writer.close("arith")
    return path


def mixed_outcomes(path: Path, collection: str = "c") -> Path:
    """5 samples: 2 correct, 1 incorrect, 2 cut by the token limit (one correct before the cut);
    4 with reasoning, reasoning tokens 100, 300, 4000 and one not known."""
    cots = [
        reasoning_cot(0, "stop", True, reasoning="Let me add. Wait, 3 + 4 = 7.", tokens=100),
        reasoning_cot(1, "stop", True, reasoning="3 + 4 = 7.", tokens=300),
        reasoning_cot(2, "stop", False, reasoning=None, tokens=None),
        reasoning_cot(3, "length", False, reasoning="Let me check 3 + 4 ...", tokens=4000),
        reasoning_cot(4, "length", True, reasoning="Alternatively", tokens=None),
    ]
    return write_samples(path, collection, [[cot] for cot in cots])


def long_trace(chars: int, *, seed: int = 0) -> str:
    """A thinking of about ``chars`` characters as reasoning models write it: paragraphs of a few
    sentences, about one in five opening with a self-correction ("Wait,", "Alternatively,", "Let
    me check"), and a little markup that must stay text (``<b>``, ``&amp;``)."""
    import random

    rng = random.Random(seed)
    words = "the patient has a fever so we compute three plus four equals seven and then check the dose".split()
    openers = ["Wait, ", "Alternatively, ", "Let me check: ", "Hmm. ", "But wait, ", "Actually, "]
    paragraphs: list[str] = []
    size = 0
    while size < chars:
        sentences = [
            " ".join(rng.choice(words) for _ in range(rng.randint(8, 20))).capitalize() + "." for _ in range(4)
        ]
        paragraph = " ".join(sentences)
        if rng.random() < 0.2:
            paragraph = rng.choice(openers) + paragraph
        if rng.random() < 0.02:
            paragraph += " <b>bold?</b> &amp; <img src=x>"
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)[:chars]
