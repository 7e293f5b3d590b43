"""Pieces shared by the import dialogs: the request, target options, downloads, the skip log of an import that skipped bad records.

Everything that shows dataset text (metadata, errors, reports) uses plain-text widgets: dataset
files and their metadata are untrusted and must never be rendered as rich text or links.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from thoughtdesk.core.datasets import DatasetInfo, dataset_cache_dir, download_dataset
from thoughtdesk.core.datasets.generic import ColumnMapping
from thoughtdesk.core.errors import Cancelled
from thoughtdesk.core.importing.importer import ImportOutcome
from thoughtdesk.core.paths import user_cache_dir
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.qt import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import MessageText, plain_label


@dataclass
class ImportRequest:
    """What the user asked an import dialog for; ``MainWindow.import_file`` carries it out.

    Neither ``dataset`` nor ``mapping``: a ThoughtSource collection file, or with ``dscb`` a DS
    Critique Bank JSON Lines file, with ``traces`` a reasoning-trace JSON Lines file. ``limit`` is per split; with ``seed`` the N samples are drawn
    at random, else the first N are taken.
    """

    path: Path
    collection: str
    dataset: str | None = None
    mapping: ColumnMapping | None = None
    splits: list[str] | None = None
    limit: int | None = None
    seed: int | None = None
    on_duplicate: str = "skip"
    on_error: str = "abort"
    dscb: bool = False
    #: A reasoning-trace JSON Lines file (core/importing/traces.py).
    traces: bool = False
    #: A ProcessBench or PRM800K file (docs/steps.md).
    steps: bool = False


def metadata_text(info: DatasetInfo) -> str:
    """A dataset's metadata as plain text (description, answer type, licence, homepage, citation)."""
    return info.describe()


def default_cache_dir() -> Path:
    """Where downloaded dataset files are kept (``<user cache>/datasets``)."""
    return user_cache_dir() / "datasets"


class ImportTargetBox(QWidget):
    """Target collection (new or existing), duplicate handling and bad-record policy."""

    def __init__(self, collections: list[str], default: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.existing = set(collections)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self.collection = QComboBox(objectName="collectionCombo")
        self.collection.setEditable(True)
        self.collection.addItems(collections)
        self.collection.setEditText(default)
        self.collection_state = plain_label(name="collectionState")
        self.collection.editTextChanged.connect(self._update_state)
        row = QHBoxLayout()
        row.addWidget(self.collection, 1)
        row.addWidget(self.collection_state)
        form.addRow("Into collection:", row)
        self.on_duplicate = QComboBox(objectName="duplicateCombo")
        for value, text in (
            ("skip", "skip them (keep what is stored)"),
            ("replace", "replace them with the file's version"),
            ("fail", "stop and change nothing"),
        ):
            self.on_duplicate.addItem(text, value)
        form.addRow("Samples already stored:", self.on_duplicate)
        self.on_error = QComboBox(objectName="errorCombo")
        self.on_error.addItem("abort: store nothing, show the first bad record", "abort")
        self.on_error.addItem("skip them and list them in a skip log", "skip")
        form.addRow("Bad records:", self.on_error)
        self._update_state()

    def set_default_name(self, name: str) -> None:
        self.collection.setEditText(name)

    def _update_state(self) -> None:
        name = self.collection_name
        self.collection_state.setText("existing" if name in self.existing else "new")

    @property
    def collection_name(self) -> str:
        return self.collection.currentText().strip()


class DownloadPanel(QWidget):
    """A Download button with a progress bar and Cancel; runs ``download_dataset`` in the pool.

    ``finished_ok(Path)`` carries the dataset's cache folder; ``failed_with(str)`` the message
    (for a failed URL it names the URL and how to load the file by hand).
    """

    finished_ok = Signal(object)
    failed_with = Signal(str)

    def __init__(self, cache_dir: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cache_dir = cache_dir or default_cache_dir()
        self.info: DatasetInfo | None = None
        self.task: Task[Path] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.download_button = QPushButton("Download", objectName="downloadButton")
        self.cancel_button = QPushButton("Cancel download", objectName="cancelDownloadButton")
        self.cancel_button.setEnabled(False)
        self.bar = QProgressBar(objectName="downloadProgress")
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.bar.setTextVisible(False)  # no "0%" before a download has started
        row.addWidget(self.download_button)
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        self.status = MessageText(name="downloadStatus")  # URLs and paths: wraps anywhere, never cut
        layout.addWidget(self.status)
        self.download_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)

    def set_dataset(self, info: DatasetInfo | None) -> None:
        self.info = info
        busy = self.task is not None
        self.download_button.setEnabled(info is not None and bool(info.sources) and not busy)
        if info is not None and not busy:
            cached = dataset_cache_dir(info, self.cache_dir)
            self.status.setText(
                f"Files go to {cached} (reused when already there)."
                if info.sources
                else "This dataset has no download source; load its files by hand."
            )

    def start(self) -> Task[Path] | None:
        """Download the current dataset's files in the background."""
        if self.info is None or self.task is not None:
            return None
        info, cache_dir = self.info, self.cache_dir

        def work(ctx: TaskContext) -> Path:
            def progress(done: int, total: int | None) -> None:
                # Qt signals carry C ints: report kibibytes so files over 2 GiB still fit.
                ctx.progress(done // 1024, (total or 0) // 1024)

            download_dataset(info, cache_dir, progress=progress, cancel=ctx.cancelled)
            return dataset_cache_dir(info, cache_dir)

        task = (
            Task(work)
            .on_progress(self._progress)
            .on_success(self._succeeded)
            .on_failure(self._failed)
            .on_finished(self._finished)
        )
        self.task = task
        self.bar.setRange(0, 0)
        self.download_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"Downloading {info.title}…")
        return task.start()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.context.cancel()

    def _progress(self, done_kib: int, total_kib: int) -> None:
        self.bar.setTextVisible(True)
        if total_kib:
            self.bar.setRange(0, total_kib)
            self.bar.setValue(min(done_kib, total_kib))
        self.bar.setFormat(f"{done_kib / 1024:.1f} MiB" + (f" of {total_kib / 1024:.1f} MiB" if total_kib else ""))

    def _succeeded(self, folder: Path) -> None:
        self.bar.setRange(0, 1)
        self.bar.setValue(1)
        self.status.setText(f"Downloaded to {folder}")
        self.finished_ok.emit(folder)

    def _failed(self, error: BaseException) -> None:
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        message = str(error) if isinstance(error, Exception) else repr(error)
        if isinstance(error, Cancelled):
            message = "Download cancelled; the partial file is kept to resume later."
        self.status.setText(message)
        self.failed_with.emit(message)

    def _finished(self) -> None:
        self.task = None
        self.cancel_button.setEnabled(False)
        self.download_button.setEnabled(self.info is not None and bool(self.info.sources))


class SkipLogDialog(QDialog):
    """The bad records an import skipped (file, line, reason), as plain text, and where saved."""

    def __init__(self, report: ImportOutcome, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importReportDialog")
        self.setWindowTitle("Skipped records")
        self.resize(760, 420)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(report.summary, name="reportSummary"))
        if report.skip_log_path is not None:
            saved = plain_label(f"Saved as {report.skip_log_path}", name="reportPath", selectable=True)
            layout.addWidget(saved)
        self.text = QPlainTextEdit(objectName="reportText")
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setPlainText(text)
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)
