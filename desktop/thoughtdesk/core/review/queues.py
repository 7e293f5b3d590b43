"""Review queues: a fixed, seeded subset of samples worked through in order, and blind mode.

A queue is drawn once, when it is created, and stored (the ordered sample keys), so it stays the
same whatever is imported later; the draw itself is deterministic: the same library, filter,
size and seed give the same samples in the same order.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.annotations import utc_now


@dataclass(frozen=True)
class QueueFilter:
    """Which samples of a collection a queue may draw. ``None`` means no restriction.

    ``has_incorrect``: at least one generated CoT's answer was judged incorrect;
    ``has_cots``: at least one generated CoT; ``answer_type``: ThoughtSource ``type``;
    ``not_annotated_by``: no annotation by this author yet.
    """

    dataset: str | None = None
    split: str | None = None
    has_incorrect: bool = False
    has_cots: bool = True
    answer_type: str | None = None
    not_annotated_by: str | None = None


@dataclass
class ReviewQueue:
    """A stored queue. ``sample_pks`` in review order; ``done`` the keys marked done;
    ``position`` the index (0-based) the reviewer was last at."""

    id: int
    name: str
    collection_id: int
    reviewer: str
    seed: int
    filter: QueueFilter
    blind: bool
    created: str
    position: int
    sample_pks: list[int] = field(default_factory=list)
    done: set[int] = field(default_factory=set)

    @property
    def total(self) -> int:
        return len(self.sample_pks)

    @property
    def n_done(self) -> int:
        return len(self.done)

    @property
    def progress_text(self) -> str:
        """``"12 / 50 done"``."""
        return f"{self.n_done} / {self.total} done"

    def resume_index(self) -> int:
        """Where to continue: the stored position if that sample is not done, otherwise the
        first sample not done after it (wrapping round); the stored position when all are done."""
        if not self.sample_pks:
            return 0
        start = min(max(self.position, 0), self.total - 1)
        for step in range(self.total):
            index = (start + step) % self.total
            if self.sample_pks[index] not in self.done:
                return index
        return start


def _candidates(library: Library, collection_id: int, spec: QueueFilter) -> list[int]:
    clauses = ["s.collection_id = ?"]
    params: list = [collection_id]
    if spec.dataset is not None:
        clauses.append("s.dataset = ?")
        params.append(spec.dataset)
    if spec.split is not None:
        clauses.append("s.split = ?")
        params.append(spec.split)
    if spec.answer_type is not None:
        clauses.append("s.type = ?")
        params.append(spec.answer_type)
    if spec.has_cots:
        clauses.append("s.n_cots > 0")
    if spec.has_incorrect:
        clauses.append("s.n_incorrect > 0")
    if spec.not_annotated_by is not None:
        clauses.append(
            "NOT EXISTS (SELECT 1 FROM annotation a JOIN generated_cot c ON a.cot_pk = c.id "
            "WHERE c.sample_pk = s.id AND a.author = ?)"
        )
        params.append(spec.not_annotated_by)
    # Stored order, not row keys: the same file imported into another library draws the same.
    rows = library.conn.execute(
        f"SELECT s.id FROM sample s WHERE {' AND '.join(clauses)} ORDER BY s.dataset, s.split, s.position", params
    ).fetchall()
    return [r[0] for r in rows]


def draw_samples(library: Library, collection_id: int, spec: QueueFilter, size: int | None, seed: int) -> list[int]:
    """The sample keys a queue with these settings holds, in review order (no writes).

    ``size`` ``None`` or larger than the matches takes them all (shuffled by ``seed``).
    """
    candidates = _candidates(library, collection_id, spec)
    count = len(candidates) if size is None else max(0, min(size, len(candidates)))
    return random.Random(seed).sample(candidates, count)


def create_queue(
    library: Library,
    name: str,
    collection: str,
    spec: QueueFilter | None = None,
    size: int | None = 50,
    seed: int = 0,
    reviewer: str = "",
    blind: bool = False,
) -> ReviewQueue:
    """Draw and store a queue over ``collection`` (by name); ``ValueError`` if the name is taken
    or no sample matches. ``size`` in samples; ``seed`` any int."""
    name = name.strip()
    if not name:
        raise ValueError("a review queue needs a name")
    spec = spec or QueueFilter()
    collection_id = library.require_collection(collection)
    if library.conn.execute("SELECT 1 FROM review_queue WHERE name = ?", (name,)).fetchone():
        raise ValueError(f"a review queue named {name!r} already exists")
    pks = draw_samples(library, collection_id, spec, size, seed)
    if not pks:
        raise ValueError(f"no sample of collection {collection!r} matches the queue's filter ({_describe(spec)})")
    with library.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO review_queue (name, collection_id, spec, seed, reviewer, blind, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (name, collection_id, json.dumps(asdict(spec)), seed, reviewer, int(blind), utc_now()),
        )
        queue_id = cur.lastrowid
        if queue_id is None:  # sqlite3 sets it after every INSERT; this narrows the type
            raise RuntimeError("the review queue was not inserted")
        conn.executemany(
            "INSERT INTO review_queue_item (queue_id, ordinal, sample_pk) VALUES (?, ?, ?)",
            [(queue_id, i, pk) for i, pk in enumerate(pks)],
        )
    return load_queue(library, queue_id)


def _describe(spec: QueueFilter) -> str:
    parts = [f"{k}={v!r}" for k, v in asdict(spec).items() if v not in (None, False)]
    return ", ".join(parts) or "no restriction"


def load_queue(library: Library, queue: int | str) -> ReviewQueue:
    """A stored queue by id or name; ``KeyError`` if there is none."""
    column = "id" if isinstance(queue, int) else "name"
    row = library.conn.execute(
        "SELECT id, name, collection_id, reviewer, seed, spec, blind, created, position "
        f"FROM review_queue WHERE {column} = ?",
        (queue,),
    ).fetchone()
    if row is None:
        raise KeyError(f"no review queue {queue!r}")
    items = library.conn.execute(
        "SELECT sample_pk, done FROM review_queue_item WHERE queue_id = ? ORDER BY ordinal", (row[0],)
    ).fetchall()
    return ReviewQueue(
        id=row[0],
        name=row[1],
        collection_id=row[2],
        reviewer=row[3],
        seed=row[4],
        filter=QueueFilter(**json.loads(row[5])),
        blind=bool(row[6]),
        created=row[7],
        position=row[8],
        sample_pks=[r[0] for r in items],
        done={r[0] for r in items if r[1]},
    )


def list_queues(library: Library, collection_id: int | None = None) -> list[ReviewQueue]:
    """Every stored queue (of one collection if given), oldest first."""
    sql = "SELECT id FROM review_queue"
    params: tuple = ()
    if collection_id is not None:
        sql += " WHERE collection_id = ?"
        params = (collection_id,)
    return [load_queue(library, r[0]) for r in library.conn.execute(sql + " ORDER BY id", params)]


def set_position(library: Library, queue_id: int, position: int) -> None:
    """Remember where the reviewer is (0-based index into the queue)."""
    with library.transaction() as conn:
        conn.execute("UPDATE review_queue SET position = ? WHERE id = ?", (position, queue_id))


def mark_done(library: Library, queue_id: int, sample_pk: int, done: bool = True) -> None:
    """Mark one sample of the queue done (or not done again); time stamped in UTC."""
    with library.transaction() as conn:
        cur = conn.execute(
            "UPDATE review_queue_item SET done = ?, done_at = ? WHERE queue_id = ? AND sample_pk = ?",
            (int(done), utc_now() if done else None, queue_id, sample_pk),
        )
        if cur.rowcount == 0:
            raise KeyError(f"sample {sample_pk} is not in review queue {queue_id}")


def delete_queue(library: Library, queue_id: int) -> None:
    """Delete a queue (its annotations stay)."""
    with library.transaction() as conn:
        conn.execute("DELETE FROM review_queue WHERE id = ?", (queue_id,))


# Blind mode ------------------------------------------------------------------------------


def blind_order(cot_pks: list[int], reviewer: str, sample_pk: int) -> list[int]:
    """The CoTs of a sample in the order ``reviewer`` sees them in blind mode.

    Deterministic: a shuffle seeded by a SHA-256 of (reviewer, sample), applied to the keys
    sorted, so the same reviewer always sees the same order (whatever order is passed in) and
    different reviewers see different ones.
    """
    digest = hashlib.sha256(f"{reviewer}\x00{sample_pk}".encode()).digest()
    order = sorted(cot_pks)
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def blind_labels(ordered_cot_pks: list[int]) -> dict[int, str]:
    """Anonymous names ("CoT 1", "CoT 2", ...) by display position, hiding model and prompt."""
    return {pk: f"CoT {index}" for index, pk in enumerate(ordered_cot_pks, start=1)}
