"""Typed records of critiques and human ratings (Digital Socrates; docs/critiques.md).

A critique judges one explanation (a generated CoT): the main flaw as a standalone statement,
the flaw's dimension (one of :data:`DIMENSIONS`), general and specific feedback, and an
explanation score 0-5. Every element carries its parse outcome, so a part a model wrote badly is
recorded as such (with the raw value and why), never coerced or dropped silently.

Humans rate explanations (score 0-5 plus flaw dimensions) and critiques (score 0-3), each rating
stored per author (the Settings user name, or the DS Critique Bank worker id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: The 8 flaw dimensions of Digital Socrates, with their exact names, in the paper's order.
DIMENSIONS: tuple[str, ...] = (
    "misunderstanding",
    "lack_justification",
    "incorrect_information",
    "missing_information",
    "incorrect_reasoning",
    "incomplete_reasoning",
    "inconsistent_answer",
    "irrelevant",
)

#: What each dimension means, in a few words (tooltips, the built-in prompt, docs).
DIMENSION_HELP: dict[str, str] = {
    "misunderstanding": "misunderstands the question or the answer choices",
    "lack_justification": "states an answer without real justification",
    "incorrect_information": "states a wrong fact",
    "missing_information": "leaves out a crucial fact or perspective",
    "incorrect_reasoning": "makes a wrong leap in the chain of reasoning",
    "incomplete_reasoning": "does not reach the answer",
    "inconsistent_answer": "gives an answer that does not match its own conclusion",
    "irrelevant": "contains irrelevant or redundant content",
}

#: The parsed elements of a critique, in the layout's order (DSCB's critique_elements keys).
ELEMENTS: tuple[str, ...] = ("main_flaw", "dimension", "general_feedback", "specific_feedback", "explanation_score")

EXPLANATION_SCORES = range(0, 6)  # 0 = very wrong ... 5 = completely correct
CRITIQUE_SCORES = range(0, 4)  # human rating of a critique, 0-3

Outcome = Literal["parsed", "missing", "unparseable"]


@dataclass(frozen=True, slots=True)
class ElementOutcome:
    """How one element of a critique text was read: ``parsed``, ``missing`` (the text has no
    such part) or ``unparseable`` (it has one that cannot be read: ``raw`` is what was there and
    ``why`` says what is wrong with it)."""

    status: Outcome
    raw: str | None = None
    why: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.raw is not None:
            out["raw"] = self.raw
        if self.why is not None:
            out["why"] = self.why
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ElementOutcome:
        return cls(data["status"], data.get("raw"), data.get("why"))


@dataclass(frozen=True, slots=True)
class ParsedCritique:
    """The elements read from one critique text, and each element's outcome.

    ``main_flaw`` is None both when the text has no flaw part and when it says there is no flaw
    ("None"); ``outcomes`` tells the two apart (``parsed`` with ``raw`` "None" for the latter).
    """

    main_flaw: str | None = None
    dimension: str | None = None
    general_feedback: str | None = None
    specific_feedback: str | None = None
    explanation_score: float | None = None
    outcomes: dict[str, ElementOutcome] = field(default_factory=dict)

    def outcome(self, element: str) -> ElementOutcome:
        return self.outcomes.get(element, ElementOutcome("missing"))

    @property
    def fully_parsed(self) -> bool:
        return all(self.outcome(e).status == "parsed" for e in ELEMENTS)


#: The outcomes without a raw value or a reason, shared (most elements of most critiques).
_BARE_OUTCOMES: dict[str, ElementOutcome] = {
    "parsed": ElementOutcome("parsed"),
    "missing": ElementOutcome("missing"),
    "unparseable": ElementOutcome("unparseable"),
}


#: One letter per element (in :data:`ELEMENTS` order) for the outcomes of most critiques: a
#: status without raw value or reason, or ``n``: parsed, its raw value "None" (no flaw).
_OUTCOME_LETTERS: dict[ElementOutcome, str] = {
    _BARE_OUTCOMES["parsed"]: "p",
    _BARE_OUTCOMES["missing"]: "m",
    _BARE_OUTCOMES["unparseable"]: "u",
    ElementOutcome("parsed", "None"): "n",
}
_LETTER_OUTCOMES: dict[str, ElementOutcome] = {letter: o for o, letter in _OUTCOME_LETTERS.items()}


def outcomes_to_json(outcomes: dict[str, ElementOutcome]) -> dict[str, Any] | str:
    """The outcomes as stored (the ``outcomes`` column). Where every element has an outcome of
    :data:`_OUTCOME_LETTERS` (most critiques: all parsed, or "None" as flaw and dimension), five
    letters in :data:`ELEMENTS` order (``"nnppp"``); otherwise an object whose outcomes with only
    a status are that status (``"parsed"``), the others objects (``{"status", "raw", "why"}``).
    A 20,000-critique import writes and reads back a tenth of the bytes of objects throughout."""
    if len(outcomes) == len(ELEMENTS):
        letters = ""
        for element in ELEMENTS:
            outcome = outcomes.get(element)
            letter = None if outcome is None else _OUTCOME_LETTERS.get(outcome)
            if letter is None:
                break
            letters += letter
        else:
            return letters
    return {k: v.status if v.raw is None and v.why is None else v.to_json() for k, v in outcomes.items()}


def outcomes_from_json(data: dict[str, Any] | str) -> dict[str, ElementOutcome]:
    """The outcomes from their stored form (:func:`outcomes_to_json`: letters or an object; or
    objects throughout as libraries written before it have them)."""
    if isinstance(data, str):
        return {e: _LETTER_OUTCOMES[letter] for e, letter in zip(ELEMENTS, data, strict=True)}
    return {
        k: (_BARE_OUTCOMES.get(v) or ElementOutcome.from_json({"status": v}))
        if isinstance(v, str)
        else ElementOutcome.from_json(v)
        for k, v in data.items()
    }


def elements_from_parsed(parsed: ParsedCritique) -> dict[str, Any]:
    """The DS Critique Bank ``critique_elements`` object that a critique's parsed elements stand
    for, in DSCB's key order: each element's value or, where it has none, the raw value its
    outcome kept ("None" for no flaw, an empty text), and the score as a whole number. Imported
    critiques whose elements are exactly this store none of their own (see
    :func:`elements_derivable`)."""
    outcomes = parsed.outcomes
    score = parsed.explanation_score
    out: dict[str, Any] = {}
    for key, value in zip(
        ELEMENTS[:4],
        (parsed.main_flaw, parsed.dimension, parsed.general_feedback, parsed.specific_feedback),
        strict=True,
    ):
        if value is None:
            outcome = outcomes.get(key)
            value = None if outcome is None else outcome.raw
        out[key] = value
    out["explanation_score"] = None if score is None else int(score)
    return out


def elements_derivable(elements: dict[str, Any], parsed: ParsedCritique) -> bool:
    """True when :func:`elements_from_parsed` gives ``elements`` back exactly: the same keys in
    the same order, equal values of the same JSON types (a score of 4 and not 4.0 or "4")."""
    score = elements.get("explanation_score")
    if score is None:
        if parsed.explanation_score is not None:
            return False
    elif score.__class__ is not int or score != parsed.explanation_score:
        return False
    if tuple(elements) != ELEMENTS:
        return False
    # Compared one by one (a 20,000-critique import does this for each): what
    # elements_from_parsed would give, without building it.
    outcomes = parsed.outcomes
    for key, value in (
        ("main_flaw", parsed.main_flaw),
        ("dimension", parsed.dimension),
        ("general_feedback", parsed.general_feedback),
        ("specific_feedback", parsed.specific_feedback),
    ):
        if value is None:
            outcome = outcomes.get(key)
            value = None if outcome is None else outcome.raw
        if elements[key] != value:
            return False
    return True


#: The bullet before each item of the Digital Socrates layout: as DS Critique Bank's critique
#: texts have it (" * ") and as the DS model card prints it ("* ").
DS_BULLETS: tuple[str, ...] = (" * ", "* ")


def ds_layout_text(elements: dict[str, Any], bullet: str = DS_BULLETS[0]) -> str | None:
    """The critique text in the Digital Socrates layout (what the DS models and DSCB's critiques
    write) stating exactly ``elements`` (a critique_elements object), or None when a part is not
    text or the score not a whole number. An imported critique whose text is this is stored
    without its text, which is rebuilt from the elements when read (core/critiques/store.py)."""
    get = elements.get
    flaw, dimension, general, specific = (
        get("main_flaw"),
        get("dimension"),
        get("general_feedback"),
        get("specific_feedback"),
    )
    score = get("explanation_score")
    if (
        flaw.__class__ is not str
        or dimension.__class__ is not str
        or general.__class__ is not str
        or specific.__class__ is not str
        or score.__class__ is not int
    ):
        return None
    return (
        f"The explanation states or suggests the following:\n"
        f'{bullet}Main flaw (standalone statement): "{flaw}"\n{bullet}Dimension: {dimension}\n\n'
        f"Consider these points for revising the explanation:\n"
        f"{bullet}General: {general}\n{bullet}Specific: {specific}\n\nExplanation score: {score}"
    )


@dataclass(slots=True)
class CritiqueRating:
    """A human's rating of a critique: ``score`` 0-3 (None: not given)."""

    author: str
    score: int | None
    created: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    pk: int | None = None


@dataclass(slots=True)
class ExplanationRating:
    """A human's rating of an explanation (a CoT): ``score`` 0-5 (None: not given) and the flaw
    dimensions they saw (names from :data:`DIMENSIONS`, in their order)."""

    author: str
    score: int | None
    dimensions: tuple[str, ...] = ()
    created: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    pk: int | None = None


@dataclass(slots=True)
class Critique:
    """A stored critique of one generated CoT (``cot_pk``).

    ``source`` is ``run`` (ThoughtDesk ran it: ``run_id``/``request_id`` say where, ``prompt_text``
    is the exact text sent, ``fragment_key`` the template's key) or ``import`` (read from a file:
    ``elements`` is the critique_elements object exactly as the file had it, ``extra`` the
    record's unknown keys). ``llm_options`` are the critique model's options (JSON object).
    """

    cot_pk: int
    critique_model: str
    raw_text: str
    parsed: ParsedCritique
    llm_options: dict[str, Any] = field(default_factory=dict)
    fragment_key: str | None = None
    prompt_text: str | None = None
    elements: dict[str, Any] | None = None
    source: Literal["run", "import"] = "run"
    run_id: int | None = None
    request_id: int | None = None
    created: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    ratings: list[CritiqueRating] = field(default_factory=list)
    position: int = 0
    pk: int | None = None
