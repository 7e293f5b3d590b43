"""Reasoning traces scored right (issue 24, point 4): the answer comes from the visible text, a CoT
cut by the token limit is ``truncated`` (its own count, out of the accuracy's denominator unless
counted as wrong), and each condition says its share with reasoning and its median reasoning tokens."""

from __future__ import annotations

import json

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.reasoning import mixed_outcomes, reasoning_cot, write_samples
from thoughtdesk.core.evaluation.answers import extract_answer
from thoughtdesk.core.evaluation.evaluate import evaluate
from thoughtdesk.core.library.store import Library


@pytest.fixture
def library(tmp_path):
    return mixed_outcomes(tmp_path / "lib.thoughtdesk")


def test_truncated_answers_have_their_own_outcome_and_leave_the_denominator(library):
    with Library.open(library) as lib:
        result = evaluate(lib, "c", comparisons=False)
    (row,) = result.rows
    assert [a.outcome for a in result.answers] == ["correct", "correct", "incorrect", "truncated", "truncated"]
    assert (row.n, row.correct, row.incorrect, row.truncated, row.scored) == (5, 2, 1, 2, 3)
    assert row.accuracy == pytest.approx(2 / 3)  # not 3/5 (the cut "correct" one) nor 2/5
    assert row.share_truncated == pytest.approx(2 / 5)
    assert row.share_reasoning == pytest.approx(4 / 5)
    assert row.median_reasoning_tokens == pytest.approx(300)  # of 100, 300, 4000 (one not known)
    assert result.truncated == 2


def test_the_switch_counts_truncated_answers_as_wrong(library):
    with Library.open(library) as lib:
        (row,) = evaluate(lib, "c", comparisons=False, truncated_as_wrong=True).rows
    assert (row.scored, row.accuracy) == (5, pytest.approx(2 / 5))


def test_truncated_answers_stay_out_of_paired_comparisons(tmp_path):
    # Two conditions on the same 3 questions; B's first question was cut: compared on 2 questions.
    path = tmp_path / "lib.thoughtdesk"
    pairs = []
    for i in range(3):
        a = reasoning_cot(i, "stop", True, reasoning=None, tokens=None)
        b = reasoning_cot(10 + i, "length" if i == 0 else "stop", i != 0, reasoning="x", tokens=None, instruction="r")
        pairs.append([a, b])  # instruction "r" sorts after "qa": condition B
    write_samples(path, "c", pairs)
    with Library.open(path) as lib:
        (left_out,) = evaluate(lib, "c", n_resamples=100).comparisons
        (counted,) = evaluate(lib, "c", n_resamples=100, truncated_as_wrong=True).comparisons
    assert left_out.n == 2 and left_out.accuracy_b == 1.0
    assert counted.n == 3 and counted.accuracy_b == pytest.approx(2 / 3)


def test_evaluate_json_has_the_truncated_column_and_the_reasoning_figures(library):
    done = run_cli("evaluate", "c", "--json", "--no-comparisons", library=library)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    (row,) = data["rows"]
    assert data["truncated_as_wrong"] is False and data["answers"]["truncated"] == 2
    assert (row["truncated"], row["scored"], row["accuracy"]) == (2, 3, pytest.approx(2 / 3))
    assert row["share_truncated"] == pytest.approx(0.4) and row["share_reasoning"] == pytest.approx(0.8)
    assert row["median_reasoning_tokens"] == 300
    counted = run_cli("evaluate", "c", "--json", "--truncated-as-wrong", library=library)
    assert json.loads(counted.stdout)["rows"][0]["accuracy"] == pytest.approx(0.4)
    text = run_cli("evaluate", "c", library=library).stdout
    assert "truncated" in text and "2 answer(s) were cut by the token limit" in text


def test_answers_are_never_read_from_inline_thinking():
    # A CoT stored with its <think> block inline (a raw model, an old library): the thinking names
    # 5 and 9, the visible answer 7.
    cot = "<think>\nThe answer is 5? Wait, no: the answer is 9.\n</think>\n\nThe answer is 7."
    scored = extract_answer("number", extraction_output="", cot=cot, choices=[], gold=["7"])
    assert scored.outcome == "correct" and scored.value == 7.0
    assert (
        scored.span is not None and cot[scored.span[0] : scored.span[1]] == "7"
    )  # offsets stay those of the stored text
    # Only "</think>" generated (the opening tag was in the prompt template).
    only_close = "The answer is 5, I think.</think>The answer is 7."
    assert extract_answer("number", extraction_output="", cot=only_close, choices=[], gold=["7"]).outcome == "correct"
    # Thinking that never closed: no visible answer at all.
    unclosed = "<think>The answer is 7, but let me check"
    assert extract_answer("number", extraction_output="", cot=unclosed, choices=[], gold=["7"]).outcome == (
        "unextractable"
    )


def test_a_condition_whose_every_answer_was_cut_has_no_accuracy(tmp_path):
    from thoughtdesk.core.evaluation.tables import to_csv, to_markdown

    path = write_samples(
        tmp_path / "lib.thoughtdesk",
        "c",
        [[reasoning_cot(i, "length", True, reasoning="x", tokens=None)] for i in range(2)],
    )
    with Library.open(path) as lib:
        result = evaluate(lib, "c", comparisons=False)
    (row,) = result.rows
    assert (row.scored, row.accuracy, row.wilson_low, row.wilson_high, row.truncated) == (0, 0.0, 0.0, 1.0, 2)
    cells = [cell.strip() for cell in to_markdown(result).strip().splitlines()[-1].strip("|").split("|")]
    assert cells[4:6] == ["2", ""] and "100.0%" in cells  # n 2, no accuracy shown; all truncated
    header, line = to_csv(result).splitlines()
    assert header.endswith("truncated,share_truncated,scored,share_reasoning,median_reasoning_tokens")
    assert line.endswith("2,1.0,0,1.0,")
