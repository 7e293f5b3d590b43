"""``export --format dpo|reward`` (issue 26, point 4): TRL preference pairs from human pairwise
preferences (rows inserted directly) and consistent judge verdicts, with provenance; ties,
inconsistent verdicts and disagreeing sources never make pairs."""

from __future__ import annotations

import json

import pytest

from tests.core.generation.test_judge_runs import correct_texts
from tests.helpers.judge_servers import first_judge, right_answer_judge
from tests.helpers.libraries import DEMO
from thoughtdesk.cli.main import main
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import CONFIG_DIR_ENV


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "config"))


def _run(library_path, *args: str) -> int:
    return main(["--library", str(library_path), *args])


def _pairs(library_path, limit: int = 3) -> list[tuple[int, int, int]]:
    with Library.open(library_path) as lib:
        return lib.conn.execute(
            "SELECT a.sample_pk, a.id, b.id FROM generated_cot a JOIN generated_cot b "
            "ON b.sample_pk = a.sample_pk AND b.id > a.id ORDER BY a.id LIMIT ?",
            (limit,),
        ).fetchall()


def _prefer(library_path, rows: list[tuple[int, int, int, int | None, str]]) -> None:
    with Library.open(library_path) as lib, lib.transaction() as conn:
        conn.executemany(
            "INSERT INTO pairwise_preference (sample_pk, first_cot_pk, second_cot_pk, preferred_cot_pk, author, "
            "date, blind) VALUES (?, ?, ?, ?, ?, '2026-11-28T10:00:00Z', 1)",
            rows,
        )


def _read(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _judge(library_path, server, name: str, capsys) -> None:
    assert (
        _run(library_path, "judge", DEMO, "--pairwise", "--model", f"openai:{name}", "--base-url", server.base_url) == 0
    )
    capsys.readouterr()


def test_human_preferences_make_dpo_pairs_and_ties_make_none(library_path, tmp_path, capsys):
    (s1, a1, b1), (s2, a2, b2), (s3, a3, b3) = _pairs(library_path)
    _prefer(library_path, [(s1, a1, b1, b1, "ana"), (s2, a2, b2, None, "ana"), (s3, a3, b3, a3, "ben")])
    out = tmp_path / "dpo.jsonl"
    assert _run(library_path, "export", DEMO, str(out), "--format", "dpo", "--source", "human") == 0
    assert "2 preference pair(s) (dpo; from 2 human preference(s)" in capsys.readouterr().out
    records = _read(out)
    assert [set(r) for r in records] == [{"prompt", "chosen", "rejected", "metadata"}] * 2
    first = records[0]
    assert all(isinstance(first[k], str) and first[k] for k in ("prompt", "chosen", "rejected"))
    assert first["metadata"]["chosen_cot"]["pk"] == b1 and first["metadata"]["rejected_cot"]["pk"] == a1
    assert first["metadata"]["provenance"] == [
        {"source": "human", "author": "ana", "date": "2026-11-28T10:00:00Z", "blind": True}
    ]
    with Library.open(library_path) as lib:
        cot = lib.conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (b1,)).fetchone()[0]
        question = lib.conn.execute("SELECT question FROM sample WHERE id = ?", (s1,)).fetchone()[0]
    assert first["chosen"].startswith(cot.strip()) and question in first["prompt"]


def test_judge_pairs_come_only_from_consistent_verdicts_with_the_judge_named(library_path, tmp_path, capsys):
    with first_judge() as flip, right_answer_judge(correct_texts(library_path)) as right:
        _judge(library_path, flip, "flipper", capsys)
        _judge(library_path, right, "righter", capsys)
    out = tmp_path / "prefs.jsonl"
    # The first-shown judge is never consistent: it makes no pair at all.
    assert (
        _run(library_path, "export", DEMO, str(out), "--format", "dpo", "--source", "judge", "--judge", "flipper") == 0
    )
    assert _read(out) == [] and "0 preference pair(s)" in capsys.readouterr().out
    assert _run(library_path, "export", DEMO, str(out), "--format", "reward", "--source", "judge") == 0
    capsys.readouterr()
    records = _read(out)
    assert records and all(set(r) == {"chosen", "rejected", "metadata"} for r in records)
    for record in records:
        assert [m["role"] for m in record["chosen"]] == ["user", "assistant"] == [m["role"] for m in record["rejected"]]
        assert record["chosen"][0] == record["rejected"][0]  # the prompt implicit in both sides
        (source,) = record["metadata"]["provenance"]
        assert source["source"] == "judge" and source["judge"] == "righter" and source["template"] == "td-pairwise-v1"
        assert source["template_version"] and source["date"]
    correct = {t.strip() for t in correct_texts(library_path)}
    assert all(r["chosen"][1]["content"].split("\n\nAnswer:")[0] in correct for r in records)


def test_both_sources_merge_agreeing_pairs_and_leave_out_disagreeing_ones(library_path, tmp_path, capsys):
    with right_answer_judge(correct_texts(library_path)) as right:
        _judge(library_path, right, "righter", capsys)
    with Library.open(library_path) as lib:
        decided = lib.conn.execute(
            "SELECT v.sample_pk, min(v.first_cot_pk, v.second_cot_pk), max(v.first_cot_pk, v.second_cot_pk), "
            "v.preferred_cot_pk FROM judge_verdict v WHERE v.verdict != 'tie' GROUP BY 2, 3 ORDER BY 2 LIMIT 2"
        ).fetchall()
    (s1, lo1, hi1, won1), (s2, lo2, hi2, won2) = decided
    lost2 = hi2 if won2 == lo2 else lo2
    _prefer(library_path, [(s1, lo1, hi1, won1, "ana"), (s2, lo2, hi2, lost2, "ana")])  # agrees, disagrees
    out = tmp_path / "both.jsonl"
    assert _run(library_path, "export", DEMO, str(out), "--format", "dpo") == 0
    assert "1 pair(s) its sources disagree on left out" in capsys.readouterr().out
    records = _read(out)
    merged = [r for r in records if r["metadata"]["chosen_cot"]["pk"] == won1]
    assert len(merged) == 1 and [p["source"] for p in merged[0]["metadata"]["provenance"]] == ["human", "judge"]
    assert not any(
        {r["metadata"]["chosen_cot"]["pk"], r["metadata"]["rejected_cot"]["pk"]} == {lo2, hi2} for r in records
    )


def test_bad_preference_options_are_one_line(library_path, tmp_path, capsys):
    out = str(tmp_path / "x.jsonl")
    assert _run(library_path, "export", DEMO, out, "--format", "dpo", "--judge", "nobody") == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no pairwise verdicts by that judge" in err
    assert _run(library_path, "export", DEMO, out, "--source", "human") == 1
    assert "only apply to --format dpo or reward" in capsys.readouterr().err
