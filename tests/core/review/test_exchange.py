"""Reviewer exchange: export, merge without collisions, idempotence, ThoughtSource files, bad files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.review.conftest import cot_pks, n_annotations, open_library, table_digest
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import (
    FORMAT_NAME,
    AnnotationStore,
    cot_content_hash,
    export_annotations,
    import_annotations,
)


def _annotate_ann(lib) -> None:
    ann = AnnotationStore(lib, "ann")
    ann.toggle_label(cot_pks(lib, "mq-1")[1], "Incorrect reasoning")
    ann.toggle_label(cot_pks(lib, "mq-2")[1], "Unsafe recommendation", ann.span(cot_pks(lib, "mq-2")[1], 0, 5))
    ann.set_comment(cot_pks(lib, "mq-2")[2], "vague")
    ann.set_quality(cot_pks(lib, "mq-3")[0], 5)


def _annotate_bob(lib) -> None:
    bob = AnnotationStore(lib, "bob")
    bob.toggle_label(cot_pks(lib, "mq-1")[1], "Incorrect reasoning")  # same CoT and label as ann
    bob.toggle_label(cot_pks(lib, "mq-1")[1], "Incorrect reasoning")  # ...but bob says "false"
    bob.set_preferred(cot_pks(lib, "mq-1")[0], True)


def _slots(lib) -> set[tuple]:
    return set(
        lib.conn.execute(
            "SELECT s.sample_id, c.cot_id, a.author, a.key, a.value, a.extra FROM annotation a "
            "JOIN generated_cot c ON a.cot_pk = c.id JOIN sample s ON c.sample_pk = s.id"
        )
    )


def test_two_reviewers_merge_without_collision(tmp_path):
    lib_a, lib_b = open_library(tmp_path / "a.sqlite"), open_library(tmp_path / "b.sqlite")
    _annotate_ann(lib_a)
    _annotate_bob(lib_b)
    assert export_annotations(lib_a, "ann", tmp_path / "ann.json") == 4
    assert export_annotations(lib_b, "bob", tmp_path / "bob.json") == 2
    document = json.loads((tmp_path / "ann.json").read_text())
    assert document["format"] == FORMAT_NAME and document["author"] == "ann"
    first = document["annotations"][0]
    assert (first["dataset"], first["split"], first["sample_id"], first["cot_id"]) == (
        "med_qa",
        "test",
        "mq-1",
        "cot-1",
    )
    assert first["cot_hash"] == cot_content_hash(
        lib_a.conn.execute("SELECT cot FROM generated_cot WHERE cot_id = 'cot-1'").fetchone()[0]
    )

    lib_c = open_library(tmp_path / "c.sqlite")
    report_a = import_annotations(lib_c, tmp_path / "ann.json")
    report_b = import_annotations(lib_c, tmp_path / "bob.json")
    assert report_a.ok and report_b.ok, (report_a.summary, report_b.summary)
    assert (report_a.added, report_a.matched_samples, report_a.authors) == (4, 3, ["ann"])
    assert (report_b.added, report_b.unmatched) == (2, [])
    assert _slots(lib_c) == _slots(lib_a) | _slots(lib_b)
    cot = cot_pks(lib_c, "mq-1")[1]
    assert AnnotationStore(lib_c, "ann").review(cot).labels == {"Incorrect reasoning": True}
    assert AnnotationStore(lib_c, "bob").review(cot).labels == {"Incorrect reasoning": False}
    assert n_annotations(lib_c, "mq-1") == 3 and n_annotations(lib_c, "mq-2") == 2
    # ann's file into bob's library leaves bob's annotations alone.
    import_annotations(lib_b, tmp_path / "ann.json")
    assert _slots(lib_b) == _slots(lib_c)
    for lib in (lib_a, lib_b, lib_c):
        lib.close()


def test_reimport_is_idempotent_and_later_dates_win(tmp_path):
    lib_a, lib_c = open_library(tmp_path / "a.sqlite"), open_library(tmp_path / "c.sqlite")
    _annotate_ann(lib_a)
    export_annotations(lib_a, "ann", tmp_path / "v1.json")
    import_annotations(lib_c, tmp_path / "v1.json")
    before = table_digest(lib_c)
    again = import_annotations(lib_c, tmp_path / "v1.json")
    assert (again.added, again.updated, again.unchanged, again.kept) == (0, 0, 4, 0)
    assert table_digest(lib_c) == before

    # ann changes her mind later; the newer file updates, the older one no longer wins.
    document = json.loads((tmp_path / "v1.json").read_text())
    for record in document["annotations"]:
        if record["key"] == "quality":
            record["value"], record["date"] = 2, "2999-01-01T00:00:00Z"
    (tmp_path / "v2.json").write_text(json.dumps(document))
    newer = import_annotations(lib_c, tmp_path / "v2.json")
    assert (newer.updated, newer.unchanged) == (1, 3)
    older = import_annotations(lib_c, tmp_path / "v1.json")
    assert (older.kept, older.unchanged, older.updated) == (1, 3, 0)
    assert AnnotationStore(lib_c, "ann").review(cot_pks(lib_c, "mq-3")[0]).quality == 2
    lib_a.close()
    lib_c.close()


def test_changed_cot_text_and_unknown_samples_are_reported(tmp_path):
    lib_a, lib_c = open_library(tmp_path / "a.sqlite"), open_library(tmp_path / "c.sqlite")
    _annotate_ann(lib_a)
    export_annotations(lib_a, "ann", tmp_path / "ann.json")
    with lib_c.transaction() as conn:
        conn.execute("UPDATE generated_cot SET cot = cot || ' Edited.' WHERE cot_id = 'cot-1'")
        conn.execute("DELETE FROM sample WHERE sample_id = 'mq-3'")
    report = import_annotations(lib_c, tmp_path / "ann.json")
    assert report.ok and report.added == 2
    assert report.reasons() == {"CoT text differs from the library's": 1, "sample not in the library": 1}
    assert "sample mq-3" in next(u.where for u in report.unmatched if u.reason == "sample not in the library")
    assert "2 not matched" in report.summary
    lib_a.close()
    lib_c.close()


def test_bad_files_change_nothing(lib, tmp_path):
    _annotate_ann(lib)
    export_annotations(lib, "ann", tmp_path / "ann.json")
    digest = table_digest(lib)
    cases = {
        "broken.json": '{"format": "thoughtdesk-annotations",\n "version": 1,\n "annotations": [',
        "list.json": "[1, 2, 3]",
        "other.json": json.dumps({"format": "something-else", "items": []}),
        "future.json": json.dumps({"format": FORMAT_NAME, "version": 99, "annotations": []}),
        "shape.json": json.dumps({"med_qa": {"test": "not a list"}}),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        report = import_annotations(lib, tmp_path / name)
        assert not report.ok and name in (report.error or ""), (name, report.error)
        assert report.summary.startswith(str(tmp_path / name))
    assert "line 3" in (import_annotations(lib, tmp_path / "broken.json").error or "")
    assert "unknown annotation format" in (import_annotations(lib, tmp_path / "list.json").error or "")
    assert not import_annotations(lib, tmp_path / "absent.json").ok
    assert not import_annotations(lib, tmp_path / "ann.json", collection="no such").ok

    # A file for samples that are not in the library: nothing matched, each one says why.
    document = json.loads((tmp_path / "ann.json").read_text())
    for record in document["annotations"]:
        record["sample_id"] = "elsewhere-" + record["sample_id"]
    (tmp_path / "foreign.json").write_text(json.dumps(document))
    report = import_annotations(lib, tmp_path / "foreign.json")
    assert report.ok and report.merged == 0 and report.reasons() == {"sample not in the library": 4}
    # strict: one unmatched record and nothing is merged at all.
    document["annotations"][0]["sample_id"] = "mq-1"
    document["annotations"][0]["author"] = "zed"
    (tmp_path / "mixed.json").write_text(json.dumps(document))
    strict = import_annotations(lib, tmp_path / "mixed.json", strict=True)
    assert not strict.ok and "strict" in (strict.error or "")
    dry = import_annotations(lib, tmp_path / "mixed.json", dry_run=True)
    assert dry.ok and dry.added == 1 and "would merge" in dry.summary
    assert table_digest(lib) == digest


def test_a_merge_failing_half_way_rolls_back_everything(lib, tmp_path):
    _annotate_ann(lib)
    export_annotations(lib, "ann", tmp_path / "ann.json")
    document = json.loads((tmp_path / "ann.json").read_text())
    for record in document["annotations"]:
        record["author"] = "bob"
    document["annotations"][-1]["key"] = "poison"
    (tmp_path / "bob.json").write_text(json.dumps(document))
    # A real SQLite trigger makes the last insert fail after three rows were written.
    with lib.transaction() as conn:
        conn.execute(
            "CREATE TRIGGER no_poison BEFORE INSERT ON annotation WHEN NEW.key = 'poison' "
            "BEGIN SELECT RAISE(ABORT, 'poisoned record'); END"
        )
    digest = table_digest(lib)
    report = import_annotations(lib, tmp_path / "bob.json")
    assert not report.ok and report.error is not None
    assert "poisoned record" in report.error and "rolled back" in report.error
    assert report.added == 0
    assert table_digest(lib) == digest


def _thoughtsource_counts(path: Path) -> tuple[int, int, int, set[str]]:
    data = json.loads(path.read_text())
    notes = cots = samples = 0
    authors = set()
    for splits in data.values():
        for items in splits.values():
            for sample in items:
                annotated = [c for c in sample["generated_cot"] if c["annotations"]]
                samples += bool(annotated)
                cots += len(annotated)
                for cot in annotated:
                    notes += len(cot["annotations"])
                    authors |= {a["author"] for a in cot["annotations"]}
    return notes, cots, samples, authors


def _without_annotations(lib: Library) -> None:
    with lib.transaction() as conn:
        conn.execute("DELETE FROM annotation")
        conn.execute("UPDATE sample SET n_annotations = 0")


def test_thoughtsource_annotator_files_import_with_counts(shared, tmp_path):
    lib = Library.open(tmp_path / "ts.sqlite")
    for name in ("annotated_set.json", "cs_davinci_annotated.json"):
        path = shared("thoughtsource", name)
        import_thoughtsource(lib, path, collection=name)
        stored = lib.conn.execute(
            "SELECT count(*) FROM annotation a JOIN generated_cot c ON "
            "a.cot_pk = c.id JOIN sample s ON c.sample_pk = s.id JOIN "
            "collection k ON s.collection_id = k.id WHERE k.name = ?",
            (name,),
        ).fetchone()[0]
        notes, cots, samples, authors = _thoughtsource_counts(path)
        # The annotations came in with the collection: merging the file again adds nothing.
        report = import_annotations(lib, path, collection=name)
        assert report.format == "thoughtsource" and report.ok, report.summary
        assert (report.records, report.unchanged, report.added) == (notes, stored, 0)
    _without_annotations(lib)
    for name in ("annotated_set.json", "cs_davinci_annotated.json"):
        path = shared("thoughtsource", name)
        notes, cots, samples, authors = _thoughtsource_counts(path)
        report = import_annotations(lib, path, collection=name)
        assert report.ok, report.summary
        assert (report.records, report.added, report.unmatched) == (notes, notes, [])
        assert (report.matched_cots, report.matched_samples) == (cots, samples)
        assert set(report.authors) == authors
        total = lib.conn.execute(
            "SELECT sum(n_annotations) FROM sample WHERE collection_id = ?", (lib.require_collection(name),)
        ).fetchone()[0]
        assert total == notes
    # Both files hold the same 11 commonsense samples: without a collection they are ambiguous.
    ambiguous = import_annotations(lib, shared("thoughtsource", "annotated_set.json"))
    assert "sample is in several collections (choose the collection to import into)" in ambiguous.reasons()
    lib.close()


def test_thoughtsource_file_for_another_library_reports_every_record(shared, lib):
    digest = table_digest(lib)
    path = shared("thoughtsource", "annotated_set.json")
    report = import_annotations(lib, path)
    notes, _, _, _ = _thoughtsource_counts(path)
    assert report.ok and report.records == notes and report.merged == 0
    assert report.reasons() == {"sample not in the library": notes}
    assert table_digest(lib) == digest


def test_import_reports_progress_to_the_end(tmp_path):
    """Issue 16, point 12: an annotation import tells how far it is (the CLI draws it)."""
    lib_a, lib_c = open_library(tmp_path / "a.sqlite"), open_library(tmp_path / "c.sqlite")
    _annotate_ann(lib_a)
    export_annotations(lib_a, "ann", tmp_path / "v1.json")
    seen: list[tuple[int, int]] = []
    report = import_annotations(lib_c, tmp_path / "v1.json", progress=lambda done, total: seen.append((done, total)))
    assert report.added == 4
    total = seen[-1][1]
    assert total == 2 * (report.records + report.ratings.records) and seen[-1] == (total, total)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_deeply_nested_file_is_one_clear_error_and_changes_nothing(tmp_path):
    # Found by the importers' fuzz test: Python's JSON decoder recursed once per level and a file
    # nested a few thousand levels deep ended in "internal error (RecursionError)".
    lib = open_library(tmp_path / "lib.thoughtdesk")
    bad = tmp_path / "nested.json"
    bad.write_text('{"format": "thoughtdesk-annotations", "annotations": ' + "[" * 5000 + "]" * 5000 + "}")
    before = table_digest(lib)
    report = import_annotations(lib, bad)  # on the old code: RecursionError
    assert (
        report.error == f"{bad}: is nested too deeply to be an annotations file (arrays or objects within each other)"
    )
    assert report.records == 0 and table_digest(lib) == before
    lib.close()
