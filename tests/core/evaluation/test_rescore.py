"""Re-scoring a stored collection: td_* columns, correct_answer, answer_from_choices, counters,
originals kept, bad input as "not extractable", batches and cancel; evaluation without re-score."""

from __future__ import annotations

import json

import pytest

from tests.helpers.expected_results import DEMO, FIXTURES, TS67, file_answers, groups
from thoughtdesk.core.errors import Cancelled
from thoughtdesk.core.evaluation.evaluate import evaluate
from thoughtdesk.core.evaluation.rescoring import rescore, restore_original_scoring
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library


@pytest.fixture
def lib(tmp_path):
    library = Library.open(tmp_path / "lib.thoughtdesk")
    yield library
    library.close()


def _answers(lib, collection="Demo"):
    return lib.conn.execute(
        "SELECT a.id, s.id, a.td_outcome, a.td_value, a.td_method, a.td_span_source, a.td_span_start, "
        "a.td_span_end, a.td_reason, a.correct_answer, a.extra, a.original_scoring, s.type "
        "FROM answer a JOIN generated_cot g ON g.id = a.cot_pk JOIN sample s ON s.id = g.sample_pk "
        "JOIN collection c ON c.id = s.collection_id WHERE c.name = ? ORDER BY a.id",
        (collection,),
    ).fetchall()


def test_rescore_writes_td_columns_counters_and_keeps_originals(lib):
    import_thoughtsource(lib, DEMO, collection="Demo")
    before = {row[0]: row[9] for row in _answers(lib)}
    report = rescore(lib, "Demo")
    expected = file_answers(DEMO, rescored=True)
    rows = _answers(lib)
    assert report.answers == len(rows) == len(expected) > 0
    for row, exp in zip(rows, expected, strict=False):  # stored order is file order
        (_, _, outcome, value, method, source, start, end, reason, correct, extra, original, kind) = row
        assert outcome == exp.outcome
        assert correct == (None if exp.correct_value is None else int(exp.correct_value))
        if outcome != "unextractable":
            assert value and method and source in ("extraction", "cot") and 0 <= start < end
        else:
            assert reason
        assert json.loads(original) == {"correct_answer": None if before[row[0]] is None else bool(before[row[0]])}
        if kind in ("multiplechoice", "bool"):
            # null, not "", when nothing was extracted: as ThoughtSource writes it
            assert json.loads(extra)["answer_from_choices"] == (exp.letter or value)
    counts = lib.conn.execute(
        "SELECT s.id, s.n_correct, s.n_incorrect, s.n_unextractable, "
        "sum(a.td_outcome = 'correct'), sum(a.td_outcome = 'incorrect'), sum(a.td_outcome = 'unextractable') "
        "FROM sample s JOIN generated_cot g ON g.sample_pk = s.id JOIN answer a ON a.cot_pk = g.id GROUP BY s.id"
    ).fetchall()
    assert counts and all(r[1:4] == r[4:7] for r in counts)
    assert report.correct == sum(r[1] for r in counts)


def test_restore_puts_imported_values_back(lib):
    path = FIXTURES / "bad_input.json"
    import_thoughtsource(lib, path, collection="bad")
    before = [(r[9], r[10]) for r in _answers(lib, "bad")]
    rescore(lib, "bad")
    rescore(lib, "bad")  # a second re-score must not overwrite the kept originals
    assert [r[9] for r in _answers(lib, "bad")] != [b[0] for b in before]
    assert restore_original_scoring(lib, "bad") == len(before)
    assert [(r[9], r[10]) for r in _answers(lib, "bad")] == before
    assert all(r[2] is None for r in _answers(lib, "bad"))


def test_bad_input_is_not_extractable_and_does_not_stop_the_evaluation(lib):
    import_thoughtsource(lib, FIXTURES / "bad_input.json", collection="bad")
    result = evaluate(lib, "bad", rescore=True)
    by_sample = {
        r[0]: r
        for r in lib.conn.execute(
            "SELECT s.sample_id, a.td_outcome, a.td_reason, a.correct_answer FROM answer a "
            "JOIN generated_cot g ON g.id = a.cot_pk JOIN sample s ON s.id = g.sample_pk"
        )
    }
    assert "not among the choices" in by_sample["gold_not_in_choices"][2]
    assert "empty" in by_sample["empty_cot"][2]
    assert "overflows" in by_sample["overflow"][2]
    assert "overflows" in by_sample["gold_overflows"][2]
    assert "no yes/no answer" in by_sample["foreign_label"][2]
    for name in ("gold_not_in_choices", "empty_cot", "overflow", "gold_overflows", "foreign_label"):
        assert by_sample[name][1] == "unextractable" and by_sample[name][3] is None
    assert by_sample["normal_correct"][1:] == ("correct", None, 1)
    assert by_sample["normal_incorrect"][1:] == ("incorrect", None, 0)
    assert sum(r.n for r in result.rows) == 7
    assert sum(r.unextractable for r in result.rows) == 5
    assert result.rescore_outcome is not None
    assert result.rescore_outcome.reasons  # reasons are summarised for the report
    assert sum(result.rescore_outcome.reasons.values()) == 5


def test_without_rescore_stored_correctness_is_used(lib, shared):
    path = shared("thoughtsource", TS67)
    import_thoughtsource(lib, path, collection="ts")
    result = evaluate(lib, "ts", comparisons=False)
    expected = groups(file_answers(path, rescored=False))
    assert result.source == "file" and result.scored_by_thoughtdesk == 0
    assert {r.key: (r.n, r.correct, r.unextractable) for r in result.rows} == {
        k: (g.n, g.correct, 0) for k, g in expected.items()
    }
    # nothing was written by evaluating
    assert lib.conn.execute("SELECT count(*) FROM answer WHERE td_outcome IS NOT NULL").fetchone()[0] == 0


def test_never_scored_answers_are_scored_now_not_left_out(lib, shared):
    # test_1_generate.json: one answer with correct_answer null (never evaluated), whose gold
    # answer is not among the choices: ThoughtDesk's verdict is "not extractable".
    import_thoughtsource(lib, shared("thoughtsource", "test_1_generate.json"), collection="g")
    result = evaluate(lib, "g")
    assert result.scored_now == 1 and result.unscored == 0 and result.source == "thoughtdesk"
    assert [(r.n, r.correct, r.unextractable) for r in result.rows] == [(1, 0, 1)]
    # scored in memory only: nothing written
    assert lib.conn.execute("SELECT count(*) FROM answer WHERE td_outcome IS NOT NULL").fetchone()[0] == 0
    rescored = evaluate(lib, "g", rescore=True)
    assert rescored.scored_now == 0 and rescored.scored_by_thoughtdesk == 1
    assert [(r.n, r.correct, r.unextractable) for r in rescored.rows] == [(1, 0, 1)]


def test_answers_of_samples_without_gold_are_left_out_and_said(lib, tmp_path):
    sample = {
        "id": "q1",
        "question": "Which?",
        "type": "multiplechoice",
        "choices": ["red", "blue"],
        "answer": [],
        "generated_cot": [{"cot": "It is red.", "answers": [{"answer": "A) red", "correct_answer": None}]}],
    }
    path = tmp_path / "nogold.json"
    path.write_text(json.dumps({"d": {"test": [sample]}}), encoding="utf-8")
    import_thoughtsource(lib, path, collection="n")
    result = evaluate(lib, "n")
    assert result.unscored == 1 and result.scored_now == 0 and result.rows == []


def test_rescore_in_batches_reports_progress_and_cancel_keeps_done_batches(lib):
    import_thoughtsource(lib, DEMO, collection="Demo")
    seen = []
    rescore(lib, "Demo", progress=lambda done, total: seen.append((done, total)), batch_samples=3)
    total = seen[-1][1]
    assert seen[0] == (0, total) and seen[-1] == (total, total) and len(seen) > 3
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    restore_original_scoring(lib, "Demo")
    calls = iter([False, False, True])
    with pytest.raises(Cancelled):
        rescore(lib, "Demo", cancel=lambda: next(calls), batch_samples=3)
    done = lib.conn.execute("SELECT count(*) FROM answer WHERE td_outcome IS NOT NULL").fetchone()[0]
    assert 0 < done < total
    # each sample is either fully re-scored or untouched, and its counters match its answers
    rows = lib.conn.execute(
        "SELECT s.n_correct + s.n_incorrect + s.n_unextractable, count(a.td_outcome), count(*), s.n_unextractable "
        "FROM sample s JOIN generated_cot g ON g.sample_pk = s.id JOIN answer a ON a.cot_pk = g.id GROUP BY s.id"
    ).fetchall()
    assert all(scored in (0, n) for _, scored, n, _ in rows)


def test_unknown_collection_is_a_clear_error(lib):
    from thoughtdesk.core.errors import LibraryError

    with pytest.raises(LibraryError, match="no collection named 'nope'"):
        rescore(lib, "nope")


def test_comparisons_report_progress_pair_by_pair(lib):
    """Issue 16, point 12: the bootstrap comparisons tell how far they are (the CLI draws it)."""
    import_thoughtsource(lib, DEMO, collection="Demo")
    seen: list[tuple[int, int]] = []
    result = evaluate(lib, "Demo", rescore=True, n_resamples=200, comparison_progress=lambda d, t: seen.append((d, t)))
    total = seen[-1][1]
    assert total > 1 and [d for d, _ in seen] == list(range(1, total + 1))
    assert 0 < len(result.comparisons) <= total
