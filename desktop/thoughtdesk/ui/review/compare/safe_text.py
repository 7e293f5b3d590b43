"""Escaped HTML for untrusted text (dataset questions, CoTs, model output).

Qt's rich-text engine would happily follow ``<a href="file:///...">``, load ``<img>`` sources
or turn ``<b>`` into bold. Everything here builds HTML in which *every* piece of data text went
through :func:`html.escape`, and the only markup is markup we wrote (``span`` with a background
colour, ``br``, a wrapping ``div``). Colours are checked to be ``#rrggbb`` before they are put in
a style attribute, so even a colour cannot carry markup.

This module is pure Python (no Qt import) so it can be tested without a display; widgets pass
its output to ``QTextDocument.setHtml``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

from thoughtdesk.core.review.compare.word_diff import DiffOp
from thoughtdesk.core.sentences import Span
from thoughtdesk.core.visible_text import escape_of, has_invisible, split_invisible

_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
# Characters Qt treats as line or paragraph breaks, plus the usual ones.
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]")

#: Diff colours per theme: (inserted background, deleted background); WCAG >= 4.5 with the text.
DIFF_COLOURS: dict[str, tuple[str, str]] = {
    "light": ("#b7f0c0", "#f7c1c1"),
    "dark": ("#1d5a2a", "#7a2424"),
}
TEXT_COLOURS: dict[str, str] = {"light": "#000000", "dark": "#ffffff"}
#: The style of an invisible character's escape (``<U+202E>``): its own colours, readable on
#: any theme and over any highlight, so it never passes for text of the data.
INVISIBLE_STYLE = "background-color: #5c5c5c; color: #ffffff;"


def to_html_escaped(text: str) -> str:
    """``text`` as HTML that shows exactly these characters: escaped, line breaks as ``<br/>``,
    invisible characters (bidi controls, zero-width spaces) as a styled ``<U+202E>``.

    Runs of spaces are kept by the ``white-space: pre-wrap`` of :func:`wrap_document`.
    """
    if not isinstance(text, str):
        raise TypeError(f"to_html_escaped needs a str, got {type(text).__name__}")
    if has_invisible(text):
        return "".join(
            f'<span style="{INVISIBLE_STYLE}">{html.escape(escape_of(piece))}</span>'
            if invisible
            else _LINE_BREAKS.sub("<br/>", html.escape(piece, quote=True))
            for piece, invisible in split_invisible(text)
        )
    escaped = html.escape(text, quote=True)
    return _LINE_BREAKS.sub("<br/>", escaped)


def wrap_document(body: str) -> str:
    """Wrap HTML produced by this module into a block that keeps spaces and wraps long lines."""
    return f'<div style="white-space: pre-wrap;">{body}</div>'


def safe_colour(colour: str) -> str:
    """``colour`` if it is ``#rrggbb``; otherwise ``ValueError`` (never put unchecked text in CSS)."""
    if not isinstance(colour, str) or not _COLOUR.match(colour):
        raise ValueError(f"colour must be #rrggbb, got {colour!r}")
    return colour


def highlighted_span(text: str, background: str, foreground: str, title: str | None = None) -> str:
    """Escaped ``text`` inside a coloured ``span``."""
    style = f"background-color: {safe_colour(background)}; color: {safe_colour(foreground)};"
    # Qt's rich text ignores the title attribute for tooltips, but it is escaped all the same.
    title_attr = f' title="{html.escape(title, quote=True)}"' if title else ""
    return f'<span style="{style}"{title_attr}>{to_html_escaped(text)}</span>'


def highlighted_cot_html(
    text: str,
    sentences: Sequence[Span],
    group_of: Sequence[int | None],
    colours: Sequence[str] | Mapping[int, str],
    theme: str = "light",
) -> str:
    """HTML of one CoT with each grouped sentence on its group's background colour.

    ``sentences`` are spans into ``text`` and ``group_of[i]`` the group id of sentence ``i``
    (``None``: not highlighted). ``colours`` is a palette list (group ``g`` gets
    ``colours[g % len(colours)]``) or a mapping from group id to colour. Text between sentences
    is kept, escaped, so the result shows all of ``text``.
    """
    if len(sentences) != len(group_of):
        raise ValueError(f"{len(sentences)} sentences but {len(group_of)} group entries")
    foreground = TEXT_COLOURS.get(theme, TEXT_COLOURS["light"])
    parts: list[str] = []
    position = 0
    for span, group in zip(sentences, group_of, strict=True):
        if span.start < position or span.end > len(text) or span.start > span.end:
            raise ValueError(f"sentence span {span.start}:{span.end} does not fit the text in order")
        parts.append(to_html_escaped(text[position : span.start]))
        piece = text[span.start : span.end]
        if group is None:
            parts.append(to_html_escaped(piece))
        else:
            parts.append(highlighted_span(piece, _colour_for(group, colours), foreground))
        position = span.end
    parts.append(to_html_escaped(text[position:]))
    return wrap_document("".join(parts))


def diff_side_html(ops: Sequence[DiffOp], side: str, theme: str = "light") -> str:
    """HTML of one side of a word diff: ``side="a"`` marks deletions, ``side="b"`` insertions.

    Deleted text is also struck through and inserted text underlined, so the marks do not rely
    on colour alone.
    """
    if side not in ("a", "b"):
        raise ValueError(f"side is 'a' or 'b', got {side!r}")
    inserted, deleted = DIFF_COLOURS.get(theme, DIFF_COLOURS["light"])
    foreground = TEXT_COLOURS.get(theme, TEXT_COLOURS["light"])
    parts: list[str] = []
    for op in ops:
        if op.kind == "equal":
            parts.append(to_html_escaped(op.text))
        elif op.kind == "delete" and side == "a":
            parts.append(f"<s>{highlighted_span(op.text, deleted, foreground)}</s>")
        elif op.kind == "insert" and side == "b":
            parts.append(f"<u>{highlighted_span(op.text, inserted, foreground)}</u>")
    return wrap_document("".join(parts))


def _colour_for(group: int, colours: Sequence[str] | Mapping[int, str]) -> str:
    if isinstance(colours, Mapping):
        return colours[group]
    if not colours:
        raise ValueError("no colours to highlight with")
    return colours[group % len(colours)]
