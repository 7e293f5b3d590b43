"""The fast paths for whole short outputs ("C) inspiration.", "Yes.", "$18") must give what the
careful path gives; they exist only for speed (see tests/benchmarks/bench_scoring.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from thoughtdesk.core.evaluation.answers.choice import find_choice, find_label, matcher, whole_label, whole_letter
from thoughtdesk.core.evaluation.answers.extract import _in_segments
from thoughtdesk.core.evaluation.answers.result import Found
from thoughtdesk.core.evaluation.answers.segments import prompt_echo_spans

CHOICES = ["sadness", "anxiety", "inspiration", "discomfort", "insights"]

LETTER_OUTPUTS = st.builds(
    lambda pre, letter, close, text, post: f"{pre}{letter}{close}{text}{post}",
    st.sampled_from(["", " ", "(", "**", "[", "{", "**("]),
    st.sampled_from(list("ABCDEFabc")),
    st.sampled_from(["", ")", ".", ":", "]", "}", "**", ")**"]),
    st.sampled_from(["", " inspiration", " Inspiration", " sadness", " anxiety and more", "  insights"]),
    st.sampled_from(["", ".", " ", "\n", "**", "."]),
)


def careful_choice(text):
    m = matcher(tuple(CHOICES))
    masks = prompt_echo_spans(text)
    return _in_segments(text, "extraction", lambda t, s, e: find_choice(t, s, e, m, masks))


@settings(max_examples=400, deadline=None)
@given(LETTER_OUTPUTS)
def test_whole_letter_agrees_with_careful_path(text):
    fast = whole_letter(text, matcher(tuple(CHOICES)))
    if fast is None:
        return  # the careful path handles it
    careful = careful_choice(text)
    assert isinstance(careful, Found), (text, careful)
    # same option; the span may differ ("C inspiration": letter here, option text there)
    assert careful.value == fast.value, text
    assert text[fast.start : fast.end].upper() == "ABCDE"[fast.value]


LABEL_OUTPUTS = st.builds(
    lambda pre, word, post: f"{pre}{word}{post}",
    st.sampled_from(["", " ", "A) ", "B) ", "(A) ", "**", "B. "]),
    st.sampled_from(["yes", "Yes", "NO", "no", "True", "false", "maybe"]),
    st.sampled_from(["", ".", "!", " ", "**", ".\n"]),
)


@settings(max_examples=300, deadline=None)
@given(LABEL_OUTPUTS, st.sampled_from([["True", "False"], ["yes", "no", "maybe"], []]))
def test_whole_label_agrees_with_careful_path(text, options):
    fast = whole_label(text, options)
    if fast is None:
        return
    careful = _in_segments(text, "extraction", lambda t, s, e: find_label(t, s, e, prompt_echo_spans(t)))
    assert isinstance(careful, Found), (text, careful)
    assert careful.value == fast.value, text
