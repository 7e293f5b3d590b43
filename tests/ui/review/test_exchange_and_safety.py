"""Importing a colleague's annotations (merge report, no collision), the agreement table, and
safe rendering of markup in CoTs, highlights, diffs, span lists, comments and reports."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt

from tests.helpers.window import last_message
from tests.ui.review.conftest import COLLECTION, REVIEWER, make_library
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import AnnotationStore, agreement_table, export_annotations
from thoughtdesk.ui.qt import QFileDialog
from thoughtdesk.ui.review.dialogs import AgreementDialog, MergeOutcomeDialog

HOSTILE = ["<b>abnormal</b>", "<img src=x>", '<a href="file:///etc/passwd">this</a>', "&amp;"]
COMMENT = 'See <img src=x> and <a href="file:///etc/passwd">this</a> &amp; <b>that</b>'


def colleague_file(tmp_path, cot_ids: list[str]):
    """bob's annotations, made in his own library on the same collection, exported to a file."""
    path = make_library(tmp_path / "bob.thoughtdesk")
    with Library.open(path) as library:
        store = AnnotationStore(library, "bob")
        pks = dict(library.conn.execute("SELECT cot_id, id FROM generated_cot").fetchall())
        for cot_id in cot_ids:
            store.toggle_label(pks[cot_id], "Incorrect reasoning")
        store.set_comment(pks[cot_ids[0]], COMMENT)
        target = tmp_path / "bob.json"
        export_annotations(library, "bob", target)
    return target


def document_is_inert(document) -> bool:
    """No anchor, no image, in any fragment of a Qt document."""
    block = document.begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            char_format = iterator.fragment().charFormat()
            if char_format.isAnchor() or char_format.isImageFormat() or char_format.anchorHref():
                return False
            iterator += 1
        block = block.next()
    return True


def test_import_shows_the_report_and_keeps_both_reviewers(session, tmp_path, qtbot) -> None:
    view = session.view
    cot_pk = view.current_cot_pk()
    session.key(Qt.Key.Key_1)  # alice: Incorrect reasoning on the first CoT
    with Library.open(session.path) as library:
        cot_ids = [
            r[0]
            for r in library.conn.execute(
                "SELECT cot_id FROM generated_cot WHERE sample_pk = ? ORDER BY position", (view.stored.pk,)
            )
        ]
    path = colleague_file(tmp_path, cot_ids[:2])
    with qtbot.waitSignal(session.controller.annotations_imported, timeout=10000) as imported:
        session.controller.import_file(path)
    report = imported.args[0]
    assert report.ok and report.added == 3 and report.authors == ["bob"]
    dialog = session.window.findChildren(MergeOutcomeDialog)[-1]
    text = dialog.view.toPlainText()
    assert dialog.isVisible() and "3 added" in text and "Authors merged: bob" in text
    # No collision: alice's label and bob's on the same CoT are both stored.
    assert session.review(cot_pk).labels == {"Incorrect reasoning": True}
    assert session.review(cot_pk, "bob").labels == {"Incorrect reasoning": True}
    others = view.panel.others.toPlainText()
    assert "bob: Incorrect reasoning = true" in others and COMMENT in others  # literally

    # The agreement table: computed by the core, shown as it is.
    session.controller.show_agreement()
    qtbot.waitUntil(lambda: bool(session.window.findChildren(AgreementDialog)), timeout=10000)
    with Library.open(session.path) as library:
        expected = {row.label: row for row in agreement_table(library, COLLECTION)}
    table = session.window.findChildren(AgreementDialog)[-1]
    shown = {table.cell(r, 0): r for r in range(table.table.rowCount())}
    assert set(shown) == set(expected) == {"Incorrect reasoning"}
    row = expected["Incorrect reasoning"]
    r = shown["Incorrect reasoning"]
    # Only the first CoT was rated by both (alice left nothing on the second): one item, agreed.
    assert table.cell(r, 1) == str(row.n_items) == "1"
    assert table.cell(r, 2) == "alice, bob"
    assert table.cell(r, 3) == ("—" if row.cohen is None else f"{row.cohen:.3f}")
    assert table.cell(r, 6) == f"{row.percent_agreement:.1f}" == "100.0"


def test_a_bad_file_is_reported_and_changes_nothing(session, tmp_path, qtbot) -> None:
    session.key(Qt.Key.Key_1)
    with Library.open(session.path) as library:
        before = library.conn.execute("SELECT * FROM annotation ORDER BY id").fetchall()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "someone-elses-annotations", "items": []}), encoding="utf-8")
    with qtbot.waitSignal(session.controller.annotations_imported, timeout=10000):
        session.controller.import_file(bad)
    text = session.window.findChildren(MergeOutcomeDialog)[-1].view.toPlainText()
    assert "nothing imported" in text and "someone-elses-annotations" in text and str(bad) in text
    with Library.open(session.path) as library:
        assert library.conn.execute("SELECT * FROM annotation ORDER BY id").fetchall() == before


def test_markup_is_shown_literally_everywhere(session, qtbot) -> None:
    view = session.view
    index = next(i for i, p in enumerate(view.compare.panels) if "<img src=x>" in str(p.cot.text))
    panel = view.compare.panels[index]
    view.compare.set_current(index)
    view._show_current()
    text = panel.cot.text
    # The CoT, with its highlights: exactly the source text, nothing interpreted.
    assert panel.text_view.document().toPlainText() == text
    assert document_is_inert(panel.text_view.document())
    for piece in HOSTILE:
        assert piece in panel.text_view.document().toPlainText()
    # A span label over the markup: highlighted, still literal; listed literally.
    start = text.index("<img src=x>")
    end = text.index("</a>") + len("</a>")
    panel.select_range(start, end)
    session.key(Qt.Key.Key_4)
    [(key, span)] = session.review(view.current_cot_pk()).spans
    assert span.text == text[start:end] and key == "Too verbose"
    assert panel.text_view.document().toPlainText() == text and document_is_inert(panel.text_view.document())
    assert "<img src=x>" in view.panel.span_list.item(0).text()
    # The word diff against the hostile CoT.
    view.compare.show_diff(1, index)
    assert view.compare.diff.b.document().toPlainText() == text
    assert document_is_inert(view.compare.diff.b.document())
    # A comment full of markup, in the panel and on the panel's note.
    session.key(Qt.Key.Key_C)
    qtbot.keyClicks(view.edits.comment_dialog.editor, COMMENT)
    qtbot.keyClick(view.edits.comment_dialog.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert session.review(view.current_cot_pk()).comment == COMMENT
    assert view.panel.comment_view.toPlainText() == COMMENT
    # Titles, stats and notes are plain-text labels.
    for label in (panel.title, panel.stats, panel.note):
        assert label.textFormat() == Qt.TextFormat.PlainText
    assert REVIEWER in view.status.text()


def test_my_annotations_are_never_exported_onto_the_open_library(session, tmp_path, monkeypatch) -> None:
    """Issue 15, point 1 (audit): Review > Export my annotations onto the library replaced it
    with a JSON file."""
    session.key(Qt.Key.Key_1)
    before = session.path.read_bytes()
    for target in (session.path, session.path.with_name(session.path.name + "-shm")):
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, t=target, **k: (str(t), ""))
        session.controller.export_dialog()  # the user picked the library in the save dialog
        box = last_message(session.window)
        assert "open library" in box.text() and "destroy" in box.text()
        box.close()
    assert session.path.read_bytes() == before
    with Library.open(session.path) as library:
        assert [c.name for c in library.collections()] == [COLLECTION]
    out = tmp_path / "mine.json"  # elsewhere the export is written, as before
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    session.controller.export_dialog()
    session.qtbot.waitUntil(out.exists, timeout=10000)
    assert json.loads(out.read_text())["format"] == "thoughtdesk-annotations"
