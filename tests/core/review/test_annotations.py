"""Annotations through ops: toggles, undo/redo, spans across reopen, counters, label sets."""

from __future__ import annotations

import json
import re

import pytest

from tests.core.review.conftest import COLLECTION, cot_pks, n_annotations, open_library
from thoughtdesk.core.datasets.ts_extras import load_with_extras
from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import (
    CLINICAL_SET,
    DEFAULT_SET,
    AnnotationOp,
    AnnotationStore,
    Label,
    LabelSet,
    delete_label_set,
    label_set,
    label_sets,
    save_label_set,
)


class UndoStack:
    """What the Review tab's QUndoStack does with ops, without Qt: push applies, undo reverts."""

    def __init__(self, store: AnnotationStore) -> None:
        self.store = store
        self.done: list[AnnotationOp] = []
        self.undone: list[AnnotationOp] = []

    def do(self, op):
        self.store.apply(op)
        self.done.append(op)
        self.undone.clear()

    def undo(self):
        if not self.done:
            return None
        op = self.done.pop()
        self.store.revert(op)
        self.undone.append(op)
        return op

    def redo(self):
        op = self.undone.pop()
        self.store.apply(op)
        self.done.append(op)


def test_toggle_whole_cot_label_with_undo_and_redo(lib):
    store = AnnotationStore(lib, "ann")
    log = UndoStack(store)
    cot = cot_pks(lib, "mq-1")[1]
    assert store.review(cot).labels == {}

    log.do(store.plan_toggle_label(cot, "Incorrect reasoning"))
    assert store.review(cot).labels == {"Incorrect reasoning": True}
    log.do(store.plan_toggle_label(cot, "Incorrect reasoning"))
    # Off is ThoughtSource's "false", which keeps the fact that ann reviewed the CoT.
    assert store.review(cot).labels == {"Incorrect reasoning": False}
    assert store.slot_value(cot, "Incorrect reasoning") == "false"

    assert log.undo().after == "false"
    assert store.review(cot).labels == {"Incorrect reasoning": True}
    log.undo()
    assert store.review(cot).labels == {}
    assert store.annotations(cot) == []
    assert log.undo() is None and not log.done

    log.redo()
    log.redo()
    assert store.review(cot).labels == {"Incorrect reasoning": False}
    assert not log.undone


def test_ops_are_inverse_pairs_a_qundostack_can_drive(lib):
    store = AnnotationStore(lib, "ann")
    cot = cot_pks(lib, "mq-2")[0]
    op = store.plan_set_quality(cot, 4)
    assert store.slot_value(cot, "quality") is None  # planning writes nothing
    store.apply(op)
    assert store.review(cot).quality == 4
    second = store.set_quality(cot, 2)
    assert (second.before, second.after) == (4, 2)
    store.revert(second)
    assert store.review(cot).quality == 4
    store.apply(second)
    assert store.review(cot).quality == 2  # redo after undo
    store.revert(second)
    store.revert(op)
    assert store.review(cot).quality is None
    with pytest.raises(ValueError, match="1 to 5"):
        store.plan_set_quality(cot, 6)


def test_comment_preferred_and_dates_are_utc(lib):
    store = AnnotationStore(lib, "ann")
    cot = cot_pks(lib, "mq-1")[0]
    store.set_comment(cot, "Good <b>first</b> step")
    store.set_preferred(cot, True)
    review = store.review(cot)
    assert review.comment == "Good <b>first</b> step" and review.preferred
    notes = {n.key: n for n in store.annotations(cot)}
    assert notes["preferred"].value is True  # a JSON boolean, as ThoughtSource writes it
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", n.date) for n in notes.values())
    assert all(n.author == "ann" for n in notes.values())
    store.set_comment(cot, "   ")
    store.set_preferred(cot, False)
    assert not store.review(cot).touched


def test_authors_never_touch_each_others_slots(lib):
    cot = cot_pks(lib, "mq-1")[1]
    ann, bob = AnnotationStore(lib, "ann"), AnnotationStore(lib, "bob")
    ann.toggle_label(cot, "Too verbose")
    bob.toggle_label(cot, "Too verbose")
    bob.toggle_label(cot, "Too verbose")
    assert ann.review(cot).labels == {"Too verbose": True}
    assert bob.review(cot).labels == {"Too verbose": False}
    assert len(ann.annotations(cot)) == 2
    assert [n.author for n in ann.annotations(cot, author="bob")] == ["bob"]


def test_n_annotations_counter_follows_every_change(lib):
    store = AnnotationStore(lib, "ann")
    first, second, _ = cot_pks(lib, "mq-1")
    assert n_annotations(lib, "mq-1") == 0
    ops = [
        store.toggle_label(first, "Incorrect reasoning"),
        store.set_comment(second, "why?"),
        store.toggle_label(second, "Too verbose", store.span(second, 0, 10)),
    ]
    assert n_annotations(lib, "mq-1") == 3
    store.toggle_label(first, "Incorrect reasoning")  # true -> false: same row
    assert n_annotations(lib, "mq-1") == 3
    for op in reversed(ops):
        store.revert(op)
    assert n_annotations(lib, "mq-1") == 0
    assert n_annotations(lib, "mq-2") == 0
    counted = lib.conn.execute("SELECT count(*) FROM annotation").fetchone()[0]
    assert counted == 0


def test_span_labels_survive_close_and_reopen(lib_path):
    lib = open_library(lib_path)
    store = AnnotationStore(lib, "ann")
    cot = cot_pks(lib, "mq-2")[1]  # contains an emoji: offsets are code points
    text = lib.conn.execute("SELECT cot FROM generated_cot WHERE id = ?", (cot,)).fetchone()[0]
    start = text.index("Prescribe")
    span = store.span(cot, start, start + len("Prescribe tetracycline to the child"))
    store.toggle_label(cot, "Unsafe recommendation", span)
    emoji_at = text.index("🦠")
    store.toggle_label(cot, "Hallucinated fact", store.span(cot, emoji_at, emoji_at + 1))
    lib.close()

    reopened = Library.open(lib_path)
    review = AnnotationStore(reopened, "ann").review(cot)
    assert [(key, s.start, s.end, s.text) for key, s in review.spans] == [
        ("Hallucinated fact", emoji_at, emoji_at + 1, "🦠"),
        ("Unsafe recommendation", start, start + 35, "Prescribe tetracycline to the child"),
    ]
    assert review.labels == {}
    store = AnnotationStore(reopened, "ann")
    store.toggle_label(cot, "Hallucinated fact", review.spans[0][1])  # toggling a span removes it
    assert [k for k, _ in store.review(cot).spans] == ["Unsafe recommendation"]
    with pytest.raises(ValueError, match="outside"):
        store.span(cot, 5, len(text) + 1)
    reopened.close()


def test_thoughtsource_export_carries_spans(lib, tmp_path):
    store = AnnotationStore(lib, "ann")
    cot = cot_pks(lib, "mq-3")[1]
    store.toggle_label(cot, "Missed contraindication", store.span(cot, 0, 8))
    out = tmp_path / "export.json"
    export_thoughtsource(lib, COLLECTION, out)
    # The span is ThoughtDesk's extra: in the side file beside the export (ThoughtSource's
    # loader refuses keys its schema lacks), back in its place when read with it.
    assert "span" not in json.loads(out.read_text())["med_qa"]["test"][2]["generated_cot"][1]["annotations"][0]
    exported = load_with_extras(out)
    note = exported["med_qa"]["test"][2]["generated_cot"][1]["annotations"][0]
    assert note["key"] == "Missed contraindication" and note["value"] == "true"
    assert note["span"] == {"start": 0, "end": 8, "text": "Warfarin"}
    other = Library.open(tmp_path / "other.sqlite")
    import_thoughtsource(other, out, collection="again")
    again = cot_pks(other, "mq-3")[1]
    assert AnnotationStore(other, "x").review(again, "ann").spans[0][1].text == "Warfarin"
    other.close()


def test_label_sets_seeded_and_user_sets(lib):
    names = [s.name for s in label_sets(lib)]
    assert names[:2] == [DEFAULT_SET, CLINICAL_SET]
    default = label_set(lib)
    assert [lb.key for lb in default.labels] == [
        "Incorrect reasoning",
        "Insufficient knowledge",
        "Incorrect reading comprehension",
        "Too verbose",
    ]
    fourth = default.by_shortcut(4)
    assert fourth is not None and fourth.key == "Too verbose" and default.by_shortcut(9) is None
    clinical = [lb.key for lb in label_set(lib, CLINICAL_SET).labels]
    assert {
        "Unsafe recommendation",
        "Hallucinated fact",
        "Outdated guideline",
        "Missed contraindication",
        "Wrong dosage",
    } <= set(clinical)

    mine = LabelSet("Mine", (Label("Wrong unit", "Wrong unit", "#123456", 1),))
    save_label_set(lib, mine)
    save_label_set(lib, LabelSet("Mine", (Label("A", "A", shortcut=1), Label("B", "B", shortcut=2))))
    assert [lb.key for lb in label_set(lib, "Mine").labels] == ["A", "B"]
    with pytest.raises(ValueError, match="share a shortcut"):
        save_label_set(lib, LabelSet("Bad", (Label("A", "A", shortcut=1), Label("B", "B", shortcut=1))))
    with pytest.raises(ValueError, match="built-in"):
        delete_label_set(lib, DEFAULT_SET)
    delete_label_set(lib, "Mine")
    with pytest.raises(KeyError, match="Mine"):
        label_set(lib, "Mine")


def test_store_needs_an_author(lib):
    with pytest.raises(ValueError, match="author"):
        AnnotationStore(lib, "  ")


def test_a_samples_annotations_read_once_give_the_same_reviews(lib):
    from thoughtdesk.core.review import review_from

    cots = cot_pks(lib, "mq-1")
    ann, bob = AnnotationStore(lib, "ann"), AnnotationStore(lib, "bob")
    ann.toggle_label(cots[0], "Too verbose")
    ann.toggle_label(cots[0], "Incorrect reasoning", ann.span(cots[0], 0, 5))
    ann.set_comment(cots[0], "check the dose")
    ann.set_quality(cots[1], 4)
    bob.set_preferred(cots[1], True)
    bob.toggle_label(cots[0], "Too verbose")
    sample_pk = lib.conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (cots[0],)).fetchone()[0]
    notes = ann.sample_annotations(sample_pk)
    for store in (ann, bob):
        for cot in cots:
            assert review_from(cot, store.author, notes.get(cot, [])) == store.review(cot)
    assert review_from(cots[0], "ann", notes[cots[0]]).spans  # the span label is there
