"""File > Export report… in the real window: the dialog's choices, the report written in the
background (HTML and PDF), a missing file name refused in the dialog, and its size."""

from __future__ import annotations

from pathlib import Path

from tests.core.reports.conftest import seed_reports
from tests.core.review.conftest import COLLECTION, sample_pk
from tests.helpers.screenshots import save_screenshot
from tests.ui.reports.test_pdf import page_objects
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.reports.dialog import EVERY_REVIEWER, ReportDialog, ReportRequest


def open_dialog(window) -> ReportDialog:
    window.reports.action_report.trigger()
    dialog = window.reports.dialog
    assert isinstance(dialog, ReportDialog) and dialog.isVisible()
    return dialog


def test_export_report_dialog_writes_html_and_pdf(make_window, qtbot, tmp_path: Path):
    seeded = seed_reports(tmp_path / "lib.thoughtdesk")
    window = make_window(seeded.path)
    written: list[tuple[Path, str]] = []
    window.reports.written.connect(lambda path, what: written.append((path, what)))

    dialog = open_dialog(window)
    # Fits a 1366x768 hospital laptop, with room for the window's frame.
    assert dialog.width() <= 1366 and dialog.height() <= 700
    save_screenshot(dialog, tmp_path, "report_dialog")
    dialog.collection.setCurrentText(COLLECTION)
    assert [dialog.author.itemText(i) for i in range(dialog.author.count())] == [EVERY_REVIEWER, "ann", "bob"]
    assert dialog.queue.currentText() == "first two" and dialog.scope_queue.isEnabled()

    # No file named: the dialog stays open and says what to do.
    dialog.export_button.click()
    assert dialog.isVisible() and "Choose the file" in dialog.error.text()

    dialog.scope_queue.setChecked(True)
    dialog.author.setCurrentText("ann")
    dialog.kind_html.setChecked(True)
    dialog.path.setText(str(tmp_path / "queue.html"))
    dialog.export_button.click()
    qtbot.waitUntil(lambda: bool(written), timeout=60000)
    assert written[-1] == (tmp_path / "queue.html", "2 sample(s)")
    html = (tmp_path / "queue.html").read_text(encoding="utf-8")
    assert "reviews by &#x27;ann&#x27; only" in html and "Sample 2 of 2" in html

    dialog = open_dialog(window)
    dialog.collection.setCurrentText(COLLECTION)
    dialog.kind_html.setChecked(True)
    dialog.path.setText(str(tmp_path / "all.html"))
    dialog.kind_pdf.setChecked(True)  # the suffix follows the format
    assert dialog.path.text().endswith("all.pdf")
    dialog.export_button.click()
    qtbot.waitUntil(lambda: len(written) == 2, timeout=60000)
    path, what = written[-1]
    assert path == tmp_path / "all.pdf" and what == f"{page_objects(path)} page(s)"
    assert "Review report written" in window.statusBar().currentMessage()


def test_shown_and_selected_samples_follow_the_samples_tab(make_window, qtbot, tmp_path: Path):
    seeded = seed_reports(tmp_path / "lib.thoughtdesk")
    window = make_window(seeded.path)
    written: list[tuple[Path, str]] = []
    window.reports.written.connect(lambda path, what: written.append((path, what)))
    with Library.open(seeded.path) as lib:
        mq2 = sample_pk(lib, "mq-2")
    assert window.open_sample(mq2) and window.samples.current_sample_key() == mq2

    dialog = open_dialog(window)
    assert dialog.collection.currentText() == COLLECTION
    assert dialog.scope_shown.isEnabled() and dialog.scope_selected.isEnabled()
    dialog.scope_selected.setChecked(True)
    dialog.kind_html.setChecked(True)
    dialog.path.setText(str(tmp_path / "one.html"))
    dialog.export_button.click()
    qtbot.waitUntil(lambda: bool(written), timeout=60000)
    assert written[-1][1] == "1 sample(s)"
    html = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert "A child with fever and cough" in html and "A 54-year-old" not in html

    # A search narrows what the Samples tab shows: the report covers those samples.
    window.samples.search.setText("fever")
    assert window.samples.current_filter().search == "fever"
    dialog = open_dialog(window)
    dialog.scope_shown.setChecked(True)
    dialog.kind_html.setChecked(True)
    dialog.path.setText(str(tmp_path / "shown.html"))
    dialog.export_button.click()
    qtbot.waitUntil(lambda: len(written) == 2, timeout=60000)
    html = (tmp_path / "shown.html").read_text(encoding="utf-8")
    assert written[-1][1] == "1 sample(s)" and "A child with fever and cough" in html


def test_cancel_stops_the_report_and_leaves_no_file(make_window, qtbot, tmp_path: Path):
    seeded = seed_reports(tmp_path / "lib.thoughtdesk")
    window = make_window(seeded.path)
    request = ReportRequest(COLLECTION, "collection", None, None, None, None, "pdf", tmp_path / "r.pdf", 20_000)
    task = window.reports.export_report(request)
    assert task is not None
    task.cancel()  # as the progress dialog's Cancel does; checked before each sample
    qtbot.waitUntil(lambda: "cancelled" in window.statusBar().currentMessage(), timeout=60000)
    assert not (tmp_path / "r.pdf").exists() and not list(tmp_path.glob("*.part"))
