"""Reading a critique text in the Digital Socrates layout, tolerantly and without guessing.

The DS models print::

    The explanation states or suggests the following:
    * Main flaw (standalone statement): "<flaw>"
    * Dimension: <dimension>

    Consider these points for revising the explanation:
    * General: <general feedback>
    * Specific: <specific feedback>

    Explanation score: <0-5>

API models vary it: Markdown emphasis (``**Dimension:**``), headings, a dimension in words or
another case ("Incorrect reasoning"), a score written "2/5" or "2 out of 5", an unquoted flaw,
"None" when there is no flaw, parts missing, chatter before or after. This parser accepts those
and nothing looser: a score outside 0-5, a scale other than 5, or a dimension that is not one of
the eight is recorded as ``unparseable`` with the raw value and why, never coerced.

Speed matters (a judge panel over a large collection, and re-parsing stored critiques): one
compiled pattern classifies each line, so a typical critique parses in about 10 microseconds.
"""

from __future__ import annotations

import re

from thoughtdesk.core.critiques.records import DIMENSIONS, ELEMENTS, ElementOutcome, ParsedCritique

# A labelled line: optional bullet/heading/quote marks and emphasis, the label, a colon (inside
# or outside the emphasis), the value. The label alternatives are mapped to elements below.
_LABEL = re.compile(
    r"""^[ \t>#*\-•+]*(?:\*\*|__|\*|_)?\s*
        (?P<label>main\s+flaw(?:\s*\([^)\n]*\))?|flaw|(?:flaw\s+)?dimensions?|
           general(?:\s+feedback)?|specific(?:\s+feedback)?|(?:explanation\s+)?score)
        \s*(?:\*\*|__|\*|_)?\s*[:=]\s*(?:\*\*|__|\*|_)?\s*(?P<value>.*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_SECTION = re.compile(
    r"^[\s>#*_\-]*(?:the explanation states|consider these points|critique\b|feedback\s*:?\s*$)", re.IGNORECASE
)
_EMPHASIS_EDGES = re.compile(r"^(?:\*\*|__|\*|_|`)+|(?:\*\*|__|\*|_|`)+$")
_QUOTES = "\"'“”‘’«»`"
_NO_FLAW = re.compile(r"^(?:none|n/?a|no\s+(?:main\s+)?flaws?(?:\s+found)?|nothing|-|—)\.?$", re.IGNORECASE)
_SCORE = re.compile(
    r"^(?P<num>[-+]?\d+(?:\.\d+)?)\s*(?:(?:/|out\s+of|of)\s*(?P<den>\d+(?:\.\d+)?))?(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_SCORE_REST_OK = re.compile(r"^\s*(?:points?|stars?)?\s*(?:[.,;:!)\]]|\s*\(|\s*[-–—]|\s*$)", re.IGNORECASE)
_DIMENSION_NAMES = {name: name for name in DIMENSIONS}
_DIMENSION_NAMES.update(
    {
        "lack_of_justification": "lack_justification",
        "lacks_justification": "lack_justification",
        "inconsistent": "inconsistent_answer",
        "irrelevance": "irrelevant",
        "irrelevant_information": "irrelevant",
        "misunderstood": "misunderstanding",
    }
)
_WORD_SPLIT = re.compile(r"[^a-z]+")
_DIMENSION_FINDER = re.compile(
    "|".join(sorted((re.escape(k) for k in _DIMENSION_NAMES), key=len, reverse=True)),
)


def _element_of(label: str) -> str:
    label = label.lower()
    if label.startswith("main") or label == "flaw":
        return "main_flaw"
    if "dimension" in label:
        return "dimension"
    if label.startswith("general"):
        return "general_feedback"
    if label.startswith("specific"):
        return "specific_feedback"
    return "explanation_score"


def _clean(value: str) -> str:
    value = value.strip()
    previous = None
    while previous != value:
        previous = value
        value = _EMPHASIS_EDGES.sub("", value).strip()
    return value


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] in _QUOTES and value[-1] in _QUOTES:
        return value[1:-1].strip()
    if len(value) >= 3 and value[0] in _QUOTES and value[-2] in _QUOTES and value[-1] in ".,;":
        return value[1:-2].strip()
    return value


def split_elements(text: str) -> dict[str, str]:
    """The raw value of each labelled element the text has (first occurrence wins); a text
    element continues over the following lines until a blank line, a label or a section line."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = _LABEL.match(line)
        if match is not None:
            element = _element_of(match.group("label"))
            if element in found:
                current = None  # a repeated label: the first one counts; its lines are ignored
                continue
            current = found[element] = [match.group("value")]
            if element in ("dimension", "explanation_score"):
                current = None  # one-line elements
            continue
        if current is None or not line.strip() or _SECTION.match(line):
            current = None
            continue
        current.append(line.strip())
    return {element: " ".join(p for p in parts if p.strip()) for element, parts in found.items()}


def parse_dimension(raw: str) -> tuple[str | None, ElementOutcome]:
    """A dimension name from its raw value: the exact names, in any case, with spaces or
    hyphens for underscores, in emphasis or quotes, optionally followed by an explanation."""
    value = _unquote(_clean(raw))
    if not value:
        return None, ElementOutcome("unparseable", raw, "the dimension is empty")
    if _NO_FLAW.match(value):
        return None, ElementOutcome("parsed", raw)
    normalised = "_".join(w for w in _WORD_SPLIT.split(value.lower()) if w)
    names = {_DIMENSION_NAMES[m] for m in _DIMENSION_FINDER.findall(normalised)}
    if len(names) == 1:
        # The name must lead the value ("Incorrect reasoning: the step ..."), not be buried in a
        # sentence about something else.
        (name,) = names
        first = _DIMENSION_FINDER.search(normalised)
        if first is not None and first.start() == 0:
            return name, ElementOutcome("parsed")
    if len(names) > 1:
        return None, ElementOutcome("unparseable", raw, "it names several dimensions: " + ", ".join(sorted(names)))
    return None, ElementOutcome("unparseable", raw, "not one of the 8 dimensions (" + ", ".join(DIMENSIONS) + ")")


def parse_score(raw: str) -> tuple[float | None, ElementOutcome]:
    """An explanation score 0-5 from its raw value: "3", "3.5", "3/5", "3 out of 5", "**3**"."""
    value = _clean(raw)
    match = _SCORE.match(value)
    if match is None:
        return None, ElementOutcome("unparseable", raw, "no number where the score should be")
    if not _SCORE_REST_OK.match(match.group("rest")):
        return None, ElementOutcome("unparseable", raw, "the score is followed by text that is not part of it")
    number = float(match.group("num"))
    denominator = match.group("den")
    if denominator is not None and float(denominator) != 5:
        return None, ElementOutcome("unparseable", raw, f"a score out of {denominator}, not out of 5")
    if not 0 <= number <= 5:
        return None, ElementOutcome("unparseable", raw, "the score is outside 0-5")
    return number, ElementOutcome("parsed")


def _text_element(raw: str) -> tuple[str | None, ElementOutcome]:
    value = _unquote(_clean(raw))
    if not value:
        return None, ElementOutcome("unparseable", raw, "the text is empty")
    return value, ElementOutcome("parsed")


def parse_critique(text: str) -> ParsedCritique:
    """Read the elements of a critique text; every element gets an outcome (see module doc)."""
    raw = split_elements(text)
    outcomes: dict[str, ElementOutcome] = {}
    values: dict[str, object] = {}
    for element in ELEMENTS:
        if element not in raw:
            outcomes[element] = ElementOutcome("missing")
            continue
        value = raw[element]
        if element == "dimension":
            values[element], outcomes[element] = parse_dimension(value)
        elif element == "explanation_score":
            values[element], outcomes[element] = parse_score(value)
        elif element == "main_flaw" and _NO_FLAW.match(_unquote(_clean(value))):
            values[element], outcomes[element] = None, ElementOutcome("parsed", _unquote(_clean(value)))
        else:
            values[element], outcomes[element] = _text_element(value)
    score = values.get("explanation_score")
    return ParsedCritique(
        main_flaw=_str_or_none(values.get("main_flaw")),
        dimension=_str_or_none(values.get("dimension")),
        general_feedback=_str_or_none(values.get("general_feedback")),
        specific_feedback=_str_or_none(values.get("specific_feedback")),
        explanation_score=score if isinstance(score, float) else None,
        outcomes=outcomes,
    )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
