"""Bad input never raises; the ThoughtSource agreement target on the shared collection files."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.evaluation.answers.ts_agreement import collection_files, rescore_files
from thoughtdesk.core.evaluation.answers import extract_answer
from thoughtdesk.core.evaluation.answers.extract import _extract
from thoughtdesk.core.evaluation.answers.number import DEFAULT_REL_TOL

TYPES = st.sampled_from(["multiplechoice", "bool", "number", "text", "collection", "", "essay", "Bool"])
# Text that looks like answers often enough to reach the deep branches.
PIECES = st.sampled_from(
    [
        "A",
        "(B)",
        "C)",
        "**D**",
        "Option E",
        "the answer is",
        "Answer:",
        " or ",
        " and ",
        "not ",
        "yes",
        "no",
        "maybe",
        "True",
        "\\boxed{",
        "}",
        "####",
        "$",
        "1,234",
        "-",
        "/",
        "3/4",
        "%",
        "1e999",
        "9" * 30,
        ".",
        "\n",
        "Therefore, ",
        "among A through E",
        "(Yes or No)",
        "none of the above",
        "\\frac{1}{0}",
        "0/0",
        "¿",
        "答案是",
        "ü",
    ]
)
ANSWERY = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=12).map("".join)
ANY_TEXT = st.one_of(st.none(), st.text(), ANSWERY)
CHOICES = st.lists(
    st.one_of(st.text(max_size=12), st.sampled_from(["yes", "no", "maybe", "(", "a b", "A"])), max_size=30
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TYPES, ANY_TEXT, ANY_TEXT, CHOICES, st.lists(st.one_of(st.none(), st.text(max_size=10), ANSWERY), max_size=3))
def test_never_raises(answer_type, output, cot, choices, gold):
    # the inner function, without the safety net, so a bug cannot hide behind it
    result = _extract(answer_type, output, cot, choices, gold, DEFAULT_REL_TOL)
    assert result.outcome in ("correct", "incorrect", "unextractable")
    if result.outcome == "unextractable":
        assert result.reason
    if result.span is not None:
        text = output if result.source == "extraction" else cot
        assert text is not None and 0 <= result.span[0] <= result.span[1] <= len(text)


@pytest.mark.parametrize("weird", [42, 3.5, b"bytes", {"a": 1}, object()])
def test_non_string_input_is_read_as_its_text(weird):
    # Any outcome would pass "in (correct, incorrect, unextractable)": extract_answer turns an
    # exception into "unextractable". The value's text is option A, the output and the gold.
    result = extract_answer("multiplechoice", extraction_output=weird, cot=weird, choices=[weird, "x"], gold=weird)
    assert (result.outcome, result.letter, result.method) == ("correct", "A", "extraction_output:text"), result


def test_a_list_as_gold_is_a_list_of_gold_answers():
    weird: Any = ["list"]  # not a str, on purpose: what a JSON file can hold
    result = extract_answer("multiplechoice", extraction_output=weird, cot=weird, choices=[weird, "x"], gold=weird)
    assert result.method != "error", result
    assert (result.outcome, result.reason) == ("unextractable", "gold answer 'list' is not among the choices")


def test_agreement_with_thoughtsource_labels(shared):
    folder = shared("thoughtsource")
    report = rescore_files(collection_files(folder))
    assert report.compared > 1000
    listing = "\n".join(
        f"{d.file} {d.sample_id}: {d.extraction_output!r} stored {d.stored} ours {d.ours.outcome}"
        for d in report.disagreements
    )
    assert report.rate >= 0.97, listing
    # decided answers only (unextractable vs stored False left out): still well above chance
    decided = report.compared - report.unextractable_vs_false
    assert (report.agree - report.unextractable_vs_false) / decided >= 0.97
