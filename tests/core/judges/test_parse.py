"""The pairwise verdict parser: tolerant of how judges write a verdict, never coercing one."""

from __future__ import annotations

import time

import pytest

from thoughtdesk.core.judges.parse import parse_verdict


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Assistant A is right. [[A]]", "A"),
        ("B explains better.\n\n[[B]]", "B"),
        ("Both are equally good: [[C]]", "tie"),
        ("final: [[ b ]]", "B"),
        ("**[[A]]**", "A"),
        ("[[tie]]", "tie"),
        ("The verdict is [[A]]. As said, [[A]].", "A"),  # the same verdict twice is one verdict
        ("Long explanation...\nFinal verdict: B", "B"),
        ("Explanation.\n**Verdict:** [A]", "A"),
        ("Explanation.\nVerdict - tie", "tie"),
    ],
)
def test_verdicts_written_in_many_ways_are_read(text, verdict):
    assert parse_verdict(text).verdict == verdict


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("A is better [[A]] but on reflection [[B]]", "answers [[A]] and [[B]]: more than one verdict"),
        ("", "the judge answered nothing"),
        ("   \n ", "the judge answered nothing"),
        ("I think A is better.", "no verdict [[A]], [[B]] or [[C]] found"),
        ("[A] is cited, [B] too", "no verdict [[A]], [[B]] or [[C]] found"),
        ("Verdict: A\nVerdict: B", "verdict lines name more than one answer"),
        ("[[D]]", "no verdict [[A]], [[B]] or [[C]] found"),
    ],
)
def test_what_cannot_be_read_is_unparseable_with_why_never_a_guess(text, reason):
    parsed = parse_verdict(text)
    assert parsed.verdict == "unparseable" and parsed.reason == reason


def test_a_ten_megabyte_answer_is_read_in_well_under_a_second():
    text = "x " * 5_000_000 + "[[B]]"
    started = time.perf_counter()
    assert parse_verdict(text).verdict == "B"
    assert time.perf_counter() - started < 1.0
