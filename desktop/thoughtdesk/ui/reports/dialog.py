"""File > Export report…: a review report of a collection, a review queue or the samples the
Samples tab shows, as HTML or PDF, written in the background with progress and Cancel.

The dialog only collects choices (:class:`ReportRequest`); the controller runs the report in a
:class:`~thoughtdesk.ui.base.tasks.Task` on its own library connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from thoughtdesk.core.files import ExportTargetError, check_export_target
from thoughtdesk.core.library.queries import SampleFilter, collection_authors, sample_collection_id, sample_keys
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.qt import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QObject,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
    Signal,
)

# The report writers (core.reports, the PDF writer) and review queues are imported when the
# dialog opens or a report is written: File > Export report… costs the window's start nothing.
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked

EVERY_REVIEWER = "Every reviewer"
HTML_FILTER = "HTML report (*.html)"
PDF_FILTER = "PDF report (*.pdf)"


@dataclass(frozen=True, slots=True)
class ReportRequest:
    """What the dialog asks for. ``scope`` is ``"collection"``, ``"queue"``, ``"shown"`` (the
    samples of ``shown_filter``, the Samples tab's search and filters) or ``"selected"`` (the
    sample ``selected``); ``kind`` ``"html"`` or ``"pdf"``."""

    collection: str
    scope: str
    queue: str | None
    shown_filter: SampleFilter | None
    selected: int | None
    author: str | None
    kind: str
    path: Path
    max_text_chars: int


class ReportDialog(QDialog):
    """The choices of File > Export report… (fits 1366x768: one short column of fields)."""

    def __init__(
        self,
        library: Library,
        parent: QWidget | None = None,
        *,
        collection: str | None = None,
        shown_filter: SampleFilter | None = None,
        selected: int | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export review report")
        self.setObjectName("reportDialog")
        self.library = library
        self.shown_filter = shown_filter
        self.selected = selected
        layout = QVBoxLayout(self)
        form = QFormLayout()
        layout.addLayout(form)

        self.collection = QComboBox(objectName="reportCollection")
        self.collection.addItems([c.name for c in library.collections()])
        if collection:
            self.collection.setCurrentText(collection)
        form.addRow("&Collection:", self.collection)

        self.scope_whole = QRadioButton("The &whole collection", objectName="scopeCollection")
        self.scope_queue = QRadioButton("A review &queue:", objectName="scopeQueue")
        self.scope_shown = QRadioButton("", objectName="scopeShown")
        self.scope_selected = QRadioButton("The sample se&lected in the Samples tab", objectName="scopeSelected")
        self.scope_group = QButtonGroup(self)
        for button in (self.scope_whole, self.scope_queue, self.scope_shown, self.scope_selected):
            self.scope_group.addButton(button)
        self.scope_whole.setChecked(True)
        self.queue = QComboBox(objectName="reportQueue")
        queue_row = QHBoxLayout()
        queue_row.addWidget(self.scope_queue)
        queue_row.addWidget(self.queue, 1)
        scope_box = QVBoxLayout()
        scope_box.addWidget(self.scope_whole)
        scope_box.addLayout(queue_row)
        scope_box.addWidget(self.scope_shown)
        scope_box.addWidget(self.scope_selected)
        form.addRow("Samples:", scope_box)

        self.author = QComboBox(objectName="reportAuthor")
        form.addRow("Reviews &by:", self.author)

        self.kind_html = QRadioButton("HT&ML (one self-contained file)", objectName="kindHtml")
        self.kind_pdf = QRadioButton("&PDF", objectName="kindPdf")
        self.kind_group = QButtonGroup(self)
        self.kind_group.addButton(self.kind_html)
        self.kind_group.addButton(self.kind_pdf)
        self.kind_pdf.setChecked(True)
        kind_row = QHBoxLayout()
        kind_row.addWidget(self.kind_pdf)
        kind_row.addWidget(self.kind_html)
        kind_row.addStretch(1)
        form.addRow("Format:", kind_row)

        self.limit = QSpinBox(objectName="reportLimit")
        self.limit.setRange(1_000, 1_000_000)
        self.limit.setSingleStep(10_000)
        self.limit.setGroupSeparatorShown(True)
        from thoughtdesk.core.reports.escape import DEFAULT_MAX_CHARS

        self.limit.setValue(DEFAULT_MAX_CHARS)
        self.limit.setSuffix(" characters")
        form.addRow("Cut &texts after:", self.limit)

        self.path = QLineEdit(objectName="reportPath")
        self.path.setPlaceholderText("the file to write")
        browse = QPushButton("B&rowse…", objectName="reportBrowse")
        browse.clicked.connect(self.choose_path)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(browse)
        save_label = QLabel("&Save as:")
        save_label.setBuddy(self.path)
        form.addRow(save_label, path_row)

        self.error = plain_label("", name="reportError")
        self.error.setStyleSheet("color: #b00020;")
        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.export_button = self.buttons.addButton("&Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.setDefault(True)  # Enter exports
        self.export_button.setObjectName("reportExport")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

        self.collection.currentTextChanged.connect(self._collection_changed)
        self.kind_group.buttonToggled.connect(lambda *_: self._kind_changed())
        self.queue.currentIndexChanged.connect(lambda *_: self.scope_queue.setChecked(self.queue.count() > 0))
        self._collection_changed(self.collection.currentText())
        self.resize(620, self.sizeHint().height())

    # Choices ----------------------------------------------------------------------------------

    def _collection_changed(self, name: str) -> None:
        from thoughtdesk.core.review import list_queues

        collection_id = self.library.collection_id(name) if name else None
        queues = [q.name for q in list_queues(self.library, collection_id)] if collection_id is not None else []
        with blocked(self.queue):
            self.queue.clear()
            self.queue.addItems(queues)
        self.scope_queue.setEnabled(bool(queues))
        self.queue.setEnabled(bool(queues))
        shown = self.shown_filter is not None and self.shown_filter.collection_id == collection_id
        self.scope_shown.setEnabled(shown)
        self.scope_shown.setText(
            "The samples the Samples tab s&hows (its search and filters)"
            if shown
            else "The samples the Samples tab shows (select this collection there first)"
        )
        self.scope_selected.setEnabled(
            self.selected is not None
            and collection_id is not None
            and self._in_collection(self.selected, collection_id)
        )
        checked = self.scope_group.checkedButton()
        if checked is None or not checked.isEnabled():
            self.scope_whole.setChecked(True)
        self.author.clear()
        self.author.addItem(EVERY_REVIEWER)
        self.author.addItems(collection_authors(self.library, name) if name else [])

    def _in_collection(self, sample: int, collection_id: int) -> bool:
        return sample_collection_id(self.library, sample) == collection_id

    def _kind_changed(self) -> None:
        text = self.path.text().strip()
        if text:
            wanted = ".pdf" if self.kind_pdf.isChecked() else ".html"
            path = Path(text)
            if path.suffix.lower() in (".pdf", ".html", ".htm") and path.suffix.lower() != wanted:
                self.path.setText(str(path.with_suffix(wanted)))

    def choose_path(self) -> None:
        """Browse… : a save dialog for the chosen format."""
        pdf = self.kind_pdf.isChecked()
        suggested = self.path.text().strip() or str(
            Path.home() / f"{self.collection.currentText() or 'report'} review report.{'pdf' if pdf else 'html'}"
        )
        path, _chosen = QFileDialog.getSaveFileName(
            self, "Save the review report", suggested, PDF_FILTER if pdf else HTML_FILTER
        )
        if path:
            self.path.setText(path)

    def request(self) -> ReportRequest | None:
        """The choices, or None with the reason shown under the fields."""
        collection = self.collection.currentText()
        text = self.path.text().strip()
        problem = ""
        if not collection:
            problem = "The library has no collection to report on."
        elif not text:
            problem = "Choose the file to write (Browse…)."
        elif self.scope_queue.isChecked() and not self.queue.currentText():
            problem = "This collection has no review queue."
        if problem:
            self.error.setText(problem)
            return None
        scope = "collection"
        for name, button in (
            ("queue", self.scope_queue),
            ("shown", self.scope_shown),
            ("selected", self.scope_selected),
        ):
            if button.isChecked():
                scope = name
        author = self.author.currentText()
        return ReportRequest(
            collection=collection,
            scope=scope,
            queue=self.queue.currentText() if scope == "queue" else None,
            shown_filter=self.shown_filter if scope == "shown" else None,
            selected=self.selected if scope == "selected" else None,
            author=None if author == EVERY_REVIEWER or not author else author,
            kind="pdf" if self.kind_pdf.isChecked() else "html",
            path=Path(text).expanduser(),
            max_text_chars=self.limit.value(),
        )

    def accept(self) -> None:
        if self.request() is not None:
            super().accept()


class ReportsController(QObject):
    """File > Export report…"""

    #: ``(Path, str)``: a report was written (its path, and "N samples" or "N pages").
    written = Signal(object, str)

    def __init__(self, window: WindowApi) -> None:
        super().__init__(window.dialog_parent)
        self._window = window
        self.dialog: ReportDialog | None = None
        self.action_report = window.add_action(
            window.menu("&File"), "Export &report…", "Ctrl+Shift+R", self.open_dialog
        )

    def open_dialog(self) -> ReportDialog | None:
        """Show the dialog; on Export, write the report in the background."""
        library = self._window.library
        if library is None:
            return None
        samples = self._window.samples
        dialog = ReportDialog(
            library,
            self._window.dialog_parent,
            collection=samples.current_collection(),
            shown_filter=samples.current_filter(),
            selected=samples.current_sample_key(),
        )
        self.dialog = dialog
        dialog.finished.connect(lambda code: self._closed(dialog, code))
        dialog.open()
        return dialog

    def _closed(self, dialog: ReportDialog, code: int) -> None:
        request = dialog.request() if code == QDialog.DialogCode.Accepted else None
        self.dialog = None
        dialog.deleteLater()
        if request is not None:
            self.export_report(request)

    def export_report(self, request: ReportRequest) -> Task[str] | None:
        """Write the report ``request`` asks for in a background task (progress, Cancel)."""
        library = self._window.library
        if library is None:
            return None
        library_path = library.path
        try:
            # The save dialog (or the user) chose the name; the library itself is never written.
            check_export_target(request.path, libraries=[library_path], force=True)
        except ExportTargetError as error:
            self._window.show_error("Export report", str(error))
            return None

        from thoughtdesk.core.reports import ReportOptions, ReportScope, write_html_report
        from thoughtdesk.ui.reports.pdf import write_pdf_report

        def work(ctx: TaskContext) -> str:
            with Library.open(library_path, create=False) as lib:
                sample_pks = None
                if request.shown_filter is not None:
                    sample_pks = tuple(sample_keys(lib, request.shown_filter))
                elif request.selected is not None:
                    sample_pks = (request.selected,)
                scope = ReportScope(request.collection, request.queue, sample_pks, request.author)
                options = ReportOptions(max_text_chars=request.max_text_chars)
                if request.kind == "pdf":
                    pages = write_pdf_report(
                        lib, scope, request.path, options, force=True, progress=ctx.progress, cancel=ctx.cancelled
                    )
                    return f"{pages} page(s)"
                samples = write_html_report(
                    lib, scope, request.path, options, force=True, progress=ctx.progress, cancel=ctx.cancelled
                )
                return f"{samples} sample(s)"

        def done(what: str) -> None:
            self._window.show_status(f"Review report written to {request.path} ({what})", 10000)
            self.written.emit(request.path, what)

        return self._window.run_task(f"Writing the review report of {request.collection}…", work, done)
