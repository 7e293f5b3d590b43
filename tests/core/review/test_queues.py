"""Review queues (seeded draw, progress, resume) and blind mode."""

from __future__ import annotations

import pytest

from tests.core.review.conftest import COLLECTION, cot_pks, open_library
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import (
    AnnotationStore,
    QueueFilter,
    blind_labels,
    blind_order,
    create_queue,
    draw_samples,
    list_queues,
    load_queue,
    mark_done,
    set_position,
)


def _sample_ids(lib, pks):
    return [lib.conn.execute("SELECT sample_id FROM sample WHERE id = ?", (pk,)).fetchone()[0] for pk in pks]


def test_queue_draw_is_deterministic_and_follows_the_filter(lib, tmp_path):
    spec = QueueFilter(dataset="med_qa", has_incorrect=True)
    queue = create_queue(lib, "medqa", COLLECTION, spec, size=3, seed=7, reviewer="ann")
    drawn = _sample_ids(lib, queue.sample_pks)
    assert len(drawn) == 3 and len(set(drawn)) == 3
    # mq-5 has no CoT (so no incorrect one); cs-1 is another dataset.
    assert set(drawn) <= {"mq-1", "mq-2", "mq-3", "mq-4"}
    # The same settings in another library holding the same file draw the same samples.
    other = open_library(tmp_path / "other.sqlite")
    again = create_queue(other, "medqa", COLLECTION, spec, size=3, seed=7, reviewer="ann")
    assert _sample_ids(other, again.sample_pks) == drawn
    other.close()
    # Other seeds give other draws (some of 20 seeds must differ from seed 7's).
    cid = lib.require_collection(COLLECTION)
    draws = {tuple(draw_samples(lib, cid, spec, 3, seed)) for seed in range(20)}
    assert len(draws) > 1
    everything = draw_samples(lib, cid, QueueFilter(has_cots=False), None, 1)
    assert len(everything) == 6
    with pytest.raises(ValueError, match="already exists"):
        create_queue(lib, "medqa", COLLECTION, spec, size=3, seed=7)
    with pytest.raises(ValueError, match="no sample"):
        create_queue(lib, "none", COLLECTION, QueueFilter(dataset="absent"), size=3)


def test_not_annotated_by_filter(lib):
    store = AnnotationStore(lib, "ann")
    store.toggle_label(cot_pks(lib, "mq-1")[0], "Too verbose")
    cid = lib.require_collection(COLLECTION)
    left = _sample_ids(lib, draw_samples(lib, cid, QueueFilter(not_annotated_by="ann"), None, 0))
    assert sorted(left) == ["cs-1", "mq-2", "mq-3", "mq-4"]


def test_progress_and_resume_survive_reopening(lib_path):
    lib = open_library(lib_path)
    queue = create_queue(lib, "all", COLLECTION, QueueFilter(), size=None, seed=3, reviewer="ann")
    assert queue.total == 5 and queue.n_done == 0 and queue.resume_index() == 0
    first, second, third = queue.sample_pks[:3]
    mark_done(lib, queue.id, first)
    mark_done(lib, queue.id, second)
    set_position(lib, queue.id, 1)
    lib.close()

    lib = Library.open(lib_path)
    queue = load_queue(lib, "all")
    assert queue.progress_text == "2 / 5 done"
    assert queue.position == 1
    assert queue.resume_index() == 2  # position 1 is done: continue at the next one not done
    mark_done(lib, queue.id, second, done=False)
    assert load_queue(lib, queue.id).resume_index() == 1
    for pk in queue.sample_pks:
        mark_done(lib, queue.id, pk)
    finished = load_queue(lib, queue.id)
    assert finished.n_done == finished.total and finished.resume_index() == 1
    assert [q.name for q in list_queues(lib)] == ["all"]
    with pytest.raises(KeyError):
        mark_done(lib, queue.id, 10_000)
    lib.close()


def test_blind_order_is_stable_per_reviewer_and_differs_between_reviewers():
    cots = list(range(100, 108))
    ann = blind_order(cots, "ann", 5)
    assert sorted(ann) == cots
    assert blind_order(list(reversed(cots)), "ann", 5) == ann  # input order does not matter
    assert blind_order(cots, "ann", 5) == ann
    others = [blind_order(cots, name, 5) for name in ("bob", "cho", "dee")]
    assert any(order != ann for order in others)
    # ...and per sample: the same reviewer sees another order on another sample.
    assert any(blind_order(cots, "ann", s) != ann for s in (6, 7, 8))
    # 8! orders: a shuffle that ignored the reviewer would make all four equal.
    assert len({tuple(o) for o in [ann, *others]}) >= 3


def test_blind_labels_name_cots_by_display_position():
    assert blind_labels([9, 4]) == {9: "CoT 1", 4: "CoT 2"}
