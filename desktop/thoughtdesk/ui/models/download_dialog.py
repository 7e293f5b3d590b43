"""Edit ▸ Models… ▸ Download…: the curated models (sizes, licences, what each is for) or any URL,
downloaded only when the user presses Download: in a background task, with a progress bar,
speed and time left, Cancel, a resume of what an earlier try left, the checksum checked before
the model is registered, and the partial file kept or deleted as the user chooses."""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.models.catalog import CATALOG, CatalogModel
from thoughtdesk.core.models.download import (
    TransferRate,
    describe_progress,
    download_model,
    file_name_for,
    partial_path,
)
from thoughtdesk.core.models.registry import ModelEntry, ModelRegistry
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QObject,
    QProgressBar,
    QPushButton,
    QResizeEvent,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.sizing import fit_to_screen

CATALOG_COLUMNS = ("Model", "Size", "Licence", "Good for")
#: The progress bar's range: per mille (a byte count overflows Qt's int past 2 GB).
_SCALE = 1000


class _Transfer(QObject):
    """Reports from the download's worker thread, queued to the dialog (Python ints: no overflow)."""

    bytes = Signal(object, object)  # done, total or None
    checking = Signal()


class DownloadDialog(QDialog):
    """Download a curated model or a URL into the models folder and register it."""

    #: The registered model's name, after a download finished and was registered.
    registered = Signal(str)

    def __init__(
        self,
        parent: QWidget | None = None,
        registry: ModelRegistry | None = None,
        catalog: tuple[CatalogModel, ...] = CATALOG,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Download a model")
        self.setObjectName("downloadDialog")
        self.registry = registry or ModelRegistry()
        self.catalog = catalog
        self.task: Task[ModelEntry] | None = None
        self._tasks: set[Task[object]] = set()
        self._rate = TransferRate()

        self.table = QTableWidget(len(catalog), len(CATALOG_COLUMNS))
        self.table.setObjectName("catalog")
        self.table.setHorizontalHeaderLabels(list(CATALOG_COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(True)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        for column in range(2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)  # wrapped: "what it is for" gets the room
        header.resizeSection(2, self.fontMetrics().horizontalAdvance("x") * 28)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        header.sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        for row, model in enumerate(catalog):
            cells = (model.title, f"{model.size / 1e9:.2f} GB", model.licence, model.good_for)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(model.url if column == 0 else text)
                self.table.setItem(row, column, item)
        self.table.resizeRowsToContents()
        self.table.itemSelectionChanged.connect(self._catalog_chosen)

        self.url = QLineEdit(objectName="downloadUrl")
        self.url.setPlaceholderText("https://huggingface.co/OWNER/REPO/resolve/main/FILE.gguf, or choose above")
        self.name = QLineEdit(objectName="downloadName")
        self.name.setPlaceholderText("default: the file's name without .gguf")
        self.sha256 = QLineEdit(objectName="downloadSha256")
        self.sha256.setPlaceholderText("optional: the publisher's SHA-256; a file that differs is not registered")
        for line in (self.url, self.name):
            line.textChanged.connect(lambda _text: self._show_partial())

        self.progress = QProgressBar(objectName="downloadProgress")
        self.progress.setRange(0, _SCALE)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.rate = plain_label(name="downloadRate")
        self.message = plain_label(name="downloadMessage", selectable=True)
        self.download_button = QPushButton("&Download", objectName="startDownload")
        self.download_button.setDefault(True)
        self.cancel_button = QPushButton("&Stop", objectName="stopDownload")
        self.cancel_button.setToolTip("Stop the download; what arrived is kept so that Download resumes it")
        self.cancel_button.setEnabled(False)
        self.delete_partial_button = QPushButton("Delete partial download", objectName="deletePartial")
        self.delete_partial_button.setToolTip("Delete the bytes an earlier, unfinished download left (no resume)")
        self.delete_partial_button.hide()
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("&Address", self.url)
        form.addRow("&Name", self.name)
        form.addRow("SHA-&256", self.sha256)
        buttons = QHBoxLayout()
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.delete_partial_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(
            plain_label(
                "Curated models (nothing is downloaded until you press Download; sizes as their "
                f"repositories list them). Downloads go to {self.registry.models_dir}."
            )
        )
        layout.addWidget(self.table, 1)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.rate)
        layout.addWidget(self.message)
        layout.addWidget(close)

        self.download_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.stop)
        self.delete_partial_button.clicked.connect(self.delete_partial)
        fit_to_screen(self, 900, 560)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.table.resizeRowsToContents()  # wrapped cells: their height follows the new widths

    # --- choosing ----------------------------------------------------------------------------

    def _catalog_chosen(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return
        model = self.catalog[rows[0].row()]
        self.url.setText(model.url)
        self.name.setText(model.name)
        self.sha256.clear()

    def _target(self) -> tuple[str, str | None]:
        return self.url.text().strip(), self.name.text().strip() or None

    def partial(self) -> Path | None:
        """The ``.part`` file an earlier try of this download left, if any."""
        url, name = self._target()
        if not url:
            return None
        part = partial_path(url, name, self.registry)
        return part if part.exists() else None

    def _show_partial(self) -> None:
        if self.task is not None:
            return
        part = self.partial()
        self.delete_partial_button.setVisible(part is not None)
        if part is not None:
            size = part.stat().st_size
            self.download_button.setText("Resume &download")
            self.delete_partial_button.setText(f"Delete partial download ({size / 1e6:.1f} MB)")
        else:
            self.download_button.setText("&Download")

    # --- downloading ---------------------------------------------------------------------------

    def start(self) -> Task[ModelEntry] | None:
        """Download what the fields name, in the background; the outcome is one line below."""
        url, name = self._target()
        if not url:
            self.message.setText("Choose a model above or give the address of a .gguf file.")
            return None
        if "://" not in url:
            self.message.setText(f"{url!r} is not an address: it should start with https://")
            return None
        sha256 = self.sha256.text().strip() or None
        registry = self.registry
        transfer = _Transfer(self)
        transfer.bytes.connect(self._show_bytes)
        transfer.checking.connect(lambda: self.rate.setText("Checking the SHA-256 and the header…"))
        self._rate = TransferRate()
        self.progress.setRange(0, _SCALE)
        self.progress.setValue(0)
        self.rate.setText("Connecting…")
        self.message.setText(f"Downloading {name or file_name_for(url)}…")

        def work(context: TaskContext) -> ModelEntry:
            return download_model(
                url,
                name=name,
                sha256=sha256,
                registry=registry,
                progress=lambda done, total: transfer.bytes.emit(done, total),
                cancel=context.cancelled,
                checking=transfer.checking.emit,
            )

        self._busy(True)
        self.task = (
            Task(work)
            .on_success(self._done)
            .on_failure(self._failed)
            .on_finished(self._finished)
            .owned_by(self, self._tasks)
            .start()
        )
        return self.task

    def _show_bytes(self, done: int, total: int | None) -> None:
        speed, left = self._rate.update(done, total)
        if total:
            self.progress.setRange(0, _SCALE)
            self.progress.setValue(min(_SCALE, done * _SCALE // total))
        else:
            self.progress.setRange(0, 0)  # busy: the server did not say how much
        self.rate.setText(describe_progress(done, total, speed, left))

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.message.setText("Stopping…")

    def _done(self, entry: ModelEntry) -> None:
        self.progress.setRange(0, _SCALE)
        self.progress.setValue(_SCALE)
        summary = self._rate.summary()
        if summary:
            self.rate.setText(summary)
        checked = "checksum verified" if self.sha256.text().strip() else "SHA-256 recorded"
        self.message.setText(f"Downloaded and registered {entry.name} ({checked}): {entry.path}")
        self.registered.emit(entry.name)

    def _failed(self, error: BaseException) -> None:
        if isinstance(error, Cancelled):
            part = self.partial()
            kept = f"; {part.stat().st_size / 1e6:.1f} MB kept for a resume in {part}" if part else ""
            self.message.setText(f"Download stopped{kept}; nothing was registered")
        elif isinstance(error, ThoughtDeskError | OSError):
            self.message.setText(str(error))
        else:  # a bug: the task API logs it; the user still gets one line
            self.message.setText(f"The download failed: internal error ({type(error).__name__}: {error})")

    def _finished(self) -> None:
        self.task = None
        self._busy(False)
        self._show_partial()

    def _busy(self, busy: bool) -> None:
        self.download_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        for widget in (self.table, self.url, self.name, self.sha256):
            widget.setEnabled(not busy)
        if busy:
            self.delete_partial_button.hide()

    def delete_partial(self) -> None:
        """Delete what an unfinished download left (the user chose not to resume it)."""
        part = self.partial()
        if part is None:
            return
        try:
            part.unlink()
        except OSError as error:
            self.message.setText(f"{part}: cannot delete the partial download ({error.strerror or error})")
        else:
            self.message.setText(f"Deleted the partial download {part}")
        self._show_partial()

    def done(self, result: int) -> None:
        """Closing stops a running download (what arrived is kept for a resume)."""
        if self.task is not None:
            self.task.cancel()
        super().done(result)
