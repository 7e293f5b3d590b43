"""Reading and writing one reviewer's annotations, one small transaction per change.

Annotations live in ThoughtSource's ``annotation`` table (key = label name, value
``"true"``/``"false"``, author, date), so a ThoughtSource export carries them. A span label keeps
its offsets in the row's ``extra`` JSON as ``{"span": {"start", "end", "text"}}``; the export
writes ``extra`` keys back, so spans survive a round trip through a ThoughtSource file too.

Every change is an :class:`AnnotationOp` (slot, value before, value after): the GUI plans an op
and writes it as a review edit (:func:`thoughtdesk.core.review.undo.annotation_edit`), whose undo
puts back the slot's rows exactly; :meth:`AnnotationStore.apply` / :meth:`AnnotationStore.revert`
write an op's after / before value directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from thoughtdesk.core.library import counters
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.library.timestamps import now_iso as utc_now  # the library's one format
from thoughtdesk.core.review.types import (
    COMMENT_KEY,
    LABEL_OFF,
    LABEL_ON,
    PREFERRED_KEY,
    QUALITY_KEY,
    AnnotationOp,
    CotReview,
    Span,
    StoredAnnotation,
    label_value,
)


def decode_value(value: str | None, is_json: int) -> Any:
    return json.loads(value) if is_json and value is not None else value


def _encode(value: Any) -> tuple[str, int]:
    if isinstance(value, str):
        return value, 0
    return json.dumps(value, ensure_ascii=False), 1


def span_from_extra(extra: str | None) -> Span | None:
    if not extra:
        return None
    try:
        obj = json.loads(extra)
    except ValueError:
        return None
    return Span.from_json(obj.get("span")) if isinstance(obj, dict) else None


def row_to_annotation(row: tuple) -> StoredAnnotation:
    """(id, cot_pk, author, date, key, value, value_is_json, extra) -> StoredAnnotation."""
    return StoredAnnotation(
        pk=row[0],
        cot_pk=row[1],
        author=row[2] or "",
        date=row[3] or "",
        key=row[4] or "",
        value=decode_value(row[5], row[6]),
        span=span_from_extra(row[7]),
    )


_SELECT = "SELECT id, cot_pk, author, date, key, value, value_is_json, extra FROM annotation"


def slot_rows(conn, cot_pk: int, author: str, key: str, span: Span | None) -> list[tuple]:
    """Rows of one slot (oldest first). Whole-CoT slots are the rows without span offsets."""
    rows = conn.execute(
        _SELECT + " WHERE cot_pk = ? AND coalesce(author, '') = ? AND key = ? ORDER BY position, id",
        (cot_pk, author, key),
    ).fetchall()
    out = []
    for row in rows:
        found = span_from_extra(row[7])
        if span is None and found is None:
            out.append(row)
        elif span is not None and found is not None and (found.start, found.end) == (span.start, span.end):
            out.append(row)
    return out


def write_slot(conn, cot_pk: int, author: str, key: str, span: Span | None, value: Any, date: str) -> None:
    """Set one slot to ``value`` (``None`` deletes it) inside the caller's transaction.

    A slot that holds several rows (files from ThoughtSource's annotator can repeat a key) keeps
    its last row, updated; the duplicates are dropped because the slot now has one value.
    """
    rows = slot_rows(conn, cot_pk, author, key, span)
    if value is None:
        for row in rows:
            conn.execute("DELETE FROM annotation WHERE id = ?", (row[0],))
        return
    text, is_json = _encode(value)
    if rows:
        for row in rows[:-1]:
            conn.execute("DELETE FROM annotation WHERE id = ?", (row[0],))
        conn.execute(
            "UPDATE annotation SET value = ?, value_is_json = ?, date = ? WHERE id = ?",
            (text, is_json, date, rows[-1][0]),
        )
        return
    position = conn.execute(
        "SELECT coalesce(max(position), -1) + 1 FROM annotation WHERE cot_pk = ?", (cot_pk,)
    ).fetchone()[0]
    extra = json.dumps({"span": span.to_json()}, ensure_ascii=False) if span is not None else None
    conn.execute(
        "INSERT INTO annotation (cot_pk, position, author, date, key, value, value_is_json, extra)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (cot_pk, position, author, date, key, text, is_json, extra),
    )


class AnnotationStore:
    """One reviewer's view of the annotations in a library.

    ``author`` is written on every change (the user's name from settings). Every method that
    changes something does it in its own transaction, commits at once, keeps
    ``sample.n_annotations`` right and returns the :class:`AnnotationOp` it applied.
    """

    def __init__(self, library: Library, author: str) -> None:
        author = author.strip()
        if not author:
            raise ValueError("annotations need an author name (set your name in the settings)")
        self.library = library
        self.author = author

    # Reading ------------------------------------------------------------------------------

    def annotations(self, cot_pk: int, *, author: str | None = None) -> list[StoredAnnotation]:
        """Every annotation of one generated CoT (all authors unless ``author``), stored order."""
        rows = self.library.conn.execute(_SELECT + " WHERE cot_pk = ? ORDER BY position, id", (cot_pk,)).fetchall()
        found = [row_to_annotation(r) for r in rows]
        return [a for a in found if author is None or a.author == author]

    def sample_annotations(
        self, sample_pk: int, *, others_chars: int | None = None
    ) -> dict[int, list[StoredAnnotation]]:
        """Annotations of every generated CoT of a sample: cot_pk -> list (CoTs without any too).
        ``others_chars``: other authors' text values are read cut to that many characters (the
        Review tab shows them a line each; a 10 MB comment is not read for 80 characters)."""
        conn = self.library.conn
        out: dict[int, list[StoredAnnotation]] = {
            r[0]: []
            for r in conn.execute("SELECT id FROM generated_cot WHERE sample_pk = ? ORDER BY position", (sample_pk,))
        }
        value = "a.value"
        if others_chars is not None:  # JSON values whole: cut, they would not decode
            value = (
                "CASE WHEN coalesce(a.author, '') = ? OR a.value_is_json THEN a.value ELSE substr(a.value, 1, ?) END"
            )
        rows = conn.execute(
            f"SELECT a.id, a.cot_pk, a.author, a.date, a.key, {value}, a.value_is_json, a.extra "
            "FROM annotation a JOIN generated_cot c ON a.cot_pk = c.id WHERE c.sample_pk = ? "
            "ORDER BY a.cot_pk, a.position, a.id",
            (sample_pk,) if others_chars is None else (self.author, others_chars, sample_pk),
        ).fetchall()
        for row in rows:
            out.setdefault(row[1], []).append(row_to_annotation(row))
        return out

    def review(self, cot_pk: int, author: str | None = None) -> CotReview:
        """One author's (default: this store's) labels, spans, comment, mark and score on a CoT."""
        who = author or self.author
        return review_from(cot_pk, who, self.annotations(cot_pk, author=who))

    def slot_value(self, cot_pk: int, key: str, span: Span | None = None, author: str | None = None) -> Any:
        """The current value of one slot, or ``None`` when it is empty."""
        rows = slot_rows(self.library.conn, cot_pk, author or self.author, key, span)
        return decode_value(rows[-1][5], rows[-1][6]) if rows else None

    # Planning (no writes) -----------------------------------------------------------------

    def _cot_text(self, cot_pk: int) -> str:
        row = self.library.conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()
        if row is None:
            raise KeyError(f"no generated CoT with key {cot_pk} in {self.library.path}")
        return row[0] or ""

    def span(self, cot_pk: int, start: int, end: int) -> Span:
        """A :class:`Span` of the CoT's text; ``ValueError`` if the offsets are outside it."""
        text = self._cot_text(cot_pk)
        if not 0 <= start < end <= len(text):
            raise ValueError(f"span {start}..{end} is outside CoT {cot_pk} (length {len(text)})")
        return Span(start, end, text[start:end])

    def plan_toggle_label(self, cot_pk: int, label: str, span: Span | None = None) -> AnnotationOp:
        """The op that toggles ``label`` on the whole CoT or on ``span``.

        Whole CoT: absent or ``"false"`` -> ``"true"``, ``"true"`` -> ``"false"`` (ThoughtSource's
        unchecked box, which also records that the reviewer saw the CoT). Span: present -> removed.
        """
        if span is not None:
            self._cot_text(cot_pk)  # a clear error for a CoT that is gone
        before = self.slot_value(cot_pk, label, span)
        if span is not None:
            after = None if before is not None else LABEL_ON
        else:
            after = LABEL_OFF if label_value(before) else LABEL_ON
        where = f" on '{span.text[:30]}'" if span is not None else ""
        return AnnotationOp(cot_pk, self.author, label, before, after, span, f"Toggle {label}{where}")

    def plan_set_comment(self, cot_pk: int, text: str) -> AnnotationOp:
        """The op that sets the comment (empty or blank text removes it)."""
        after = text if text.strip() else None
        return AnnotationOp(
            cot_pk, self.author, COMMENT_KEY, self.slot_value(cot_pk, COMMENT_KEY), after, None, "Edit comment"
        )

    def plan_set_preferred(self, cot_pk: int, preferred: bool) -> AnnotationOp:
        """The op that sets or clears the "preferred" mark (stored as JSON ``true``)."""
        return AnnotationOp(
            cot_pk,
            self.author,
            PREFERRED_KEY,
            self.slot_value(cot_pk, PREFERRED_KEY),
            True if preferred else None,
            None,
            "Mark preferred" if preferred else "Unmark preferred",
        )

    def plan_set_quality(self, cot_pk: int, score: int | None) -> AnnotationOp:
        """The op that sets the 1-5 quality score (``None`` clears it)."""
        if score is not None and (isinstance(score, bool) or score not in (1, 2, 3, 4, 5)):
            raise ValueError(f"a quality score is 1 to 5, not {score!r}")
        return AnnotationOp(
            cot_pk,
            self.author,
            QUALITY_KEY,
            self.slot_value(cot_pk, QUALITY_KEY),
            score,
            None,
            f"Quality {score}" if score is not None else "Clear quality",
        )

    # Writing -------------------------------------------------------------------------------

    def _set(self, op: AnnotationOp, value: Any) -> None:
        with self.library.transaction() as conn:
            write_slot(conn, op.cot_pk, op.author, op.key, op.span, value, utc_now())
            counters.recount_annotations(conn, op.cot_pk)

    def apply(self, op: AnnotationOp) -> None:
        """Set the op's slot to ``op.after`` (one committed transaction, date = now, UTC)."""
        self._set(op, op.after)

    def revert(self, op: AnnotationOp) -> None:
        """Set the op's slot back to ``op.before`` (one committed transaction)."""
        self._set(op, op.before)

    def toggle_label(self, cot_pk: int, label: str, span: Span | None = None) -> AnnotationOp:
        """Plan and apply :meth:`plan_toggle_label`; return the op (for an undo stack)."""
        op = self.plan_toggle_label(cot_pk, label, span)
        self.apply(op)
        return op

    def set_comment(self, cot_pk: int, text: str) -> AnnotationOp:
        op = self.plan_set_comment(cot_pk, text)
        self.apply(op)
        return op

    def set_preferred(self, cot_pk: int, preferred: bool) -> AnnotationOp:
        op = self.plan_set_preferred(cot_pk, preferred)
        self.apply(op)
        return op

    def set_quality(self, cot_pk: int, score: int | None) -> AnnotationOp:
        op = self.plan_set_quality(cot_pk, score)
        self.apply(op)
        return op


def review_from(cot_pk: int, author: str, notes: Iterable[StoredAnnotation]) -> CotReview:
    """``author``'s review of a CoT from its annotations in stored order (later rows win);
    notes of other authors are skipped (so a sample's annotations, read once, can serve)."""
    review = CotReview(cot_pk, author)
    for note in notes:
        if note.author != author:
            continue
        if note.key == COMMENT_KEY:
            review.comment = note.value if isinstance(note.value, str) else ""
        elif note.key == PREFERRED_KEY:
            review.preferred = label_value(note.value) is True
        elif note.key == QUALITY_KEY:
            review.quality = note.value if isinstance(note.value, int) else None
        elif note.span is not None:
            review.spans.append((note.key, note.span))
        else:
            review.labels[note.key] = label_value(note.value) is True
    review.spans.sort(key=lambda pair: (pair[1].start, pair[1].end, pair[0]))
    return review
