"""Finding a chosen option in a stretch of text: letters in all common forms, option texts, labels.

Letters win over option texts ("B) trees, because water ..." is B), option texts are matched as
whole words, case-insensitively, with plurals; mentions that are negated ("not anxiety",
"A is incorrect") are dropped; two different options left over is ambiguous ("A or C").
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache

from thoughtdesk.core.evaluation.answers.result import Found, NotFound

#: Words that may stand right before a bare capital letter that names an option ("answer is C",
#: "A, B, and D", "most likely C"); any other word before it means it is not an option
#: ("vitamin D", "hepatitis B").
_BEFORE_BARE = frozenset(
    "is are be was answer answers option options choice choices letter and or nor either both "
    "then likely probably perhaps possibly definitely clearly but also not only except than "
    "would will should must select choose pick go with".split()
)
#: Lower-case words that may follow a bare capital letter ("C is correct", "A or C"); any other
#: lower-case word after it means it is an article or pronoun ("A guard", "I think").
_AFTER_BARE = frozenset("is are or and nor through to would seems as was".split())

_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|n['’]t|\bnever|\brather\s+than|\binstead\s+of|\bexcept(?:\s+for)?|\bnor|\bno\s+longer"
    r"|\bexclude|\beliminate|\brule\s+out|\bother\s+than)"
    r"\s+(?:(?:the|a|an|option|choice|answer|be|is|it|just|only|necessarily|simply)\s+){0,3}[(\[{*\"'“]*$",
    re.IGNORECASE,
)
#: ``_NEGATED_BEFORE`` read backwards, matched at the start of the reversed text: the same
#: texts, found without trying the pattern at every position of the 48 characters before a
#: mention (``_NEGATED_BEFORE.search`` took 5-9 us, this a tenth). Its ``$`` (the end, or before
#: a final newline) is the leading ``\n?``. test_remembered.py compares the two on texts made of
#: the patterns' words, spaces, quotes and case-folding characters; change both together.
_NEGATED_BEFORE_REVERSED = re.compile(
    r"\n?[(\[{*\"'“]*"
    r"(?:\s+(?:eht|a|na|noitpo|eciohc|rewsna|eb|si|ti|tsuj|ylno|ylirassecen|ylpmis)){0,3}\s+"
    r"(?:ton\b|t['’]n|reven\b|naht\s+rehtar\b|fo\s+daetsni\b|(?:rof\s+)?tpecxe\b|ron\b|regnol\s+on\b"
    r"|edulcxe\b|etanimile\b|tuo\s+elur\b|naht\s+rehto\b)",
    re.IGNORECASE,
)
#: A cheap pre-check for ``_NEGATED_BEFORE`` (9 us on 48 characters; most mentions have no
#: negation before them): any negation the pattern matches holds one of these words, so a text
#: without them is not searched. Exact for ASCII text, lower-cased (non-ASCII text, where case
#: folding has exceptions such as U+0130, is always searched). Keep it a superset of the pattern's
#: words when changing it (test_remembered.py checks it on texts made of those words).
_NEGATION_HINT = re.compile(r"no|n't|never|rather|instead|except|exclude|eliminate|rule|other")
# Only right after the mention ("A is incorrect", "(A) is not"): further on, "is not" usually
# belongs to the option's own text ("D) Drug is not extensively distributed").
_NEGATED_AFTER = re.compile(
    r"[)\]}*\"'”]*\s*(?:is|are|was|would\s+be|seems)\s+(?:not|incorrect|wrong|false"
    r"|unlikely|ruled\s+out|eliminated)\b|[)\]}*\"'”]*\s*(?:is|are)n['’]t\b",
    re.IGNORECASE,
)
#: Statements that name no single answer: "all of the above", "N/A", "it depends". Such a
#: statement is final: looking further (in the CoT) would put words in the model's mouth.
_NO_SINGLE_ANSWER = re.compile(
    r"\b(?:all|none|neither|both)\s+of\s+(?:the\s+)?(?:given\s+|listed\s+|provided\s+)?"
    r"(?:above|these|them|those|options|choices|answers)\b"
    r"|\b(?:all|none)\s+(?:the\s+)?above\b|(?<!\w)n/a(?!\w)|\bnot\s+applicable\b|\bnot\s+clear|\bunclear\b"
    r"|\bundetermined\b|\bindeterminate\b"
    r"|\b(?:cannot|can\s+not|can['’]?t)\s+(?:be\s+)?(?:(?:reliably|definitively|clearly|confidently)\s+)?"
    r"(?:determined|determine|answered|answer|say|tell|identified|identify|chosen|choose|selected|select|pick"
    r"|picked|decided|decide|known|know)\b"
    r"|\b(?:unable|impossible|not\s+possible)\s+to\s+(?:(?:reliably|definitively|clearly|confidently)\s+)?"
    r"(?:determine|identify|answer|choose|select|pick|decide|tell|say|know)\b"
    r"|\bno\s+(?:single\s+|correct\s+|right\s+|valid\s+|definitive\s+|clear\s+)+(?:answer|option|choice)s?\b"
    r"|\bit\s+depends\b|\bdepends\s+on\b"
    r"|\bnot\s+a\s+yes(?:\s+or\s+|/)no\b|\b(?:insufficient|not\s+enough)\s+information\b"
    r"|\bunknown\b|\binconclusive\b|\birrelevant\b|\bnot\s+listed\b|\bnot\s+(?:one\s+of\s+)?(?:the\s+)?(?:given\s+)?(?:options|choices)\b",
    re.IGNORECASE,
)
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[ \t]*$")
_WORD_AFTER = re.compile(r"[ \t]+([A-Za-z][a-z]*)")

#: Yes/no/maybe labels and what they mean.
LABELS = {"yes": "yes", "true": "yes", "no": "no", "false": "no", "maybe": "maybe"}
_LABEL_WORD = re.compile(r"(?<![\w'’-])(yes|no|true|false|maybe)(?![\w'’-])", re.IGNORECASE)
#: "no" is also a determiner ("no effect"): it is an answer only before punctuation, at the end,
#: or at the very start of the segment.
_NO_AS_ANSWER = re.compile(r"\s*(?:[,.;:!?)\]\"'*”]|$)")
_LABEL_ALTERNATIVE = re.compile(r"\s*,?\s*(?:or|and/or|/)\s*(yes|no|true|false|maybe)(?![\w'’-])", re.IGNORECASE)
_LEAD_IN = re.compile(
    r"[\s\W]*(?:(?:the|answer|is|would|be|a|an|final|correct|definitely|clearly|probably|likely)\b[\s\W]*)*$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class ChoiceMatcher:
    """What is needed to find the options of one option list in text."""

    choices: tuple[str, ...]
    letters: str
    strong_letter: re.Pattern[str]
    bare_letter: re.Pattern[str]
    #: per option: its index and the lower-case spellings that name it (longest first)
    spellings: tuple[tuple[int, tuple[str, ...]], ...]
    #: cleaned, lower-cased option text -> its indices (to find the gold option quickly)
    index_of_text: dict[str, tuple[int, ...]]


def letter_of(index: int) -> str:
    return string.ascii_uppercase[index]


def clean_choice(choice: object) -> str:
    """An option as matched: stripped, without a trailing period ("navigate ships." -> "navigate ships")."""
    return str(choice).strip().rstrip(".").strip()


def option_key(choice: object) -> str:
    """An option or gold text as compared: cleaned, lower case, single spaces."""
    return " ".join(clean_choice(choice).lower().split())


@lru_cache(maxsize=32)
def _letter_patterns(count: int) -> tuple[str, re.Pattern[str], re.Pattern[str]]:
    """Letter patterns depend only on how many options there are, so they are compiled once."""
    letters = string.ascii_uppercase[:count]
    upper = f"[{letters}]" if letters else "[^\\s\\S]"
    both = f"[{letters}{letters.lower()}]" if letters else "[^\\s\\S]"
    strong = re.compile(
        rf"\(\s*({both})\s*\)|\[({both})\]|\{{({both})\}}|\*\*\(?({both})\)?[.:]?\*\*"
        rf"|(?<![\w'’\-/])({both})\)"
        rf"|(?i:\b(?:option|choice|letter)s?)\s*[:#]?\s*[(\[]?({both})(?![\w'’])"
        rf"|^\s*({upper})[.:](?=\s+\S)",
        re.MULTILINE,
    )
    # The letter first, then what may not stand before it (a two-character look-behind): a
    # pattern that starts with its character class is scanned for that class, a third faster on
    # a CoT than trying the look-behind at every position. Same matches (test_fast_paths.py).
    bare = re.compile(rf"({both})(?<![\w'’\-./$].)(?![\w'’\-/]|\.\w)")
    return letters, strong, bare


@lru_cache(maxsize=32)
def _letter_list(count: int) -> re.Pattern[str]:
    """A list of option letters: "A, B, C, D, or E", "A or B", "A/B" (of the first ``count`` letters)."""
    letters = string.ascii_uppercase[:count] or "-"
    letter = rf"(?<![\w'’\-.$])[{letters}{letters.lower()}](?![\w'’\-])"
    separator = r"(?:\s*,\s*(?:(?:or|and)\s+)?|\s+(?:or|and|nor)\s+|\s*/\s*)"
    return re.compile(rf"{letter}(?:{separator}{letter})+")


# Whether a letter list may go on after (or come before) a letter: the cheap test before the
# list regex runs on a window around a mention.
_LIST_AFTER = re.compile(r"\s*(?:,|/|(?:or|and|nor)\b)", re.IGNORECASE)
_LIST_BEFORE = re.compile(r"(?:,|/|\b(?:or|and|nor))\s*$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"(?<![A-Za-z])[A-Za-z](?![A-Za-z])")  # a letter of a list, not "or"/"and"
_OPTION_FORM_CLOSE = 5  # the group of the strong pattern's "C)" form


#: The most common whole extraction outputs: "C", "(C)", "C)", "**C**", "C.", "C) inspiration.".
_WHOLE_LETTER = re.compile(r"\s*(?:\*\*)?[(\[{]?([A-Z])(?:[)\]}]|\.(?=\s|$)|:)?(?:\*\*)?(?:\s+([^\n]*?))?[\s.*]*")


def whole_letter(text: str, m: ChoiceMatcher) -> Found | None:
    """Fast path for an output that is just a letter, or a letter with its own option text."""
    match = _WHOLE_LETTER.fullmatch(text)
    if match is None:
        return None
    letter, rest = match.groups()
    index = m.letters.find(letter)  # one capital letter: found at most once
    if index < 0 or (rest and option_key(rest) != option_key(m.choices[index])):
        return None
    start = match.start(1)
    return Found(index, "letter", start, start + 1)


@lru_cache(maxsize=8192)
def matcher(choices: tuple[str, ...]) -> ChoiceMatcher:
    """Patterns and spellings for ``choices``; building one is cheap (no regex per option list,
    since every question of a dataset has its own options)."""
    count = min(len(choices), 26)
    letters, strong, bare = _letter_patterns(count)
    spellings = []
    index_of_text: dict[str, tuple[int, ...]] = {}
    for index in range(count):
        text = option_key(choices[index])
        index_of_text[text] = index_of_text.get(text, ()) + (index,)
        if not text:
            continue
        # Plurals are added at match time ("+s", "+es"); "insights" is also named by "insight".
        forms = (text, text[:-1]) if text.endswith("s") and len(text) > 3 else (text,)
        spellings.append((index, forms))
    return ChoiceMatcher(tuple(choices), letters, strong, bare, tuple(spellings), index_of_text)


def _masked(pos: int, masks: list[tuple[int, int]]) -> bool:
    return any(start <= pos < end for start, end in masks)


def negated(text: str, start: int, end: int, floor: int) -> bool:
    """Whether the mention ``text[start:end]`` is denied ("not anxiety", "A is incorrect")."""
    before = text[max(floor, start - 48) : start]
    if (not before.isascii() or _NEGATION_HINT.search(before.lower())) and _NEGATED_BEFORE_REVERSED.match(before[::-1]):
        return True
    return _NEGATED_AFTER.match(text, end, min(len(text), end + 48)) is not None


def _bare_letter_ok(text: str, start: int, end: int, seg_start: int, letter: str) -> bool:
    prefix = text[seg_start:start]
    at_start = not prefix.strip(" \t\n\"'“*([{")
    after = _WORD_AFTER.match(text, end)
    # "A guard", "I think", "D) A Picture Book": an article or pronoun, not an option.
    if after and after.group(1) not in _AFTER_BARE and not (len(after.group(1)) == 1 and after.group(1).isupper()):
        return False
    if letter.islower():
        # A lower-case letter is an option only as the whole statement ("b", "b is the answer").
        return at_start
    before = _WORD_BEFORE.search(prefix)
    if before and before.group(1).lower() not in _BEFORE_BARE:
        return False
    return True


def letter_mentions(
    text: str,
    start: int,
    end: int,
    m: ChoiceMatcher,
    masks: list[tuple[int, int]],
    bare: bool,
    *,
    lists: bool = True,
) -> list[tuple[int, int, int]]:
    """(choice index, start, end) of every non-negated letter mention in ``text[start:end]``.

    Every letter of a list ("(A, B, C, D, or E)") is a mention; with ``lists=False`` none is.
    """
    found: list[tuple[int, int, int]] = []
    taken: list[tuple[int, int]] = []
    strong = m.strong_letter.finditer(text, start, end) if may_name_a_letter(text, start, end, m.letters) else ()
    for match in strong:
        group = next(i for i, g in enumerate(match.groups(), 1) if g is not None)
        s, e = match.span(group)
        if _masked(s, masks) or any(ts <= s < te for ts, te in taken):
            continue
        listed = _letter_list_at(text, s, e, start, end, m)
        if listed is not None:
            # "(A, B, C, D, or E)", "options A, B or C": the list names every letter in it, not
            # only the one written in an option form.
            taken.append(listed)
            if lists and not negated(text, *listed, start):
                for letter in _LIST_ITEM.finditer(text, *listed):
                    if not _masked(letter.start(), masks):
                        found.append((m.letters.index(letter.group(0).upper()), *letter.span()))
            continue
        if group == _OPTION_FORM_CLOSE and _inside_noun_brackets(text, s, start):
            continue  # "(Vitamin D)", "(type A)": a name, not an option
        taken.append(match.span())
        if not negated(text, match.start(), match.end(), start):
            found.append((m.letters.index(match.group(group).upper()), s, e))
    # Bare letters only count where no letter is written in an option form: in "D) A Picture
    # Book" the "A" is an article.
    if bare and not taken:
        for match in m.bare_letter.finditer(text, start, end):
            s, e = match.span(1)
            if _masked(s, masks) or any(ts <= s < te for ts, te in taken):
                continue
            if not _bare_letter_ok(text, s, e, start, match.group(1)):
                continue
            if not negated(text, s, e, start):
                found.append((m.letters.index(match.group(1).upper()), s, e))
    found.sort(key=lambda item: item[1])
    return found


_STRONG_WORDS = ("option", "choice", "letter")


def may_name_a_letter(text: str, start: int, end: int, letters: str) -> bool:
    """False when ``text[start:end]`` cannot hold a letter in an option form (the strong letter
    pattern): each of its forms holds a bracket, "*" or ")", the word option, choice or letter,
    or a capital option letter right before "." or ":". Cheaper than the pattern, which tries
    its seven forms at every position (issue 27, point 6); non-ASCII text (whose case folding
    matches more to those words) is always searched."""
    part = text[start:end]
    for char in "([{*)":
        if char in part:
            return True
    if not part.isascii():
        return True
    lower = part.lower()
    for word in _STRONG_WORDS:
        if word in lower:
            return True
    for mark in ".:":
        pos = part.find(mark, 1)
        while pos > 0:
            if part[pos - 1] in letters:
                return True
            pos = part.find(mark, pos + 1)
    return False


def _letter_list_at(text: str, s: int, e: int, start: int, end: int, m: ChoiceMatcher) -> tuple[int, int] | None:
    """The span of the letter list that the letter ``text[s:e]`` belongs to, or None."""
    if not _LIST_AFTER.match(text, e, end) and not _LIST_BEFORE.search(text, max(start, s - 6), s):
        return None
    for match in _letter_list(len(m.letters)).finditer(text, max(start, s - 160), min(end, e + 160)):
        if match.start() <= s < match.end():
            return match.span()
        if match.start() > s:
            break
    return None


def _inside_noun_brackets(text: str, s: int, floor: int) -> bool:
    """Whether the letter at ``s`` ends a bracketed name such as "(Vitamin D)" or "(type A)":
    inside an open "(" on its line, right after a word that cannot lead to an option letter."""
    line_start = max(floor, text.rfind("\n", 0, s) + 1)
    opening = text.rfind("(", line_start, s)
    if opening < 0 or ")" in text[opening:s]:
        return False
    before = _WORD_BEFORE.search(text, opening + 1, s)
    return before is not None and before.group(1).lower() not in _BEFORE_BARE


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def text_mentions(text: str, start: int, end: int, m: ChoiceMatcher) -> list[tuple[int, int, int]]:
    """(choice index, start, end) of every non-negated option-text mention in ``text[start:end]``.

    Whole words, any case, with "s"/"es" plurals; where mentions overlap the longest wins
    ("front door" over "door"). Plain ``str.find`` on the lower-cased text: much faster than a
    regex per option list, and offsets stay valid because lower-casing keeps the length (texts
    where it does not are matched on a same-length approximation).
    """
    if not m.spellings:
        return []
    lower = _as_matched(text)
    size = len(lower)
    candidates: list[tuple[int, int, int]] = []
    for index, forms in m.spellings:
        for form in forms:
            pos = lower.find(form, start, end)
            if pos < 0:
                continue
            first_is_word, last_is_word = _is_word(form[0]), _is_word(form[-1])
            while pos >= 0:
                stop = pos + len(form)
                if lower.startswith("es", stop) and not _is_word(lower[stop + 2 : stop + 3]):
                    stop += 2
                elif lower.startswith("s", stop) and not _is_word(lower[stop + 1 : stop + 2]):
                    stop += 1
                before_ok = pos == 0 or not (first_is_word and _is_word(lower[pos - 1]))
                after_ok = stop >= size or not (last_is_word and _is_word(lower[stop]))
                if before_ok and after_ok and stop <= end:
                    candidates.append((index, pos, stop))
                pos = lower.find(form, pos + 1, end)
    if len(candidates) > 1:
        candidates = list(dict.fromkeys(candidates))  # "sadness" and its form "sadnes" + "s"
    if not candidates:
        return []
    if len(candidates) == 1:  # the common case: nothing overlaps
        index, s, e = candidates[0]
        return [] if negated(text, s, e, start) else candidates
    candidates.sort(key=_longest_first)
    taken: list[tuple[int, int, int]] = []
    for index, s, e in candidates:
        for _taken_index, ts, te in taken:
            if e > ts and s < te:  # overlaps a longer mention
                break
        else:
            taken.append((index, s, e))
    taken.sort(key=_start_of)
    return [(i, s, e) for i, s, e in taken if not negated(text, s, e, start)]


def _longest_first(mention: tuple[int, int, int]) -> tuple[int, int]:
    return (mention[1] - mention[2], mention[1])


def _start_of(mention: tuple[int, int, int]) -> int:
    return mention[1]


def _as_matched(text: str) -> str:
    """``text`` as option texts are looked for in it: lower case, each character one (a
    character whose lower case is longer is kept), tabs and line breaks as spaces."""
    lower = text.lower()
    if len(lower) != len(text):
        lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    if "\n" in lower or "\t" in lower:
        lower = _single_spaced(lower)
    return lower


def spells_an_option(text: str, m: ChoiceMatcher) -> bool:
    """Whether any spelling of an option occurs anywhere in ``text`` (whole word or not). When
    none does, :func:`text_mentions` finds nothing in any stretch of it, and what
    :func:`find_choice` finds there depends on the option letters alone."""
    if not m.spellings:
        return False
    lower = _as_matched(text)
    for _index, forms in m.spellings:
        for form in forms:
            if form in lower:
                return True
    return False


def _single_spaced(lower: str) -> str:
    """Every whitespace character as a space, so "front\ndoor" matches "front door" and
    offsets stay valid."""
    return "".join(" " if c.isspace() else c for c in lower)


def _decide(mentions: list[tuple[int, int, int]], kind: str, m: ChoiceMatcher) -> Found | NotFound:
    indices = sorted({index for index, _, _ in mentions})
    if len(indices) == 1:
        spans = [(s, e) for i, s, e in mentions if i == indices[0]]
        return Found(indices[0], kind, spans[-1][0], spans[-1][1])
    named = " or ".join(letter_of(i) for i in indices)
    return NotFound(f"ambiguous: {named}", ambiguous=True, start=mentions[0][1], end=mentions[-1][2])


def find_choice(
    text: str, start: int, end: int, m: ChoiceMatcher, masks: list[tuple[int, int]], *, bare: bool = True
) -> Found | NotFound | None:
    """The one option chosen in ``text[start:end]``: Found(choice index), NotFound if ambiguous, or None."""
    letters = letter_mentions(text, start, end, m, masks, bare)
    texts = text_mentions(text, start, end, m) if not letters else []
    if not letters and not texts:
        return no_single_answer(text, start, end)
    decided = _decide(letters, "letter", m) if letters else _decide(texts, "text", m)
    if isinstance(decided, NotFound):
        # "the region (A, B, C, D, or E) cannot be identified": a refusal that lists the
        # options, not a choice among them.
        return no_single_answer(text, start, end) or decided
    return decided


def no_single_answer(text: str, start: int, end: int) -> NotFound | None:
    """NotFound (final) when ``text[start:end]`` says "all of the above", "N/A", "it depends"..."""
    match = _NO_SINGLE_ANSWER.search(text, start, end)
    if match is None:
        return None
    return NotFound(f"no single answer: {match.group(0)!r}", ambiguous=True, start=match.start(), end=match.end())


def last_option(text: str, m: ChoiceMatcher, masks: list[tuple[int, int]]) -> Found | None:
    """The last option stated in a letter form such as "(C)", "C)", "Option C" anywhere in ``text``."""
    # A list of letters ("which of (A, B, C, D, or E)") states no option, whatever comes last.
    letters = letter_mentions(text, 0, len(text), m, masks, bare=False, lists=False)
    if not letters:
        return None
    index, s, e = letters[-1]
    return Found(index, "last_option", s, e)


_WHOLE_LABEL = re.compile(
    r"\s*(?:\*\*)?(?:\(?([A-Z])[).:]\s*)?(yes|no|true|false|maybe)(?:\*\*)?[\s.!*]*", re.IGNORECASE
)


def whole_label(text: str, options: list[str]) -> Found | None:
    """Fast path for an output that is just a label ("Yes.", "false", "B) False.")."""
    match = _WHOLE_LABEL.fullmatch(text)
    if match is None:
        return None
    label = LABELS[match.group(2).lower()]
    letter = match.group(1)
    if letter is not None:
        index = ord(letter.upper()) - 65
        if index >= len(options) or label_of(options[index]) != label:
            return None  # "A) False" with A = True: let the careful path decide
    return Found(label, "label", *match.span(2))


def label_of(value: object) -> str | None:
    """ "yes"/"no"/"maybe" for a yes/no/true/false/maybe word (any case), else None."""
    return LABELS.get(str(value).strip().rstrip(".").strip().lower())


def find_label(text: str, start: int, end: int, masks: list[tuple[int, int]]) -> Found | NotFound | None:
    """The yes/no/maybe answer in ``text[start:end]``; a label at the very start decides."""
    mentions: list[tuple[str, int, int]] = []
    for match in _LABEL_WORD.finditer(text, start, end):
        s, e = match.span(1)
        if _masked(s, masks):
            continue
        word = match.group(1).lower()
        at_start = _LEAD_IN.match(text, start, s) is not None
        if word == "no" and not at_start and not _NO_AS_ANSWER.match(text, e):
            continue
        label = LABELS[word]
        if negated(text, s, e, start):
            if word not in ("true", "false"):
                continue
            label = "no" if label == "yes" else "yes"  # "not true" is a no, "not false" a yes
        if at_start and not mentions:
            other = _LABEL_ALTERNATIVE.match(text, e, end)
            if other and LABELS[other.group(1).lower()] != label:
                return NotFound(
                    f"ambiguous: {label} or {LABELS[other.group(1).lower()]}", ambiguous=True, start=s, end=other.end()
                )
            return Found(label, "label", s, e)
        mentions.append((label, s, e))
    if not mentions:
        return no_single_answer(text, start, end)
    labels = sorted({label for label, _, _ in mentions})
    if len(labels) == 1:
        return Found(labels[0], "label", mentions[-1][1], mentions[-1][2])
    return NotFound(f"ambiguous: {' or '.join(labels)}", ambiguous=True, start=mentions[0][1], end=mentions[-1][2])
