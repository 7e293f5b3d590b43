"""What scoring remembers between answers (issue 27, point 6: a million answers within 50x one bare
``re.search`` each) never changes a result.

- ``extract._decided_by_output``: whole results decided by the answer-extraction output alone,
  reused for an answer with the same type, output, choices and gold answers, whatever its CoT;
- ``extract._gold_number``: a gold answer's number, parsed once per question;
- ``extract._choice_output_findings``: what a multiple-choice output's segments say, shared by
  every question with as many options whose option texts the output does not spell;
- ``text.normalized``: ``normalize_text`` remembered (gold answers, F1, containment);
- and a pre-check: ``choice._NEGATION_HINT`` before the negation pattern, which is matched
  backwards (``_NEGATED_BEFORE_REVERSED``) instead of searched.

The property tests score streams of answers that share outputs, choices and gold answers but
differ in their CoTs (as the conditions of one question do) and compare each result with the
careful path run afresh (``_extract``, no memo, no safety net).
"""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.evaluation.answers.test_robustness import ANSWERY, TYPES
from thoughtdesk.core.evaluation.answers import extract, extract_answer
from thoughtdesk.core.evaluation.answers.choice import (
    _NEGATED_AFTER,
    _NEGATED_BEFORE,
    _NEGATED_BEFORE_REVERSED,
    negated,
)
from thoughtdesk.core.evaluation.answers.extract import _extract, _gold_number
from thoughtdesk.core.evaluation.answers.number import DEFAULT_REL_TOL, numbers_in
from thoughtdesk.core.evaluation.answers.text import normalize_text, normalized

OUTPUTS = st.one_of(
    st.sampled_from(["B", "(B)", "B) door.", "Option B", "The answer is B.", "door", "B or C", "", "  ", "Yes."]),
    st.sampled_from(["No.", "yes", "B) False.", "N/A", "18", "$18.00", "18 or 19", "1 1/2.", "none of the above."]),
    ANSWERY,
)
COTS = st.one_of(st.none(), st.sampled_from(["So the answer is (C) hallway.", "#### 18", "so yes."]), ANSWERY)
OPTION_LISTS = st.sampled_from(
    [
        ["floor", "door", "hallway", "porch", "garden"],
        ["True", "False"],
        ["yes", "no", "maybe"],
        [],
        ["door", 1],  # not all strings: never remembered
        ("floor", "door"),
    ]
)
GOLDS = st.one_of(
    st.sampled_from([["door"], ["B"], ["True"], ["no"], ["18"], ["1.5"], ["river bank"], [], ["1e999"], [1], None]),
    st.lists(st.text(max_size=8), max_size=2),
)
ANSWER = st.tuples(TYPES, OUTPUTS, COTS, OPTION_LISTS, GOLDS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ANSWER, min_size=1, max_size=12), st.data())
def test_a_remembered_result_is_what_the_careful_path_gives(answers, data):
    extract._decided_by_output.clear()
    # Each answer twice or more, the second time with another CoT (a remembered result is
    # reused for any CoT, so it must not depend on it).
    stream = answers + [(t, o, data.draw(COTS), c, g) for t, o, _, c, g in answers]
    for answer_type, output, cot, choices, gold in data.draw(st.permutations(stream)):
        scored = extract_answer(answer_type, extraction_output=output, cot=cot, choices=choices, gold=gold)
        try:
            careful = _extract(answer_type, output, cot, choices, gold, DEFAULT_REL_TOL)
        except Exception:  # the safety net answered: checked below
            assert scored.method == "error"
            continue
        assert scored == careful, (answer_type, output, cot, choices, gold)


def test_an_answer_decided_by_its_output_is_scored_once_per_question():
    """The second condition answering "(B)" to the same question gets the first one's result
    (the same object), whatever its CoT; an answer that needed its CoT is not remembered."""
    extract._decided_by_output.clear()
    options, gold = ["floor", "door", "hallway"], ["door"]
    first = extract_answer("multiplechoice", extraction_output="(B)", cot="A long CoT.", choices=options, gold=gold)
    again = extract_answer("multiplechoice", extraction_output="(B)", cot="Other. (A)", choices=options, gold=gold)
    assert again is first and first.outcome == "correct"
    from_cot = extract_answer("multiplechoice", extraction_output="", cot="So (C).", choices=options, gold=gold)
    other_cot = extract_answer("multiplechoice", extraction_output="", cot="So (B).", choices=options, gold=gold)
    assert (from_cot.letter, other_cot.letter) == ("C", "B")


def test_the_memo_is_bounded():
    extract._decided_by_output.clear()
    for i in range(extract.OUTPUT_MEMO_SIZE + 10):
        extract_answer("number", extraction_output=str(i), cot=None, choices=None, gold=["5"])
    assert 0 < len(extract._decided_by_output) <= extract.OUTPUT_MEMO_SIZE


@settings(max_examples=200, deadline=None)
@given(st.one_of(ANSWERY, st.text(max_size=20)))
def test_remembered_gold_numbers_and_normalised_texts_are_the_plain_ones(text):
    try:
        parsed = numbers_in(text)
    except ValueError:
        with pytest.raises(ValueError):
            _gold_number(text)
    else:
        assert _gold_number(text) == (parsed[0] if parsed else None)
    assert normalized(text) == normalize_text(text)


NEGATIONS = st.sampled_from(
    [
        "not",
        "NOT",
        "Not",
        "n't",
        "N’T",
        "never",
        "Rather than",
        "instead of",
        "İnstead of",  # U+0130: the pattern ignores case with its own folding
        "ınstead of",
        "except",
        "Except for",
        "nor",
        "no longer",
        "exclude",
        "Eliminate",
        "rule out",
        "RULE OUT",
        "other than",
        "don",
        "K",
        "ſ",
        "",
    ]
)
FILLERS = st.lists(st.sampled_from(["the", "option", "is", "just", "only", "a", "it", "be", "x"]), max_size=4)
#: Texts before a mention that are, or nearly are, a negation: junk, a negation word, spaces,
#: up to four filler words, opening quotes or brackets.
BEFORE = st.builds(
    lambda junk, word, space, fillers, quote: junk + word + space + "".join(f + " " for f in fillers) + quote,
    st.text(max_size=6),
    NEGATIONS,
    st.sampled_from([" ", "  ", "\n", "", "\t"]),
    FILLERS,
    st.sampled_from(["", "(", '"', "“", "*", "([", "x"]),
)


@settings(max_examples=1500, deadline=None)
@given(BEFORE, st.sampled_from(["anxiety", "(B)", "C"]), st.sampled_from(["", " is not", ") is incorrect", "."]))
def test_the_negation_precheck_skips_only_texts_without_a_negation(before, mention, after):
    text = before + mention + after
    start, end = len(before), len(before) + len(mention)
    window = text[max(0, start - 48) : start]
    plain = (
        bool(_NEGATED_BEFORE.search(window)) or _NEGATED_AFTER.match(text, end, min(len(text), end + 48)) is not None
    )
    assert negated(text, start, end, 0) == plain, text


NEGATION_TOKENS = (
    "not NOT n't n’t never rather than instead of except for nor no longer exclude eliminate rule out other the a an "
    "option choice answer be is it just only necessarily simply NECESSARILY Simply don can x ton"
).split() + [" ", "  ", "\n", "\t", "(", "[", "{", "*", '"', "'", "“", "İ", "ı", "ſ", "K", "_", "1", "-", ".", "\x1c"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(NEGATION_TOKENS), max_size=12).map("".join))
def test_the_reversed_negation_pattern_matches_what_the_pattern_finds(before):
    """``negated`` matches ``_NEGATED_BEFORE_REVERSED`` at the start of the reversed text instead
    of searching ``_NEGATED_BEFORE`` at every position (issue 27, point 6): the same texts."""
    assert bool(_NEGATED_BEFORE_REVERSED.match(before[::-1])) == bool(_NEGATED_BEFORE.search(before)), before


# -- multiple-choice outputs that spell no option: read once for every question ---------------

QUESTIONS = [
    (["floor", "door", "hallway", "porch", "garden"], ["door"]),
    (["sadness", "anxiety", "inspiration", "discomfort", "insights"], ["insights"]),
    (["option b", "a", "c", "answer", "none"], ["a"]),  # option texts that letters and cues spell
    (["yes please", "no thanks", "maybe later", "never", "not b"], ["not b"]),
    (["door", "floor", "window"], ["window"]),  # three options: other letters
    (["front door", "door", "doors", "Door", "DOOR"], ["door"]),  # doubles and plurals
]
CHOICE_OUTPUTS = st.one_of(
    st.sampled_from(
        [
            "B",
            "(B)",
            "The answer is B.",
            "the answer is (c)",
            "Option B",
            "option b",
            "B or C",
            "A, B or D",
            "B or B",
            "none of the above.",
            "Answer: E",
            "It is not B.",
            "not b",
            "B) door.",
            "door",
            "a",
            "The answer is: answer",
            "N/A",
            "E",
            "D.",
            "(D) or (E)",
            "I think B.",
        ]
    ),
    ANSWERY,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(range(len(QUESTIONS))), CHOICE_OUTPUTS, COTS), min_size=1, max_size=16))
def test_a_shared_reading_of_an_output_is_what_each_question_reads_afresh(answers):
    """``extract._choice_output_findings``: outputs read once for questions with as many options
    give every question what the careful path gives it, including questions whose option texts
    the output spells ("option b", "a", "not b")."""
    extract._decided_by_output.clear()
    extract._choice_output_findings.clear()
    for question, output, cot in answers:
        choices, gold = QUESTIONS[question]
        scored = extract_answer("multiplechoice", extraction_output=output, cot=cot, choices=choices, gold=gold)
        saved = dict(extract._choice_output_findings)
        extract._choice_output_findings.clear()
        try:
            careful = _extract("multiplechoice", output, cot, choices, gold, DEFAULT_REL_TOL)
        finally:
            extract._choice_output_findings.clear()
            extract._choice_output_findings.update(saved)
        assert scored == careful, (output, cot, choices, gold)


def test_an_output_that_spells_no_option_is_read_once_for_all_questions(monkeypatch):
    """ "The answer is B." says B for every question with five options: its segments are read
    for the first question only; a question whose option text it spells is read afresh."""
    from thoughtdesk.core.evaluation.answers import choice

    extract._decided_by_output.clear()
    extract._choice_output_findings.clear()
    reads: list[str] = []
    find_choice = choice.find_choice

    def counted(text, start, end, m, masks, **kwargs):
        reads.append(text)
        return find_choice(text, start, end, m, masks, **kwargs)

    monkeypatch.setattr(extract, "find_choice", counted)
    results = [
        extract_answer("multiplechoice", extraction_output="The answer is B.", cot="", choices=choices, gold=gold)
        for choices, gold in QUESTIONS[:2]
    ]
    assert [r.value for r in results] == ["B) door", "B) anxiety"]
    assert [r.outcome for r in results] == ["correct", "incorrect"]
    assert len(reads) == 1
    spelled = extract_answer(
        "multiplechoice", extraction_output="The answer is B.", cot="", choices=["the answer", "b", "c"], gold=["b"]
    )
    assert len(reads) == 2 and spelled == _extract(
        "multiplechoice", "The answer is B.", "", ["the answer", "b", "c"], ["b"], DEFAULT_REL_TOL
    )


def _shared_answers() -> list[tuple[str, object, object, list[object], list[object]]]:
    """Every answer of the shared ThoughtSource files: (type, extraction output, CoT, choices, gold)."""
    import json

    from tests.helpers.paths import shared_path

    folder = shared_path("thoughtsource")
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for splits in data.values() if isinstance(data, dict) else ():
            for samples in splits.values() if isinstance(splits, dict) else ():
                for sample in samples if isinstance(samples, list) else ():
                    for cot in sample.get("generated_cot") or []:
                        for answer in cot.get("answers") or []:
                            found.append(
                                (
                                    sample["type"],
                                    answer.get("answer"),
                                    cot.get("cot"),
                                    sample["choices"],
                                    sample["answer"],
                                )
                            )
    return found


def test_the_shared_datasets_answers_score_as_the_careful_path_scores_them():
    """The fast paths and what scoring remembers, against the careful path alone, on the answers
    of the shared ThoughtSource files (1,200+ GPT-3.5 answers to CommonsenseQA, MedQA, StrategyQA
    and more): each as written, and each question asked every other question's outputs (the
    shared reading of outputs that spell no option is where a question could get another's)."""
    answers = _shared_answers()
    assert len(answers) > 1000
    outputs = sorted({a[1] for a in answers if isinstance(a[1], str)})
    questions = {(t, tuple(c), tuple(g)) for t, _o, _c, c, g in answers if t == "multiplechoice"}
    stream = [(t, o, c, list(ch), list(g)) for t, o, c, ch, g in answers]
    stream += [(t, o, None, list(ch), list(g)) for t, ch, g in sorted(questions)[:40] for o in outputs]
    extract._decided_by_output.clear()
    extract._choice_output_findings.clear()
    scored = [
        extract_answer(t, extraction_output=cast(str | None, o), cot=cast(str | None, c), choices=ch, gold=g)
        for t, o, c, ch, g in stream
    ]
    for (t, o, c, ch, g), result in zip(stream, scored, strict=True):
        extract._choice_output_findings.clear()
        assert result == _extract(t, o, c, ch, g, DEFAULT_REL_TOL), (o, ch, g)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(["the", "river", "bank", "Bank", "a", "x", "river,", "", " "]), max_size=5).map(" ".join),
    st.lists(st.sampled_from(["the", "river", "bank", "Bank", "a", "x", "river,", "", " "]), max_size=5).map(" ".join),
)
def test_token_f1_is_squads_counted_f1(prediction, gold):
    """``text.token_f1`` answers equal and unrelated token lists without counting (issue 27,
    point 6): the same figure as SQuAD's counted F1."""
    from collections import Counter

    from thoughtdesk.core.evaluation.answers.text import token_f1

    predicted, expected = normalize_text(prediction).split(), normalize_text(gold).split()
    if not predicted or not expected:
        counted = float(predicted == expected)
    else:
        overlap = sum((Counter(predicted) & Counter(expected)).values())
        counted = 0.0 if overlap == 0 else 2 * (overlap / len(predicted)) * (overlap / len(expected))
        if overlap:
            counted /= overlap / len(predicted) + overlap / len(expected)
    assert token_f1(prediction, gold) == counted
