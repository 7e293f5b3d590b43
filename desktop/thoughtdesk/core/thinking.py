"""A reasoning model's thinking apart from its answer (issue 24): inline ``<think>`` blocks split
off the visible text, thinking fields read defensively, the reasoning effort each provider
understands, and tokens counted where the provider gave no count.

Nothing here raises on what a model wrote: a malformed answer (an unclosed ``<think>``, nested
or repeated tags, a thinking field that is not text) is split as well as it can be and the
split says what was odd in ``note`` (stored with the CoT, shown to the user), so nothing is
lost and nothing is a traceback. Splitting is linear in the text's length (``str.find`` and
``str.rfind``): a 10 MB thinking block takes milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The tags reasoning models write around their thinking (DeepSeek-R1, QwQ, Qwen3, Phi-4-reasoning).
DEFAULT_THINK_TAGS = ("<think>", "</think>")
#: Other pairs seen in chat templates (the GGUF header's facts name them): OpenThoughts' Bespoke
#: layout and Sky-T1. Used for a local model whose template names one of them.
KNOWN_THINK_TAGS = (
    DEFAULT_THINK_TAGS,
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("<thinking>", "</thinking>"),
)

#: The reasoning efforts a model can be asked for (``--reasoning-effort``, the planner,
#: Settings). ``none`` asks for no thinking where the provider can switch it off.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")

#: Anthropic's thinking budget (``thinking.budget_tokens``) per effort: at least 1,024 (the API's
#: minimum), always below max_tokens (see :func:`anthropic_thinking`).
ANTHROPIC_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768, "max": 65536}
#: The least answer room left beside Anthropic's thinking budget (tokens).
ANTHROPIC_ANSWER_ROOM = 1024

#: Max tokens a new run proposes for a reasoning effort: typical traces of reasoning models run
#: to a few thousand tokens (R1's on GSM8K: ~1-3k; on MATH: 3-8k), so 256 cut nearly all of them.
MAX_TOKENS_FOR_EFFORT = {
    "none": 1024,
    "minimal": 2048,
    "low": 4096,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
    "max": 32768,
}
#: Below this many max tokens a model asked to think is likely cut mid-trace (the planner warns).
LIKELY_TOO_SMALL = 2048


@dataclass(frozen=True, slots=True)
class ThinkingSplit:
    """A text split into its thinking and its visible part.

    ``reasoning`` is the thinking without its tags (None: the text held no thinking; ``""``: an
    empty block, as R1 writes when it skips thinking); ``visible`` the rest, stripped of the
    whitespace around it; ``note`` what was odd, in words (None when nothing was);
    ``unclosed`` True when the thinking never ended (cut by the token limit, or a broken model).
    """

    reasoning: str | None
    visible: str
    note: str | None = None
    unclosed: bool = False


def parse_think_tags(text: str | None) -> tuple[str, str] | None:
    """``"<think>,</think>"`` as a pair of tags; ``""`` or ``"none"``: None (never split).
    ValueError saying what is wrong for anything else."""
    if text is None:
        return DEFAULT_THINK_TAGS
    value = text.strip()
    if value.lower() in ("", "none", "off"):
        return None
    opening, sep, closing = value.partition(",")
    opening, closing = opening.strip(), closing.strip()
    if not sep or not opening or not closing or "," in closing:
        raise ValueError(f"think tags {text!r}: write OPEN,CLOSE, e.g. '<think>,</think>', or 'none'")
    if opening == closing:
        raise ValueError(f"think tags {text!r}: the opening and closing tags must differ")
    return opening, closing


def split_thinking(text: str, tags: tuple[str, str] | None = DEFAULT_THINK_TAGS) -> ThinkingSplit:
    """``text`` split at its think tags.

    - ``<think>A</think>B``: reasoning A, visible B.
    - ``A</think>B`` (the opening tag was in the prompt: Qwen3-Thinking's and R1's templates
      open it): reasoning A, visible B.
    - ``<think>A`` with no closing tag: reasoning A, visible empty, ``unclosed``.
    - Several or nested blocks: split at the LAST closing tag (as Qwen's own code does), the
      inner tags kept in the reasoning as written, with a note.
    - An opening tag that is not at the start, without a closing tag after it: not thinking
      (a text that mentions the tag), kept as visible text.
    ``tags`` None: never split.
    """
    if tags is None or not text:
        return ThinkingSplit(None, text)
    opening, closing = tags
    end = text.rfind(closing)
    stripped = text.lstrip()
    starts_open = stripped.startswith(opening)
    if end < 0:
        if not starts_open:
            return ThinkingSplit(None, text)
        inner = stripped[len(opening) :]
        said = f"the thinking was never closed (no {closing}): all the text after {opening} is kept as thinking"
        return ThinkingSplit(inner.strip(), "", said, unclosed=True)
    before, after = text[:end], text[end + len(closing) :]
    head = before.lstrip()
    if head.startswith(opening):
        head = head[len(opening) :]
    elif opening in head:
        # "Preamble <think>x</think> answer": the part before the block is visible text too.
        index = head.find(opening)
        preamble, head = head[:index], head[index + len(opening) :]
        after = preamble.rstrip() + ("\n\n" if preamble.strip() and after.strip() else "") + after.lstrip()
    note = None
    openings, closings = text.count(opening), text.count(closing)
    if openings > 1 or closings > 1:
        note = (
            f"the text holds {openings} {opening} and {closings} {closing} tags (nested or repeated "
            f"blocks): split at the last {closing}, the inner tags kept in the thinking as written"
        )
    return ThinkingSplit(head.strip(), after.strip(), note)


def thinking_field(value: Any, where: str) -> tuple[str | None, str | None]:
    """A thinking field a server sent (``message.reasoning_content``, a delta's ``reasoning``...)
    as text: ``(text, note)``. A string is the text; null or absent is none; a list of strings
    or of ``{"text": ...}`` objects (some servers send reasoning details) is joined; anything
    else is not used, with a note naming ``where`` (the raw answer keeps it)."""
    if value is None:
        return None, None
    if isinstance(value, str):
        return value, None
    if isinstance(value, list) and all(
        isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("text"), str)) for item in value
    ):
        return "".join(item if isinstance(item, str) else item["text"] for item in value), None
    kind = {dict: "an object", list: "a list", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )
    return None, f"{where} is {kind}, not text: not used as thinking (the raw answer keeps it)"


def estimate_reasoning_tokens(text: str | None) -> int | None:
    """Tokens of ``text`` at about 4 characters a token (the price table's estimate), None for none."""
    if text is None:
        return None
    return max(1, round(len(text) / 4)) if text else 0


def check_effort(value: str | None, where: str = "reasoning effort") -> str | None:
    """``value`` lower-cased if it is one of REASONING_EFFORTS (or None/empty: not set);
    ValueError naming the choices otherwise."""
    if value is None or not str(value).strip():
        return None
    effort = str(value).strip().lower()
    if effort not in REASONING_EFFORTS:
        raise ValueError(f"{where} {value!r}: use one of {', '.join(REASONING_EFFORTS)}")
    return effort


def anthropic_thinking(effort: str | None, max_tokens: int) -> dict[str, Any] | None:
    """Anthropic's ``thinking`` request field for ``effort``: disabled for ``none``, else enabled
    with the effort's budget, kept at least ANTHROPIC_ANSWER_ROOM below ``max_tokens`` (the API
    counts thinking inside max_tokens and refuses a budget >= it); None when there is no room
    for the API's 1,024-token minimum (the planner says so) or no effort is set."""
    if effort is None:
        return None
    if effort == "none":
        return {"type": "disabled"}
    budget = min(ANTHROPIC_BUDGETS[effort], max_tokens - ANTHROPIC_ANSWER_ROOM)
    if budget < 1024:
        return None
    return {"type": "enabled", "budget_tokens": budget}


def openai_effort(effort: str | None) -> str | None:
    """``reasoning_effort`` for an OpenAI-compatible server (OpenAI, DeepSeek, SGLang, llama.cpp's
    server all read this name; vLLM passes it to the chat template); the value as chosen."""
    return effort
