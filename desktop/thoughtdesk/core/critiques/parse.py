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

# Outcomes without a raw value are the same every time: shared (they are frozen).
_PARSED = ElementOutcome("parsed")
_MISSING = ElementOutcome("missing")

# A labelled line: optional bullet/heading/quote marks and emphasis, the label, a colon (inside
# or outside the emphasis), the value. The label alternatives are mapped to elements below.
_LABEL = re.compile(
    r"""^[ \t>#*\-•+]*(?:\*\*|__|\*|_)?[ \t]*
        (?P<label>main\s+flaw(?:\s*\([^)\n]*\))?|flaw|(?:flaw\s+)?dimensions?|
           general(?:\s+feedback)?|specific(?:\s+feedback)?|(?:explanation\s+)?score)
        [ \t]*(?:\*\*|__|\*|_)?[ \t]*[:=][ \t]*(?:\*\*|__|\*|_)?[ \t]*(?P<value>.*)$""",
    re.IGNORECASE | re.VERBOSE | re.MULTILINE,
)
_SECTION = re.compile(
    r"^[\s>#*_\-]*(?:the explanation states|consider these points|critique\b|feedback\s*:?\s*$)", re.IGNORECASE
)
_EDGE_MARKS = " \t*_`"
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


_ELEMENT_CACHE: dict[str, str] = {}


def _element_of(label: str) -> str:
    element = _ELEMENT_CACHE.get(label)
    if element is not None:
        return element
    lower = label.lower()
    if lower.startswith("main") or lower == "flaw":
        element = "main_flaw"
    elif "dimension" in lower:
        element = "dimension"
    elif lower.startswith("general"):
        element = "general_feedback"
    elif lower.startswith("specific"):
        element = "specific_feedback"
    else:
        element = "explanation_score"
    if len(_ELEMENT_CACHE) < 256:
        _ELEMENT_CACHE[label] = element
    return element


def _clean(value: str) -> str:
    """``value`` without surrounding whitespace, Markdown emphasis or code marks."""
    return value.strip(_EDGE_MARKS)


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
    found: dict[str, str] = {}
    matches = list(_LABEL.finditer(text))
    for index, match in enumerate(matches):
        element = _element_of(match.group("label"))
        if element in found:
            continue  # a repeated label: the first one counts
        value = match.group("value")
        if element not in ("dimension", "explanation_score"):  # text elements may continue
            stop = matches[index + 1].start() if index + 1 < len(matches) else len(text)
            following = text[match.end() : stop]
            if following.strip():
                parts = [value]
                for line in following.splitlines()[1:]:
                    if not line.strip() or _SECTION.match(line):
                        break
                    parts.append(line.strip())
                value = " ".join(p for p in parts if p.strip())
        found[element] = value
    return found


def parse_dimension(raw: str) -> tuple[str | None, ElementOutcome]:
    """A dimension name from its raw value: the exact names, in any case, with spaces or
    hyphens for underscores, in emphasis or quotes, optionally followed by an explanation."""
    value = _unquote(_clean(raw))
    fast = _DIMENSION_NAMES.get(value.lower().replace(" ", "_").replace("-", "_"))
    if fast is not None:
        return fast, _PARSED
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
            return name, _PARSED
    if len(names) > 1:
        return None, ElementOutcome("unparseable", raw, "it names several dimensions: " + ", ".join(sorted(names)))
    return None, ElementOutcome("unparseable", raw, "not one of the 8 dimensions (" + ", ".join(DIMENSIONS) + ")")


def parse_score(raw: str) -> tuple[float | None, ElementOutcome]:
    """An explanation score 0-5 from its raw value: "3", "3.5", "3/5", "3 out of 5", "**3**"."""
    value = _clean(raw)
    if len(value) == 1 and value in "012345":
        return float(value), _PARSED
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
    return number, _PARSED


def _text_element(raw: str) -> tuple[str | None, ElementOutcome]:
    value = _unquote(_clean(raw))
    if not value:
        return None, ElementOutcome("unparseable", raw, "the text is empty")
    return value, _PARSED


def parse_critique(text: str) -> ParsedCritique:
    """Read the elements of a critique text; every element gets an outcome (see module doc)."""
    raw = split_elements(text)
    outcomes: dict[str, ElementOutcome] = {}
    texts: dict[str, str | None] = {}
    dimension: str | None = None
    score: float | None = None
    for element in ELEMENTS:
        value = raw.get(element)
        if value is None:
            outcomes[element] = _MISSING
            texts[element] = None
        elif element == "dimension":
            dimension, outcomes[element] = parse_dimension(value)
        elif element == "explanation_score":
            score, outcomes[element] = parse_score(value)
        else:
            cleaned = _unquote(_clean(value))
            if element == "main_flaw" and _NO_FLAW.match(cleaned):
                texts[element], outcomes[element] = None, ElementOutcome("parsed", cleaned)
            else:
                texts[element], outcomes[element] = _text_element(value)
    return ParsedCritique(
        texts["main_flaw"], dimension, texts["general_feedback"], texts["specific_feedback"], score, outcomes
    )
