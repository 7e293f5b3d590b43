"""Agreement between reviewers per label, from the annotations stored in a library.

Items are the generated CoTs of a collection. An author counts as having rated a CoT when they
left any annotation on it (a label, a comment, a mark, a score: the annotator's unchecked boxes
mean "no"); every label of ``labels`` they did not set to true there counts as ``False``. A span
label counts as the label being true for the CoT. The statistics themselves are
:mod:`thoughtdesk.core.review.agreement_stats` (checked against statsmodels and krippendorff in its tests).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.agreement_stats import AgreementRow, LabelRating
from thoughtdesk.core.review.agreement_stats import agreement_table as _table
from thoughtdesk.core.review.types import LABEL_ON, NON_LABEL_KEYS


def agreement_table(
    library: Library, collection: str, labels: Sequence[str] | None = None, authors: Sequence[str] | None = None
) -> list[AgreementRow]:
    """Cohen's kappa (exactly two authors), Fleiss' kappa and Krippendorff's alpha (two or more)
    and the number of items, per label, between ``authors`` (default: everyone who annotated).

    ``labels`` default: every label key used in the collection, sorted. Kappa and alpha are
    fractions from -1 to 1, ``None`` where undefined (e.g. everyone always said "no").
    """
    collection_id = library.require_collection(collection)
    rows = library.conn.execute(
        """SELECT a.cot_pk, coalesce(a.author, ''), a.key, a.value, a.value_is_json
           FROM annotation a JOIN generated_cot c ON a.cot_pk = c.id
           JOIN sample s ON c.sample_pk = s.id WHERE s.collection_id = ?""",
        (collection_id,),
    ).fetchall()
    wanted_authors = set(authors) if authors is not None else None
    reviewed: dict[int, set[str]] = {}
    true_labels: set[tuple[str, int, str]] = set()
    used: set[str] = set()
    for cot_pk, author, key, value, is_json in rows:
        if wanted_authors is not None and author not in wanted_authors:
            continue
        reviewed.setdefault(cot_pk, set()).add(author)
        if key in NON_LABEL_KEYS:
            continue
        used.add(key)
        decoded = json.loads(value) if is_json and value is not None else value
        if decoded is True or (isinstance(decoded, str) and decoded.strip().lower() == LABEL_ON):
            true_labels.add((author, cot_pk, key))
    wanted_labels = list(labels) if labels is not None else sorted(used)
    ratings = [
        LabelRating(author, str(cot_pk), label, (author, cot_pk, label) in true_labels)
        for cot_pk, cot_authors in sorted(reviewed.items())
        for author in sorted(cot_authors)
        for label in wanted_labels
    ]
    return _table(ratings, wanted_labels)
