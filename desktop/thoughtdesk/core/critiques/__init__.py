"""Critiques (Digital Socrates): a model's structured judgement of a CoT, and humans' ratings.

No Qt. Public API:

* records: :data:`DIMENSIONS`, :data:`ELEMENTS`, :class:`ParsedCritique`, :class:`ElementOutcome`,
  :class:`Critique`, :class:`CritiqueRating`, :class:`ExplanationRating`;
* store: :func:`add_critique`, :func:`add_imported` (bulk, for imports), :func:`critique_by_pk`,
  :func:`critiques_for_cots`, :func:`explanation_ratings_for_cots`, :func:`set_explanation_rating`,
  :func:`set_critique_rating`;
* DS Critique Bank files: :mod:`thoughtdesk.core.critiques.dscb` (the format, reading),
  :mod:`.dscb_mapping` (to ThoughtDesk records), :mod:`.dscb_export` (back; imported by module path).
"""

from thoughtdesk.core.critiques.records import (
    CRITIQUE_SCORES,
    DIMENSION_HELP,
    DIMENSIONS,
    ELEMENTS,
    EXPLANATION_SCORES,
    Critique,
    CritiqueRating,
    ElementOutcome,
    ExplanationRating,
    ParsedCritique,
)
from thoughtdesk.core.critiques.store import (
    add_critique,
    add_critique_rating,
    add_explanation_rating,
    add_imported,
    critique_by_pk,
    critiques_for_cots,
    explanation_ratings_for_cots,
    set_critique_rating,
    set_explanation_rating,
)

__all__ = [
    "CRITIQUE_SCORES",
    "DIMENSIONS",
    "DIMENSION_HELP",
    "ELEMENTS",
    "EXPLANATION_SCORES",
    "Critique",
    "CritiqueRating",
    "ElementOutcome",
    "ExplanationRating",
    "ParsedCritique",
    "add_critique",
    "add_critique_rating",
    "add_explanation_rating",
    "add_imported",
    "critique_by_pk",
    "critiques_for_cots",
    "explanation_ratings_for_cots",
    "set_critique_rating",
    "set_explanation_rating",
]
