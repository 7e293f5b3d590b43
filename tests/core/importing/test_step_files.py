"""ProcessBench and PRM800K files in and out: equal as JSON, labels stored, bad input refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.core.review.conftest import table_digest
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.importing.step_files import export_steps, import_step_file, step_file_format
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps import prm800k
from thoughtdesk.core.steps.split import cot_steps
from thoughtdesk.core.steps.store import StepTarget, put_review, reviews_of

STEPS = FIXTURES / "steps"


def records(path: Path) -> list:
    if path.suffix == ".json":
        return json.loads(path.read_text())
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def lib(tmp_path):
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        yield lib


def test_formats_are_recognised_by_their_first_record():
    assert step_file_format(STEPS / "gsm8k.json") == "processbench"
    assert step_file_format(STEPS / "math.jsonl") == "processbench"
    assert step_file_format(STEPS / "phase1_test.jsonl") == "prm800k"
    assert step_file_format(STEPS / "phase2_test.jsonl") == "prm800k"
    assert step_file_format(FIXTURES / "dscb" / "DSCB-dev-crowd-anno.jsonl") is None


@pytest.mark.parametrize("name", ["gsm8k.json", "math.jsonl"])
def test_processbench_round_trip_is_equal_to_the_file(lib, tmp_path, name):
    report = import_step_file(lib, STEPS / name, collection="pb")
    read = records(STEPS / name)
    assert (report.format, report.solutions, report.reviews) == ("processbench", len(read), len(read))
    out = tmp_path / "out.jsonl"
    result = export_steps(lib, "pb", out, "processbench")
    assert (result.records, result.left_out) == (len(read), 0)
    assert records(out) == read
    assert [list(r) for r in records(out)] == [list(r) for r in read]  # key order too


def test_processbench_labels_are_first_errors_of_the_processbench_author(lib):
    import_step_file(lib, STEPS / "gsm8k.json", collection="pb")
    rows = lib.conn.execute(
        "SELECT s.id, c.id, s.sample_id FROM sample s JOIN generated_cot c ON c.sample_pk = s.id ORDER BY s.position"
    ).fetchall()
    firsts = [reviews_of(lib.conn, StepTarget(spk, cpk))[0] for spk, cpk, _ in rows]
    assert [(r.author, r.first_error, r.kind) for r in firsts] == [
        ("ProcessBench", -1, "human"),
        ("ProcessBench", 0, "human"),
        ("ProcessBench", 3, "human"),
    ]
    correct = lib.conn.execute("SELECT correct_answer FROM answer ORDER BY id").fetchall()
    assert correct == [(1,), (0,), (0,)]


@pytest.mark.parametrize("name", ["phase1_test.jsonl", "phase2_test.jsonl"])
def test_prm800k_round_trip_is_equal_to_the_file(lib, tmp_path, name):
    report = import_step_file(lib, STEPS / name, collection="prm")
    read = records(STEPS / name)
    assert report.format == "prm800k" and report.solutions == len(read)
    assert report.step_labels == sum(len(r["label"]["steps"]) for r in read)
    out = tmp_path / "out.jsonl"
    assert export_steps(lib, "prm", out, "prm800k").records == len(read)
    assert records(out) == read
    assert [json.dumps(r) for r in records(out)] == [json.dumps(r) for r in read]  # key order at every level


def test_prm800k_solutions_of_one_problem_are_one_sample_with_labels_per_labeler(lib):
    import_step_file(lib, STEPS / "phase2_test.jsonl", collection="prm")
    samples = lib.conn.execute("SELECT id, question, answer, n_cots FROM sample ORDER BY position").fetchall()
    assert [(json.loads(a), n) for _, _, a, n in samples] == [(["14"], 2), (["6"], 1)]
    cots = lib.conn.execute("SELECT id, sample_pk, author FROM generated_cot ORDER BY id").fetchall()
    target = StepTarget(cots[0][1], cots[0][0])
    review = reviews_of(lib.conn, target)[0]
    assert review.author == cots[0][2] and [x.rating for x in review.labels] == [1, -1]
    assert (review.first_error, review.finish_reason, review.time_ms) == (1, "found_error", 41000)
    assert reviews_of(lib.conn, StepTarget(cots[1][1], cots[1][0]))[0].first_error == -1


def test_phase1_alternatives_and_human_completions(lib):
    import_step_file(lib, STEPS / "phase1_test.jsonl", collection="prm")
    cot_pk, sample_pk, extra = lib.conn.execute("SELECT id, sample_pk, extra FROM generated_cot ORDER BY id").fetchone()
    steps = json.loads(extra)["steps"]
    assert steps[2] == "The common primes are 2 and 5, so the GCF is 10."  # the labeler's own step
    labels = reviews_of(lib.conn, StepTarget(sample_pk, cot_pk))[0].labels
    assert labels[2].corrected == steps[2] and labels[2].rating is None
    assert [x.rating for x in labels] == [0, 1, None, 1]


def test_edited_labels_are_exported(lib, tmp_path):
    import_step_file(lib, STEPS / "phase2_test.jsonl", collection="prm")
    cot_pk, sample_pk = lib.conn.execute("SELECT id, sample_pk FROM generated_cot ORDER BY id").fetchone()
    target = StepTarget(sample_pk, cot_pk)
    review = reviews_of(lib.conn, target)[0]
    with lib.transaction() as conn:
        put_review(conn, target, review.author, review.with_label(replace(review.labels[0], rating=0)))
    export_steps(lib, "prm", tmp_path / "out.jsonl", "prm800k")
    first = records(tmp_path / "out.jsonl")[0]
    assert first["label"]["steps"][0]["completions"][0]["rating"] == 0


def test_prm_jsonl_training_records(lib, tmp_path):
    import_step_file(lib, STEPS / "phase2_test.jsonl", collection="prm")
    import_step_file(lib, STEPS / "gsm8k.json", collection="prm", on_duplicate="skip")
    out = tmp_path / "train.jsonl"
    result = export_steps(lib, "prm", out, "prm-jsonl")
    got = records(out)
    assert result.records == 6 and result.left_out == 0
    assert got[0] == {
        "prompt": "What is $2 + 3 \\cdot 4$?",
        "completions": ["First, $3 \\cdot 4 = 12$.", "Then $2 + 12 = 15$.\n\n# Answer\n\n15"],
        "labels": [True, False],
    }
    by_prompt = {r["prompt"]: r for r in got}
    assert by_prompt["What is 15% of 80?"]["labels"] == [True, True, True, False]
    assert by_prompt["Tom has 3 apples and buys 4 more. How many apples does he have?"]["labels"] == [True, True, True]


BAD = [
    (
        "processbench",
        {"id": "x", "generator": "g", "problem": "p", "steps": ["a", "b"], "final_answer_correct": True, "label": 2},
        "line 2: field label: 2 is outside -1..1",
    ),
    (
        "processbench",
        {"id": "x", "generator": "g", "problem": "p", "steps": ["a", 7], "final_answer_correct": True, "label": -1},
        "line 2: field steps[1]: a step must be a string, not a number",
    ),
    (
        "processbench",
        {"id": "x", "generator": "g", "problem": "p", "steps": ["a"], "final_answer_correct": True, "label": -2},
        "line 2: field label: -2 is outside -1..0",
    ),
    ("prm800k", {"question": {"problem": "p"}, "label": {"total_time": 5}}, "line 2: field label.steps: missing"),
    (
        "prm800k",
        {"question": {"problem": "p"}, "label": {"steps": [{"completions": [{"text": 3, "rating": 1}]}]}},
        "line 2: field label.steps[0].completions[0].text: a step must be a string",
    ),
    (
        "prm800k",
        {"question": {"problem": "p"}, "label": {"steps": [{"completions": [{"text": "a", "rating": 2}]}]}},
        "line 2: field label.steps[0].completions[0].rating: 2 is not -1, 0 or +1",
    ),
]


@pytest.mark.parametrize(("kind", "bad", "message"), BAD)
def test_bad_records_name_file_line_and_field_and_change_nothing(lib, tmp_path, kind, bad, message):
    import_step_file(lib, STEPS / "math.jsonl", collection="before")
    before = table_digest(lib)
    good = records(STEPS / ("math.jsonl" if kind == "processbench" else "phase2_test.jsonl"))[0]
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(DataFileError) as raised:
        import_step_file(lib, path, collection="new")
    text = str(raised.value)
    assert "\n" not in text and text.startswith(f"{path}, ") and message in text, text
    assert table_digest(lib) == before


def test_step_ids_and_labels_survive_export_and_re_import(lib, tmp_path):
    def snapshot(library: Library) -> list:
        rows = library.conn.execute(
            "SELECT c.id, c.sample_pk, c.cot, c.extra FROM generated_cot c ORDER BY c.id"
        ).fetchall()
        out = []
        for cot_pk, sample_pk, text, extra in rows:
            ids = [s.id for s in cot_steps(text, json.loads(extra))]
            labels = [
                (r.author, r.first_error, r.labels) for r in reviews_of(library.conn, StepTarget(sample_pk, cot_pk))
            ]
            out.append((ids, labels))
        return out

    import_step_file(lib, STEPS / "phase1_test.jsonl", collection="prm")
    export_steps(lib, "prm", tmp_path / "phase1_again.jsonl", "prm800k")
    with Library.open(tmp_path / "other.thoughtdesk") as other:
        import_step_file(other, tmp_path / "phase1_again.jsonl", collection="prm")
        assert snapshot(other) == snapshot(lib)


def test_a_key_twice_in_a_prm800k_step_is_refused_and_changes_nothing(lib, tmp_path):
    # A line of the usual shape skips the write-back duplicate check (prm800k.record_keys counts
    # its keys); a key twice in a completion must still be found, on its line.
    import_step_file(lib, STEPS / "math.jsonl", collection="before")
    before = table_digest(lib)
    lines = (STEPS / "phase2_test.jsonl").read_text().splitlines()
    twice = lines[0].replace('"rating": ', '"rating": 1, "rating": ', 1)
    assert twice != lines[0]
    path = tmp_path / "twice.jsonl"
    path.write_text(lines[0] + "\n" + twice + "\n")
    with pytest.raises(DataFileError) as raised:
        import_step_file(lib, path, collection="new")
    text = str(raised.value)
    assert "\n" not in text and text.startswith(f"{path}, ") and "line 2" in text and "'rating'" in text, text
    assert table_digest(lib) == before


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        "x",
        {"question": 3, "label": []},
        {"question": {"problem": "p"}, "label": {"steps": "no"}},
        {
            "question": {"problem": "p"},
            "label": {"steps": [3, {"completions": 7}, {"completions": [2, {"text": "a"}]}]},
        },
    ],
)
def test_prm800k_key_count_takes_any_value_and_never_exceeds_its_keys(value):
    # decode_line trusts it to be at most the keys of the value (else a lost key would pass).
    def keys(v: object) -> int:
        if isinstance(v, dict):
            return len(v) + sum(keys(x) for x in v.values())
        return sum(keys(x) for x in v) if isinstance(v, list) else 0

    assert 0 <= prm800k.record_keys(value) <= keys(value)
