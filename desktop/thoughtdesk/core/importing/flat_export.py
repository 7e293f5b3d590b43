"""Exports people use besides ThoughtSource JSON (issue 16, point 16).

* ``samples-jsonl``: one JSON object per sample, with its generated CoTs, their answers and both
  verdicts (the stored ``correct`` and ThoughtDesk's ``td_outcome``) and annotations.
* ``samples-csv``: one row per generated CoT (a sample without one gets one row with the CoT
  columns empty): the sample's fields, the CoT (its thinking, visible text, finish reason and
  reasoning tokens), its first answer and verdicts.
* ``answers-csv``: one row per answer: the per-answer results an analysis in R or pandas starts from.
* ``chat-jsonl``: ``{"messages": [user, assistant]}`` per generated CoT, for fine-tuning; filters
  keep only correct CoTs, preferred ones, or those carrying given labels; a CoT's thinking goes
  in ``<think>`` tags before the answer, in ``reasoning_content``, or nowhere (``thinking``).
* ``parquet``: the ``samples-csv`` rows as a Parquet file (the Hugging Face Hub's format),
  through pyarrow when it is installed.

Every export reports progress in samples read (``progress(done, total)``) and stops with
:class:`~thoughtdesk.core.errors.Cancelled` when ``cancel()`` turns true. Every file is written through :func:`thoughtdesk.core.files.export_file` (a part file renamed
into place), so a failed export leaves nothing under the target's name. Text from datasets and
models is data here: it is written as it is, never interpreted.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.files import PARQUET_EXPORT_KEY, export_file, export_part
from thoughtdesk.core.importing.formats import FLAT_FORMATS
from thoughtdesk.core.library.reader import StoredSample, iter_stored_split
from thoughtdesk.core.library.records import Annotation, GeneratedCot, model_name
from thoughtdesk.core.library.store import Library

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

SAMPLE_COLUMNS = (
    "dataset",
    "split",
    "sample_id",
    "question",
    "type",
    "choices",
    "reference_answer",
    "reference_cot",
    "context",
    "cot_id",
    "model",
    "instruction",
    "cot_trigger",
    "reasoning",
    "cot",
    "finish_reason",
    "reasoning_tokens",
    "answer",
    "correct",
    "td_outcome",
    "annotations",
)
ANSWER_COLUMNS = (
    "dataset",
    "split",
    "sample_id",
    "cot_id",
    "model",
    "instruction",
    "cot_trigger",
    "answer_id",
    "answer_extraction",
    "answer",
    "correct",
    "td_outcome",
    "td_value",
    "td_method",
    "reference_answer",
)

Progress = Callable[[int, int], None]
Cancel = Callable[[], bool]
#: How often (in samples read) progress is reported and cancel is checked.
PROGRESS_STEP = 200


class ParquetUnavailableError(ThoughtDeskError):
    """Parquet was asked for but pyarrow is not installed."""


@dataclass(frozen=True, slots=True)
class ChatFilter:
    """Which generated CoTs become fine-tuning examples: ``correct_only`` (an answer judged
    correct), ``preferred_only`` (annotated ``preferred``), ``labels`` (carrying every one of
    these annotation keys with a true value)."""

    correct_only: bool = False
    preferred_only: bool = False
    labels: tuple[str, ...] = ()


def require_pyarrow() -> None:
    """Raise :class:`ParquetUnavailableError` with what to do when pyarrow is missing."""
    if importlib.util.find_spec("pyarrow") is None:
        from thoughtdesk.core.datasets.generic import parquet_missing_hint

        raise ParquetUnavailableError(
            f"Parquet needs pyarrow, which is not installed: {parquet_missing_hint()}; then export again"
        )


# --- reading what is exported ---------------------------------------------------------------


@dataclass(slots=True)
class _Verdict:
    td_outcome: str | None
    td_value: str | None
    td_method: str | None


def _stored(
    lib: Library, collection: str, progress: Progress | None = None, cancel: Cancel | None = None
) -> Iterator[tuple[str, str, StoredSample, dict[int, list[_Verdict]]]]:
    """Every sample of ``collection`` with its answers' verdicts; reports progress and checks
    cancel every :data:`PROGRESS_STEP` samples (a cancel raises inside the caller's ``with
    export_file``, so the part file goes)."""
    cid = lib.require_collection(collection)
    total = _count(lib, collection) if progress is not None else 0
    done = 0
    for dataset, split in lib.splits(cid):
        for stored in iter_stored_split(lib, cid, dataset, split):
            if done % PROGRESS_STEP == 0:
                if cancel is not None and cancel():
                    raise Cancelled("export")
                if progress is not None:
                    progress(done, total)
            done += 1
            verdicts: dict[int, list[_Verdict]] = {pk: [] for pk in stored.cot_pks}
            if stored.cot_pks:
                marks = ",".join("?" * len(stored.cot_pks))
                for pk, outcome, value, method in lib.conn.execute(
                    f"SELECT cot_pk, td_outcome, td_value, td_method FROM answer WHERE cot_pk IN ({marks}) "
                    "ORDER BY cot_pk, position",
                    stored.cot_pks,
                ):
                    verdicts[pk].append(_Verdict(outcome, value, method))
            yield dataset, split, stored, verdicts
    if progress is not None:
        progress(done, total)


#: What the count of each flat format counts (the CLI's and the export dialog's message).
FLAT_WHAT = {
    "samples-jsonl": "sample(s)",
    "samples-csv": "row(s)",
    "answers-csv": "answer row(s)",
    "chat-jsonl": "chat example(s)",
    "parquet": "row(s)",
}


def describe_written(lib: Library, collection: str, fmt: str, count: int) -> str:
    """``count`` records of format ``fmt`` in words, saying what the rows are: the samples-csv
    and parquet rows are one per generated CoT *or* one per sample without any, so a collection
    with no CoTs gets "3 row(s), one per sample (no generated CoTs)", not "one per generated CoT"."""
    what = FLAT_WHAT.get(fmt, "record(s)")
    if fmt not in ("samples-csv", "parquet"):
        return f"{count} {what}"
    cid = lib.require_collection(collection)
    (cots,) = lib.conn.execute(
        "SELECT count(*) FROM generated_cot g JOIN sample s ON s.id = g.sample_pk WHERE s.collection_id = ?", (cid,)
    ).fetchone()
    cots = min(int(cots), count)
    if cots == count:
        return f"{count} row(s), one per generated CoT"
    if cots == 0:
        return f"{count} row(s), one per sample (no generated CoTs)"
    return f"{count} row(s): {cots} generated CoT(s) and {count - cots} sample(s) without one"


def _count(lib: Library, collection: str) -> int:
    cid = lib.require_collection(collection)
    return int(lib.conn.execute("SELECT count(*) FROM sample WHERE collection_id = ?", (cid,)).fetchone()[0])


def _text_list(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    return str(value)


def _model_name(cot: GeneratedCot) -> str:
    return model_name(cot.model) or ""


def _truthy(annotation: Annotation) -> bool:
    value = annotation.value
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _annotations_json(cot: GeneratedCot) -> list[dict[str, Any]]:
    return [{"key": a.key, "value": a.value, "author": a.author} for a in cot.annotations]


# --- samples --------------------------------------------------------------------------------


def _sample_object(dataset: str, split: str, stored: StoredSample, verdicts: dict[int, list[_Verdict]]) -> dict:
    sample = stored.sample
    cots = []
    for pk, cot in zip(stored.cot_pks, sample.generated_cot, strict=True):
        found = verdicts.get(pk, [])
        cots.append(
            {
                "cot_id": cot.id,
                "model": _model_name(cot),
                "instruction": cot.instruction,
                "cot_trigger": cot.cot_trigger,
                "reasoning": cot.reasoning,
                "cot": cot.cot,
                "finish_reason": cot.finish_reason,
                "reasoning_tokens": cot.reasoning_tokens,
                "answers": [
                    {
                        "answer": answer.answer,
                        "correct": answer.correct_answer,
                        "td_outcome": found[i].td_outcome if i < len(found) else None,
                    }
                    for i, answer in enumerate(cot.answers)
                ],
                "annotations": _annotations_json(cot),
            }
        )
    return {
        "dataset": dataset,
        "split": split,
        "id": sample.id,
        "question": sample.question,
        "type": sample.type,
        "choices": sample.choices,
        "answer": sample.answer,
        "cot": sample.cot,
        "context": sample.context,
        "generated_cots": cots,
    }


def export_samples_jsonl(
    lib: Library, collection: str, path: Path, *, progress: Progress | None = None, cancel: Cancel | None = None
) -> int:
    """One JSON object per sample (see the module docstring); returns the samples written."""
    done = 0
    with export_file(Path(path)) as out:
        for dataset, split, stored, verdicts in _stored(lib, collection, progress, cancel):
            out.write(json.dumps(_sample_object(dataset, split, stored, verdicts), ensure_ascii=False) + "\n")
            done += 1
    return done


def sample_rows(
    lib: Library, collection: str, *, progress: Progress | None = None, cancel: Cancel | None = None
) -> Iterator[dict[str, Any]]:
    """The ``samples-csv`` rows: one per generated CoT (or one per sample without any)."""
    for dataset, split, stored, verdicts in _stored(lib, collection, progress, cancel):
        sample = stored.sample
        base = {
            "dataset": dataset,
            "split": split,
            "sample_id": sample.id,
            "question": sample.question,
            "type": sample.type,
            "choices": " | ".join(str(c) for c in sample.choices or []),
            "reference_answer": _text_list(sample.answer),
            "reference_cot": _text_list(sample.cot),
            "context": sample.context or "",
        }
        if not sample.generated_cot:
            yield {**base, **dict.fromkeys(SAMPLE_COLUMNS[9:], "")}
            continue
        for pk, cot in zip(stored.cot_pks, sample.generated_cot, strict=True):
            first = cot.answers[0] if cot.answers else None
            found = verdicts.get(pk, [])
            yield {
                **base,
                "cot_id": cot.id or "",
                "model": _model_name(cot),
                "instruction": cot.instruction or "",
                "cot_trigger": cot.cot_trigger or "",
                "reasoning": cot.reasoning or "",
                "cot": cot.cot or "",
                "finish_reason": cot.finish_reason or "",
                "reasoning_tokens": "" if cot.reasoning_tokens is None else str(cot.reasoning_tokens),
                "answer": (first.answer or "") if first else "",
                "correct": "" if first is None or first.correct_answer is None else str(first.correct_answer).lower(),
                "td_outcome": (found[0].td_outcome or "") if found else "",
                "annotations": json.dumps(_annotations_json(cot), ensure_ascii=False) if cot.annotations else "",
            }


def _write_csv(path: Path, columns: tuple[str, ...], rows: Iterator[dict[str, Any]]) -> int:
    count = 0
    with export_file(Path(path)) as out:
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
            count += 1
    return count


def export_samples_csv(
    lib: Library, collection: str, path: Path, *, progress: Progress | None = None, cancel: Cancel | None = None
) -> int:
    """The ``samples-csv`` rows as CSV with a header; returns the rows written."""
    return _write_csv(path, SAMPLE_COLUMNS, sample_rows(lib, collection, progress=progress, cancel=cancel))


def answer_rows(
    lib: Library, collection: str, *, progress: Progress | None = None, cancel: Cancel | None = None
) -> Iterator[dict[str, Any]]:
    """One row per stored answer, in stored order."""
    for dataset, split, stored, verdicts in _stored(lib, collection, progress, cancel):
        sample = stored.sample
        for pk, cot in zip(stored.cot_pks, sample.generated_cot, strict=True):
            found = verdicts.get(pk, [])
            for i, answer in enumerate(cot.answers):
                verdict = found[i] if i < len(found) else _Verdict(None, None, None)
                yield {
                    "dataset": dataset,
                    "split": split,
                    "sample_id": sample.id,
                    "cot_id": cot.id or "",
                    "model": _model_name(cot),
                    "instruction": cot.instruction or "",
                    "cot_trigger": cot.cot_trigger or "",
                    "answer_id": answer.id or "",
                    "answer_extraction": answer.answer_extraction or "",
                    "answer": answer.answer or "",
                    "correct": "" if answer.correct_answer is None else str(answer.correct_answer).lower(),
                    "td_outcome": verdict.td_outcome or "",
                    "td_value": verdict.td_value or "",
                    "td_method": verdict.td_method or "",
                    "reference_answer": _text_list(sample.answer),
                }


def export_answers_csv(
    lib: Library, collection: str, path: Path, *, progress: Progress | None = None, cancel: Cancel | None = None
) -> int:
    """One row per answer (see :data:`ANSWER_COLUMNS`); returns the rows written."""
    return _write_csv(path, ANSWER_COLUMNS, answer_rows(lib, collection, progress=progress, cancel=cancel))


# --- chat fine-tuning -----------------------------------------------------------------------


def chat_prompt(stored: StoredSample) -> str:
    """The user turn: the context, the question and the lettered options."""
    sample = stored.sample
    parts = [sample.context.strip()] if sample.context and sample.context.strip() else []
    parts.append(sample.question)
    choices = sample.choices or []
    if choices:
        parts.append("\n".join(f"{LETTERS[i]}) {choice}" for i, choice in enumerate(choices[: len(LETTERS)])))
    return "\n\n".join(parts)


def _kept(cot: GeneratedCot, verdicts: list[_Verdict], wanted: ChatFilter) -> bool:
    if wanted.correct_only:
        correct = any(a.correct_answer is True for a in cot.answers) or any(v.td_outcome == "correct" for v in verdicts)
        if not correct:
            return False
    if wanted.preferred_only and not any(a.key == "preferred" and _truthy(a) for a in cot.annotations):
        return False
    return all(any(a.key == label and _truthy(a) for a in cot.annotations) for label in wanted.labels)


#: How chat-jsonl carries a CoT's thinking: in the assistant's content between ``<think>`` tags
#: (the layout R1 distillation sets and most trainers' reasoning templates use), as a separate
#: ``reasoning_content`` field of the assistant message, or not at all.
CHAT_THINKING = ("think", "field", "none")


def export_chat_jsonl(
    lib: Library,
    collection: str,
    path: Path,
    *,
    filters: ChatFilter = ChatFilter(),
    system: str | None = None,
    thinking: str = "think",
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> int:
    """``{"messages": [...]}`` per kept CoT (OpenAI's and most trainers' chat format): the user
    turn is :func:`chat_prompt`, the assistant turn the CoT followed by its first extracted
    answer when the CoT does not already end with it, with the CoT's thinking (if it has one)
    laid out as ``thinking`` says (:data:`CHAT_THINKING`). Returns the examples written."""
    if thinking not in CHAT_THINKING:
        raise ValueError(f"thinking must be one of {', '.join(CHAT_THINKING)}, not {thinking!r}")
    count = 0
    with export_file(Path(path)) as out:
        for _dataset, _split, stored, verdicts in _stored(lib, collection, progress, cancel):
            for pk, cot in zip(stored.cot_pks, stored.sample.generated_cot, strict=True):
                if not cot.cot or not _kept(cot, verdicts.get(pk, []), filters):
                    continue
                reply = cot.cot.strip()
                answer = next((a.answer for a in cot.answers if a.answer), None)
                if answer and not reply.endswith(answer.strip()):
                    reply += f"\n\nAnswer: {answer.strip()}"
                assistant: dict[str, Any] = {"role": "assistant", "content": reply}
                if cot.reasoning is not None and thinking == "think":
                    assistant["content"] = f"<think>\n{cot.reasoning.strip()}\n</think>\n\n{reply}"
                elif cot.reasoning is not None and thinking == "field":
                    assistant["reasoning_content"] = cot.reasoning
                messages = [{"role": "system", "content": system}] if system else []
                messages += [{"role": "user", "content": chat_prompt(stored)}, assistant]
                out.write(json.dumps({"messages": messages}, ensure_ascii=False) + "\n")
                count += 1
    return count


# --- Parquet --------------------------------------------------------------------------------


def export_parquet(
    lib: Library, collection: str, path: Path, *, progress: Progress | None = None, cancel: Cancel | None = None
) -> int:
    """The ``samples-csv`` rows as a Parquet file (all columns text); returns the rows written."""
    require_pyarrow()
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]  # optional, and untyped when installed
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]  # as above

    rows = list(sample_rows(lib, collection, progress=progress, cancel=cancel))
    table = pa.table({column: pa.array([row[column] for row in rows], type=pa.string()) for column in SAMPLE_COLUMNS})
    # Marks the file as an earlier export, so exporting to it again needs no --force.
    table = table.replace_schema_metadata({PARQUET_EXPORT_KEY: b"samples-csv rows"})
    with export_part(Path(path)) as part:
        pq.write_table(table, part)
    return len(rows)


def export_flat(
    lib: Library,
    collection: str,
    path: Path,
    fmt: str,
    *,
    filters: ChatFilter = ChatFilter(),
    system: str | None = None,
    thinking: str = "think",
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> int:
    """Export in one of :data:`FLAT_FORMATS`; returns the records (samples, rows or examples)
    written. ``progress(done, total)`` counts samples read; ``cancel()`` true stops the export
    with :class:`~thoughtdesk.core.errors.Cancelled`, leaving no file under ``path``."""
    started = time.monotonic()
    count = _export_flat(
        lib, collection, path, fmt, filters=filters, system=system, thinking=thinking, progress=progress, cancel=cancel
    )
    logging.getLogger(__name__).info(
        "exported %s of %r to %s (%s) in %.1f s",
        describe_written(lib, collection, fmt, count),
        collection,
        path,
        fmt,
        time.monotonic() - started,
    )
    return count


def _export_flat(
    lib: Library,
    collection: str,
    path: Path,
    fmt: str,
    *,
    filters: ChatFilter,
    system: str | None,
    thinking: str,
    progress: Progress | None,
    cancel: Cancel | None,
) -> int:
    if fmt == "samples-jsonl":
        return export_samples_jsonl(lib, collection, path, progress=progress, cancel=cancel)
    if fmt == "samples-csv":
        return export_samples_csv(lib, collection, path, progress=progress, cancel=cancel)
    if fmt == "answers-csv":
        return export_answers_csv(lib, collection, path, progress=progress, cancel=cancel)
    if fmt == "chat-jsonl":
        return export_chat_jsonl(
            lib, collection, path, filters=filters, system=system, thinking=thinking, progress=progress, cancel=cancel
        )
    if fmt == "parquet":
        return export_parquet(lib, collection, path, progress=progress, cancel=cancel)
    raise ValueError(f"unknown export format {fmt!r}; one of {', '.join(FLAT_FORMATS)}")
