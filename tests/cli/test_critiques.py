"""``thoughtdesk critiques``: the JSON keys the issue names, CSV and Markdown shape, the text table,
an empty collection, an unknown one."""

from __future__ import annotations

import csv
import io
import json

import pytest

from thoughtdesk.cli.main import main
from thoughtdesk.core.critiques import (
    Critique,
    CritiqueRating,
    ExplanationRating,
    ParsedCritique,
    add_critique,
    add_critique_rating,
    add_explanation_rating,
)
from thoughtdesk.core.library.store import Library


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def seeded(library_path):
    """The demo library with DS-13B critiques of 8 CoTs, gpt|4o critiques of 4, human ratings."""
    with Library.open(library_path) as lib:
        cots = [pk for (pk,) in lib.conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT 8")]
        with lib.transaction() as conn:
            for i, cot in enumerate(cots):
                ratings = [CritiqueRating("w1", i % 4)] if i < 3 else []
                dimension = "incorrect_reasoning" if i % 2 else "missing_information"
                parsed = ParsedCritique(dimension=dimension, explanation_score=float(i % 6))
                add_critique(conn, Critique(cot, "DS-13B", "text", parsed, ratings=ratings))
                if i < 4:
                    add_critique(
                        conn,
                        Critique(cot, "gpt|4o", "t", ParsedCritique(dimension=dimension, explanation_score=5.0 - i)),
                    )
                add_explanation_rating(conn, cot, ExplanationRating("ann", i % 6))
        lib.create_collection("empty")
    return str(library_path)


def test_json_has_the_keys_the_issue_names(seeded, capsys):
    code, out, err = run(capsys, "--library", seeded, "critiques", "demo", "--json")
    assert code == 0, err
    data = json.loads(out)
    models = {m["model"]: m for m in data["critique_models"]}
    assert list(models) == ["DS-13B", "gpt|4o"]
    ds = models["DS-13B"]
    assert {"model", "n", "mean_explanation_score", "mean_critique_score", "dimensions"} <= ds.keys()
    assert ds["n"] == 8
    assert ds["mean_explanation_score"] == pytest.approx((0 + 1 + 2 + 3 + 4 + 5 + 0 + 1) / 8)
    assert ds["mean_critique_score"] == pytest.approx((0 + 1 + 2) / 3)
    assert ds["dimensions"]["incorrect_reasoning"] == 4 and ds["dimensions"]["missing_information"] == 4
    assert models["gpt|4o"]["mean_critique_score"] is None
    assert models["gpt|4o"]["mean_explanation_score"] == pytest.approx(3.5)
    assert {(a["first"], a["second"]) for a in data["agreement"]} == {
        ("DS-13B", "gpt|4o"),
        ("DS-13B", "human raters (mean)"),
        ("gpt|4o", "human raters (mean)"),
    }
    assert all(row["auroc"] is None or 0 <= row["auroc"] <= 1 for row in data["student_conditions"])
    assert data["human_agreement"]["explanation_raters"] == 1


def test_mean_critique_score_counts_each_raters_last_rating(seeded, capsys):
    """A rater who changed their mind on a critique (1, then 3) counts once, with the 3: the
    documented rule, the one Krippendorff's alpha follows (issue 23, point 17)."""
    with Library.open(seeded) as lib:
        pk = lib.conn.execute("SELECT id FROM critique WHERE critique_model = 'gpt|4o' ORDER BY id LIMIT 1").fetchone()[
            0
        ]
        with lib.transaction() as conn:
            add_critique_rating(conn, pk, CritiqueRating("w1", 1))
            add_critique_rating(conn, pk, CritiqueRating("w2", 2))
            add_critique_rating(conn, pk, CritiqueRating("w1", 3))  # w1 changed their mind
    code, out, err = run(capsys, "--library", seeded, "critiques", "demo", "--json")
    assert code == 0, err
    data = json.loads(out)
    gpt = next(m for m in data["critique_models"] if m["model"] == "gpt|4o")
    assert (gpt["mean_critique_score"], gpt["n_critique_ratings"]) == (2.5, 2)  # (3 + 2) / 2, not (1 + 2 + 3) / 3
    assert data["human_agreement"]["critique_items"] == 1  # alpha: the same two ratings of that critique


def test_csv_and_markdown_shape(seeded, capsys):
    code, out, _ = run(capsys, "--library", seeded, "critiques", "demo", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["model"] for r in rows] == ["DS-13B", "gpt|4o"]
    assert rows[0]["incorrect_reasoning"] == "4" and rows[1]["mean_critique_score"] == ""
    code, out, _ = run(capsys, "--library", seeded, "critiques", "demo", "--markdown")
    assert code == 0
    assert "### Critique models" in out and "### Student conditions" in out and "### Agreement" in out
    assert "gpt\\|4o" in out  # a pipe in a name is escaped, the table stays a table
    table = [line for line in out.splitlines() if line.startswith("| critique model")]
    assert len(table) == 1
    code, out, _ = run(capsys, "--library", seeded, "critiques", "demo")
    assert code == 0 and "Per critique model" in out and "DS-13B" in out and "Krippendorff" not in out.split("\n")[0]


def test_empty_collection_says_how_to_get_critiques(seeded, capsys):
    code, out, err = run(capsys, "--library", seeded, "critiques", "empty")
    assert code == 0 and "has no critiques" in out and "Generate > Critique" in out
    code, out, err = run(capsys, "--library", seeded, "critiques", "empty", "--json")
    data = json.loads(out)
    assert code == 0 and data["critique_models"] == [] and data["n_critiques"] == 0
    assert "has no critiques" in err
    code, out, _ = run(capsys, "--library", seeded, "critiques", "empty", "--csv")
    assert out.splitlines()[0].startswith("model,n,") and len(out.splitlines()) == 1


def test_unknown_collection_is_one_line_and_exit_1(seeded, capsys):
    code, out, err = run(capsys, "--library", seeded, "critiques", "nope", "--json")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "'nope'" in err
