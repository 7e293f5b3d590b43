"""Paragraphs and self-corrections of a reasoning trace, and the trace as a view shows it
(``core/trace_marks.py``): offsets stay right through revealed invisible characters and broken lines."""

from __future__ import annotations

from tests.helpers.reasoning import long_trace
from thoughtdesk.core.trace_marks import MAX_ESCAPES, corrections, paragraph_starts, shown_trace


def test_self_corrections_at_the_start_of_a_sentence_or_line():
    text = 'Wait, 3 + 4 is 7. Waiting is not one. So 8? Alternatively we add.\n"Let me check" it.\nNo, wait.\nNobody.'
    found = [(text[c.start : c.end], c.phrase) for c in corrections(text)]
    assert found == [
        ("Wait", "Wait"),
        ("Alternatively", "Alternatively"),
        ("Let me check", "Let me check"),
        ("No,", "No,"),
    ]
    assert corrections("I said wait, and but wait here.") == []  # not at a sentence's start


def test_paragraphs_after_blank_lines_else_lines():
    assert paragraph_starts("a\n\nb\n \n\nc") == [0, 3, 8]
    assert paragraph_starts("a\nb\nc") == [0, 2, 4]
    assert paragraph_starts("one paragraph") == [0]


def test_shown_offsets_follow_escapes_and_broken_lines():
    text = "x\u202ey. Wait, 1.\n" + "z" * 4500 + ". Hmm, no.\n\nAlternatively 2."
    trace = shown_trace(text, 10**6, line=2000)
    assert "<U+202E>" in trace.text and "\u202e" not in trace.text
    assert [trace.text[c.start : c.end] for c in trace.corrections] == ["Wait", "Hmm", "Alternatively"]
    assert [trace.text[p : p + 5] for p in trace.paragraphs] == ["x<U+2", "Alter"]
    assert max(map(len, trace.text.split("\n"))) <= 2000 and trace.complete


def test_a_long_plain_trace_is_its_own_shown_text():
    text = long_trace(400_000)
    trace = shown_trace(text, 10**6)
    assert trace.text == text and len(trace.corrections) > 100
    assert all(text[c.start : c.end] == c.phrase for c in trace.corrections)


def test_limits_cut_the_shown_part():
    assert shown_trace("a" * 100, 10).consumed == 10
    dense = "a\u202e" * (MAX_ESCAPES + 100)
    trace = shown_trace(dense, 10**7)
    assert trace.text.count("<U+202E>") == MAX_ESCAPES and not trace.complete


def test_after_thinking():
    from thoughtdesk.core.trace_marks import after_thinking

    assert after_thinking("<think>a</think>\nStep.") == "\nStep."
    assert after_thinking("only closed</think>Step.") == "Step."
    assert after_thinking("<think>a</think><think>b</think>Step.") == "Step."  # repeated: after the last
    assert after_thinking("  <think>never closed") == ""
    assert after_thinking("Step about <think> tags.") == "Step about <think> tags."  # not a thinking block
