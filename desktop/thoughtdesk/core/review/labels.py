"""Label sets: named, ordered labels with colours and number-key shortcuts.

Two sets are seeded by migration ``m004_review`` (which writes its own copy of :data:`BUILTIN_SETS`;
tests/core/library/test_migrations.py keeps the two equal): ThoughtSource's four annotator labels (the
default) and a clinical set. Users add their own; built-in sets can be copied but not deleted.
"""

from __future__ import annotations

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.types import Label, LabelSet

DEFAULT_SET = "ThoughtSource"
CLINICAL_SET = "Clinical"

#: Colours are mid-tone so the GUI can lighten them for the light theme and darken them for
#: the dark one (core/colours.py) and still tell them apart.
BUILTIN_SETS: tuple[LabelSet, ...] = (
    LabelSet(
        DEFAULT_SET,
        (
            Label("Incorrect reasoning", "Incorrect reasoning", "#d9534f", 1),
            Label("Insufficient knowledge", "Insufficient knowledge", "#f0ad4e", 2),
            Label("Incorrect reading comprehension", "Incorrect reading comprehension", "#5bc0de", 3),
            Label("Too verbose", "Too verbose", "#9b59b6", 4),
        ),
        builtin=True,
    ),
    LabelSet(
        CLINICAL_SET,
        (
            Label("Unsafe recommendation", "Unsafe recommendation", "#d9534f", 1),
            Label("Hallucinated fact", "Hallucinated fact", "#e67e22", 2),
            Label("Outdated guideline", "Outdated guideline", "#f1c40f", 3),
            Label("Missed contraindication", "Missed contraindication", "#16a085", 4),
            Label("Wrong dosage", "Wrong dosage", "#2980b9", 5),
            Label("Incorrect reasoning", "Incorrect reasoning", "#8e44ad", 6),
        ),
        builtin=True,
    ),
)


def _insert(conn, label_set: LabelSet, *, builtin: bool) -> int:
    cur = conn.execute("INSERT INTO label_set (name, builtin) VALUES (?, ?)", (label_set.name, int(builtin)))
    set_id = int(cur.lastrowid)
    conn.executemany(
        "INSERT INTO label_set_label (set_id, ordinal, key, name, colour, shortcut) VALUES (?, ?, ?, ?, ?, ?)",
        [(set_id, i, lb.key, lb.name, lb.colour, lb.shortcut) for i, lb in enumerate(label_set.labels)],
    )
    return set_id


def _validate(label_set: LabelSet) -> None:
    if not label_set.name.strip():
        raise ValueError("a label set needs a name")
    keys = [label.key for label in label_set.labels]
    if any(not key.strip() for key in keys):
        raise ValueError(f"label set {label_set.name!r}: every label needs a key")
    if len(set(keys)) != len(keys):
        raise ValueError(f"label set {label_set.name!r}: a label key occurs twice")
    digits = [label.shortcut for label in label_set.labels if label.shortcut is not None]
    if any(d not in range(1, 10) for d in digits):
        raise ValueError(f"label set {label_set.name!r}: shortcuts are the digits 1 to 9")
    if len(set(digits)) != len(digits):
        raise ValueError(f"label set {label_set.name!r}: two labels share a shortcut digit")


def label_sets(library: Library) -> list[LabelSet]:
    """Every label set, built-in first, then by name."""
    conn = library.conn
    sets = conn.execute("SELECT id, name, builtin FROM label_set ORDER BY builtin DESC, id").fetchall()
    out = []
    for set_id, name, builtin in sets:
        labels = tuple(
            Label(r[0], r[1], r[2], r[3])
            for r in conn.execute(
                "SELECT key, name, colour, shortcut FROM label_set_label WHERE set_id = ? ORDER BY ordinal", (set_id,)
            )
        )
        out.append(LabelSet(name, labels, bool(builtin), set_id))
    return out


def label_set(library: Library, name: str = DEFAULT_SET) -> LabelSet:
    """The label set called ``name``; ``KeyError`` naming the sets there are if absent."""
    for found in label_sets(library):
        if found.name == name:
            return found
    names = ", ".join(repr(s.name) for s in label_sets(library))
    raise KeyError(f"no label set named {name!r} (sets: {names})")


def save_label_set(library: Library, label_set: LabelSet) -> LabelSet:
    """Create or replace a user label set by name; built-in sets cannot be replaced."""
    _validate(label_set)
    with library.transaction() as conn:
        row = conn.execute("SELECT id, builtin FROM label_set WHERE name = ?", (label_set.name,)).fetchone()
        if row is not None:
            if row[1]:
                raise ValueError(f"{label_set.name!r} is a built-in label set; save a copy under another name")
            conn.execute("DELETE FROM label_set WHERE id = ?", (row[0],))
        set_id = _insert(conn, label_set, builtin=False)
    return LabelSet(label_set.name, label_set.labels, False, set_id)


def delete_label_set(library: Library, name: str) -> None:
    """Delete a user label set (annotations made with it stay: they store the label key)."""
    with library.transaction() as conn:
        row = conn.execute("SELECT id, builtin FROM label_set WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise KeyError(f"no label set named {name!r}")
        if row[1]:
            raise ValueError(f"{name!r} is a built-in label set and cannot be deleted")
        conn.execute("DELETE FROM label_set WHERE id = ?", (row[0],))
