"""Re-scoring a stored collection with ThoughtDesk's answer extraction.

:func:`rescore` runs :func:`~thoughtdesk.core.evaluation.answers.extract_answer` on every answer of a
collection and writes, per answer:

- the ``td_*`` columns (outcome, extracted value, method, span, reason);
- ``correct_answer`` = ThoughtDesk's verdict: 1 correct, 0 incorrect, NULL not extractable
  (inside the library ThoughtDesk never folds "not extractable" into False; the td_outcome
  column tells it from "never scored"). A ThoughtSource export writes a not-extractable answer as
  ``false`` with the outcome and reason in an extension field, restored on import
  (docs/answer-extraction.md, "Scored answers in ThoughtSource files");
- ``answer_from_choices`` (an extra key, as ThoughtSource writes it) for multiple-choice and
  yes/no samples: the chosen letter ("C"), the label ("yes"/"no"/"maybe") for yes/no samples
  without options, null when nothing could be extracted (as ThoughtSource writes it);
- ``original_scoring``: on the first re-score only, the values the answer had before
  (``{"correct_answer": ..., "answer_from_choices": ...}``, the second key only when it
  existed), so :func:`restore_original_scoring` can put them back and nothing is lost;

and the sample counters ``n_correct``, ``n_incorrect``, ``n_unextractable``.

Work goes in batches of samples, one transaction each: a reader (the results view) sees the
collection fill in while it runs; cancelling stops before the next batch and keeps what was
committed (each answer is either fully old or fully re-scored, and each sample's counters match
its answers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from thoughtdesk.core.errors import Cancelled
from thoughtdesk.core.evaluation.answers import extract_answer
from thoughtdesk.core.library import counters
from thoughtdesk.core.library.store import Library

Progress = Callable[[int, int], None]
Cancel = Callable[[], bool]

#: Samples per transaction: large enough that commits cost little, small enough that a
#: cancel or a live view reacts within a fraction of a second.
BATCH_SAMPLES = 1000

_decode = msgspec.json.decode
_encode = msgspec.json.encode
_CHOICE_TYPES = ("multiplechoice", "bool")


@dataclass
class RescoreOutcome:
    """What a re-score did, in answers (``samples`` counts samples that have answers)."""

    collection: str
    answers: int = 0
    samples: int = 0
    correct: int = 0
    incorrect: int = 0
    unextractable: int = 0
    changed: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        return (
            f"{self.answers} answer(s) of {self.collection!r} re-scored: {self.correct} correct, "
            f"{self.incorrect} incorrect, {self.unextractable} not extractable; "
            f"{self.changed} changed correctness"
        )


def _json_list(text: str | None) -> list:
    if not text:
        return []
    try:
        value = _decode(text)
    except msgspec.DecodeError:
        return []
    return value if isinstance(value, list) else [value]


def _json_object(text: str | None) -> dict:
    if not text:
        return {}
    try:
        value = _decode(text)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _reason_kind(reason: str) -> str:
    # "gold answer 'x' is not among the choices" -> "gold answer is not among the choices"
    head = reason.split(":", 1)[0]
    if "'" in head:
        parts = head.split("'")
        head = " ".join(p.strip() for i, p in enumerate(parts) if i % 2 == 0).strip()
    return head[:80]


def count_answers(lib: Library, collection_id: int) -> int:
    """The number of answers stored in a collection."""
    return lib.conn.execute(
        "SELECT count(*) FROM sample s JOIN generated_cot g ON g.sample_pk = s.id "
        "JOIN answer a ON a.cot_pk = g.id WHERE s.collection_id = ?",
        (collection_id,),
    ).fetchone()[0]


def rescore(
    lib: Library,
    collection: str,
    *,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    batch_samples: int = BATCH_SAMPLES,
) -> RescoreOutcome:
    """Re-score every answer of ``collection`` (see the module docstring for what is written).

    ``progress(done, total)`` is called after each batch, in answers; ``cancel()`` is checked
    before each batch and raises :class:`Cancelled` (batches already done stay re-scored).
    Bad input in an answer (gold not among the choices, empty CoT, overflowing numbers) gives
    a not-extractable outcome with a reason and never stops the run.
    """
    cid = lib.require_collection(collection)
    report = RescoreOutcome(collection)
    total = count_answers(lib, cid)
    conn = lib.conn
    last_pk = 0
    done = 0
    if progress is not None:
        progress(0, total)
    while True:
        if cancel is not None and cancel():
            raise Cancelled(f"re-scoring of {collection!r} ({done} of {total} answers done and kept)")
        bounds = conn.execute(
            "SELECT min(id), max(id) FROM (SELECT id FROM sample WHERE collection_id = ? AND id > ? "
            "ORDER BY id LIMIT ?)",
            (cid, last_pk, batch_samples),
        ).fetchone()
        if bounds[0] is None:
            break
        low, high = bounds
        last_pk = high
        answers, samples = _score_batch(conn, cid, low, high, report)
        if answers:
            with lib.transaction() as tx:
                tx.executemany(
                    "UPDATE answer SET td_outcome = ?, td_value = ?, td_method = ?, td_span_source = ?, "
                    "td_span_start = ?, td_span_end = ?, td_reason = ?, correct_answer = ?, extra = ?, "
                    "original_scoring = coalesce(original_scoring, ?) WHERE id = ?",
                    answers,
                )
                counters.set_scoring(tx, samples)
        done += len(answers)
        if progress is not None:
            progress(done, total)
    report.answers = done
    return report


def _score_batch(
    conn, cid: int, low: int, high: int, report: RescoreOutcome
) -> tuple[list[tuple], list[counters.ScoringCounts]]:
    """Score the answers of samples ``low..high``; return (answer updates, sample updates)."""
    rows = conn.execute(
        "SELECT a.id, s.id, s.type, s.choices, s.answer, a.answer, g.cot, a.correct_answer, a.extra "
        "FROM sample s JOIN generated_cot g ON g.sample_pk = s.id JOIN answer a ON a.cot_pk = g.id "
        "WHERE s.collection_id = ? AND s.id BETWEEN ? AND ? ORDER BY s.id, g.position, a.position",
        (cid, low, high),
    ).fetchall()
    answer_updates: list[tuple] = []
    counts: dict[int, list[int]] = {}
    parsed_pk = None
    choices: list = []
    gold: list = []
    for answer_pk, sample_pk, kind, choices_json, gold_json, output, cot, stored, extra_json in rows:
        if sample_pk != parsed_pk:  # answers of one sample share its choices and gold
            parsed_pk = sample_pk
            choices, gold = _json_list(choices_json), _json_list(gold_json)
            counts[sample_pk] = [0, 0, 0]
        result = extract_answer(kind or "", extraction_output=output, cot=cot, choices=choices, gold=gold)
        outcome = result.outcome
        verdict = result.correct
        slot = counts[sample_pk]
        if outcome == "correct":
            slot[0] += 1
            report.correct += 1
        elif outcome == "incorrect":
            slot[1] += 1
            report.incorrect += 1
        else:
            slot[2] += 1
            report.unextractable += 1
            kind_of_reason = _reason_kind(result.reason)
            report.reasons[kind_of_reason] = report.reasons.get(kind_of_reason, 0) + 1
        new_correct = None if verdict is None else int(verdict)
        if new_correct != stored:
            report.changed += 1
        extra = _json_object(extra_json) if extra_json else {}
        original: dict = {"correct_answer": None if stored is None else bool(stored)}
        if "answer_from_choices" in extra:
            original["answer_from_choices"] = extra["answer_from_choices"]
        new_extra_json = extra_json
        if (kind or "").strip().lower() in _CHOICE_TYPES:
            # The letter; a yes/no sample without options has none: its label then.
            chosen = result.letter or (None if result.value is None else str(result.value))
            extra["answer_from_choices"] = chosen
            new_extra_json = _encode(extra).decode("utf-8")
        value = result.value
        span = result.span
        answer_updates.append(
            (
                outcome,
                None if value is None else str(value),
                result.method or None,
                result.source,
                span[0] if span else None,
                span[1] if span else None,
                result.reason or None,
                new_correct,
                new_extra_json,
                _encode(original).decode("utf-8"),
                answer_pk,
            )
        )
    report.samples += len(counts)
    sample_updates = [counters.ScoringCounts(c[0], c[1], c[2], pk) for pk, c in counts.items()]
    return answer_updates, sample_updates


def restore_original_scoring(lib: Library, collection: str) -> int:
    """Undo re-scoring: put back each answer's imported ``correct_answer`` and
    ``answer_from_choices``, clear the ``td_*`` columns and recount; returns answers restored."""
    cid = lib.require_collection(collection)
    rows = lib.conn.execute(
        "SELECT a.id, a.extra, a.original_scoring FROM sample s JOIN generated_cot g ON g.sample_pk = s.id "
        "JOIN answer a ON a.cot_pk = g.id WHERE s.collection_id = ? AND a.original_scoring IS NOT NULL",
        (cid,),
    ).fetchall()
    updates = []
    for answer_pk, extra_json, original_json in rows:
        original = _json_object(original_json)
        extra = _json_object(extra_json)
        if "answer_from_choices" in original:
            extra["answer_from_choices"] = original["answer_from_choices"]
        else:
            extra.pop("answer_from_choices", None)
        stored = original.get("correct_answer")
        updates.append(
            (
                None if stored is None else int(bool(stored)),
                _encode(extra).decode("utf-8") if extra else None,
                answer_pk,
            )
        )
    with lib.transaction() as tx:
        tx.executemany(
            "UPDATE answer SET correct_answer = ?, extra = ?, original_scoring = NULL, td_outcome = NULL, "
            "td_value = NULL, td_method = NULL, td_span_source = NULL, td_span_start = NULL, "
            "td_span_end = NULL, td_reason = NULL WHERE id = ?",
            updates,
        )
        counters.recount_imported_scoring(tx, cid)
    return len(updates)
