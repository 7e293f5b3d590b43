"""The keyboard shortcuts list (Help ▸ Keyboard shortcuts)."""

from __future__ import annotations

#: (keys, what they do), in the order the list shows them.
SHORTCUTS: list[tuple[str, str]] = [
    ("Ctrl+F", "search the samples"),
    ("Up / Down, j / k", "next / previous sample in the table"),
    ("Ctrl+I", "import a file"),
    ("Ctrl+E", "export the selected collection"),
    ("Ctrl+Shift+N", "new library"),
    ("Ctrl+O", "open a library"),
    ("Escape", "clear the search"),
    ("Ctrl+1 / 2 / 3 / 4", "Samples / Review / Results / Runs tab"),
    ("Ctrl+G", "plan a generation run"),
    ("Ctrl+Shift+G", "critique CoTs (a critique run)"),
    ("Ctrl+,", "settings"),
    ("Review: 1–9", "toggle a label (on selected text: a span label)"),
    ("Review: j / k", "next / previous CoT"),
    ("Review: n / p", "next / previous sample"),
    ("Review: c", "comment on the CoT"),
    ("Review: s", "mark the CoT preferred"),
    ("Review: Alt+1…5 / Alt+0", "quality score / clear it"),
    ("Review: e then 0…5 / e Delete", "explanation score of the CoT / clear it"),
    ("Review: d then 1…8 / d 0", "toggle a flaw dimension / clear them"),
    ("Review: f / Shift+F", "next / previous critique of the CoT"),
    ("Review: r then 0…3 / r Delete", "rate the focused critique / clear it"),
    ("Review: Ctrl+Z / Ctrl+Shift+Z", "undo / redo"),
    ("Ctrl+Shift+B", "blind review on or off"),
    ("Ctrl+Shift+T", "trajectory of the current CoT (a guided CoT's steps and candidates)"),
    ("?", "this list"),
    ("Ctrl+Q", "quit"),
]


def shortcuts_text() -> str:
    """The list as aligned plain text, one shortcut a line."""
    width = max(len(k) for k, _ in SHORTCUTS)
    return "\n".join(f"{k.ljust(width)}   {v}" for k, v in SHORTCUTS)
