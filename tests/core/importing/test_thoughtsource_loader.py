"""ThoughtSource's own library opens ThoughtDesk's ThoughtSource exports (issue 23, point 14).

``cot.Collection.from_json`` encodes every sample with ThoughtSource's ``datasets`` schema, which
refuses a key it does not know (``KeyError: 'thoughtdesk_scoring'`` after ``evaluate --rescore``).
The exports (plain, re-scored, with annotations, critiques, ratings and a generation run's usage)
are loaded in a child process by ThoughtSource's real loader, which then evaluates, selects and
dumps them. Its library needs an old-pinned Python 3.10 environment of its own (see .ci/run):
the interpreter is ``$THOUGHTDESK_THOUGHTSOURCE_PYTHON``, by default
``~/.cache/thoughtdesk-ci/ts-venv/bin/python``; the tests skip with the reason when it is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.expected_results import TS67
from thoughtdesk.core.critiques import (
    Critique,
    CritiqueRating,
    ExplanationRating,
    ParsedCritique,
    add_critique,
    add_critique_rating,
    add_explanation_rating,
)
from thoughtdesk.core.datasets.ts_extras import load_with_extras, side_path
from thoughtdesk.core.evaluation.evaluate import evaluate
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.annotations import AnnotationStore

DEFAULT_PYTHON = Path.home() / ".cache" / "thoughtdesk-ci" / "ts-venv" / "bin" / "python"

#: Run in ThoughtSource's interpreter: load each file with its loader, touch the data, print a summary.
CHILD = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
from cot import Collection
out = {}
for path in sys.argv[1:]:
    collection = Collection.from_json(path)
    sizes = {name: {split: len(collection[name][split]) for split in collection[name]} for name in collection._cache}
    collection.select_generated_cots(author="thoughtdesk")  # a filter over every CoT's fields
    kept = sum(len(s["generated_cot"]) for n in collection._cache for sp in collection[n] for s in collection[n][sp])
    collection = Collection.from_json(path)
    accuracies = collection.evaluate(overwrite=False)
    collection.dump(path + ".dumped.json")
    out[path] = {"sizes": sizes, "accuracies": accuracies, "kept": kept}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def ts_python() -> str:
    python = os.environ.get("THOUGHTDESK_THOUGHTSOURCE_PYTHON") or str(DEFAULT_PYTHON)
    if not Path(python).is_file() or not os.access(python, os.X_OK):
        pytest.skip(
            f"ThoughtSource's library is not installed: no interpreter at {python} (set "
            "THOUGHTDESK_THOUGHTSOURCE_PYTHON, or build ~/.cache/thoughtdesk-ci/ts-venv as .ci/run says)"
        )
    probe = subprocess.run([python, "-c", "import cot"], capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"{python} cannot import ThoughtSource's cot library: {last}")
    return python


def load_in_thoughtsource(python: str, *paths: Path) -> dict:
    done = subprocess.run(
        [python, "-c", CHILD, *map(str, paths)], capture_output=True, text=True, timeout=600, cwd=paths[0].parent
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _everything(lib: Library) -> None:
    """Annotations of two authors, critiques with ratings (one rater changed their mind),
    explanation ratings, and a generation run's usage on a CoT and its answer."""
    cots = [pk for (pk,) in lib.conn.execute("SELECT id FROM generated_cot ORDER BY id LIMIT 4")]
    ann = AnnotationStore(lib, "ann")
    ann.toggle_label(cots[0], "incorrect_reasoning")
    ann.set_comment(cots[0], "step 2 is wrong")
    ann.set_preferred(cots[1], True)
    ann.set_quality(cots[1], 4)
    text = lib.conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (cots[2],)).fetchone()[0]
    ann.toggle_label(cots[2], "hallucination", ann.span(cots[2], 0, min(10, len(text))))
    AnnotationStore(lib, "bob").toggle_label(cots[0], "incorrect_reasoning")
    with lib.transaction() as conn:
        for i, cot in enumerate(cots[:3]):
            parsed = ParsedCritique(dimension="incorrect_reasoning", explanation_score=float(i + 2))
            pk = add_critique(conn, Critique(cot, "DS-13B", f"Critique {i}", parsed))
            add_critique_rating(conn, pk, CritiqueRating("w1", 1))
            add_critique_rating(conn, pk, CritiqueRating("w1", 3))
            add_explanation_rating(conn, cot, ExplanationRating("w1", 4, ("incorrect_reasoning",)))
        usage = {"thoughtdesk": {"completion_tokens": 57, "cost_usd": 0.0001, "run": 1}}
        conn.execute("UPDATE generated_cot SET extra = ? WHERE id = ?", (json.dumps(usage), cots[3]))
        conn.execute("UPDATE answer SET extra = ? WHERE cot_pk = ?", (json.dumps(usage), cots[3]))


def test_thoughtsource_loads_plain_rescored_and_annotated_exports(shared, ts_python, tmp_path):
    source = shared("thoughtsource", TS67)
    plain, rescored, everything = tmp_path / "plain.json", tmp_path / "rescored.json", tmp_path / "everything.json"
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, source, collection="ts")
        export_thoughtsource(lib, "ts", plain)
        scored = evaluate(lib, "ts", rescore=True, comparisons=False)
        export_thoughtsource(lib, "ts", rescored)
        _everything(lib)
        export_thoughtsource(lib, "ts", everything)
        table = {r.key: (r.n, r.correct) for r in evaluate(lib, "ts", comparisons=False).rows}
    loaded = load_in_thoughtsource(ts_python, plain, rescored, everything)
    # ThoughtDesk's extension fields went beside the files, and come back on import
    assert not side_path(plain).exists()  # nothing beyond ThoughtSource's schema
    assert "thoughtdesk_scoring" in side_path(rescored).read_text("utf-8")
    extras = side_path(everything).read_text("utf-8")
    assert all(key in extras for key in ("thoughtdesk_scoring", "thoughtdesk_critiques", '"thoughtdesk"', "span"))
    assert all("thoughtdesk" not in p.read_text("utf-8") for p in (plain, rescored, everything))
    original = json.loads(source.read_text("utf-8"))
    sizes = {name: {split: len(samples) for split, samples in splits.items()} for name, splits in original.items()}
    for path in (plain, rescored, everything):
        assert loaded[str(path)]["sizes"] == sizes
    # ThoughtSource's own evaluate (overwrite=False: it grades only null answers, and a
    # re-scored export has none) gives ThoughtDesk's accuracy on every one of the 18 cells
    theirs = loaded[str(rescored)]["accuracies"]
    ours = {
        (r.dataset, r.split, r.model, "_".join("None" if p == "-" else p for p in r.condition.split(" / "))): r
        for r in scored.rows
    }
    assert len(ours) == 18
    for (dataset, split, model, key), row in ours.items():
        assert theirs[dataset][split]["accuracy"][model][key] == round(row.accuracy, 6), (dataset, split, model, key)
    assert loaded[str(everything)]["accuracies"] == theirs  # annotations and critiques change no grade

    # the file ThoughtSource dumped back imports into ThoughtDesk with the same table
    dumped = Path(str(everything) + ".dumped.json")
    with Library.open(tmp_path / "back.thoughtdesk") as back:
        import_thoughtsource(back, dumped, collection="back")
        again = {r.key: (r.n, r.correct) for r in evaluate(back, "back", comparisons=False).rows}
    assert again == table
    # and ThoughtDesk's own import of its export is lossless (extras put back from the side file)
    with Library.open(tmp_path / "round.thoughtdesk") as round_trip:
        import_thoughtsource(round_trip, everything, collection="ts")
        export_thoughtsource(round_trip, "ts", tmp_path / "again.json")
    assert load_with_extras(tmp_path / "again.json") == load_with_extras(everything)


#: Run in ThoughtSource's interpreter: grade every answer afresh with its evaluate, dump the file.
EVALUATE = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
from cot import Collection
collection = Collection.from_json(sys.argv[1])
accuracies = collection.evaluate(overwrite=True)
collection.dump(sys.argv[2])
print(json.dumps(accuracies))
"""


def test_a_file_thoughtsource_graded_imports_with_its_accuracies_cell_for_cell(shared, ts_python, tmp_path):
    """Issue 23, point 15: ThoughtSource's evaluate writes ``correct_answer: null`` (and
    ``answer_from_choices: null``) where it could extract nothing; those answers count as not
    correct in its accuracy. ThoughtDesk used to read them as never evaluated and grade them
    again, so the imported file's figures were not ThoughtSource's."""
    source = shared("thoughtsource", TS67)
    graded = tmp_path / "graded.json"
    done = subprocess.run(
        [ts_python, "-c", EVALUATE, str(source), str(graded)], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    answers = [
        a
        for splits in json.loads(graded.read_text("utf-8")).values()
        for samples in splits.values()
        for s in samples
        for c in s["generated_cot"]
        for a in c["answers"]
    ]
    nothing = [a for a in answers if a["correct_answer"] is None]
    assert len(nothing) > 50 and all(a["answer_from_choices"] is None for a in nothing)  # 85 on this dump

    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, graded, collection="graded")
        result = evaluate(lib, "graded", comparisons=False)
        counted = lib.conn.execute("SELECT sum(n_unextractable) FROM sample").fetchone()[0]
    assert result.scored_now == 0 and result.scored_from_file == len(answers)  # nothing graded again
    assert sum(r.unextractable for r in result.rows) == counted == len(nothing)
    ours = {
        (r.dataset, r.split, r.model, "_".join("None" if p == "-" else p for p in r.condition.split(" / "))): r
        for r in result.rows
    }
    cells = {
        (d, s, m, k): v
        for d, x in theirs.items()
        for s, y in x.items()
        for m, z in y["accuracy"].items()
        for k, v in z.items()
    }
    assert len(cells) == len(ours) == 18
    assert {key: round(row.accuracy, 6) for key, row in ours.items()} == cells


def _sample(i: int, cot: str, answer: str) -> dict:
    return {
        "id": f"q{i}",
        "ref_id": "",
        "question": f"Question {i}?",
        "type": "multiplechoice",
        "choices": ["apple", "banana", "cherry", "date", "elderberry"],
        "context": "",
        "cot": [],
        "answer": ["apple"],
        "generated_cot": [
            {
                "id": f"c{i}",
                "fragments_version": "0.01",
                "instruction": None,
                "cot_trigger": "kojima-01",
                "cot_trigger_template": "",
                "prompt_text": "",
                "cot": cot,
                "answers": [
                    {
                        "id": f"a{i}",
                        "answer_extraction": "kojima-A-E",
                        "answer_extraction_template": "",
                        "answer_extraction_text": "",
                        "answer": answer,
                        "answer_from_choices": "",
                        "correct_answer": None,
                    }
                ],
                "author": "",
                "date": "",
                "api_service": "",
                "model": "{'name': 'm'}",
                "comment": "",
                "annotations": [],
            }
        ],
        "feedback": [],
    }


def test_answers_thoughtsource_could_not_extract_are_not_graded_again(ts_python, tmp_path):
    """A fixture where the two readings differ: ThoughtSource's evaluate extracts nothing from an
    empty answer (its CoT does say A, the gold) and from "A or B"; it counts both as not correct.
    Graded again, ThoughtDesk found A in the CoT of the first: 2/4 where ThoughtSource has 1/4."""
    samples = [
        _sample(1, "Apples are red.", "A"),
        _sample(2, "Bananas are yellow.", "B"),
        _sample(3, "Apples are red. Therefore, the answer is (A).", ""),
        _sample(4, "Hard to say.", "A or B"),
    ]
    fixture = tmp_path / "fixture.json"
    fixture.write_text(json.dumps({"commonsense_qa": {"validation": samples}}), encoding="utf-8")
    graded = tmp_path / "graded.json"
    done = subprocess.run(
        [ts_python, "-c", EVALUATE, str(fixture), str(graded)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    assert theirs == {"commonsense_qa": {"validation": {"accuracy": {"m": {"None_kojima-01_kojima-A-E": 0.25}}}}}
    written = json.loads(graded.read_text("utf-8"))["commonsense_qa"]["validation"]
    assert [
        (a["correct_answer"], a["answer_from_choices"]) for s in written for a in s["generated_cot"][0]["answers"]
    ] == [
        (True, "A"),
        (False, "B"),
        (None, None),
        (None, None),
    ]
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, graded, collection="graded")
        (row,) = evaluate(lib, "graded", comparisons=False).rows
    assert (row.n, row.correct, row.unextractable, round(row.accuracy, 6)) == (4, 1, 2, 0.25)
