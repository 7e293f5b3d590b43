"""Reasoning-trace datasets people share, imported as samples with a generated CoT whose
thinking is kept apart from its visible text (issue 24, point 5; docs/reasoning.md).

One JSON object per line, in one of these layouts (a line's layout is found by its keys):

* **chat**: ``{"messages": [{"role": "user", "content": Q}, {"role": "assistant", "content":
  "<think>T</think>A"}]}`` (the thinking inline, as R1 distillation sets have it, or in the
  assistant message's ``reasoning_content``/``reasoning``/``thinking`` field), or ShareGPT's
  ``{"conversations": [{"from": "human"|"user", "value": Q}, {"from": "gpt"|"assistant", ...}]}``
  (OpenThoughts-114k: ``<|begin_of_thought|>...<|end_of_thought|>`` and
  ``<|begin_of_solution|>...<|end_of_solution|>``; a ``system`` key is kept in extra).
* **fields**: a question (``question``, ``problem``, ``prompt``), a thinking (``reasoning``,
  ``reasoning_content``, ``thinking``, ``deepseek_reasoning``, s1K's ``thinking_trajectories``
  list) and the model's visible answer (``attempt``, ``deepseek_solution``, ``response``,
  ``output``). A reference solution (``solution``, ``ground_truth_solution``) becomes the
  sample's reference CoT and a short gold answer (``answer``, ``gold_answer``,
  ``ground_truth``) its answer.

Every other key of a line is kept in the sample's extra, under :data:`RECORD_KEY`. A line in no layout, a question that
is not text or a thinking that is not text is a bad record naming the file, line and field
(``on_error="skip"`` leaves it out and lists it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thoughtdesk.core.datasets.readers import JsonLineError, iter_jsonl
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.importing.importer import ImportOutcome, import_records
from thoughtdesk.core.library.records import GeneratedCot, Sample, model_repr
from thoughtdesk.core.library.writer import OnDuplicate
from thoughtdesk.core.thinking import KNOWN_THINK_TAGS, estimate_reasoning_tokens, split_thinking

QUESTION_KEYS = ("question", "problem", "prompt", "instruction")
THINKING_KEYS = ("reasoning", "reasoning_content", "thinking", "deepseek_reasoning", "thinking_trajectories", "thought")
VISIBLE_KEYS = ("attempt", "deepseek_solution", "response", "output", "completion")
REFERENCE_KEYS = ("solution", "ground_truth_solution", "reference_solution")
GOLD_KEYS = ("answer", "gold_answer", "ground_truth", "final_answer")
ID_KEYS = ("id", "uuid", "problem_id", "question_id")
MODEL_KEYS = ("model", "generator", "model_name")
#: OpenThoughts' answer markers around the visible solution, taken off the visible text.
SOLUTION_TAGS = ("<|begin_of_solution|>", "<|end_of_solution|>")
ON_ERROR_CHOICES = ("abort", "skip")
#: The sample extra's key that holds a line's other keys.
RECORD_KEY = "trace_record"

_USER = {"user", "human"}
_ASSISTANT = {"assistant", "gpt", "model"}


def looks_like_traces(record: Any) -> bool:
    """True when a JSONL record is in one of this module's layouts."""
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("messages"), list) or isinstance(record.get("conversations"), list):
        return True
    return any(k in record for k in QUESTION_KEYS) and any(k in record for k in THINKING_KEYS)


def _first(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    for key in keys:
        if key in record and record[key] is not None:
            return key, record[key]
    return None, None


def _text(path: Path, line: int, field: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if field.endswith("thinking_trajectories") and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n\n".join(value)
    kind = {dict: "an object", list: "a list", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )
    raise DataFileError(path, f"field {field} is {kind}, not text; fix the line, or add --on-error skip", line=line)


def _split(text: str) -> tuple[str | None, str, str | None, tuple[str, str] | None]:
    """The thinking, visible text and note of an assistant text, at the first known tags it uses."""
    for tags in KNOWN_THINK_TAGS:
        if tags[1] in text or text.lstrip().startswith(tags[0]):
            split = split_thinking(text, tags)
            if split.reasoning is not None:
                return split.reasoning, split.visible, split.note, tags
    return None, text, None, None


def _turns(record: dict[str, Any], path: Path, line: int) -> tuple[str, dict[str, Any], str]:
    """The question, the assistant message and the key of the turns' list (chat layouts)."""
    key = "messages" if isinstance(record.get("messages"), list) else "conversations"
    question, answer = None, None
    for index, turn in enumerate(record[key]):
        if not isinstance(turn, dict):
            raise DataFileError(path, f"field {key}[{index}] is not an object", line=line)
        role = str(turn.get("role", turn.get("from", ""))).lower()
        content_key = "content" if "content" in turn else "value"
        if role in _USER and question is None:
            question = _text(path, line, f"{key}[{index}].{content_key}", turn.get(content_key))
        elif role in _ASSISTANT and question is not None:
            answer = turn  # the last assistant turn after the question
    if question is None or answer is None:
        raise DataFileError(path, f"field {key} has no user turn followed by an assistant turn", line=line)
    return question, answer, key


def trace_sample(record: Any, path: Path, line: int) -> Sample:
    """One line as a sample with its generated CoT; DataFileError naming the line and field."""
    if not isinstance(record, dict):
        raise DataFileError(path, "the line is not a JSON object", line=line)
    used: set[str] = set()
    reference: list[Any] = []
    facts: dict[str, Any] = {"line": line}
    if isinstance(record.get("messages"), list) or isinstance(record.get("conversations"), list):
        question, message, key = _turns(record, path, line)
        used.add(key)
        content_key = "content" if "content" in message else "value"
        content = _text(path, line, f"{key}[assistant].{content_key}", message.get(content_key) or "")
        field_key, field_value = _first(message, ("reasoning_content", "reasoning", "thinking"))
        if field_key is not None:
            reasoning: str | None = _text(path, line, f"{key}[assistant].{field_key}", field_value)
            visible, note, tags = content, None, None
            facts["source"] = f"field {field_key}"
        else:
            reasoning, visible, note, tags = _split(content)
            if tags is not None:
                facts["source"] = "tags"
                facts["tags"] = list(tags)
    else:
        question_key, value = _first(record, QUESTION_KEYS)
        thinking_key, thinking = _first(record, THINKING_KEYS)
        if question_key is None or thinking_key is None:
            raise DataFileError(
                path,
                "the line is in no reasoning-trace layout: it needs 'messages' or 'conversations', or a question "
                f"({', '.join(QUESTION_KEYS)}) and a thinking ({', '.join(THINKING_KEYS)})",
                line=line,
            )
        question = _text(path, line, question_key, value)
        reasoning = _text(path, line, thinking_key, thinking)
        used |= {question_key, thinking_key}
        visible_key, visible_value = _first(record, VISIBLE_KEYS)
        visible = "" if visible_key is None else _text(path, line, visible_key, visible_value)
        if visible_key is not None:
            used.add(visible_key)
        note, tags = None, None
        facts["source"] = f"field {thinking_key}"
        reference_key, reference_value = _first(record, REFERENCE_KEYS)
        if reference_key is not None:
            reference = [_text(path, line, reference_key, reference_value)]
            used.add(reference_key)
    if visible.strip().startswith(SOLUTION_TAGS[0]) and SOLUTION_TAGS[1] in visible:
        visible = visible.strip()[len(SOLUTION_TAGS[0]) :].split(SOLUTION_TAGS[1], 1)[0].strip()
        facts["solution_tags"] = list(SOLUTION_TAGS)
    if note:
        facts["note"] = note
    gold_key, gold = _first(record, GOLD_KEYS)
    if gold_key is not None:
        used.add(gold_key)
    id_key, ident = _first(record, ID_KEYS)
    if id_key is not None:
        used.add(id_key)
    model_key, model = _first(record, MODEL_KEYS)
    if model_key is not None:
        used.add(model_key)
    cot = GeneratedCot(
        id=f"trace-{line}",
        cot=visible,
        author=str(model or ""),
        model=model_repr(str(model)) if model else "",
        api_service="import",
        extra={"thoughtdesk_import": {"file": path.name, **facts}},
        reasoning=reasoning,
        reasoning_tokens=estimate_reasoning_tokens(reasoning),
    )
    return Sample(
        id=str(ident) if ident is not None else f"line-{line}",
        question=question,
        type="text",
        choices=[],
        answer=[gold] if gold is not None and not isinstance(gold, list) else (gold or []),
        cot=reference,
        generated_cot=[cot],
        # Under one key: a line's own "cot" or "id" (s1K has "cot": null) must not stand for the
        # sample's fields of those names when the sample is exported.
        extra={RECORD_KEY: rest} if (rest := {k: v for k, v in record.items() if k not in used}) else {},
    )


def read_traces(path: Path, *, on_error: str = "abort", errors: list[DataFileError] | None = None) -> Iterator[Sample]:
    """The file's samples in order; a bad line raises (``abort``) or is listed in ``errors``."""
    for line, value in iter_jsonl(path):
        try:
            if isinstance(value, JsonLineError):
                raise value
            yield trace_sample(value, path, line)
        except DataFileError as error:
            if on_error != "skip":
                raise
            if errors is not None:
                errors.append(error)


def import_traces(
    library: Any,
    path: str | os.PathLike[str],
    *,
    collection: str | None = None,
    dataset: str | None = None,
    split: str = "train",
    on_duplicate: OnDuplicate | str = OnDuplicate.FAIL,
    on_error: str = "abort",
    progress: Any = None,
    cancel: Any = None,
) -> ImportOutcome:
    """Import a reasoning-trace JSONL file into ``collection`` (default: the file's name) as
    dataset ``dataset`` (default: the file's name), split ``split``; all or nothing unless
    ``on_error="skip"`` (bad lines then listed in the report)."""
    if on_error not in ON_ERROR_CHOICES:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR_CHOICES)}, not {on_error!r}")
    source = Path(path)
    errors: list[DataFileError] = []
    name = dataset or source.stem

    def records() -> Iterator[tuple[str, str, Sample, str]]:
        for sample in read_traces(source, on_error=on_error, errors=errors):
            yield name, split, sample, f"{source.name}, {sample.generated_cot[0].id}"

    report = import_records(
        library,
        records(),
        collection=collection or source.stem,
        on_duplicate=on_duplicate,
        progress=progress,
        cancel=cancel,
        source=str(source),
        path=source,
    )
    report.bad_records.extend(errors)
    return report
