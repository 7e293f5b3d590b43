"""Prompt templates and rendering a sample into the exact text sent to a model.

Templates name the variables ``{instruction}``, ``{question}``, ``{answer_choices}``,
``{context}``, ``{cot_trigger}``, ``{cot}`` and ``{answer_extraction}``; ``{{`` and ``}}`` are
literal braces. Values are inserted as they are, never through ``str.format``, so a question
containing ``{`` or ``}`` renders literally.

Two ways of dropping empty parts exist:

- ``thoughtsource``: ThoughtSource's own rule: an empty or absent value is an empty string, and
  leading whitespace of the result is stripped (so a missing instruction drops its blank line).
  The default templates use it, which reproduces ThoughtSource's prompt texts exactly.
- ``paragraphs``: blocks of the template separated by a blank line disappear when all their
  variables are empty, and lines holding only empty variables disappear; used by the templates
  with ``{context}``, where ThoughtSource's rule would leave runs of blank lines.

Fragments (see :mod:`thoughtdesk.core.generation.fragments`) supply instruction, trigger and extraction texts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.fragments import (  # re-exported: callers import prompts only
    FRAGMENT_KINDS,
    Fragment,
    FragmentError,
    FragmentImportOutcome,
    FragmentKind,
    FragmentLibrary,
)

__all__ = [
    "FRAGMENT_KINDS",
    "Fragment",
    "FragmentError",
    "FragmentKind",
    "FragmentLibrary",
    "FragmentImportOutcome",
    "TEMPLATE_VARIABLES",
    "TemplateError",
    "PromptTemplate",
    "Exemplar",
    "PromptMode",
    "PromptVariant",
    "DEFAULT_COT_TEMPLATE",
    "DEFAULT_EXTRACTION_TEMPLATE",
    "CONTEXT_COT_TEMPLATE",
    "CONTEXT_EXTRACTION_TEMPLATE",
    "format_answer_choices",
    "render_cot_prompt",
    "render_extraction_prompt",
]

TEMPLATE_VARIABLES = (
    "instruction",
    "question",
    "answer_choices",
    "context",
    "cot_trigger",
    "cot",
    "answer_extraction",
)
Collapse = Literal["thoughtsource", "paragraphs"]
# One token of a template: an escaped brace, a {variable}, or a stray brace (an error).
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class TemplateError(ThoughtDeskError, ValueError):
    """A template that names an unknown variable or has an unmatched brace."""


@dataclass(frozen=True, slots=True)
class _Part:
    literal: str = ""
    variable: str | None = None


def _parse_line(text: str, template: str) -> tuple[_Part, ...]:
    parts: list[_Part] = []
    position = 0
    for match in _TOKEN.finditer(text):
        if match.start() > position:
            parts.append(_Part(literal=text[position : match.start()]))
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(_Part(literal=token[0]))
        elif match.group(1) is not None:
            name = match.group(1).strip()
            if name not in TEMPLATE_VARIABLES:
                raise TemplateError(
                    f"template variable {{{name}}} is not allowed in template {template!r}; "
                    f"allowed variables are {', '.join(TEMPLATE_VARIABLES)} "
                    "(write {{ and }} for literal braces)"
                )
            parts.append(_Part(variable=name))
        else:
            raise TemplateError(f"unmatched {token!r} in template {template!r} (write {token * 2} for a literal brace)")
        position = match.end()
    if position < len(text):
        parts.append(_Part(literal=text[position:]))
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A prompt template text and how empty parts collapse; validated when created."""

    text: str
    collapse: Collapse = "thoughtsource"
    _blocks: tuple[tuple[tuple[_Part, ...], ...], ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        if self.collapse not in ("thoughtsource", "paragraphs"):
            raise TemplateError(f"unknown collapse rule {self.collapse!r}")
        blocks = tuple(
            tuple(_parse_line(line, self.text) for line in block.split("\n")) for block in self.text.split("\n\n")
        )
        object.__setattr__(self, "_blocks", blocks)

    def render(self, values: Mapping[str, str | None]) -> str:
        """The template with ``values`` inserted literally; absent or None values are empty."""

        def value(part: _Part) -> str:
            return part.literal if part.variable is None else (values.get(part.variable) or "")

        if self.collapse == "thoughtsource":
            # Rebuild the original separators: lines inside a block by "\n", blocks by "\n\n".
            text = "\n\n".join(
                "\n".join("".join(value(part) for part in line) for line in block) for block in self._blocks
            )
            return text.lstrip()
        kept_blocks: list[str] = []
        for block in self._blocks:
            kept_lines = []
            for line in block:
                only_variables = all(part.variable for part in line) and line
                rendered = "".join(value(part) for part in line)
                if only_variables and not rendered:
                    continue
                kept_lines.append(rendered)
            if kept_lines and any(line.strip() for line in kept_lines):
                kept_blocks.append("\n".join(kept_lines))
        return "\n\n".join(kept_blocks)


#: ThoughtSource's default CoT template (``cot.config.Config.template_cot_generation``).
DEFAULT_COT_TEMPLATE = PromptTemplate("{instruction}\n\n{question}\n{answer_choices}\n\n{cot_trigger}")
#: ThoughtSource's default answer-extraction template: the CoT prompt, the CoT, the extraction.
DEFAULT_EXTRACTION_TEMPLATE = PromptTemplate(
    "{instruction}\n\n{question}\n{answer_choices}\n\n{cot_trigger}{cot}\n{answer_extraction}"
)
#: Used when a sample has a context (for example a PubMedQA abstract) and no template is given.
CONTEXT_COT_TEMPLATE = PromptTemplate(
    "{instruction}\n\n{context}\n\n{question}\n{answer_choices}\n\n{cot_trigger}", "paragraphs"
)
CONTEXT_EXTRACTION_TEMPLATE = PromptTemplate(
    "{instruction}\n\n{context}\n\n{question}\n{answer_choices}\n\n{cot_trigger}{cot}\n{answer_extraction}",
    "paragraphs",
)


def format_answer_choices(choices: Sequence[Any], style: Literal["letters", "numbers"] = "letters") -> str:
    """Choices as ``A) first`` lines (ThoughtSource's format) or ``1) first`` lines."""
    if style == "numbers":
        return "\n".join(f"{index}) {choice}" for index, choice in enumerate(choices, 1))
    if len(choices) > 26:
        raise TemplateError(f"{len(choices)} answer choices: letters run out after Z; use numbers")
    return "\n".join(f"{chr(65 + index)}) {choice}" for index, choice in enumerate(choices))


@dataclass(frozen=True, slots=True)
class Exemplar:
    """A solved example shown before the question (few-shot): question, CoT and answer."""

    question: str
    cot: str
    answer: str = ""
    answer_choices: tuple[str, ...] = ()
    context: str | None = None


def _values(
    question: str,
    instruction: str | None,
    answer_choices: Sequence[Any],
    context: str | None,
    cot_trigger: str | None,
    cot: str | None = None,
    answer_extraction: str | None = None,
) -> dict[str, str | None]:
    return {
        "instruction": instruction,
        "question": question,
        "answer_choices": format_answer_choices(answer_choices) if answer_choices else None,
        "context": context,
        "cot_trigger": cot_trigger,
        "cot": cot,
        "answer_extraction": answer_extraction,
    }


def _template_for(template: PromptTemplate | None, context: str | None, extraction: bool) -> PromptTemplate:
    if template is not None:
        return template
    if context and context.strip():
        return CONTEXT_EXTRACTION_TEMPLATE if extraction else CONTEXT_COT_TEMPLATE
    return DEFAULT_EXTRACTION_TEMPLATE if extraction else DEFAULT_COT_TEMPLATE


def _render_exemplars(
    exemplars: Sequence[Exemplar],
    template: PromptTemplate | None,
    cot_trigger: str | None,
    answer_extraction: str | None,
) -> str:
    """Each exemplar as its CoT prompt (no instruction), its CoT, and its extracted answer."""
    blocks = []
    for exemplar in exemplars:
        prompt = _template_for(template, exemplar.context, False).render(
            _values(exemplar.question, None, exemplar.answer_choices, exemplar.context, cot_trigger)
        )
        block = f"{prompt} {exemplar.cot.strip()}" if prompt else exemplar.cot.strip()
        if exemplar.answer:
            block += f"\n{answer_extraction} {exemplar.answer}" if answer_extraction else f"\n{exemplar.answer}"
        blocks.append(block)
    return "\n\n".join(blocks)


def _with_exemplars(instruction: str | None, exemplars: str, body: str) -> str:
    return "\n\n".join(part for part in (instruction, exemplars, body) if part)


def render_cot_prompt(
    *,
    question: str,
    instruction: str | None = None,
    answer_choices: Sequence[Any] = (),
    context: str | None = None,
    cot_trigger: str | None = None,
    template: PromptTemplate | None = None,
    exemplars: Sequence[Exemplar] = (),
    exemplar_extraction: str | None = None,
) -> str:
    """The CoT-generation prompt for one question.

    Without a template, ThoughtSource's default is used (or the context template when a context
    is given). With exemplars, the instruction comes first, then the solved exemplars (each ending
    with ``exemplar_extraction`` and its answer), then the question without the instruction.
    """
    chosen = _template_for(template, context, extraction=False)
    if not exemplars:
        return chosen.render(_values(question, instruction, answer_choices, context, cot_trigger))
    body = chosen.render(_values(question, None, answer_choices, context, cot_trigger))
    shots = _render_exemplars(exemplars, template, cot_trigger, exemplar_extraction)
    return _with_exemplars(instruction, shots, body)


def render_extraction_prompt(
    *,
    question: str,
    cot: str,
    answer_extraction: str | None,
    instruction: str | None = None,
    answer_choices: Sequence[Any] = (),
    context: str | None = None,
    cot_trigger: str | None = None,
    template: PromptTemplate | None = None,
    exemplars: Sequence[Exemplar] = (),
) -> str:
    """The answer-extraction prompt: the CoT prompt, the CoT as generated, the extraction text.

    ``cot`` is inserted as the model returned it (ThoughtSource's completions usually begin
    with a space, which joins the trigger and the CoT).
    """
    chosen = _template_for(template, context, extraction=True)
    values = _values(question, instruction, answer_choices, context, cot_trigger, cot, answer_extraction)
    if not exemplars:
        return chosen.render(values)
    values["instruction"] = None
    shots = _render_exemplars(exemplars, None, cot_trigger, answer_extraction)
    return _with_exemplars(instruction, shots, chosen.render(values))


class PromptMode(StrEnum):
    """Two-step: a CoT request, then an answer-extraction request (ThoughtSource's way).
    One-step: only the CoT request; the answer is parsed from the CoT."""

    TWO_STEP = "two-step"
    ONE_STEP = "one-step"


@dataclass(frozen=True, slots=True)
class PromptVariant:
    """One combination of fragments and templates, with everything needed to record it.

    The fragment texts are copied in, so what was sent stays known after a fragment is edited.
    """

    instruction: Fragment | None = None
    cot_trigger: Fragment | None = None
    answer_extraction: Fragment | None = None
    mode: PromptMode = PromptMode.TWO_STEP
    cot_template: PromptTemplate | None = None
    extraction_template: PromptTemplate | None = None

    @classmethod
    def from_keys(
        cls,
        library: FragmentLibrary,
        *,
        instruction: str | None = None,
        cot_trigger: str | None = None,
        answer_extraction: str | None = None,
        mode: PromptMode = PromptMode.TWO_STEP,
        cot_template: PromptTemplate | None = None,
        extraction_template: PromptTemplate | None = None,
    ) -> PromptVariant:
        """Look the keys up in ``library`` (FragmentError for unknown keys)."""
        return cls(
            instruction=library.get("instruction", instruction) if instruction else None,
            cot_trigger=library.get("cot_trigger", cot_trigger) if cot_trigger else None,
            answer_extraction=(library.get("answer_extraction", answer_extraction) if answer_extraction else None),
            mode=mode,
            cot_template=cot_template,
            extraction_template=extraction_template,
        )

    def cot_prompt(
        self,
        question: str,
        answer_choices: Sequence[Any] = (),
        context: str | None = None,
        exemplars: Sequence[Exemplar] = (),
    ) -> str:
        """The CoT request's prompt for one question."""
        return render_cot_prompt(
            question=question,
            answer_choices=answer_choices,
            context=context,
            instruction=self.instruction.text if self.instruction else None,
            cot_trigger=self.cot_trigger.text if self.cot_trigger else None,
            template=self.cot_template,
            exemplars=exemplars,
            exemplar_extraction=self.answer_extraction.text if self.answer_extraction else None,
        )

    def extraction_prompt(
        self,
        question: str,
        cot: str,
        answer_choices: Sequence[Any] = (),
        context: str | None = None,
        exemplars: Sequence[Exemplar] = (),
    ) -> str | None:
        """The extraction request's prompt, or None in one-step mode or without an extraction."""
        if self.mode is PromptMode.ONE_STEP or self.answer_extraction is None:
            return None
        return render_extraction_prompt(
            question=question,
            cot=cot,
            answer_choices=answer_choices,
            context=context,
            instruction=self.instruction.text if self.instruction else None,
            cot_trigger=self.cot_trigger.text if self.cot_trigger else None,
            answer_extraction=self.answer_extraction.text,
            template=self.extraction_template,
            exemplars=exemplars,
        )

    def provenance(self) -> dict[str, Any]:
        """Keys, texts and templates of this variant, as JSON-ready values to store with a CoT."""

        def fragment(value: Fragment | None) -> dict[str, Any] | None:
            return None if value is None else {"key": value.key, "text": value.text, "citation": value.citation}

        def template(value: PromptTemplate | None, extraction: bool) -> dict[str, Any]:
            if value is not None:
                return {"text": value.text, "collapse": value.collapse}
            # Automatic choice: ThoughtSource's default, or the context template for samples
            # with a context; both are recorded so the stored prompt can be explained.
            default = DEFAULT_EXTRACTION_TEMPLATE if extraction else DEFAULT_COT_TEMPLATE
            context = CONTEXT_EXTRACTION_TEMPLATE if extraction else CONTEXT_COT_TEMPLATE
            return {
                "text": default.text,
                "collapse": default.collapse,
                "auto": True,
                "context_text": context.text,
                "context_collapse": context.collapse,
            }

        return {
            "mode": self.mode.value,
            "instruction": fragment(self.instruction),
            "cot_trigger": fragment(self.cot_trigger),
            "answer_extraction": fragment(self.answer_extraction),
            "cot_template": template(self.cot_template, False),
            "extraction_template": template(self.extraction_template, True),
        }
