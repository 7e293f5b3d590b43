"""Scored answers keep ThoughtSource's meaning through export and import (issue 17, point 5).

``correct_answer: null`` means "never evaluated" in ThoughtSource. A ThoughtDesk export writes a
not-extractable answer as ``false`` with ThoughtDesk's outcome and reason in the
``thoughtdesk_scoring`` extension field, restored on import; evaluation never drops an answer
from the denominator. Checked on the shared ThoughtSource GPT-3.5 dump against ThoughtSource's
own evaluation rules (``libs/cot/cot/evaluate.py``: accuracy per model and
``{instruction}_{cot_trigger}_{answer_extraction}`` key = answers with a truthy
``correct_answer`` / all answers of samples with a gold answer; null answers are graded first).
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.helpers.expected_results import TS67
from thoughtdesk.core.datasets.ts_extras import load_with_extras
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.evaluation.evaluate import EvaluationResult, evaluate
from thoughtdesk.core.evaluation.rescoring import restore_original_scoring
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.store import Library


@pytest.fixture
def open_library(tmp_path):
    opened: list[Library] = []

    def make(name: str) -> Library:
        library = Library.open(tmp_path / f"{name}.thoughtdesk")
        opened.append(library)
        return library

    yield make
    for library in opened:
        library.close()


def _table(result: EvaluationResult) -> dict:
    return {r.key: (r.n, r.correct, r.incorrect, r.unextractable, r.accuracy) for r in result.rows}


def _thoughtsource_accuracies(data: dict) -> dict[tuple[str, str, str, str], tuple[int, float]]:
    """ThoughtSource's evaluate() aggregation, written out independently of ThoughtDesk's code:
    per dataset, split, model name and trigger key: (answers counted, accuracy rounded to 6)."""
    counter: dict[tuple, int] = defaultdict(int)
    hits: dict[tuple, int] = defaultdict(int)
    for dataset, splits in data.items():
        for split, samples in splits.items():
            for sample in samples:
                if not sample["answer"] or sample["answer"][0] is None:
                    continue  # ThoughtSource skips samples without a gold answer
                for cot in sample["generated_cot"]:
                    model = cot["model"]
                    name = ast.literal_eval(model)["name"] if "{" in model else model
                    for answer in cot["answers"]:
                        key = (
                            dataset,
                            split,
                            name,
                            f"{cot['instruction']}_{cot['cot_trigger']}_{answer['answer_extraction']}",
                        )
                        counter[key] += 1
                        if answer["correct_answer"]:
                            hits[key] += 1
    return {key: (n, round(hits[key] / n, 6)) for key, n in counter.items()}


def _as_thoughtsource_keys(result: EvaluationResult) -> dict[tuple[str, str, str, str], tuple[int, float]]:
    out = {}
    for r in result.rows:
        parts = [p.strip() for p in r.condition.split(" / ")]
        key = "_".join("None" if p == "-" else p for p in parts)
        out[(r.dataset, r.split, r.model, key)] = (r.n, round(r.accuracy, 6))
    return out


def _answers(data: dict):
    for splits in data.values():
        for samples in splits.values():
            for sample in samples:
                for cot in sample["generated_cot"]:
                    yield from cot["answers"]


def test_gpt35_dump_round_trip_changes_no_figure_and_matches_thoughtsource(shared, open_library, tmp_path):
    source = shared("thoughtsource", TS67)
    first = open_library("first")
    import_thoughtsource(first, source, collection="ts")
    scored = evaluate(first, "ts", rescore=True, comparisons=False)
    table = _table(scored)
    unextractable = sum(r.unextractable for r in scored.rows)
    assert len(table) == 18 and unextractable > 50  # the case that used to change 14 of 18 cells

    exported = tmp_path / "export.json"
    export_thoughtsource(first, "ts", exported)
    data = load_with_extras(exported)  # ThoughtDesk's extension fields are in the side file
    answers = list(_answers(data))
    # graded answers are never null (null would read as "never evaluated"); ThoughtDesk's outcome
    # and reason ride along; answer_from_choices is null, not "", where nothing was extracted
    assert all(a["correct_answer"] is not None for a in answers)
    not_extractable = [a for a in answers if a["thoughtdesk_scoring"]["outcome"] == "unextractable"]
    assert len(not_extractable) == unextractable
    assert all(a["correct_answer"] is False and a["thoughtdesk_scoring"]["reason"] for a in not_extractable)
    assert "" not in {a.get("answer_from_choices") for a in answers}
    assert any(a.get("answer_from_choices", "") is None for a in not_extractable)

    # ThoughtSource's own evaluation of the export (evaluate(overwrite=False) grades only null
    # answers, and there are none): the same accuracies, cell by cell
    assert _thoughtsource_accuracies(data) == _as_thoughtsource_keys(scored)

    second = open_library("second")
    import_thoughtsource(second, exported, collection="back")
    again = evaluate(second, "back", comparisons=False)
    assert again.scored_by_thoughtdesk == len(answers) and again.scored_now == again.unscored == 0
    assert _table(again) == table
    assert _table(evaluate(second, "back", rescore=True, comparisons=False)) == table
    counters = "SELECT sum(n_correct), sum(n_incorrect), sum(n_unextractable) FROM sample"
    assert second.conn.execute(counters).fetchone() == first.conn.execute(counters).fetchone()

    # the imported verdicts are still there after the round trip: restoring gives the original file's
    original = [a["correct_answer"] for a in _answers(json.loads(source.read_text(encoding="utf-8")))]
    restore_original_scoring(second, "back")
    restored = second.conn.execute("SELECT correct_answer FROM answer ORDER BY id").fetchall()
    assert [None if r[0] is None else bool(r[0]) for r in restored] == original

    # a second export of the re-import is the first export, byte for byte
    export_thoughtsource(first, "ts", tmp_path / "a.json")
    evaluate(second, "back", rescore=True, comparisons=False)
    export_thoughtsource(second, "back", tmp_path / "b.json")
    assert (
        json.loads((tmp_path / "a.json").read_text("utf-8"))["commonsense_qa"]
        == json.loads((tmp_path / "b.json").read_text("utf-8"))["commonsense_qa"]
    )


def test_never_evaluated_answers_are_scored_not_dropped(shared, open_library, tmp_path):
    """A file whose answers are all null: every answer is in the table (it used to give
    accuracies up to 12.6 points above ThoughtSource's by leaving them out)."""
    source = shared("thoughtsource", TS67)
    data = json.loads(source.read_text(encoding="utf-8"))
    stored = _thoughtsource_accuracies(data)  # ThoughtSource's figures, from its stored grades
    for answer in _answers(data):
        answer["correct_answer"] = None
    nulls = tmp_path / "nulls.json"
    nulls.write_text(json.dumps(data), encoding="utf-8")
    library = open_library("nulls")
    import_thoughtsource(library, nulls, collection="nulls")
    result = evaluate(library, "nulls", comparisons=False)
    total = sum(1 for _ in _answers(data))
    assert result.scored_now == total == sum(r.n for r in result.rows) and result.unscored == 0
    # the same figures as a stored re-score, and within 2 points of ThoughtSource's on every cell
    # (ThoughtDesk's extraction agrees with ThoughtSource's stored grades on 99.7 % of answers)
    reference = open_library("reference")
    import_thoughtsource(reference, source, collection="ts")
    assert _table(result) == _table(evaluate(reference, "ts", rescore=True, comparisons=False))
    ours = _as_thoughtsource_keys(result)
    assert ours.keys() == stored.keys()
    assert all(ours[k][0] == stored[k][0] and abs(ours[k][1] - stored[k][1]) <= 0.02 for k in stored)


def _one_answer_file(tmp_path: Path, answer: dict) -> Path:
    sample = {
        "id": "q1",
        "question": "Which colour?",
        "type": "multiplechoice",
        "choices": ["red", "blue"],
        "answer": ["red"],
        "generated_cot": [{"cot": "It is red.", "model": "m", "answers": [answer]}],
    }
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"d": {"test": [sample]}}, indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("scoring", "field", "message"),
    [
        ("unextractable", "thoughtdesk_scoring", "must be an object, not a string"),
        ({"outcome": "maybe"}, "thoughtdesk_scoring.outcome", "must be one of correct, incorrect, unextractable"),
        ({"outcome": "incorrect", "reason": 3}, "thoughtdesk_scoring.reason", "must be text or null"),
        ({"outcome": "incorrect", "span": ["cot", "x", 2]}, "thoughtdesk_scoring.span", "must be [source, start, end]"),
        ({"outcome": "incorrect", "original": []}, "thoughtdesk_scoring.original", "must be an object or null"),
    ],
)
def test_bad_scoring_field_is_a_clear_error_and_stores_nothing(open_library, tmp_path, scoring, field, message):
    library = open_library("bad")
    path = _one_answer_file(tmp_path, {"answer": "B", "correct_answer": False, "thoughtdesk_scoring": scoring})
    with pytest.raises(DataFileError) as caught:
        import_thoughtsource(library, path, collection="bad")
    text = str(caught.value)
    assert "one.json" in text and f"field {field}" in text and message in text and "\n" not in text
    assert library.conn.execute("SELECT count(*) FROM sample").fetchone()[0] == 0


def test_scoring_that_no_longer_matches_the_grade_is_not_restored(open_library, tmp_path):
    # another tool re-graded the answer after ThoughtDesk's export: its verdict wins, and the
    # stale field is kept as it was (an extra key), not lost
    library = open_library("stale")
    stale = {"outcome": "unextractable", "reason": "ambiguous: A or B"}
    path = _one_answer_file(tmp_path, {"answer": "A", "correct_answer": True, "thoughtdesk_scoring": stale})
    import_thoughtsource(library, path, collection="stale")
    row = library.conn.execute("SELECT correct_answer, td_outcome, extra FROM answer").fetchone()
    assert row[0] == 1 and row[1] is None and json.loads(row[2])["thoughtdesk_scoring"] == stale
    assert library.conn.execute("SELECT n_correct, n_unextractable FROM sample").fetchone() == (1, 0)
    out = tmp_path / "out.json"
    export_thoughtsource(library, "stale", out)
    answer = load_with_extras(out)["d"]["test"][0]["generated_cot"][0]["answers"][0]
    assert answer["correct_answer"] is True and answer["thoughtdesk_scoring"] == stale


def test_null_graded_by_thoughtsource_is_not_extractable_null_never_evaluated_is_graded(open_library, tmp_path):
    """Issue 23, point 15: ThoughtSource's evaluate writes ``correct_answer: null`` with
    ``answer_from_choices: null`` where it extracted nothing (not correct, in its denominator);
    its generate writes ``answer_from_choices: ""`` (never evaluated). The same CoT, saying the
    gold letter, is unextractable in the first reading and graded correct in the second.
    (Checked against ThoughtSource's own evaluate in tests/core/importing/test_thoughtsource_loader.py.)"""
    cot = "Red fruit. Therefore, the answer is (A)."
    graded = {"answer": "", "answer_from_choices": None, "correct_answer": None}
    never = {"answer": "", "answer_from_choices": "", "correct_answer": None}
    absent = {"answer": "", "correct_answer": None}  # what ThoughtSource's loader reads as ""
    samples = []
    for i, answer in enumerate((graded, never, absent)):
        samples.append(
            {
                "id": f"q{i}",
                "question": "Which colour?",
                "type": "multiplechoice",
                "choices": ["red", "blue"],
                "answer": ["red"],
                "generated_cot": [{"cot": cot, "model": "m", "answers": [answer]}],
            }
        )
    path = tmp_path / "graded.json"
    path.write_text(json.dumps({"d": {"test": samples}}), encoding="utf-8")
    library = open_library("graded")
    import_thoughtsource(library, path, collection="g")
    result = evaluate(library, "g", comparisons=False)
    (row,) = result.rows
    assert (row.n, row.correct, row.unextractable) == (3, 2, 1)
    assert (result.scored_from_file, result.scored_now) == (1, 2)
    counters = library.conn.execute("SELECT n_unextractable FROM sample ORDER BY id").fetchall()
    assert [n for (n,) in counters] == [1, 0, 0]
    # a re-score is ThoughtDesk's own verdict, and restoring gives ThoughtSource's reading back
    assert evaluate(library, "g", rescore=True, comparisons=False).rows[0].correct == 3
    restore_original_scoring(library, "g")
    assert _table(evaluate(library, "g", comparisons=False)) == _table(result)
    assert [n for (n,) in library.conn.execute("SELECT n_unextractable FROM sample ORDER BY id")] == [1, 0, 0]
