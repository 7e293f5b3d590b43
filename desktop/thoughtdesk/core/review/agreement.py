"""Agreement between reviewers per label: the ratings read from a library, and a row of
statistics per label.

The statistics (Cohen's kappa, Fleiss' kappa, Krippendorff's alpha, percent agreement) are
``core.agreement``'s, shared with the critique analysis; ``tests/core/review/test_agreement_stats.py``
checks them against ``statsmodels.stats.inter_rater`` (Cohen, Fleiss) and ``krippendorff.alpha``
(nominal, with missing ratings) on hand-computed and random data. Conventions:

* Ratings are nominal (any hashable value; labels are ``True``/``False``).
* A statistic that is undefined on the data (every rating the same category, so chance
  agreement is 1; fewer than two raters or items) is ``None``, never ``nan``, so a table can
  show "n/a" and the reason is the data, not a bug.
* Cohen's kappa uses the items both raters rated. Fleiss' kappa assumes every item has the same
  number of ratings, so it uses the items rated by *all* raters of the label (``n_complete``).
  Krippendorff's alpha uses every item with at least two ratings: it is the statistic for data
  with missing ratings.

Ratings (:func:`label_ratings`, the one place these rules live). Items are generated CoTs:

* an author who left any annotation on a CoT (a label, a comment, a mark, a score) rated it, for
  every label: the annotator's unchecked boxes mean "no", so a label that author did not set to
  true there counts as ``False``;
* a label is true when any of the author's annotations of that key on that CoT is true (a span
  label counts as the label being true for the CoT);
* what is true is :func:`~thoughtdesk.core.review.types.label_value`'s rule: JSON ``true`` or the
  string ``"true"`` in any case; a value that is neither true nor false (a number, free text)
  is no label rating, so its key is not a label by default (it still shows that the author
  reviewed the CoT);
* keys in :data:`~thoughtdesk.core.review.types.NON_LABEL_KEYS` (comment, preferred, quality,
  score) are never labels.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.agreement.kappa import cohen_kappa, fleiss_kappa, krippendorff_alpha_nominal, percent_agreement
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.annotations import decode_value
from thoughtdesk.core.review.types import NON_LABEL_KEYS, label_value


@dataclass(frozen=True, slots=True)
class LabelRating:
    """One author's value for one label on one item (a generated CoT, by id)."""

    author: str
    item_id: str
    label: str
    value: Hashable


@dataclass(frozen=True, slots=True)
class AgreementRow:
    """Agreement on one label between the authors who rated it.

    ``n_items``: items with at least two ratings (the ones that carry information about
    agreement); ``n_complete``: items rated by every rater (used for Fleiss' kappa). All
    statistics are fractions (kappa and alpha from -1 to 1, ``percent_agreement`` from 0 to 100)
    or ``None`` when undefined on these data.
    """

    label: str
    n_items: int
    n_complete: int
    raters: tuple[str, ...]
    cohen: float | None
    fleiss: float | None
    alpha: float | None
    percent_agreement: float | None


# Reading ------------------------------------------------------------------------------------


def agreement_table(
    library: Library, collection: str, labels: Sequence[str] | None = None, authors: Sequence[str] | None = None
) -> list[AgreementRow]:
    """Cohen's kappa (exactly two authors), Fleiss' kappa and Krippendorff's alpha (two or more)
    and the number of items, per label, between ``authors`` (default: everyone who annotated)
    on the generated CoTs of ``collection`` (by name).

    ``labels`` default: every label key used in the collection, sorted. Kappa and alpha are
    fractions from -1 to 1, ``None`` where undefined (e.g. everyone always said "no").
    """
    collection_id = library.require_collection(collection)
    rows = library.conn.execute(
        """SELECT coalesce(a.author, ''), a.cot_pk, a.key, a.value, a.value_is_json
           FROM annotation a JOIN generated_cot c ON a.cot_pk = c.id
           JOIN sample s ON c.sample_pk = s.id WHERE s.collection_id = ?""",
        (collection_id,),
    ).fetchall()
    wanted = set(authors) if authors is not None else None
    annotations = [
        (author, str(cot_pk), key, decode_value(value, is_json))
        for author, cot_pk, key, value, is_json in rows
        if wanted is None or author in wanted
    ]
    return agreement_rows(label_ratings(annotations, labels), labels)


def label_ratings(
    annotations: Iterable[tuple[str, str, str, Any]], labels: Sequence[str] | None = None
) -> list[LabelRating]:
    """Label ratings, for :func:`agreement_rows`, from (author, item id, key, value) annotations
    with decoded values, by the rules in this module's docstring.

    ``labels`` default: every key that holds a label value (true or false) somewhere, sorted.
    Every author who annotated an item gets one rating per label on it, ``True`` or ``False``.
    """
    reviewed: dict[str, set[str]] = {}
    true_labels: set[tuple[str, str, str]] = set()
    used: set[str] = set()
    for author, item_id, key, value in annotations:
        reviewed.setdefault(item_id, set()).add(author)
        if key in NON_LABEL_KEYS:
            continue
        truth = label_value(value)
        if truth is None:
            continue
        used.add(key)
        if truth:
            true_labels.add((author, item_id, key))
    wanted = list(labels) if labels is not None else sorted(used)
    return [
        LabelRating(author, item_id, label, (author, item_id, label) in true_labels)
        for item_id, item_authors in reviewed.items()
        for author in sorted(item_authors)
        for label in wanted
    ]


def agreement_rows(
    ratings: Iterable[LabelRating | tuple[str, str, str, Hashable]],
    labels: Sequence[str] | None = None,
) -> list[AgreementRow]:
    """Agreement per label between authors, from (author, item_id, label, value) ratings.

    Ratings may be :class:`LabelRating` or plain 4-tuples; ``None`` values are skipped. A later record for the same author,
    item and label replaces an earlier one (the last saved value counts). Rows come in the order
    of ``labels`` or, by default, sorted by label; a label nobody rated gets an empty row.
    """
    latest: dict[str, dict[tuple[str, str], Hashable]] = {}
    for record in ratings:
        author, item_id, label, value = (
            (record.author, record.item_id, record.label, record.value) if isinstance(record, LabelRating) else record
        )
        if value is None:
            continue
        latest.setdefault(label, {})[(author, item_id)] = value
    rows = []
    for label in labels if labels is not None else sorted(latest):
        values = latest.get(label, {})
        raters = tuple(sorted({author for author, _ in values}))
        items = sorted({item for _, item in values})
        matrix = [[values.get((author, item)) for item in items] for author in raters]
        rows.append(_row(label, raters, items, matrix))
    return rows


def _row(label: str, raters: tuple[str, ...], items: list[str], matrix: list[list[Any]]) -> AgreementRow:
    rated_per_item = [sum(row[i] is not None for row in matrix) for i in range(len(items))]
    n_items = sum(count >= 2 for count in rated_per_item)
    complete = [i for i, count in enumerate(rated_per_item) if count == len(raters)]
    cohen = None
    if len(raters) == 2:
        both = [i for i in range(len(items)) if matrix[0][i] is not None and matrix[1][i] is not None]
        cohen = cohen_kappa([matrix[0][i] for i in both], [matrix[1][i] for i in both])
    fleiss = None
    if len(raters) >= 2 and complete:
        categories = sorted({matrix[r][i] for r in range(len(raters)) for i in complete}, key=repr)
        counts = [[sum(matrix[r][i] == c for r in range(len(raters))) for c in categories] for i in complete]
        fleiss = fleiss_kappa(counts)
    alpha = krippendorff_alpha_nominal(matrix) if len(raters) >= 2 else None
    agreement = percent_agreement(matrix) if len(raters) >= 2 else None
    return AgreementRow(
        label, n_items, len(complete) if len(raters) >= 2 else 0, raters, cohen, fleiss, alpha, agreement
    )
