"""Edit ▸ Models…: the model library (docs/models.md) as a table, with add (a file or a folder,
in place or copied, hashed in the background), download (ui/models/download_dialog.py), remove
and whether each model fits this machine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.models.fit import MemoryFit, available_memory, memory_fit
from thoughtdesk.core.models.gpu import GpuInfo, detect_gpu, offload_plan
from thoughtdesk.core.models.registry import AddResult, ModelEntry, ModelRegistry
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QAbstractTableModel,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QModelIndex,
    QPersistentModelIndex,
    QPushButton,
    QSpinBox,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.sizing import fit_to_screen

if TYPE_CHECKING:  # imported when opened: it brings httpx, which the window's start does without
    from thoughtdesk.ui.models.download_dialog import DownloadDialog

COLUMNS = ("Name", "Status", "Architecture", "Quantization", "Parameters", "Context", "Size", "Memory")
_Index = QModelIndex | QPersistentModelIndex


def _scoring_line(entry: ModelEntry, fit: MemoryFit) -> str:
    """What the scoring instance would add to ``fit``, and the verdict with it."""
    scored = memory_fit(entry, fit.n_ctx, fit.available, scoring=True)
    if scored.scoring is None and entry.vocab_size is None:
        return "memory unknown (no vocabulary size recorded: remove the model and add its file again)"
    if scored.scoring is None:
        return "memory unknown (the header does not give the model's shape)"
    return f"adds {scored.scoring.total / 1e9:.2f} GB, {scored.verdict} (needs {scored.needed / 1e9:.2f} GB)"


def _params(count: int) -> str:
    return f"{count / 1e9:.1f}B" if count >= 1e9 else f"{count / 1e6:.0f}M"


class ModelTableModel(QAbstractTableModel):
    """The registered models, one row each (read once per refresh: one ``stat`` per model)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[tuple[ModelEntry, str, MemoryFit]] = []

    def set_rows(self, rows: list[tuple[ModelEntry, str, MemoryFit]]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        entry, status, fit = self.rows[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{entry.path}\n{fit.describe()}"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return (
            entry.name,
            status,
            entry.architecture,
            entry.quantization or "?",
            _params(entry.parameter_count),
            f"{entry.context_length:,}" if entry.context_length else "?",
            f"{entry.size / 1e9:.2f} GB",
            fit.verdict,
        )[index.column()]


class ModelsDialog(QDialog):
    """The model library: a table, the selected model's details, Add file / Add folder / Remove."""

    def __init__(self, parent: QWidget | None = None, registry: ModelRegistry | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.registry = registry or ModelRegistry()
        self._tasks: set[Task[object]] = set()
        self.model = ModelTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.details = plain_label(name="modelDetails", selectable=True)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message = plain_label(name="modelsMessage", selectable=True)
        self.n_ctx = QSpinBox()
        self.n_ctx.setRange(256, 1_048_576)
        self.n_ctx.setSingleStep(1024)
        self.n_ctx.setValue(2048)
        self.n_ctx.setToolTip("The context size the memory estimate is for (tokens)")
        self.copy = QCheckBox("Copy into the models folder")
        self.copy.setToolTip(f"Copies go to {self.registry.models_dir}; otherwise files are used where they are")
        self.add_file_button = QPushButton("Add file…")
        self.add_folder_button = QPushButton("Add folder…")
        self.download_button = QPushButton("Download…")
        self.download_button.setToolTip("Download a curated model or a .gguf file's address (only when you ask)")
        self.download_dialog: DownloadDialog | None = None
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Unregister the model; its file is not deleted")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        top = QHBoxLayout()
        top.addWidget(self.add_file_button)
        top.addWidget(self.add_folder_button)
        top.addWidget(self.download_button)
        top.addWidget(self.copy)
        top.addStretch(1)
        top.addWidget(QLabel("Memory at context"))
        top.addWidget(self.n_ctx)
        top.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 3)
        layout.addWidget(self.details, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)

        self.add_file_button.clicked.connect(self._choose_file)
        self.add_folder_button.clicked.connect(self._choose_folder)
        self.remove_button.clicked.connect(self.remove_selected)
        self.download_button.clicked.connect(self.open_download)
        self.n_ctx.valueChanged.connect(lambda _value: self.refresh())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected())
        fit_to_screen(self, 980, 560)
        #: This machine's GPU (None until the background check answers: it loads llama.cpp).
        self.gpu: GpuInfo | None = None
        self.refresh()
        self.gpu_task = Task(lambda _context: detect_gpu()).on_success(self._gpu_known).owned_by(self).start()

    def _gpu_known(self, gpu: GpuInfo) -> None:
        self.gpu = gpu
        self._show_selected()

    # --- reading ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the registry again (never a model file) and keep the selection by name."""
        selected = self.selected()
        try:
            entries = self.registry.entries()
        except ThoughtDeskError as error:
            self.message.setText(str(error))
            entries = []
        free = available_memory()
        self.model.set_rows([(e, e.status(), memory_fit(e, self.n_ctx.value(), free)) for e in entries])
        names = [entry.name for entry, _, _ in self.model.rows]
        if selected is not None and selected.name in names:
            self.table.selectRow(names.index(selected.name))
        self._show_selected()

    def selected(self) -> ModelEntry | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.rows[rows[0].row()][0] if rows else None

    def _show_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        self.remove_button.setEnabled(bool(rows))
        if not rows:
            self.details.setText(
                "Select a model to see what its file says."
                if self.model.rows
                else ("No models yet: add a .gguf file, or a folder of them (a USB stick).")
            )
            return
        entry, status, fit = self.model.rows[rows[0].row()]
        lines = [
            f"{entry.name}: {entry.model_name or entry.architecture}  ({status})",
            f"File: {entry.path}",
            f"{_params(entry.parameter_count)} parameters, {entry.quantization or '?'}, context "
            f"{entry.context_length or '?'}, chat template {'yes' if entry.chat_template else 'no'}"
            f"{', thinks' if entry.thinks else ''}, licence {entry.license or '-'}",
            f"Memory: {fit.describe()}",
            f"With scoring (log-probs): {_scoring_line(entry, fit)}",
            "GPU: "
            + (
                offload_plan(self.gpu, fit.needed, entry.size, entry.block_count).describe()
                if self.gpu is not None
                else "checking…"
            ),
            f"SHA-256: {entry.sha256}",
            f"Use it as: --model llamacpp:{entry.name}",
        ]
        self.details.setText("\n".join(lines))

    # --- changing --------------------------------------------------------------------------

    def open_download(self) -> DownloadDialog:
        """The download dialog (one, kept): a model it registers is selected here."""
        if self.download_dialog is None:
            from thoughtdesk.ui.models.download_dialog import DownloadDialog

            self.download_dialog = DownloadDialog(self, self.registry)
            self.download_dialog.registered.connect(self._downloaded)
        self.download_dialog.open()
        return self.download_dialog

    def _downloaded(self, name: str) -> None:
        self.message.setText(f"{name}: downloaded and registered")
        self.refresh()
        names = [entry.name for entry, _, _ in self.model.rows]
        if name in names:
            self.table.selectRow(names.index(name))

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add a GGUF model", "", "GGUF models (*.gguf);;All files (*)")
        if path:
            self.add_path(Path(path))

    def _choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Add every GGUF model in a folder")
        if path:
            self.add_path(Path(path))

    def add_path(self, path: Path) -> Task[list[AddResult]]:
        """Register ``path`` (a file or a folder) in the background, with a progress dialog:
        headers read, files hashed (or copied). The result or the one-line error is shown below
        the table."""
        copy = self.copy.isChecked()
        registry = self.registry
        self._busy(True)
        self.message.setText(f"Adding {path}…")

        def work(context: TaskContext) -> list[AddResult]:
            def progress(done: int, total: int, _path: Path) -> None:
                if context.cancelled():  # raised inside add(): its copies are removed, nothing registered
                    raise Cancelled("adding models")
                context.progress(done >> 20, total >> 20)  # MiB: Qt's progress counts in int

            return registry.add(path, copy=copy, progress=progress)

        return (
            Task(work)
            .with_progress("Copying and checking models…" if copy else "Checking models…", self)
            .on_success(self._added)
            .on_failure(self._failed)
            .on_finished(lambda: self._busy(False))
            .owned_by(self, self._tasks)
            .start()
        )

    def _added(self, results: list[AddResult]) -> None:
        said = {"added": "added", "known": "already registered", "moved": "found again"}
        self.message.setText("; ".join(f"{r.entry.name}: {said[r.outcome]}" for r in results))
        self.refresh()
        if results:
            names = [entry.name for entry, _, _ in self.model.rows]
            self.table.selectRow(names.index(results[-1].entry.name))

    def _failed(self, error: BaseException) -> None:
        if isinstance(error, ThoughtDeskError | OSError):
            self.message.setText(f"Nothing was added: {error}")
        else:  # a bug: the task API logs it; the user still gets one line
            self.message.setText(f"Nothing was added: internal error ({type(error).__name__}: {error})")
        self.refresh()

    def _busy(self, busy: bool) -> None:
        for widget in (self.add_file_button, self.add_folder_button, self.copy):
            widget.setEnabled(not busy)

    def remove_selected(self) -> None:
        entry = self.selected()
        if entry is None:
            return
        try:
            self.registry.remove(entry.name)
        except ThoughtDeskError as error:
            self.message.setText(str(error))
        else:
            self.message.setText(f"Removed {entry.name} from the library; the file stays at {entry.path}")
        self.refresh()
