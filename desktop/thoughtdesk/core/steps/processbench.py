"""ProcessBench records (QwenLM/ProcessBench; HF ``Qwen/ProcessBench``): read, checked, turned
into ThoughtDesk records and back, equal as JSON to what was read.

A record is ``{"id", "generator", "problem", "steps", "final_answer_correct", "label"}``:
``steps`` the solution's paragraphs, ``label`` the 0-based index of the earliest wrong one or
-1. One record becomes one sample (question = problem) with one generated CoT (model =
generator, its own step list = steps, text = the steps joined by blank lines, one answer whose
correctness is ``final_answer_correct``) and one step review by :data:`AUTHOR` holding the
label. Everything else of the record (unknown keys, key order, an id that is a number) is kept
in the CoT's ``extra`` under :data:`META`, so :func:`record_from` writes the record back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample
from thoughtdesk.core.steps.split import STEPS_KEY

#: The CoT ``extra`` key of what an export needs besides the stored fields.
META = "processbench"
#: The author of the imported first-error labels (ProcessBench's are expert human labels).
AUTHOR = "ProcessBench"
#: The dataset name imported records get.
DATASET = "processbench"
#: Keys a record needs to be read as ProcessBench.
REQUIRED = ("problem", "steps", "label")
#: A record's keys, in ProcessBench's order.
_ALL = ("id", "generator", "problem", "steps", "final_answer_correct", "label")


def is_record(value: Any) -> bool:
    """Whether ``value`` has the shape of a ProcessBench record (its identifying keys)."""
    return isinstance(value, dict) and all(key in value for key in REQUIRED) and "question" not in value


def _bad(path: Path, line: int, field: str, message: str) -> DataFileError:
    return DataFileError(path, message, line=line, where=f"field {field}")


def check_record(value: Any, path: Path, line: int) -> dict[str, Any]:
    """``value`` as a ProcessBench record, or :class:`DataFileError` naming the file, the line
    and the field that is wrong."""
    if not isinstance(value, dict):
        raise DataFileError(path, f"a ProcessBench record is a JSON object, not {_type(value)}", line=line)
    for key in REQUIRED:
        if key not in value:
            raise _bad(path, line, key, "missing (a ProcessBench record has id, generator, problem, steps, label)")
    if not isinstance(value["problem"], str):
        raise _bad(path, line, "problem", f"must be a string, not {_type(value['problem'])}")
    steps = value["steps"]
    if not isinstance(steps, list) or not steps:
        raise _bad(path, line, "steps", f"must be a non-empty list of strings, not {_type(steps)}")
    for index, step in enumerate(steps):
        if not isinstance(step, str):
            raise _bad(path, line, f"steps[{index}]", f"a step must be a string, not {_type(step)}")
    label = value["label"]
    if isinstance(label, bool) or not isinstance(label, int):
        raise _bad(path, line, "label", f"must be a step index (an integer), not {_type(label)}")
    if not -1 <= label < len(steps):
        raise _bad(
            path,
            line,
            "label",
            f"{label} is outside -1..{len(steps) - 1} (the solution has {len(steps)} step(s); -1 means no wrong step)",
        )
    ident = value.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, str | int)):
        raise _bad(path, line, "id", f"must be a string or a number, not {_type(ident)}")
    generator = value.get("generator")
    if generator is not None and not isinstance(generator, str):
        raise _bad(path, line, "generator", f"must be a string, not {_type(generator)}")
    correct = value.get("final_answer_correct")
    if correct is not None and not isinstance(correct, bool):
        raise _bad(path, line, "final_answer_correct", f"must be true or false, not {_type(correct)}")
    return value


def _type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _moved(record: dict[str, Any]) -> list[str]:
    """The keys whose values ThoughtDesk stores in its own fields (others stay as they are)."""
    kinds = {"id": str, "generator": str, "final_answer_correct": bool}
    return [
        key
        for key in record
        if key in ("problem", "steps", "label") or (key in kinds and isinstance(record[key], kinds[key]))
    ]


def to_sample(record: dict[str, Any], line: int) -> tuple[Sample, int]:
    """The sample (with its one CoT) of a checked record, and the record's label."""
    moved = _moved(record)
    ident = record.get("id")
    sample_id = ident if isinstance(ident, str) else f"line-{line}" if ident is None else str(ident)
    meta: dict[str, Any] = {
        "line": line,
        "moved": moved,
        "record": {key: (None if key in moved else value) for key, value in record.items()},
    }
    steps: list[str] = record["steps"]
    correct = record.get("final_answer_correct")
    answers = (
        [Answer(id="", answer_extraction="", answer="", correct_answer=correct)]
        if "final_answer_correct" in moved
        else []
    )
    generator = record.get("generator")
    cot = GeneratedCot(
        id=sample_id,
        cot="\n\n".join(steps),
        model=generator if isinstance(generator, str) else "",
        answers=answers,
        extra={STEPS_KEY: steps, META: meta},
    )
    sample = Sample(id=sample_id, question=record["problem"], type="text", choices=[], answer=[], cot=[])
    sample.generated_cot.append(cot)
    return sample, record["label"]


def record_from(sample: Sample, cot: GeneratedCot, steps: list[str], label: int | None) -> dict[str, Any]:
    """The ProcessBench record of a CoT with ``label`` (None: -1, no wrong step known): for a
    CoT imported from ProcessBench the record read, equal as JSON to the file's when nothing was
    changed; any other CoT gets the six keys."""
    meta = cot.extra.get(META) if isinstance(cot.extra, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get("record"), dict) and isinstance(meta.get("moved"), list):
        template: dict[str, Any] = meta["record"]
        moved = set(meta["moved"])
    else:
        template, moved = dict.fromkeys(_ALL), set(_ALL)
    correct = next((a.correct_answer for a in cot.answers if a.correct_answer is not None), None)
    values: dict[str, Any] = {
        "id": sample.id,
        "generator": cot.model or "",
        "problem": sample.question,
        "steps": steps,
        "final_answer_correct": correct,
        "label": -1 if label is None else label,
    }
    return {key: (values[key] if key in moved else value) for key, value in template.items()}
