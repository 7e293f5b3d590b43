"""Rebuilding the prompt variants of a stored run from the texts stored with it.

A run keeps the fragment texts it was planned with, so editing or deleting a fragment later
never changes what a resumed run sends.
"""

from __future__ import annotations

from typing import Any

from thoughtdesk.core.generation.prompts import Fragment, FragmentKind, PromptMode, PromptTemplate, PromptVariant


def _fragment(data: dict[str, Any] | None, kind: FragmentKind) -> Fragment | None:
    if data is None:
        return None
    return Fragment(
        key=data["key"],
        kind=kind,
        text=data["text"],
        citation=data.get("citation"),
        source="run",
    )


def _template(data: dict[str, Any]) -> PromptTemplate | None:
    # "auto": the default or the context template, chosen per sample as when planned.
    return None if data.get("auto") else PromptTemplate(data["text"], data.get("collapse", "thoughtsource"))


def variant_from_provenance(data: dict[str, Any]) -> PromptVariant:
    """The :class:`PromptVariant` described by ``PromptVariant.provenance()``."""
    return PromptVariant(
        instruction=_fragment(data.get("instruction"), "instruction"),
        cot_trigger=_fragment(data.get("cot_trigger"), "cot_trigger"),
        answer_extraction=_fragment(data.get("answer_extraction"), "answer_extraction"),
        mode=PromptMode(data["mode"]),
        cot_template=_template(data["cot_template"]),
        extraction_template=_template(data["extraction_template"]),
    )
