"""Agreement between reviewers on step labels (docs/steps.md): Krippendorff's alpha on the
ratings of steps rated by two or more reviewers, and agreement on the first-error index of step
lists two or more reviewers marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.agreement.kappa import percent_agreement
from thoughtdesk.core.agreement.statistics import krippendorff_alpha
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.store import decode_labels


@dataclass(frozen=True)
class StepAgreement:
    """Agreement on one collection's step labels between ``raters``.

    ``steps``: steps rated by two or more of them; ``alpha_ordinal`` / ``alpha_nominal``:
    Krippendorff's alpha on their ratings (-1 < 0 < +1 as ranks, or as categories);
    ``step_agreement``: percent of agreeing rater pairs per step. ``lists``: step lists whose
    first error two or more of them gave; ``first_error_agreement``: percent of agreeing pairs on
    the index (-1, none wrong, is an index like any other); ``first_error_alpha``: nominal alpha
    on it. None where there is nothing to compare."""

    raters: tuple[str, ...]
    steps: int
    alpha_ordinal: float | None
    alpha_nominal: float | None
    step_agreement: float | None
    lists: int
    first_error_agreement: float | None
    first_error_alpha: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "raters": list(self.raters),
            "steps": self.steps,
            "alpha_ordinal": self.alpha_ordinal,
            "alpha_nominal": self.alpha_nominal,
            "step_agreement": self.step_agreement,
            "lists": self.lists,
            "first_error_agreement": self.first_error_agreement,
            "first_error_alpha": self.first_error_alpha,
        }


def step_agreement(
    library: Library, collection: str, authors: Sequence[str] | None = None, *, models: bool = False
) -> StepAgreement:
    """Agreement of the human step labels in ``collection`` (of ``authors``, default everyone);
    with ``models``, model labels (step judges, rollout labels) are raters too."""
    cid = library.require_collection(collection)
    rows = library.conn.execute(
        "SELECT l.cot_pk, l.sample_pk, l.trace, l.author, l.steps, l.first_error FROM step_label l "
        "LEFT JOIN generated_cot c ON c.id = l.cot_pk "
        "JOIN sample s ON s.id = coalesce(l.sample_pk, c.sample_pk) "
        "WHERE s.collection_id = ? AND (l.kind = 'human' OR ?) ORDER BY l.id",
        (cid, int(models)),
    ).fetchall()
    wanted = set(authors) if authors else None
    ratings: dict[tuple[Any, ...], dict[str, int]] = {}
    firsts: dict[tuple[Any, ...], dict[str, int]] = {}
    raters: set[str] = set()
    for cot_pk, sample_pk, trace, author, steps, first in rows:
        if wanted is not None and author not in wanted:
            continue
        raters.add(author)
        key = (cot_pk, sample_pk, trace)
        for label in decode_labels(steps):
            if label.rating is not None:
                ratings.setdefault((*key, label.step), {})[author] = label.rating
        if first is not None:
            firsts.setdefault(key, {})[author] = first
    order = tuple(sorted(raters))
    step_items = [item for item in ratings.values() if len(item) >= 2]
    list_items = [item for item in firsts.values() if len(item) >= 2]
    step_matrix = [[item.get(rater) for item in step_items] for rater in order]
    first_matrix = [[item.get(rater) for item in list_items] for rater in order]
    return StepAgreement(
        order,
        len(step_items),
        krippendorff_alpha(step_matrix, "ordinal") if step_items else None,
        krippendorff_alpha(step_matrix, "nominal") if step_items else None,
        percent_agreement(step_matrix) if step_items else None,
        len(list_items),
        percent_agreement(first_matrix) if list_items else None,
        krippendorff_alpha(first_matrix, "nominal") if list_items else None,
    )
