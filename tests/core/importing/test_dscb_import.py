"""DS Critique Bank files into a real library and back out: lossless, one transaction, the same
duplicate policy as every import, critiques kept through ThoughtSource JSON."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.critiques.test_dscb import dscb_records
from tests.core.importing.test_import_skip import library_digest
from tests.helpers.paths import FIXTURES
from thoughtdesk.core.critiques import add_critique, critiques_for_cots, explanation_ratings_for_cots
from thoughtdesk.core.critiques.parse import parse_critique
from thoughtdesk.core.critiques.records import Critique
from thoughtdesk.core.datasets.ts_extras import load_with_extras, side_path
from thoughtdesk.core.errors import Cancelled, DataFileError, DuplicateSamplesError
from thoughtdesk.core.importing.dscb import dscb_records as exported_records
from thoughtdesk.core.importing.dscb import export_dscb, import_dscb, split_for
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.store import Library

DSCB = FIXTURES / "dscb"
FILES = sorted(DSCB.glob("*.jsonl"))


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


@pytest.fixture
def lib(tmp_path):
    with Library.open(tmp_path / "lib.thoughtdesk") as library:
        yield library


def test_split_from_the_file_name():
    assert split_for("DSCB-train-silver.jsonl") == "train-silver"
    assert split_for("/x/ds_critique_bank-dev-non-anno.jsonl") == "dev-non-anno"
    assert split_for("mine.jsonl") == "mine"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_import_then_export_gives_every_record_back_equal(lib, tmp_path, path):
    report = import_dscb(lib, path)
    original = lines(path)
    assert report.records == len(original)
    assert report.inserted == len({(r["dataset"], r["qid"]) for r in original})
    out = tmp_path / "out.jsonl"
    assert export_dscb(lib, path.stem, out) == len(original)
    assert lines(out) == original  # same records, same order, equal as JSON
    assert not out.with_name("out.jsonl.part").exists()


def test_structure_counters_critiques_and_ratings(lib):
    path = DSCB / "DSCB-dev-crowd-anno.jsonl"
    report = import_dscb(lib, path, collection="dev")
    assert (report.records, report.inserted, report.critiques, report.ratings) == (2, 1, 4, 6)
    conn = lib.conn
    (pk, dataset, split, sample_id, question, choices, answer) = conn.execute(
        "SELECT id, dataset, split, sample_id, question, choices, answer FROM sample"
    ).fetchone()
    assert (dataset, split, sample_id) == ("ARC-Easy", "dev-crowd-anno", "NYSEDREGENTS_2015_8_27")
    assert question == "Which gas do plants take in for photosynthesis?"
    assert json.loads(choices)[2] == "carbon dioxide" and json.loads(answer) == ["carbon dioxide"]
    # The counters agree with the rows.
    counters = conn.execute(
        "SELECT n_cots, n_answers, n_correct, n_incorrect, n_annotations FROM sample WHERE id = ?", (pk,)
    ).fetchone()
    assert counters == (2, 2, 1, 1, 0)
    cots = conn.execute(
        "SELECT id, cot_id, model_name, cot_trigger FROM generated_cot WHERE sample_pk = ? ORDER BY position", (pk,)
    ).fetchall()
    assert [(c[2], c[3]) for c in cots] == [("Llama-2-7b-Chat", "QA_explanation1"), ("gpt-4-0613", "QA_explanation1")]
    critiques = critiques_for_cots(lib, [c[0] for c in cots])
    first = critiques[cots[0][0]]
    assert [c.critique_model for c in first] == ["gpt-4-0613", "DS-13B", "DS-7B"]
    assert all(c.source == "import" for c in first) and [c.position for c in first] == [0, 1, 2]
    assert first[1].llm_options == {"temperature": 0, "max_new_tokens": 512, "greedy": True}
    assert [(r.author, r.score) for r in first[1].ratings] == [("W9", 2), ("W10", None)]
    assert first[2].parsed.dimension == "misunderstanding"
    ratings = explanation_ratings_for_cots(lib, [c[0] for c in cots])
    assert [(r.author, r.score, r.dimensions) for r in ratings[cots[0][0]]] == [("W9", 0, ("incorrect_information",))]
    assert cots[1][0] not in ratings  # an empty explanation_annotations list: no rows, and [] on export
    # Searchable like any import.
    assert conn.execute("SELECT count(*) FROM sample_fts WHERE sample_fts MATCH 'photosynthesis'").fetchone()[0] == 1


def test_all_five_files_into_one_collection(lib, tmp_path):
    for path in FILES:
        import_dscb(lib, path, collection="dscb")
    cid = lib.require_collection("dscb")
    splits = {split for _, split in lib.splits(cid)}
    assert splits == {"train-silver", "train-crowd-anno", "train-expert", "dev-crowd-anno", "dev-non-anno"}
    out = tmp_path / "all.jsonl"
    export_dscb(lib, "dscb", out)
    exported = lines(out)
    originals = [r for path in FILES for r in lines(path)]
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731 (a short sort key)
    assert sorted(map(key, exported)) == sorted(map(key, originals))


def test_critiques_survive_thoughtsource_export_and_import(lib, tmp_path):
    for path in FILES:
        import_dscb(lib, path, collection="dscb")
    ts = tmp_path / "dscb.json"
    export_thoughtsource(lib, "dscb", ts)
    data = load_with_extras(ts)  # ThoughtDesk's extension fields are in the side file
    cot = data["ARC-Easy"]["dev-crowd-anno"][0]["generated_cot"][0]
    extension = cot["thoughtdesk_critiques"]
    assert [c["critique_model"] for c in extension["critiques"]] == ["gpt-4-0613", "DS-13B", "DS-7B"]
    assert extension["critiques"][0]["ratings"][0]["author"] == "W9"
    assert extension["explanation_ratings"][0]["dimensions"] == ["incorrect_information"]
    with Library.open(tmp_path / "other.thoughtdesk") as other:
        import_thoughtsource(other, ts, collection="again")
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731 (splits may come back in another order)
        assert sorted(map(key, exported_records(other, "again"))) == sorted(map(key, exported_records(lib, "dscb")))
        # Critiques are rows again, not an unknown field of the CoT.
        assert (
            other.conn.execute(
                "SELECT count(*) FROM generated_cot WHERE extra LIKE '%thoughtdesk_critiques%'"
            ).fetchone()[0]
            == 0
        )
        assert (
            other.conn.execute("SELECT count(*) FROM critique").fetchone()[0]
            == lib.conn.execute("SELECT count(*) FROM critique").fetchone()[0]
        )
        # And a second export of the re-imported library is the same file.
        ts2 = tmp_path / "again.json"
        export_thoughtsource(other, "again", ts2)
    assert load_with_extras(ts2) == data


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_dscb_to_thoughtsource_to_a_new_library_to_dscb_is_the_original(lib, tmp_path, path):
    import_dscb(lib, path)
    ts = tmp_path / "ts.json"
    export_thoughtsource(lib, path.stem, ts)
    with Library.open(tmp_path / "other.thoughtdesk") as other:
        import_thoughtsource(other, ts, collection="again")
        export_dscb(other, "again", tmp_path / "out.jsonl")
    assert lines(tmp_path / "out.jsonl") == lines(path)


def test_a_bad_record_changes_nothing(tmp_path):
    library = tmp_path / "lib.thoughtdesk"
    with Library.open(library) as lib:
        import_dscb(lib, DSCB / "DSCB-train-silver.jsonl", collection="dscb")
    before = library_digest(library)
    good = lines(DSCB / "DSCB-dev-crowd-anno.jsonl")
    bad = json.loads(json.dumps(good[1]))
    bad["critiques"][0]["critique_elements"]["explanation_score"] = "excellent"
    path = tmp_path / "DSCB-dev-crowd-anno.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [good[0], bad]) + "\n", encoding="utf-8")
    with Library.open(library) as lib, pytest.raises(DataFileError) as raised:
        import_dscb(lib, path, collection="dscb")
    assert str(raised.value).startswith(f"{path}, line 2: field critiques[0].critique_elements.explanation_score")
    assert library_digest(library) == before
    # Skipping bad records imports the rest and reports the bad one.
    with Library.open(library) as lib:
        report = import_dscb(lib, path, collection="dscb", on_error="skip")
    assert report.records == 1 and [e.line for e in report.bad_records] == [2]


def test_duplicates_fail_skip_or_replace_without_orphans(lib, tmp_path):
    path = DSCB / "DSCB-train-silver.jsonl"
    import_dscb(lib, path, collection="dscb")
    counts = lambda: tuple(  # noqa: E731
        lib.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("sample", "generated_cot", "answer", "critique")
    )
    before = counts()
    with pytest.raises(DuplicateSamplesError):
        import_dscb(lib, path, collection="dscb")
    assert counts() == before
    skipped = import_dscb(lib, path, collection="dscb", on_duplicate="skip")
    assert (skipped.skipped, skipped.records, skipped.critiques) == (2, 0, 0) and counts() == before
    replaced = import_dscb(lib, path, collection="dscb", on_duplicate="replace")
    assert (replaced.replaced, replaced.records, replaced.critiques) == (2, 4, 4) and counts() == before
    out = tmp_path / "out.jsonl"
    export_dscb(lib, "dscb", out)
    assert lines(out) == lines(path)
    # Another split of the same questions is other samples, not duplicates.
    other = import_dscb(lib, path, collection="dscb", split="again")
    assert other.inserted == 2


def test_cancel_leaves_the_library_unchanged(tmp_path):
    library = tmp_path / "lib.thoughtdesk"
    with Library.open(library):
        pass
    before = library_digest(library)
    big = tmp_path / "DSCB-big.jsonl"
    record = lines(DSCB / "DSCB-train-silver.jsonl")[1]
    with big.open("w", encoding="utf-8") as handle:
        for i in range(1200):
            handle.write(json.dumps({**record, "qid": f"q{i}", "id": f"r{i}"}) + "\n")
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 2  # during the write, after reading

    with Library.open(library) as lib, pytest.raises(Cancelled):
        import_dscb(lib, big, cancel=cancel)
    assert library_digest(library) == before


def test_a_thoughtdesk_critique_exports_with_the_imported_ones(lib, tmp_path):
    path = DSCB / "DSCB-train-silver.jsonl"
    import_dscb(lib, path, collection="dscb")
    cot_pk = lib.conn.execute("SELECT id FROM generated_cot WHERE cot_id LIKE 'OBQA%'").fetchone()[0]
    text = 'The explanation states or suggests the following:\n * Main flaw (standalone statement): "Too short"\n * Dimension: lack_justification\n\nExplanation score: 3'
    with lib.transaction() as conn:
        add_critique(conn, Critique(cot_pk, "DS-7B", text, parse_critique(text), {"temperature": 0}))
    out = tmp_path / "out.jsonl"
    export_dscb(lib, "dscb", out)
    records = lines(out)
    original = lines(path)
    assert records[:3] == original[:3]
    added = records[3]["critiques"][1]
    assert records[3]["critiques"][0] == original[3]["critiques"][0]
    assert added == {
        "critique_model": "DS-7B",
        "critique_llm_options": {"temperature": 0},
        "critique_text": text,
        "critique_elements": {
            "main_flaw": "Too short",
            "dimension": "lack_justification",
            "general_feedback": None,
            "specific_feedback": None,
            "explanation_score": 3.0,
        },
    }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(dscb_records(), min_size=1, max_size=6))
def test_generated_files_come_back_equal(tmp_path, records):
    # Distinct ids per record, as the file's ids are (qids may repeat: several students per question).
    for i, record in enumerate(records):
        record["id"] = f"{i}-{record['id']}"
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / "DSCB-generated.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    with Library.open(folder / "lib.thoughtdesk") as lib:
        import_dscb(lib, path, collection="g")
        export_dscb(lib, "g", folder / "out.jsonl")
    assert lines(folder / "out.jsonl") == [json.loads(json.dumps(r)) for r in records]


def test_a_malformed_critique_extension_names_its_place_and_changes_nothing(lib, tmp_path):
    import_dscb(lib, DSCB / "DSCB-train-expert.jsonl", collection="expert")
    ts = tmp_path / "expert.json"
    export_thoughtsource(lib, "expert", ts)
    data = load_with_extras(ts)
    data["Quiz-FR"]["train-expert"][0]["generated_cot"][0]["thoughtdesk_critiques"]["critiques"][0]["raw_text"] = 3
    side_path(ts).unlink()  # the extension field inline, as an older export had it
    ts.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    target = tmp_path / "other.thoughtdesk"
    with Library.open(target):
        pass
    before = library_digest(target)
    with Library.open(target) as other, pytest.raises(DataFileError) as raised:
        import_thoughtsource(other, ts)
    assert str(raised.value) == (
        f"{ts}: dataset Quiz-FR, split train-expert, sample index 0, generated_cot 0, "
        "field thoughtdesk_critiques.critiques[0].raw_text: must be text"
    )
    assert library_digest(target) == before


def test_progress_counts_questions(lib, tmp_path):
    record = lines(DSCB / "DSCB-train-silver.jsonl")[0]
    path = tmp_path / "DSCB-many.jsonl"
    path.write_text("".join(json.dumps({**record, "qid": f"q{i // 2}", "id": f"r{i}"}) + "\n" for i in range(1400)))
    calls: list[tuple[int, int]] = []
    report = import_dscb(lib, path, progress=lambda done, total: calls.append((done, total)))
    assert (report.records, report.inserted) == (1400, 700)
    assert calls == [(500, 700), (700, 700)]


def test_ratings_a_reviewer_adds_are_exported_where_the_file_had_none(lib, tmp_path):
    from thoughtdesk.core.critiques import set_critique_rating, set_explanation_rating

    path = DSCB / "DSCB-train-silver.jsonl"  # no annotation fields at all
    import_dscb(lib, path, collection="dscb")
    cot_pk = lib.conn.execute("SELECT id FROM generated_cot WHERE cot_id LIKE 'OBQA%'").fetchone()[0]
    critique_pk = lib.conn.execute("SELECT id FROM critique WHERE cot_pk = ?", (cot_pk,)).fetchone()[0]
    with lib.transaction() as conn:
        set_explanation_rating(conn, cot_pk, "ana", 4, ["irrelevant"])
        set_critique_rating(conn, critique_pk, "ana", 2)
    out = tmp_path / "out.jsonl"
    export_dscb(lib, "dscb", out)
    records, original = lines(out), lines(path)
    assert records[:3] == original[:3]
    rated = records[3]
    assert rated["explanation_annotations"] == [{"explanation_score": 4, "dimensions": ["irrelevant"], "worker": "ana"}]
    assert rated["critiques"][0]["critique_annotations"] == [{"critique_score": 2, "worker": "ana"}]
    del rated["explanation_annotations"], rated["critiques"][0]["critique_annotations"]
    assert rated == original[3]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"student_model": ', '"student_model": "x", "student_model": '),  # the record's own field
        ('"dimension": ', '"dimension": "irrelevant", "dimension": '),  # inside critique_elements
        ('"worker": ', '"worker": "W0", "worker": '),  # inside an annotation
        ('"qid": ', '"x_meta": {"a": 1, "a": 2}, "qid": '),  # inside an unknown field's object
        ('"qid": ', '"qid" : "x", "qid"  : '),  # spaced before the colon
    ],
    ids=["record", "elements", "annotation", "unknown-object", "spaced"],
)
def test_a_key_twice_in_a_record_is_refused_with_its_line(lib, tmp_path, old, new):
    # The reader's quick key count (decode_line with record_keys) must not let a lost key through.
    good = (DSCB / "DSCB-dev-crowd-anno.jsonl").read_text(encoding="utf-8").splitlines()
    assert old in good[1]
    path = tmp_path / "DSCB-dev-crowd-anno.jsonl"
    path.write_text("\n".join([good[0], good[1].replace(old, new, 1)]) + "\n", encoding="utf-8")
    with pytest.raises(DataFileError) as raised:
        import_dscb(lib, path, collection="dup")
    assert str(raised.value).startswith(f"{path}, line 2") and "appears twice" in str(raised.value)
    assert lib.collection_id("dup") is None


def test_record_keys_counts_every_key_of_the_usual_shape():
    from thoughtdesk.core.critiques.dscb import record_keys

    for line in (DSCB / "DSCB-dev-crowd-anno.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        # Compact JSON has one '":' per key (no quote-colon inside these strings): the same count.
        assert record_keys(record) == json.dumps(record, separators=(",", ":")).count('":')
    assert record_keys(["not", "a", "record"]) == 0
    assert record_keys({"critiques": [1, {"critique_elements": None}], "explanation_annotations": "x"}) == 3
