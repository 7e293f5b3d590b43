"""One undo model for every review edit (issue 28, point 16): labels, span labels, comment,
preferred, quality, explanation ratings, flaw dimensions, critique ratings, step labels and
pairwise preferences all go through one kind of undo record on one stack, with the same
Ctrl+Z / Ctrl+Shift+Z. Undo and redo put back exactly the rows that were stored (ids, dates,
positions), survive a data refresh, leave other reviewers' rows alone and refuse, in one line,
to overwrite a write another process made since. Everything is read back through a second
connection to the real library file."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest
from PySide6.QtCore import Qt

from tests.ui.review.conftest import REVIEWER, Session
from tests.ui.review.test_critique_rating import seed_critiques
from tests.ui.review.test_waiting_writer import OtherWriter
from thoughtdesk.core.critiques import set_critique_rating, set_explanation_rating
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.annotations import write_slot
from thoughtdesk.core.review.preferences import set_preference
from thoughtdesk.core.settings.registry import PAIRWISE_BLIND
from thoughtdesk.core.steps import changes
from thoughtdesk.core.steps.split import cot_steps
from thoughtdesk.core.steps.store import StepTarget
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.settings.options import write

CTRL, SHIFT, ALT = (
    Qt.KeyboardModifier.ControlModifier,
    Qt.KeyboardModifier.ShiftModifier,
    Qt.KeyboardModifier.AltModifier,
)
OLD = "2020-01-02T03:04:05Z"
TABLES = ("annotation", "explanation_rating", "critique_rating", "pairwise_preference", "step_label")
OTHER = "bob"


def dump(path) -> dict[str, list[tuple]]:
    """Every row of the review tables (every column, by id) and each sample's annotation count.
    A step list's ``time_ms`` is left out: the tab adds the time spent while the Steps tab is
    shown (recorded, not an edit; an undo keeps it)."""
    with Library.open(path) as library:
        out = {}
        for table in TABLES:
            cursor = library.conn.execute(f"SELECT * FROM {table} ORDER BY id")
            names = [d[0] for d in cursor.description]
            out[table] = [
                tuple(v for n, v in zip(names, row, strict=True) if n != "time_ms") for row in cursor.fetchall()
            ]
        out["sample.n_annotations"] = library.conn.execute(
            "SELECT id, n_annotations FROM sample ORDER BY id"
        ).fetchall()
    return out


def seed_reviews(path) -> None:
    """Earlier reviews by the reviewer and by bob on every CoT (old dates): a label, a rating with a
    flaw dimension, a rating of each critique, a step rating, a tie on every pair of a sample."""
    with Library.open(path) as library:
        samples = [r[0] for r in library.conn.execute("SELECT id FROM sample ORDER BY id")]
        stored = [load_sample(library, pk, annotations=False) for pk in samples]
        with library.transaction() as conn:
            for sample in stored:
                assert sample is not None
                pks = list(sample.cot_pks)
                for author in (REVIEWER, OTHER):
                    for cot_pk, cot in zip(pks, sample.sample.generated_cot, strict=True):
                        write_slot(conn, cot_pk, author, "Incorrect reasoning", None, "false", OLD)
                        set_explanation_rating(conn, cot_pk, author, 1, ("irrelevant",))
                        for (critique_pk,) in conn.execute("SELECT id FROM critique WHERE cot_pk = ?", (cot_pk,)):
                            set_critique_rating(conn, critique_pk, author, 1)
                        target = StepTarget(sample.pk, cot_pk, "cot")
                        changes.rate(conn, target, author, cot_steps(cot.cot, cot.extra)[0], -1).apply(conn)
                    for i, a in enumerate(pks):
                        for b in pks[i + 1 :]:
                            set_preference(conn, author, a, b, None, date=OLD)
                conn.execute(
                    "UPDATE sample SET n_annotations = (SELECT count(*) FROM annotation a JOIN generated_cot c "
                    "ON a.cot_pk = c.id WHERE c.sample_pk = sample.id)"
                )
            for table, column in (
                ("explanation_rating", "created"),
                ("critique_rating", "created"),
                ("step_label", "date"),
            ):
                conn.execute(f"UPDATE {table} SET {column} = ?", (OLD,))


@pytest.fixture
def reviewed(qtbot, library_path):
    """The Review tab on a library with critiques and earlier reviews; pairwise verdicts open."""
    seed_critiques(library_path)
    seed_reviews(library_path)
    write(PAIRWISE_BLIND, False)
    opened = Session(qtbot, library_path)
    yield opened
    opened.close()


def _comment(session: Session) -> None:
    session.key(Qt.Key.Key_C)
    dialog = session.view.edits.comment_dialog
    assert dialog is not None
    dialog.editor.setPlainText("Skips the X-ray")
    dialog.accept()


def _span(session: Session) -> None:
    panel = session.view.current_panel()
    assert panel is not None
    text = panel.cot.text
    start = text.index("fever and cough")
    panel.select_range(start, start + len("fever and cough"))
    session.key(Qt.Key.Key_3)


def keys(*pressed: tuple) -> Callable[[Session], None]:
    def press(session: Session) -> None:
        for key in pressed:
            session.key(*key)

    return press


#: Each kind of edit the Review tab makes: what the reviewer does, the table it writes.
EDITS: dict[str, tuple[Callable[[Session], None], str]] = {
    "label": (keys((Qt.Key.Key_1,)), "annotation"),
    "span label": (_span, "annotation"),
    "comment": (_comment, "annotation"),
    "preferred": (keys((Qt.Key.Key_S,)), "annotation"),
    "quality": (keys((Qt.Key.Key_4, ALT)), "annotation"),
    "explanation score": (keys((Qt.Key.Key_E,), (Qt.Key.Key_4,)), "explanation_rating"),
    "flaw dimension": (keys((Qt.Key.Key_D,), (Qt.Key.Key_2,)), "explanation_rating"),
    "critique rating": (keys((Qt.Key.Key_R,), (Qt.Key.Key_3,)), "critique_rating"),
    "step label": (keys((Qt.Key.Key_Plus,)), "step_label"),
    "first error": (keys((Qt.Key.Key_X,)), "step_label"),
    "pairwise preference": (keys((Qt.Key.Key_BracketRight,)), "pairwise_preference"),
}


@pytest.mark.parametrize("kind", list(EDITS))
def test_every_edit_is_undone_and_redone_exactly_on_one_stack(reviewed, kind) -> None:
    session, view = reviewed, reviewed.view
    edit, table = EDITS[kind]
    start = dump(session.path)
    edit(session)
    edited = dump(session.path)
    assert edited[table] != start[table], f"{kind} wrote nothing"
    changed = [t for t in TABLES if edited[t] != start[t]]
    assert changed == [table]
    assert view.undo_stack.count() == 1
    session.key(Qt.Key.Key_Z, CTRL)
    assert dump(session.path) == start  # exactly: ids, dates, positions, counts
    session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    assert dump(session.path) == edited
    session.key(Qt.Key.Key_Z, CTRL)
    assert dump(session.path) == start
    session.key(Qt.Key.Key_Y, CTRL)  # Ctrl+Y redoes too
    assert dump(session.path) == edited
    # One kind of undo record on the one stack, whatever was edited.
    from thoughtdesk.ui.review.commands import ReviewCommand

    command = view.undo_stack.command(0)
    assert type(command) is ReviewCommand and command.edit is not None and command.edit.slot.author == REVIEWER


def test_mixed_edits_undone_three_times_restore_the_library_exactly(reviewed) -> None:
    session, view = reviewed, reviewed.view
    start = dump(session.path)
    session.key(Qt.Key.Key_E)  # a rating,
    session.key(Qt.Key.Key_3)
    session.key(Qt.Key.Key_1)  # a label,
    session.key(Qt.Key.Key_Plus)  # a step label
    edited = dump(session.path)
    assert all(edited[t] != start[t] for t in ("annotation", "explanation_rating", "step_label"))
    # A data refresh (another part of the window changed samples) between the edits and the undo.
    session.window.notify_data_changed(DataChanges(samples=True, annotations=True))
    view.reload()
    for _ in range(3):
        session.key(Qt.Key.Key_Z, CTRL)
    assert dump(session.path) == start
    assert not view.undo_stack.canUndo()
    for _ in range(3):
        session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    assert dump(session.path) == edited


def _bob_writes_everything(path, cot_pk: int) -> None:
    with Library.open(path) as library, library.transaction() as conn:
        write_slot(conn, cot_pk, OTHER, "Too verbose", None, "true", "2026-01-01T00:00:00Z")
        set_explanation_rating(conn, cot_pk, OTHER, 5, ())
        sample_pk = conn.execute("SELECT sample_pk FROM generated_cot WHERE id = ?", (cot_pk,)).fetchone()[0]
        conn.execute("UPDATE step_label SET first_error = -1 WHERE author = ? AND cot_pk = ?", (OTHER, cot_pk))
        conn.execute("UPDATE pairwise_preference SET preferred_cot_pk = first_cot_pk WHERE author = ?", (OTHER,))
        conn.execute("UPDATE critique_rating SET score = 0 WHERE author = ?", (OTHER,))
        assert sample_pk is not None


def test_undo_leaves_another_reviewers_newer_rows_alone(reviewed) -> None:
    session, view = reviewed, reviewed.view
    cot = view.current_cot_pk()
    start = dump(session.path)
    for edit, _table in EDITS.values():
        edit(session)
    _bob_writes_everything(session.path, cot)
    bobs = dump(session.path)
    while view.undo_stack.canUndo():
        session.key(Qt.Key.Key_Z, CTRL)
    now = dump(session.path)
    for table in TABLES:
        mine = [r for r in now[table] if REVIEWER in r]
        assert mine == [r for r in start[table] if REVIEWER in r], table
        theirs = [r for r in now[table] if OTHER in r]
        assert theirs == [r for r in bobs[table] if OTHER in r], table


#: Another ThoughtDesk process (a child Python) writes the reviewer's own slot.
CHILD = """
import json, sys
from thoughtdesk.core.critiques import set_critique_rating, set_explanation_rating
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review.annotations import write_slot
from thoughtdesk.core.review.preferences import set_preference

path, kind, author, cot, other = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
with Library.open(path) as library, library.transaction() as conn:
    if kind == "label":
        write_slot(conn, cot, author, "Incorrect reasoning", None, "false", "2026-05-05T00:00:00Z")
    elif kind == "explanation score":
        set_explanation_rating(conn, cot, author, 0, ())
    elif kind == "critique rating":
        set_critique_rating(conn, other, author, 0)
    elif kind == "step label":
        conn.execute("UPDATE step_label SET first_error = -1 WHERE author = ? AND cot_pk = ?", (author, cot))
    else:
        a, b = sorted(other)
        set_preference(conn, author, a, b, a, blind=False)
"""


def _same_slot_elsewhere(kind: str) -> Callable[[Session], None]:
    """Another process writes the reviewer's own slot that ``kind``'s edit changed."""

    def write(session: Session) -> None:
        view = session.view
        cot = view.current_cot_pk()
        assert cot is not None
        other: object = None
        if kind == "critique rating":
            critique = view.rating_panel.critique_list.focused()
            assert critique is not None
            other = critique.pk
        elif kind == "pairwise preference":
            pair = view.preferences.pair()
            assert pair is not None
            other = list(pair[:2])
        argv = [sys.executable, "-c", CHILD, str(session.path), kind, REVIEWER, str(cot), json.dumps(other)]
        subprocess.run(argv, check=True, timeout=120)

    return write


@pytest.mark.parametrize("kind", ["label", "explanation score", "critique rating", "step label", "pairwise preference"])
def test_undo_never_overwrites_a_newer_write_of_another_process(reviewed, kind) -> None:
    session, view = reviewed, reviewed.view
    messages: list[str] = []
    view.message.connect(messages.append)
    EDITS["quality"][0](session)  # an earlier edit of another slot, undone as usual below
    edit, _table = EDITS[kind]
    edit(session)
    _same_slot_elsewhere(kind)(session)
    theirs = dump(session.path)
    session.key(Qt.Key.Key_Z, CTRL)
    assert dump(session.path) == theirs  # nothing overwritten
    refusal = [m for m in messages if "not undone" in m]
    assert len(refusal) == 1 and "\n" not in refusal[0]
    assert "was changed since" in refusal[0] and REVIEWER in refusal[0]
    # The refused entry leaves the stack (it cannot be undone any more); the earlier edit can.
    assert view.undo_stack.count() == 1 and view.undo_stack.canUndo()
    session.key(Qt.Key.Key_Z, CTRL)
    assert dump(session.path)["annotation"] != theirs["annotation"]  # the quality score went
    assert not view.undo_stack.canUndo()


def test_redo_never_overwrites_a_newer_write_of_another_process(reviewed) -> None:
    session, view = reviewed, reviewed.view
    messages: list[str] = []
    view.message.connect(messages.append)
    EDITS["explanation score"][0](session)
    session.key(Qt.Key.Key_Z, CTRL)
    _same_slot_elsewhere("explanation score")(session)
    theirs = dump(session.path)
    session.key(Qt.Key.Key_Z, CTRL | SHIFT)
    assert dump(session.path) == theirs
    assert any("not redone" in m and "was changed since" in m for m in messages)
    assert not view.undo_stack.canRedo() and view.undo_stack.count() == 0
    assert "my rating 0/5" in view.current_panel().note.text()  # what the other process wrote is shown


def test_a_step_label_waits_for_another_process_and_undoes_as_usual(session, qtbot) -> None:
    view = session.view
    start = dump(session.path)
    with OtherWriter(session.path):
        session.key(Qt.Key.Key_Plus)  # the library is locked: queued, not lost
        session.key(Qt.Key.Key_E)  # and a rating behind it, in order
        session.key(Qt.Key.Key_2)
        assert dump(session.path) == start
    qtbot.waitUntil(view.later.is_idle, timeout=20000)
    written = dump(session.path)
    assert len(written["step_label"]) == 1 and len(written["explanation_rating"]) == 1
    assert view.undo_stack.count() == 2
    session.key(Qt.Key.Key_Z, CTRL)
    session.key(Qt.Key.Key_Z, CTRL)
    assert dump(session.path) == start
