"""A CoT's condition as judge runs and judge figures name it: ``model | prompt condition``, the
prompt condition being the evaluation's (instruction / trigger / extraction keys, guide first)."""

from __future__ import annotations

from collections.abc import Sequence

from thoughtdesk.core.evaluation.evaluate import GUIDE_SQL, condition_label
from thoughtdesk.core.library.store import Library


def condition_name(model: str, prompt: str) -> str:
    """``model | prompt condition``."""
    return f"{model} | {prompt}"


def cot_conditions(lib: Library, cot_pks: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Each CoT's model and prompt condition, by CoT key (absent keys are left out)."""
    out: dict[int, tuple[str, str]] = {}
    keys = list(cot_pks)
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        rows = lib.conn.execute(
            "SELECT g.id, coalesce(g.model_name, g.model, '?'), g.instruction, g.cot_trigger, "
            "(SELECT answer_extraction FROM answer WHERE cot_pk = g.id ORDER BY position LIMIT 1), "
            f"{GUIDE_SQL} FROM generated_cot g WHERE g.id IN ({','.join('?' * len(chunk))})",
            chunk,
        )
        for pk, model, instruction, trigger, extraction, guide in rows:
            out[pk] = (model or "?", condition_label(instruction, trigger, extraction, guide))
    return out


def collection_cot_conditions(lib: Library, collection_id: int) -> dict[int, str]:
    """The condition name of every CoT of a collection, in one pass (labels built once per
    distinct set of parts: a collection has few conditions and many CoTs)."""
    labels: dict[tuple[str | None, ...], str] = {}
    out: dict[int, str] = {}
    # The first answer's extraction by a join (a subquery per CoT cost twice as much), and the
    # guide's JSON read only where the provenance names one.
    rows = lib.conn.execute(
        "SELECT g.id, coalesce(g.model_name, g.model, '?'), g.instruction, g.cot_trigger, a.answer_extraction, "
        f"CASE WHEN instr(g.extra, '\"guide\"') > 0 THEN {GUIDE_SQL} END "
        "FROM generated_cot g JOIN sample s ON s.id = g.sample_pk "
        "LEFT JOIN answer a ON a.cot_pk = g.id AND a.position = 0 WHERE s.collection_id = ?",
        (collection_id,),
    )
    for pk, *parts in rows:
        key = tuple(parts)
        label = labels.get(key)
        if label is None:
            model, instruction, trigger, extraction, guide = parts
            label = labels[key] = condition_name(model or "?", condition_label(instruction, trigger, extraction, guide))
        out[pk] = label
    return out


def matches(name: str, parts: tuple[str, str]) -> bool:
    """Whether a condition the user named is this CoT's: its whole name, its model or its prompt."""
    return name in (condition_name(*parts), parts[0], parts[1])
