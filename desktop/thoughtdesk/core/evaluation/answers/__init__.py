"""Answer extraction and correctness for every ThoughtSource answer type.

Public API: :func:`extract_answer` and :class:`Extraction` (three outcomes: correct, incorrect,
unextractable), plus the helpers other modules need to show or re-score answers.
"""

from thoughtdesk.core.evaluation.answers.extract import extract_answer
from thoughtdesk.core.evaluation.answers.number import DEFAULT_REL_TOL, numbers_equal, parse_number
from thoughtdesk.core.evaluation.answers.result import (
    CORRECT,
    INCORRECT,
    UNEXTRACTABLE,
    Extraction,
    Outcome,
    TextSource,
)
from thoughtdesk.core.evaluation.answers.text import normalize_text, token_f1

__all__ = [
    "CORRECT",
    "DEFAULT_REL_TOL",
    "INCORRECT",
    "UNEXTRACTABLE",
    "Extraction",
    "Outcome",
    "TextSource",
    "extract_answer",
    "normalize_text",
    "numbers_equal",
    "parse_number",
    "token_f1",
]
