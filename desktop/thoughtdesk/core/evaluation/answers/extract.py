"""``extract_answer``: find the answer in the answer-extraction output, else in the CoT, and
compare it with the gold answer. Never raises: every problem is an "unextractable" outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import NotRequired, TypedDict, cast

from thoughtdesk.core.evaluation.answers.choice import (
    find_choice,
    find_label,
    label_of,
    last_option,
    letter_mentions,
    letter_of,
    matcher,
    option_key,
    spells_an_option,
    whole_label,
    whole_letter,
)
from thoughtdesk.core.evaluation.answers.number import (
    DEFAULT_REL_TOL,
    ParsedNumber,
    find_number,
    numbers_equal,
    numbers_in,
)
from thoughtdesk.core.evaluation.answers.result import (
    CORRECT,
    INCORRECT,
    UNEXTRACTABLE,
    Extraction,
    Found,
    NotFound,
    TextSource,
)
from thoughtdesk.core.evaluation.answers.segments import (
    Segment,
    cot_segments,
    extraction_segments,
    prompt_echo_spans,
    sentence_end,
)
from thoughtdesk.core.evaluation.answers.text import answer_span, contains_phrase, normalized, token_f1

Finder = Callable[[str, TextSource], Found | NotFound | None]


class _Located(TypedDict):
    """What every scorer passes on to :class:`Extraction` about the value it found."""

    value: str | float | None
    method: str
    source: TextSource | None
    span: tuple[int, int]
    letter: NotRequired[str | None]


def extract_answer(
    answer_type: str,
    *,
    extraction_output: str | None,
    cot: str | None,
    choices: Sequence[object] | None,
    gold: Sequence[object] | None,
    rel_tol: float = DEFAULT_REL_TOL,
) -> Extraction:
    """Extract the answer of one generated CoT and score it against the gold answer(s).

    ``answer_type`` is ThoughtSource's sample type: "multiplechoice", "bool", "number", "text"
    or "collection". The answer-extraction output is read first, the CoT only when the output
    holds no answer. For multiple choice ``gold`` holds option texts (ThoughtSource style,
    ``["floor"]``); a single letter is accepted when no option has that text. ``rel_tol`` is
    the relative tolerance of numeric equality (a fraction, 1e-4 = 0.01 %).

    Never raises: bad input of any kind (None, non-strings, empty CoT, overflowing numbers,
    unknown types or labels) gives ``outcome="unextractable"`` with a ``reason``.
    """
    # A CoT that is not text is read with str(), which could fail: such answers take the full path.
    key = _output_key(answer_type, extraction_output, choices, gold, rel_tol) if cot.__class__ in _TEXTS else None
    try:
        if key is not None:
            known = _decided_by_output.get(key)
            if known is not None:
                return known
            # Plain strings throughout (the key checked them): nothing to convert.
            _type, output, options, golds, _tol = key
            result = _score(
                _kind(answer_type),
                answer_type,
                [("extraction", output), ("cot", "" if cot is None else visible_answer_text(cot))],
                [] if options is None else list(options),
                [g for g in golds if g.strip()],
                rel_tol,
                () if options is None else options,
            )
        else:
            result = _extract(answer_type, extraction_output, cot, choices, gold, rel_tol)
    except Exception as error:  # one odd answer must not stop an evaluation
        return Extraction(
            UNEXTRACTABLE, method="error", reason=f"extractor error: {type(error).__name__}: {error}"[:300]
        )
    if key is not None and result.source == "extraction":
        if len(_decided_by_output) >= OUTPUT_MEMO_SIZE:
            _decided_by_output.clear()
        _decided_by_output[key] = result
    return result


#: An answer of plain strings: (answer type, extraction output, options or None, gold answers,
#: relative tolerance).
_Key = tuple[str, str, tuple[str, ...] | None, tuple[str, ...], float]


#: Results decided by the answer-extraction output alone, by (answer type, output, choices, gold,
#: tolerance). An evaluation walks a collection question by question, and a question's many
#: conditions and samples often answer in the same words ("B", "(B)", "Yes.", "18"); the CoT is
#: never read for such a result (``source == "extraction"``: ``_search`` stopped at the output),
#: so it can be reused for any CoT. Extraction is immutable. Bounded: emptied when full.
_decided_by_output: dict[_Key, Extraction] = {}
OUTPUT_MEMO_SIZE = 4096
_TEXTS = (str, type(None))
#: Longer outputs are sentences that seldom repeat: not remembered.
_MEMO_MAX_CHARS = 200

#: What the answer-extraction output's segments say (a Found option index, a NotFound, or None)
#: by (output, option letters), for multiple-choice outputs that spell none of their question's
#: option texts (``choice.spells_an_option``, checked for every question): "The answer is B.",
#: "Option B", "B or C", "none of the above." are then read alike for every question with as
#: many options, which ``_decided_by_output`` (a question's choices and gold answers in its
#: key) cannot share. Found and NotFound are immutable. Bounded: emptied when full.
_choice_output_findings: dict[tuple[str, str], Found | NotFound | None] = {}
_UNKNOWN = object()


def _output_key(
    answer_type: object,
    extraction_output: object,
    choices: Sequence[object] | None,
    gold: Sequence[object] | None,
    rel_tol: float,
) -> _Key | None:
    """The memo key of an answer, or None when it is not remembered (inputs that are not plain
    strings: 1, 1.0 and True are equal keys but different texts)."""
    if extraction_output.__class__ is not str or answer_type.__class__ is not str or rel_tol.__class__ is not float:
        return None
    if len(extraction_output) > _MEMO_MAX_CHARS:
        return None
    if choices is None:
        options: tuple[object, ...] | None = None
    elif choices.__class__ is list or choices.__class__ is tuple:
        options = tuple(choices)
        for option in options:
            if option.__class__ is not str:
                return None
    else:
        return None
    if gold.__class__ is not list and gold.__class__ is not tuple:
        return None
    golds = tuple(gold)
    for item in golds:
        if item.__class__ is not str:
            return None
    return cast(_Key, (answer_type, extraction_output, options, golds, rel_tol))


THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


def visible_answer_text(cot: str) -> str:
    """``cot`` with an inline ``<think>...</think>`` block blanked out (spaces: offsets stay those
    of the stored text), so an answer is never read from a reasoning model's thinking.

    The thinking of a model served raw ends at the last ``</think>`` (the opening tag may be in
    the prompt template and not in the text, as Qwen3's and R1's templates do); a text that opens
    ``<think>`` and never closes it is all thinking (cut or unfinished): nothing is visible. A CoT
    stored apart from its reasoning (``generated_cot.reasoning``) has no tags and is unchanged.
    """
    end = cot.rfind(THINK_CLOSE)
    if end >= 0:
        end += len(THINK_CLOSE)
        return " " * end + cot[end:]
    start = cot.find(THINK_OPEN)
    if start >= 0 and not cot[:start].strip():
        return " " * len(cot)
    return cot


def _as_text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _extract(
    answer_type: object,
    extraction_output: object,
    cot: object,
    choices: Sequence[object] | None,
    gold: Sequence[object] | None,
    rel_tol: float,
) -> Extraction:
    kind = _kind(answer_type if answer_type.__class__ is str else _as_text(answer_type))
    if isinstance(choices, (list, tuple)):
        option_list = [c if c.__class__ is str else _as_text(c) for c in choices]
    else:
        option_list = []
    if isinstance(gold, (str, bytes)) or not isinstance(gold, (list, tuple)):
        gold = [] if gold is None else [gold]
    gold_list = [t for t in (g if g.__class__ is str else _as_text(g) for g in gold) if t.strip()]
    texts: list[tuple[TextSource, str]] = [
        ("extraction", extraction_output if extraction_output.__class__ is str else _as_text(extraction_output)),
        ("cot", visible_answer_text(cot if cot.__class__ is str else _as_text(cot))),
    ]
    return _score(kind, answer_type, texts, option_list, gold_list, rel_tol, tuple(option_list))


def _score(
    kind: str,
    answer_type: object,
    texts: list[tuple[TextSource, str]],
    option_list: list[str],
    gold_list: list[str],
    rel_tol: float,
    option_tuple: tuple[str, ...],
) -> Extraction:
    """Score an answer whose inputs are plain strings: its (normalised) kind, the extraction
    output and the CoT, the options (also as a tuple), the non-blank gold answers."""
    if kind in ("multiplechoice", "bool") and (kind == "bool" or _is_label_list(option_tuple)):
        return _score_label(texts, option_list, gold_list, option_tuple)
    if kind == "multiplechoice":
        if not option_list:
            return Extraction(UNEXTRACTABLE, reason="multiple-choice sample has no choices")
        return _score_choice(texts, option_list, gold_list, option_tuple)
    if kind == "number":
        return _score_number(texts, gold_list, rel_tol)
    if kind in ("text", "collection"):
        return _score_text(texts, gold_list, collection=kind == "collection")
    return Extraction(UNEXTRACTABLE, reason=f"unknown answer type {_as_text(answer_type)[:40]!r}")


@lru_cache(maxsize=64)
def _kind(answer_type: str) -> str:
    return answer_type.strip().lower().replace("_", "").replace(" ", "")


#: ``label_of`` of an option or gold text (plain strings here), once per question.
_text_label: Callable[[str], str | None] = lru_cache(maxsize=4096)(label_of)


@lru_cache(maxsize=8192)
def _is_label_list(options: tuple[str, ...]) -> bool:
    """Option lists made only of yes/no/maybe/true/false (PubMedQA) are scored as labels."""
    return 2 <= len(options) <= 3 and all(label_of(option) for option in options)


def _search(
    texts: list[tuple[TextSource, str]], finder: Finder, what: str
) -> tuple[Found | NotFound, TextSource | None]:
    """Run ``finder`` on the extraction output, then on the CoT; the first answer wins.

    An ambiguous extraction output ("A or C") is final: the model's stated answer is ambiguous
    even if the CoT leaned one way.
    """
    first_reason: NotFound | None = None
    for source, text in texts:
        if not text or text.isspace():  # as ``not text.strip()``, without copying a long CoT
            continue
        result = finder(text, source)
        if isinstance(result, Found):
            return result, source
        if isinstance(result, NotFound):
            if result.ambiguous:
                return result, source
            first_reason = first_reason or result
    if first_reason is not None:
        return first_reason, None
    if not any(text.strip() for _, text in texts):
        return NotFound("empty CoT and empty extraction output"), None
    snippet = next((text.strip()[:60] for _, text in texts if text.strip()), "")
    return NotFound(f"no {what} found (answer text starts {snippet!r})"), None


def _method(source: TextSource, segment: Segment | None, found: Found) -> str:
    if source == "extraction":
        return f"extraction_output:{found.method}"
    return f"cot:{segment.locator}" if segment is not None else f"cot:{found.method}"


def _in_segments(
    text: str, source: TextSource, find: Callable[[str, int, int], Found | NotFound | None]
) -> Found | NotFound | None:
    segments = extraction_segments(text) if source == "extraction" else cot_segments(text)
    for segment in segments:
        result = find(text, segment.start, segment.end)
        if isinstance(result, Found):
            return Found(result.value, _method(source, segment, result), result.start, result.end)
        if result is not None:
            return result
    return None


def _unextractable(result: NotFound, source: TextSource | None) -> Extraction:
    span = (result.start, result.end) if result.start is not None and result.end is not None else None
    return Extraction(UNEXTRACTABLE, source=source if span else None, span=span, reason=result.reason)


# -- multiple choice ------------------------------------------------------------------------


def _score_choice(
    texts: list[tuple[TextSource, str]], options: list[str], gold: list[str], option_tuple: tuple[str, ...]
) -> Extraction:
    m = matcher(option_tuple)

    def finder(text: str, source: TextSource) -> Found | NotFound | None:
        if source == "extraction":
            if len(text) < 160:
                fast = whole_letter(text, m)
                if fast is not None:
                    return Found(fast.value, "extraction_output:letter", fast.start, fast.end)
            if len(text) <= _MEMO_MAX_CHARS and not spells_an_option(text, m):
                # What the segments say depends on the option letters alone: shared.
                key = (text, m.letters)
                known = _choice_output_findings.get(key, _UNKNOWN)
                if known is _UNKNOWN:
                    known = in_segments(text, source)
                    if len(_choice_output_findings) >= OUTPUT_MEMO_SIZE:
                        _choice_output_findings.clear()
                    _choice_output_findings[key] = known
                return known  # type: ignore[return-value]
        return in_segments(text, source)

    def in_segments(text: str, source: TextSource) -> Found | NotFound | None:
        masks = prompt_echo_spans(text)
        result = _in_segments(text, source, lambda t, s, e: find_choice(t, s, e, m, masks))
        if result is None and source == "cot":
            found = last_option(text, m, masks)
            if found is not None:
                return Found(found.value, "cot:last_option", found.start, found.end)
        return result

    result, source = _search(texts, finder, "option")
    if isinstance(result, NotFound):
        return _unextractable(result, source)
    index = result.value
    if not isinstance(index, int):  # the choice finders report the option's index
        raise TypeError(f"a choice finder found {index!r}, not an option index")
    letter = letter_of(index)
    value = f"{letter}) {options[index]}"
    span = (result.start, result.end)
    if len(gold) == 1:  # the usual one gold answer: its options' indices as they are
        gold_indices: tuple[int, ...] | set[int] = m.index_of_text.get(_gold_key(gold[0]), ())
    else:
        gold_indices = {i for g in gold for i in m.index_of_text.get(_gold_key(g), ())}
    if not gold_indices and len(gold) == 1 and len(gold[0].strip()) == 1 and gold[0].strip().upper() in m.letters:
        gold_indices = {m.letters.index(gold[0].strip().upper())}
    if not gold:
        outcome, reason = UNEXTRACTABLE, "no gold answer"
    elif not gold_indices:
        outcome, reason = UNEXTRACTABLE, f"gold answer {gold[0][:60]!r} is not among the choices"
    else:
        outcome, reason = (CORRECT if index in gold_indices else INCORRECT), ""
    return Extraction(outcome, value, result.method, source, span, reason, None, letter)


@lru_cache(maxsize=4096)
def _gold_key(gold: str) -> str:
    """``option_key`` of a gold answer, computed once for all the answers to its question."""
    return option_key(gold)


# -- bool and yes/no/maybe ------------------------------------------------------------------


def _score_label(
    texts: list[tuple[TextSource, str]], options: list[str], gold: list[str], option_tuple: tuple[str, ...]
) -> Extraction:
    m = matcher(option_tuple) if options else None

    def find(text: str, start: int, end: int, masks: list[tuple[int, int]]) -> Found | NotFound | None:
        if m is not None:
            # Letters first ("B) False"); the option texts are the labels themselves.
            letters = letter_mentions(text, start, end, m, masks, bare=True)
            labels = sorted({_text_label(options[i]) or "" for i, _, _ in letters})
            if len(labels) == 1 and labels[0]:
                return Found(labels[0], "letter", letters[-1][1], letters[-1][2])
            if len(labels) > 1:
                named = " or ".join(letter_of(i) for i in sorted({i for i, _, _ in letters}))
                return NotFound(f"ambiguous: {named}", ambiguous=True, start=letters[0][1], end=letters[-1][2])
        return find_label(text, start, end, masks)

    def finder(text: str, source: TextSource) -> Found | NotFound | None:
        if source == "extraction" and len(text) < 40:
            fast = whole_label(text, options)
            if fast is not None:
                return Found(fast.value, "extraction_output:label", fast.start, fast.end)
        masks = prompt_echo_spans(text)
        result = _in_segments(text, source, lambda t, s, e: find(t, s, e, masks))
        if result is None and source == "cot":
            # The last sentence ("..., so yes, it would balance."), then a leading "Yes."
            stripped = text.rstrip()
            start = max(stripped.rfind(". ", 0, len(stripped) - 1), stripped.rfind("\n", 0, len(stripped) - 1)) + 1
            found = find(text, start, len(stripped), masks)
            if isinstance(found, Found):
                return Found(found.value, "cot:last_sentence", found.start, found.end)
            lead = len(text) - len(text.lstrip())
            found = find(text, lead, sentence_end(text, lead), masks)
            if isinstance(found, Found):
                return Found(found.value, "cot:first_sentence", found.start, found.end)
        return result

    result, source = _search(texts, finder, "yes/no answer")
    if isinstance(result, NotFound):
        return _unextractable(result, source)
    label = str(result.value)
    letter = next((letter_of(i) for i, option in enumerate(options) if _text_label(option) == label), None)
    common: _Located = {
        "value": label,
        "method": result.method,
        "source": source,
        "span": (result.start, result.end),
        "letter": letter,
    }
    gold_labels = {_text_label(g) for g in gold} - {None}
    if not gold:
        return Extraction(UNEXTRACTABLE, reason="no gold answer", **common)
    if not gold_labels:
        return Extraction(UNEXTRACTABLE, reason=f"gold answer {gold[0][:60]!r} is not yes/no/maybe", **common)
    return Extraction(CORRECT if label in gold_labels else INCORRECT, **common)


# -- numbers --------------------------------------------------------------------------------


def _score_number(texts: list[tuple[TextSource, str]], gold: list[str], rel_tol: float) -> Extraction:
    def finder(text: str, source: TextSource) -> Found | NotFound | None:
        if source == "extraction" and len(text) < 40 and "=" not in text:
            try:
                numbers = numbers_in(text)
            except ValueError:
                numbers = []
            if len(numbers) == 1:  # the common "18", "$18.00", "18 apples."
                return Found(numbers[0], "extraction_output:number", numbers[0].start, numbers[0].end)
        result = _in_segments(text, source, find_number)
        if result is None and source == "cot":
            found = find_number(text, 0, len(text), last=True)
            if isinstance(found, Found):
                return Found(found.value, "cot:last_number", found.start, found.end)
            return found
        return result

    result, source = _search(texts, finder, "number")
    if isinstance(result, NotFound):
        return _unextractable(result, source)
    number = result.value
    if not isinstance(number, ParsedNumber):  # the number finders report what they parsed
        raise TypeError(f"a number finder found {number!r}, not a parsed number")
    common: _Located = {
        "value": number.value,
        "method": result.method,
        "source": source,
        "span": (result.start, result.end),
    }
    gold_numbers: list[ParsedNumber] = []
    problem = "no gold answer" if not gold else ""
    for item in gold:
        try:
            parsed = _gold_number(item)
        except ValueError:
            problem = f"gold answer {item[:40]!r} overflows"
            continue
        if parsed is not None:
            gold_numbers.append(parsed)
        else:
            problem = f"gold answer {item[:40]!r} is not a number"
    if not gold_numbers:
        return Extraction(UNEXTRACTABLE, reason=problem, **common)
    correct = any(numbers_equal(number, g, rel_tol) for g in gold_numbers)
    return Extraction(CORRECT if correct else INCORRECT, **common)


@lru_cache(maxsize=4096)
def _gold_number(gold: str) -> ParsedNumber | None:
    """The first number of a gold answer, parsed once for all the answers to its question
    (ParsedNumber is immutable); raises NumberOverflow (a ValueError), which is not remembered."""
    parsed = numbers_in(gold)
    return parsed[0] if parsed else None


# -- free text and collections --------------------------------------------------------------


def _text_span(text: str, start: int, end: int) -> Found | None:
    span = answer_span(text, start, end)
    if span is None:
        return None
    return Found(text[span[0] : span[1]], "text", *span)


def _score_text(texts: list[tuple[TextSource, str]], gold: list[str], *, collection: bool) -> Extraction:
    def finder(text: str, source: TextSource) -> Found | NotFound | None:
        found = _in_segments(text, source, _text_span)
        if found is None and source == "extraction":
            found = _text_span(text, 0, len(text))
            if found is not None:
                found = Found(found.value, "extraction_output:text", found.start, found.end)
        return found

    result, source = _search(texts, finder, "answer statement")
    if isinstance(result, NotFound):
        return _unextractable(result, source)
    raw = str(result.value)
    value = normalized(raw)
    common: _Located = {"value": value, "method": result.method, "source": source, "span": (result.start, result.end)}
    if not gold:
        return Extraction(UNEXTRACTABLE, reason="no gold answer", **common)
    f1 = max(token_f1(raw, g) for g in gold)
    if not value:
        return Extraction(UNEXTRACTABLE, reason="answer is only punctuation or articles", f1=f1, **common)
    exact = any(value == normalized(g) for g in gold)
    if not exact and collection and any(contains_phrase(raw, g) for g in gold):
        exact = True
        common["method"] = f"{result.method}:contains_gold"
    return Extraction(CORRECT if exact else INCORRECT, f1=f1, **common)
