"""Agreement between reviewers per label: the statistics, and the ratings read from a library.

Statistics (Cohen's kappa, Fleiss' kappa, Krippendorff's alpha, percent agreement; alpha is
computed by ``core.evaluation.agreement_stats``, shared with the critique analysis). Why a small
implementation here rather than a library call at run time: the formulas are a few lines each,
while the well-kept libraries that have them pull in large stacks the desktop build would have
to ship (``statsmodels`` needs pandas and patsy, ``scikit-learn`` needs joblib and threadpoolctl
and is big) or are not a dependency (``krippendorff``). ``tests/core/review/test_agreement_stats.py``
checks every function here against ``statsmodels.stats.inter_rater`` (Cohen, Fleiss) and
``krippendorff.alpha`` (nominal, with missing ratings) on hand-computed and random data, so the
two cannot drift apart. Conventions:

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
from typing import TYPE_CHECKING, Any

from thoughtdesk.core.evaluation.agreement_stats import krippendorff_alpha
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.annotations import decode_value
from thoughtdesk.core.review.types import NON_LABEL_KEYS, label_value

if TYPE_CHECKING:
    import numpy as np


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


# Statistics ---------------------------------------------------------------------------------


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' ratings of the same items (paired by position).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with observed agreement ``p_o`` and chance agreement
    ``p_e = sum_c p1(c) * p2(c)`` from each rater's own category frequencies.
    """
    if len(first) != len(second):
        raise ValueError(f"Cohen's kappa needs paired ratings; got {len(first)} and {len(second)}")
    n = len(first)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    categories = set(first) | set(second)
    chance = sum((list(first).count(c) / n) * (list(second).count(c) / n) for c in categories)
    if chance >= 1.0 - 1e-12:
        return None
    return (observed - chance) / (1.0 - chance)


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items x categories table of rating counts (equal row sums).

    ``P_i = (sum_j n_ij^2 - m) / (m (m - 1))``, ``P_bar = mean P_i``, ``p_j = sum_i n_ij / (N m)``,
    ``P_e = sum_j p_j^2``, ``kappa = (P_bar - P_e) / (1 - P_e)``.
    """
    import numpy as np  # imported on first use: the window's start does not need it

    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return None
    raters = table.sum(axis=1)
    if not np.allclose(raters, raters[0]):
        raise ValueError("Fleiss' kappa needs the same number of ratings for every item")
    m = raters[0]
    if m < 2:
        return None
    per_item = (np.square(table).sum(axis=1) - m) / (m * (m - 1))
    mean_agreement = per_item.mean()
    proportions = table.sum(axis=0) / table.sum()
    chance = float(np.square(proportions).sum())
    if chance >= 1.0 - 1e-12:
        return None
    return float((mean_agreement - chance) / (1.0 - chance))


def krippendorff_alpha_nominal(ratings: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's alpha for nominal data; ``ratings[rater][item]``, ``None`` = missing.

    The one implementation is :func:`thoughtdesk.core.evaluation.agreement_stats.krippendorff_alpha`
    (issue 12); this is its nominal level, under the name the review code has always used.
    """
    return krippendorff_alpha(ratings, "nominal")


def percent_agreement(ratings: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Mean pairwise agreement in percent over items with at least two ratings.

    Per item: agreeing ordered pairs / all ordered pairs, ``sum_c n_c (n_c - 1) / (m (m - 1))``;
    for two raters this is the share of items on which they agree.
    """
    if not ratings:
        return None
    shares = []
    for item in range(len(ratings[0])):
        values = [row[item] for row in ratings if row[item] is not None]
        m = len(values)
        if m < 2:
            continue
        counts: dict[Hashable, int] = {}
        for value in values:
            counts[value] = counts.get(value, 0) + 1
        shares.append(sum(c * (c - 1) for c in counts.values()) / (m * (m - 1)))
    return 100.0 * sum(shares) / len(shares) if shares else None


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
