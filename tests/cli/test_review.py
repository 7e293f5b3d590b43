"""``thoughtdesk annotations export|import`` and ``thoughtdesk agreement``, as a user runs them."""

from __future__ import annotations

import json

from tests.core.review.conftest import COLLECTION, cot_pks, open_library
from tests.helpers.cli import run_cli
from thoughtdesk.core.review import AnnotationStore


def run(library, *args):
    return run_cli(*args, library=library)


def test_export_import_and_agreement_commands(tmp_path):
    source, target = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    lib = open_library(source)
    for author, verdicts in (("ann", [True, True, False]), ("bob", [True, False, False])):
        store = AnnotationStore(lib, author)
        for cot, verdict in zip(cot_pks(lib, "mq-1"), verdicts, strict=True):
            store.toggle_label(cot, "Incorrect reasoning")
            if not verdict:
                store.toggle_label(cot, "Incorrect reasoning")
    lib.close()
    open_library(target).close()

    out = run(source, "annotations", "export", tmp_path / "all.json")
    assert out.returncode == 0, out.stderr
    assert "6 annotation(s) written" in out.stdout
    out = run(target, "annotations", "import", tmp_path / "all.json")
    assert out.returncode == 0, out.stderr
    assert "6 added" in out.stdout
    # ann T T F, bob T F F: p_o = 2/3, p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9,
    # kappa = (2/3 - 4/9) / (5/9) = 2/5.
    out = run(target, "agreement", COLLECTION, "--json")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["label"] == "Incorrect reasoning" and row["n_items"] == 3
    assert abs(row["cohen_kappa"] - 0.4) < 1e-9

    (tmp_path / "bad.json").write_text("[1]")
    out = run(target, "annotations", "import", tmp_path / "bad.json")
    assert out.returncode == 1 and "unknown annotation format" in out.stdout


def test_annotation_files_carry_ratings_through_the_commands(tmp_path):
    from tests.core.review.test_rating_exchange import rate, ratings_of, seed

    source, target = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with open_library(source) as lib:
        cots, critiques = seed(lib)
        rate(lib, "ann", cots[0], critiques[0], 3, ("irrelevant",), 2)
    with open_library(target) as lib:
        seed(lib)

    out = run(source, "annotations", "export", tmp_path / "ann.json", "--author", "ann")
    assert out.returncode == 0, out.stderr
    assert "with 1 explanation rating(s) and 1 critique rating(s)" in out.stdout
    out = run(target, "annotations", "import", tmp_path / "ann.json", "--dry-run")
    assert out.returncode == 0 and "would merge 2 of 2 rating(s): 2 added" in out.stdout
    out = run(target, "annotations", "import", tmp_path / "ann.json")
    assert out.returncode == 0 and "merged 2 of 2 rating(s): 2 added" in out.stdout
    with open_library(target) as lib:
        assert ratings_of(lib, cot_pks(lib, "mq-1")[0]) == ([("ann", 3, ("irrelevant",))], [("m-a", "ann", 2)])
