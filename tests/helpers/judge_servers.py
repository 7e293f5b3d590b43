"""Fake pairwise judges on 127.0.0.1 (issue 26): OpenAI-compatible servers that read the two
answers out of a pairwise prompt (MT-bench's ``[The Start of Assistant A's Answer]`` markers)
and answer with a verdict.

* :func:`first_judge`: always prefers the answer shown first (position consistency 0.0,
  first-position rate 1.0);
* :func:`right_answer_judge`: prefers the answer whose CoT is one of the correct ones, whatever
  the order (position consistency 1.0); a tie when both or neither are;
* ``JudgeServer(verdict=...)`` with any function of (answer A, answer B) -> text, e.g. a text
  holding both ``[[A]]`` and ``[[B]]``, nothing, or 10 MB; ``delay`` seconds before each answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from tests.helpers.servers import FakeModelServer, Recorded, Reply

_ANSWER = re.compile(r"\[The Start of Assistant ([AB])'s Answer\]\n(.*?)\n\[The End of Assistant \1's Answer\]", re.S)

Verdict = Callable[[str, str], str]


def answers(prompt: str) -> tuple[str, str]:
    """Answers A and B as a pairwise prompt shows them."""
    found = dict((m.group(1), m.group(2)) for m in _ANSWER.finditer(prompt))
    return found.get("A", ""), found.get("B", "")


class JudgeServer(FakeModelServer):
    """An OpenAI-compatible chat server whose every answer is ``verdict(answer_a, answer_b)``."""

    def __init__(self, verdict: Verdict, *, delay: float = 0.0, **options: Any) -> None:
        super().__init__(**options)
        self.verdict = verdict
        self.delay = delay

    def _normal(self, record: Recorded, anthropic: bool) -> Reply:
        payload = record.json if isinstance(record.json, dict) else {}
        messages = payload.get("messages") or [{"content": ""}]
        if self.delay:
            time.sleep(self.delay)
        text = self.verdict(*answers(str(messages[-1].get("content", ""))))
        return Reply(
            200,
            {
                "id": "judge",
                "object": "chat.completion",
                "model": payload.get("model", ""),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340},
            },
        )


def first_judge(**options: Any) -> JudgeServer:
    """Always prefers the answer shown first."""
    return JudgeServer(lambda a, b: "Assistant A reasons more carefully. [[A]]", **options)


def right_answer_judge(correct_texts: Iterable[str], **options: Any) -> JudgeServer:
    """Prefers the answer whose CoT text is one of ``correct_texts``; [[C]] when both or neither."""
    correct = [text.strip() for text in correct_texts if text.strip()]

    def verdict(a: str, b: str) -> str:
        right_a = any(a.startswith(text) for text in correct)
        right_b = any(b.startswith(text) for text in correct)
        if right_a == right_b:
            return "Both answers are equally good. [[C]]"
        return "Only one answer is right. " + ("[[A]]" if right_a else "[[B]]")

    return JudgeServer(verdict, **options)
