"""A prompt that quotes a stored CoT, kept with a reference in place of the CoT (issue 15, point 6).

In the two-step mode the answer-extraction prompt holds the whole CoT it asks about. Stored as
sent, in the request row and in the answer's provenance, a 3 MB CoT grew the library by 9 MB.
Such a prompt is stored as :data:`PREFIX` followed by JSON ``{"cot_pk": N, "parts": [...]}``:
the prompt split at every occurrence of the CoT's text, which is read back from
``generated_cot.cot`` (:func:`expand_prompt`). Whoever reads the prompt (resuming a run, the
request list, the answer's provenance in views and exports) gets the same text as before.

A critique run's prompt quotes the CoT it judges: its request row and the critique's
``prompt_text`` are stored the same way (a 3 MB CoT critiqued cost 3x its size, now 1x).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

#: A CoT at least this long is referenced, not repeated (shorter ones cost less than a reference).
SHARED_CHARS = 1_000
#: How a stored reference starts (a record separator no prompt begins with, then a name).
PREFIX = "\x1ethoughtdesk-prompt-ref:"
#: What stands for a CoT deleted since the prompt was stored.
DELETED_COT = "[the chain of thought this prompt quoted was deleted from the library]"


def prompt_ref(prompt: str, cot_text: str | None, cot_pk: int) -> str:
    """``prompt`` to store: a reference when it quotes ``cot_text`` (CoT ``cot_pk``), at least
    :data:`SHARED_CHARS` long; else ``prompt`` itself."""
    if not cot_text or len(cot_text) < SHARED_CHARS or cot_text not in prompt:
        return prompt
    return PREFIX + json.dumps({"cot_pk": cot_pk, "parts": prompt.split(cot_text)}, ensure_ascii=False)


def is_prompt_ref(text: Any) -> bool:
    return isinstance(text, str) and text.startswith(PREFIX)


def _reference(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text[len(PREFIX) :])
    except ValueError:
        return None
    parts = value.get("parts") if isinstance(value, dict) else None
    if not isinstance(parts, list) or not all(isinstance(part, str) for part in parts):
        return None
    return value


def expand_prompt_with(text: str, cot_text: str | None) -> str:
    """The prompt a stored ``text`` stands for, with ``cot_text`` as the CoT it quotes; ``text``
    itself when it is no reference."""
    reference = _reference(text) if is_prompt_ref(text) else None
    if reference is None:
        return text
    return (cot_text if cot_text is not None else DELETED_COT).join(reference["parts"])


def expand_prompt(conn: sqlite3.Connection, text: str | None, cots: dict[Any, str | None] | None = None) -> str | None:
    """The prompt a stored ``text`` stands for, the CoT read from the library (see the module
    docstring); ``text`` itself when it is no reference. ``cots`` keeps the CoT texts read, by
    key, for a caller expanding many prompts that quote the same CoTs (a CoT's critiques)."""
    if not is_prompt_ref(text):
        return text
    assert text is not None
    reference = _reference(text)
    if reference is None:
        return text
    cot_pk = reference.get("cot_pk")
    if cots is not None and cot_pk in cots:
        return expand_prompt_with(text, cots[cot_pk])
    row = conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()
    cot_text = row[0] if row is not None else None
    if cots is not None:
        cots[cot_pk] = cot_text
    return expand_prompt_with(text, cot_text)


def stored_prompt_ref(conn: sqlite3.Connection, prompt: str | None, cot_pk: int | None) -> str | None:
    """:func:`prompt_ref` of ``prompt`` quoting CoT ``cot_pk``, its text read from the library
    (only for a prompt long enough to hold a CoT worth referencing)."""
    if prompt is None or cot_pk is None or len(prompt) < SHARED_CHARS:
        return prompt
    row = conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()
    return prompt_ref(prompt, row[0] if row is not None else None, cot_pk)
