"""``thoughtdesk evaluate``: JSON / CSV / Markdown / text numbers checked against values computed
independently (statsmodels Wilson interval, scipy binomtest for McNemar); export after --rescore."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict

import pytest
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from tests.helpers.expected_results import DEMO, FIXTURES, TS67, file_answers, first_correct, groups
from thoughtdesk.cli.main import main
from thoughtdesk.core.datasets.ts_extras import load_with_extras


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def library(tmp_path, capsys):
    path = str(tmp_path / "lib.thoughtdesk")
    assert run(capsys, "--library", path, "import", str(DEMO), "--collection", "Demo")[0] == 0
    return path


def _check_rows(rows, expected):
    assert {(r["dataset"], r["split"], r["model"], r["condition"]) for r in rows} == set(expected)
    for r in rows:
        g = expected[(r["dataset"], r["split"], r["model"], r["condition"])]
        low, high = proportion_confint(g.correct, g.n, alpha=0.05, method="wilson")
        assert int(r["n"]) == g.n and int(r["correct"]) == g.correct
        assert float(r["accuracy"]) == pytest.approx(g.correct / g.n)
        assert float(r["wilson_low"]) == pytest.approx(low, abs=1e-9)
        assert float(r["wilson_high"]) == pytest.approx(high, abs=1e-9)
        assert float(r["share_unextractable"]) == pytest.approx(g.unextractable / g.n)


def test_json_with_stored_correctness_matches_independent_statistics(capsys, tmp_path, shared):
    path = shared("thoughtsource", TS67)
    lib = str(tmp_path / "ts.thoughtdesk")
    run(capsys, "--library", lib, "import", str(path), "--collection", "ts")
    code, out, _ = run(capsys, "--library", lib, "evaluate", "ts", "--json", "--resamples", "2000")
    assert code == 0
    data = json.loads(out)
    assert data["correctness_source"] == "file" and data["rescore"] is None
    answers = file_answers(path, rescored=False)
    _check_rows(data["rows"], groups(answers))
    assert len(data["comparisons"]) == 18  # 6 datasets x 3 pairs of conditions
    for c in data["comparisons"]:
        a = first_correct(answers, (c["dataset"], c["split"], c["model_a"], c["condition_a"]))
        b = first_correct(answers, (c["dataset"], c["split"], c["model_b"], c["condition_b"]))
        ids = a.keys() & b.keys()
        only_a = sum(a[i] and not b[i] for i in ids)
        only_b = sum(b[i] and not a[i] for i in ids)
        assert (c["n"], c["only_a"], c["only_b"]) == (len(ids), only_a, only_b)
        p = 1.0 if only_a + only_b == 0 else binomtest(only_a, only_a + only_b, 0.5).pvalue
        assert c["p_value"] == pytest.approx(p)
        assert c["difference"] == pytest.approx((only_a - only_b) / len(ids))
        assert -1 <= c["difference_low"] <= c["difference"] <= c["difference_high"] <= 1


def test_rescore_json_csv_markdown_and_text_agree(capsys, library):
    code, out, err = run(capsys, "--library", library, "evaluate", "Demo", "--rescore", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["correctness_source"] == "thoughtdesk"
    assert data["rescore"]["answers"] == data["answers"]["scored_by_thoughtdesk"] == 33
    _check_rows(data["rows"], groups(file_answers(DEMO, rescored=True)))

    code, out, _ = run(capsys, "--library", library, "evaluate", "Demo", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(data["rows"])
    _check_rows(rows, groups(file_answers(DEMO, rescored=True)))

    code, out, _ = run(capsys, "--library", library, "evaluate", "Demo", "--markdown", "--resamples", "500")
    lines = out.splitlines()
    table = [line for line in lines if line.startswith("| ")]
    header = table[0]
    assert "accuracy" in header and "95% CI (Wilson)" in header
    first = data["rows"][0]
    assert any(f"| {first['dataset']} | {first['split']} | {first['model']} |" in line for line in table)
    assert f"{100 * first['accuracy']:.1f}%" in out

    code, out, _ = run(capsys, "--library", library, "evaluate", "Demo", "--resamples", "500")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("dataset"))
    block = lines[start : start + 1 + len(data["rows"])]
    column = block[0].index("accuracy")  # columns are aligned: accuracy ends at the same place
    end = column + len("accuracy")
    assert all(line[end - 1] == "%" for line in block[1:])
    assert "Pairwise comparisons" in out


def test_export_after_rescore_carries_thoughtdesk_values(capsys, library, tmp_path):
    path = FIXTURES / "bad_input.json"
    run(capsys, "--library", library, "import", str(path), "--collection", "bad")
    assert run(capsys, "--library", library, "evaluate", "bad", "--rescore")[0] == 0
    out_file = tmp_path / "out.json"
    assert run(capsys, "--library", library, "export", "bad", str(out_file))[0] == 0
    exported = load_with_extras(out_file)
    expected = {a.sample_id: a for a in file_answers(path, rescored=True)}
    types = {s["id"]: s["type"] for s in exported["bad_cases"]["test"]}
    checked = 0
    for sample in exported["bad_cases"]["test"]:
        answer = sample["generated_cot"][0]["answers"][0]
        exp = expected[sample["id"]]
        # not extractable is exported as graded, not correct (false); ThoughtDesk's outcome
        # rides along in the extension field
        assert answer["correct_answer"] is (exp.correct_value is True)
        assert answer["thoughtdesk_scoring"]["outcome"] == exp.outcome
        if types[sample["id"]] in ("multiplechoice", "bool"):
            assert answer["answer_from_choices"] == exp.letter
            checked += 1
    assert checked == 4
    # the stored verdicts differ from ThoughtSource's: e.g. gold not among the choices was True
    original = json.loads(path.read_text(encoding="utf-8"))["bad_cases"]["test"][0]
    assert original["generated_cot"][0]["answers"][0]["correct_answer"] is True
    first = exported["bad_cases"]["test"][0]["generated_cot"][0]["answers"][0]
    assert first["correct_answer"] is False
    assert first["thoughtdesk_scoring"]["outcome"] == "unextractable"
    assert "not among the choices" in first["thoughtdesk_scoring"]["reason"]
    assert first["thoughtdesk_scoring"]["original"] == {"correct_answer": True}


def test_majority_vote_and_tokens(capsys, tmp_path):
    path = FIXTURES / "self_consistency.json"
    lib = str(tmp_path / "sc.thoughtdesk")
    run(capsys, "--library", lib, "import", str(path), "--collection", "sc")
    code, out, _ = run(capsys, "--library", lib, "evaluate", "sc", "--rescore", "--json")
    data = json.loads(out)
    rows = {r["condition"]: r for r in data["rows"]}
    answers = file_answers(path, rescored=True)
    votes: dict[str, list] = defaultdict(list)
    gold_letter = {}
    for a in answers:
        if a.condition.startswith("- / kojima-01"):
            votes[a.sample_id].append(a.letter)
            if a.outcome == "correct":
                gold_letter[a.sample_id] = a.letter
    source = json.loads(path.read_text(encoding="utf-8"))["sc_demo"]["test"]
    gold = {s["id"]: "ABC"[s["choices"].index(s["answer"][0])] for s in source}
    majority = 0
    for sid, letters in votes.items():
        counts = Counter(letters)
        best = max(counts.values())
        winner = next(letter for letter in letters if counts[letter] == best)  # ties: first voted
        majority += winner == gold[sid]
    sc = rows["- / kojima-01 / kojima-A-C"]
    assert sc["majority_accuracy"] == pytest.approx(majority / len(votes))
    assert sc["n"] == 18 and sc["questions"] == 6
    assert rows["- / zhou-01 / kojima-A-C"]["majority_accuracy"] is None
    kojima = [a for a in answers if a.condition.startswith("- / kojima-01")]
    tokens = [a.tokens for a in kojima if a.tokens is not None]
    assert len(tokens) == len(kojima)  # every answer has its token count
    assert sc["mean_tokens"] == pytest.approx(sum(tokens) / len(tokens))
    assert sc["mean_cost"] == pytest.approx(0.002)


def test_unknown_collection_exits_1_with_one_line(capsys, library):
    code, out, err = run(capsys, "--library", library, "evaluate", "Nope")
    assert code == 1 and out == ""
    assert err.strip().startswith("thoughtdesk: no collection named 'Nope'") and err.count("\n") == 1


def test_restore_original_undoes_a_rescore(capsys, tmp_path, shared):
    path = shared("thoughtsource", TS67)
    lib = str(tmp_path / "ts.thoughtdesk")
    run(capsys, "--library", lib, "import", str(path), "--collection", "ts")
    args = ("--library", lib, "evaluate", "ts", "--json", "--no-comparisons")
    before = json.loads(run(capsys, *args)[1])
    rescored = json.loads(run(capsys, *args, "--rescore")[1])
    assert rescored["correctness_source"] != "file"
    assert [r["correct"] for r in rescored["rows"]] != [r["correct"] for r in before["rows"]]
    code, out, err = run(capsys, *args, "--restore-original")
    assert code == 0
    restored = int(err.split(" answer(s)")[0])
    assert restored == sum(r["n"] for r in before["rows"])  # every answer the file scored
    after = json.loads(out)
    assert after["correctness_source"] == "file"
    _check_rows(after["rows"], groups(file_answers(path, rescored=False)))
    with pytest.raises(SystemExit) as caught:  # one or the other, said by argparse
        run(capsys, *args, "--rescore", "--restore-original")
    assert caught.value.code == 2
