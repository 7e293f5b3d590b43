"""Text from datasets and models as HTML that shows exactly its characters, for review reports.

The rules are the app's (``ui/review/compare/safe_text.py``): every character of data goes
through :func:`html.escape`, line breaks Qt would honour become ``<br/>``, and nothing from the
data is ever markup. A report is read outside ThoughtDesk, where nobody can inspect the raw
text, so two more rules apply:

* **Invisible characters are shown.** Bidirectional overrides and isolates (U+202A-U+202E,
  U+2066-U+2069) can make a sentence read backwards on paper; zero-width and other format
  characters can hide text; control characters and lone surrogates cannot even be written as
  UTF-8. Each is replaced by a visible ``<U+XXXX>`` mark, as everywhere in the app
  (:func:`thoughtdesk.core.visible_text.reveal`), so the reader sees that it is there and the
  rest of the text reads in its stored order.
* **Big text is cut.** A text longer than the report's limit is cut at the limit with a note
  saying how much was left out, so a 10 MB CoT cannot make a 10 MB page.
"""

from __future__ import annotations

import html
import re

from thoughtdesk.core.visible_text import reveal

#: Characters Qt treats as line or paragraph breaks, plus the usual ones (as the app does).
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]")

#: The default longest text shown in full (characters): about eight printed pages.
DEFAULT_MAX_CHARS = 20_000


def cut(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to at most ``limit`` characters and how many were left out."""
    if limit <= 0 or len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def omitted_note(left_out: int, total: int) -> str:
    """The note after a cut text (plain text; escape it like any other)."""
    return (
        f"[... {left_out:,} more characters not shown: the text has {total:,} characters; "
        "the full text is in the ThoughtDesk library]"
    )


def text_html(text: str | None, limit: int = DEFAULT_MAX_CHARS) -> str:
    """``text`` as escaped HTML: invisible characters marked, line breaks as ``<br/>``, cut at
    ``limit`` characters (0: never) with a note in italics. ``None`` is an empty string."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    shown, left_out = cut(text, limit)
    body = escaped(shown)
    if left_out:
        body += f'<br/><i style="color: #444444;">{escaped(omitted_note(left_out, len(text)))}</i>'
    return body


def escaped(text: str) -> str:
    """``text`` escaped (quotes too), invisible characters marked, line breaks as ``<br/>``."""
    return _LINE_BREAKS.sub("<br/>", html.escape(reveal(text), quote=True))
