"""The review workbench's core (no Qt): label sets, annotations with undo, review queues,
blind mode, reviewer exchange and agreement. See docs/review.md for the file format.

Public API (import from ``thoughtdesk.core.review``)::

    # Label sets (seeded: "ThoughtSource" default, "Clinical")
    Label(key: str, name: str, colour: str = "#999999", shortcut: int | None = None)
    LabelSet(name: str, labels: tuple[Label, ...], builtin: bool = False, id: int | None = None)
        .by_shortcut(digit: int) -> Label | None
    label_sets(library) -> list[LabelSet]
    label_set(library, name: str = DEFAULT_SET) -> LabelSet          # KeyError if absent
    save_label_set(library, label_set: LabelSet) -> LabelSet          # create/replace a user set
    delete_label_set(library, name: str) -> None
    DEFAULT_SET = "ThoughtSource"; CLINICAL_SET = "Clinical"

    # Annotations: one transaction per change, author + UTC time, n_annotations kept right;
    # the GUI's undo goes through thoughtdesk.core.review.undo (annotation_edit(op), perform,
    # undo, redo: the one undo record of every review edit, ReviewEdit)
    Span(start: int, end: int, text: str = "")                        # [start, end) code points
    StoredAnnotation(pk, cot_pk, author, date, key, value, span: Span | None)
    CotReview(cot_pk, author, labels: dict[str, bool], spans: list[tuple[str, Span]],
              comment: str, preferred: bool, quality: int | None)
    AnnotationOp(cot_pk, author, key, before, after, span=None, description="")  # frozen
    AnnotationStore(library, author: str)
        .annotations(cot_pk, *, author=None) -> list[StoredAnnotation]
        .sample_annotations(sample_pk) -> dict[int, list[StoredAnnotation]]   # cot_pk -> list
        .review(cot_pk, author=None) -> CotReview
        .slot_value(cot_pk, key, span=None, author=None) -> Any | None
        .span(cot_pk, start, end) -> Span                              # ValueError if outside
        .plan_toggle_label(cot_pk, label, span=None) -> AnnotationOp   # no write
        .plan_set_comment(cot_pk, text) -> AnnotationOp
        .plan_set_preferred(cot_pk, preferred: bool) -> AnnotationOp
        .plan_set_quality(cot_pk, score: int | None) -> AnnotationOp   # 1..5
        .apply(op) -> None ; .revert(op) -> None                       # write after / before
        .toggle_label(...) / .set_comment(...) / .set_preferred(...) / .set_quality(...)
            -> AnnotationOp                                            # plan + apply

    # Review queues and blind mode
    QueueFilter(dataset=None, split=None, has_incorrect=False, has_cots=True,
                answer_type=None, not_annotated_by=None)
    ReviewQueue(id, name, collection_id, reviewer, seed, filter, blind, created, position,
                sample_pks: list[int], done: set[int])
        .total / .n_done / .progress_text / .resume_index() -> int
    create_queue(library, name, collection: str, spec: QueueFilter | None = None,
                 size: int | None = 50, seed: int = 0, reviewer: str = "", blind=False)
        -> ReviewQueue
    draw_samples(library, collection_id, spec, size, seed) -> list[int]
    load_queue(library, queue: int | str) -> ReviewQueue ; list_queues(library, collection_id=None)
    set_position(library, queue_id, position) ; mark_done(library, queue_id, sample_pk, done=True)
    delete_queue(library, queue_id)
    blind_order(cot_pks, reviewer, sample_pk) -> list[int]
    blind_labels(ordered_cot_pks) -> dict[int, str]                    # {pk: "CoT 1", ...}

    # Several reviewers
    export_annotations(library, author: str | None, path, *, collection=None) -> int
    export_review(library, author, path, *, collection=None)
        -> ExportCounts(annotations, explanation_ratings, critique_ratings)   # ratings too
    import_annotations(library, path, *, collection=None, strict=False, dry_run=False)
        -> MergeOutcome
    MergeOutcome(path, format, records, added, updated, unchanged, kept, matched_samples,
                matched_cots, authors, unmatched: list[Unmatched(where, reason)], error, dry_run,
                ratings: RatingCounts(records, added, updated, unchanged, kept))
        .ok / .merged / .reasons() / .summary
    cot_content_hash(text) -> "sha256:<hex>"

    # Agreement (thoughtdesk.core.review.agreement: also the statistics and label_ratings)
    agreement_table(library, collection: str, labels=None, authors=None) -> list[AgreementRow]
    AgreementRow(label, n_items, n_complete, raters, cohen, fleiss, alpha, percent_agreement)
    label_value(value) -> bool | None     # the one truth rule: JSON bools, "true"/"false" any case
"""

from thoughtdesk.core.review.agreement import AgreementRow, agreement_table
from thoughtdesk.core.review.annotations import AnnotationStore, review_from, utc_now
from thoughtdesk.core.review.exchange import (
    FORMAT_NAME,
    FORMAT_VERSION,
    ExportCounts,
    cot_content_hash,
    export_annotations,
    export_review,
    import_annotations,
)
from thoughtdesk.core.review.labels import (
    BUILTIN_SETS,
    CLINICAL_SET,
    DEFAULT_SET,
    delete_label_set,
    label_set,
    label_sets,
    save_label_set,
)
from thoughtdesk.core.review.merge_outcome import MergeOutcome, RatingCounts, Unmatched
from thoughtdesk.core.review.queues import (
    QueueFilter,
    ReviewQueue,
    blind_labels,
    blind_order,
    create_queue,
    delete_queue,
    draw_samples,
    list_queues,
    load_queue,
    mark_done,
    set_position,
)
from thoughtdesk.core.review.types import (
    COMMENT_KEY,
    LABEL_OFF,
    LABEL_ON,
    NON_LABEL_KEYS,
    PREFERRED_KEY,
    QUALITY_KEY,
    AnnotationOp,
    CotReview,
    Label,
    LabelSet,
    Span,
    StoredAnnotation,
    label_value,
)

__all__ = [
    "AgreementRow",
    "AnnotationOp",
    "AnnotationStore",
    "BUILTIN_SETS",
    "CLINICAL_SET",
    "COMMENT_KEY",
    "CotReview",
    "DEFAULT_SET",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "LABEL_OFF",
    "LABEL_ON",
    "Label",
    "LabelSet",
    "MergeOutcome",
    "RatingCounts",
    "NON_LABEL_KEYS",
    "PREFERRED_KEY",
    "QUALITY_KEY",
    "QueueFilter",
    "ReviewQueue",
    "Span",
    "StoredAnnotation",
    "Unmatched",
    "agreement_table",
    "blind_labels",
    "blind_order",
    "cot_content_hash",
    "create_queue",
    "delete_label_set",
    "delete_queue",
    "draw_samples",
    "export_annotations",
    "export_review",
    "ExportCounts",
    "import_annotations",
    "label_set",
    "label_value",
    "label_sets",
    "list_queues",
    "load_queue",
    "mark_done",
    "review_from",
    "save_label_set",
    "set_position",
    "utc_now",
]
