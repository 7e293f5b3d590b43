"""The dataset import dialog (local files or a download from the catalogue).

:class:`DatasetImportDialog` picks a source (a file or folder, format auto-detected with
``detect_dataset`` and overridable; or a download from the catalogue into the cache), shows the
dataset's metadata as plain text, and asks for splits, how many samples (all, first N, or N at
random with a seed), the target collection, duplicate handling and the bad-record policy. It
returns an :class:`ImportRequest`; File ▸ Import (:mod:`thoughtdesk.ui.importing.actions`) runs
the import in the background.
"""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.datasets import (
    DatasetInfo,
    catalogue,
    dataset_files,
    detect_dataset,
)
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.ui.importing.widgets import (
    DownloadPanel,
    ImportRequest,
    ImportTargetBox,
    metadata_text,
)
from thoughtdesk.ui.qt import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.sizing import fit_to_screen


def _spin(name: str, minimum: int, maximum: int, value: int) -> QSpinBox:
    spin = QSpinBox(objectName=name)
    spin.setRange(minimum, maximum)
    spin.setValue(value)
    return spin


def show_note(label: QLabel, text: str) -> None:
    """Set a note's text; an empty note is hidden (it would still take a line of the dialog)."""
    label.setText(text)
    label.setVisible(bool(text))


class DatasetImportDialog(QDialog):
    """Import a catalogue dataset from local files or a download; see the module docstring."""

    def __init__(
        self,
        collections: list[str],
        parent: QWidget | None = None,
        *,
        path: Path | None = None,
        download: bool = False,
        datasets: list[DatasetInfo] | None = None,
        cache_dir: Path | None = None,
        collection: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("datasetImportDialog")
        self.setWindowTitle("Import a dataset")
        fit_to_screen(self, 760, 720)
        self.infos = {info.name: info for info in (datasets or catalogue())}
        self._files_problem: str | None = None  # why the chosen files are not this dataset's
        layout = QVBoxLayout(self)

        source_box = QGroupBox("Source")
        source = QVBoxLayout(source_box)
        self.local_radio = QRadioButton("Local file or folder", objectName="localRadio")
        self.download_radio = QRadioButton("Download from the catalogue (into the cache)", objectName="downloadRadio")
        group = QButtonGroup(self)
        group.addButton(self.local_radio)
        group.addButton(self.download_radio)
        source.addWidget(self.local_radio)
        path_row = QHBoxLayout()
        self.path_edit = QLineEdit(objectName="pathEdit")
        self.path_edit.setPlaceholderText("a dataset file, or the folder holding its files")
        self.file_button = QPushButton("File…", objectName="fileButton")
        self.folder_button = QPushButton("Folder…", objectName="folderButton")
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(self.file_button)
        path_row.addWidget(self.folder_button)
        source.addLayout(path_row)
        source.addWidget(self.download_radio)
        self.download = DownloadPanel(cache_dir)
        source.addWidget(self.download)
        dataset_row = QHBoxLayout()
        dataset_row.addWidget(plain_label("Dataset:", wrap=False))
        self.dataset_combo = QComboBox(objectName="datasetCombo")
        for info in sorted(self.infos.values(), key=lambda i: i.name):
            self.dataset_combo.addItem(f"{info.name} — {info.title}", info.name)
        dataset_row.addWidget(self.dataset_combo, 1)
        source.addLayout(dataset_row)
        self.detected = plain_label(name="detectedLabel")
        source.addWidget(self.detected)
        layout.addWidget(source_box)

        self.metadata = QPlainTextEdit(objectName="metadataText")
        self.metadata.setReadOnly(True)
        self.metadata.setMinimumHeight(80)  # the dialog must fit a laptop screen with a long message above
        layout.addWidget(self.metadata, 1)

        self.splits_box = QGroupBox("Splits")
        self.splits_layout = QHBoxLayout(self.splits_box)
        self.splits_layout.addStretch(1)  # the split boxes go before it, side by side on the left
        self.split_boxes: dict[str, QCheckBox] = {}
        layout.addWidget(self.splits_box)
        self.files_label = plain_label(name="filesLabel")
        self.files_label.hide()  # shown with a note: an empty label still takes a line of height
        layout.addWidget(self.files_label)

        count_box = QGroupBox("Samples per split")
        count = QHBoxLayout(count_box)
        self.all_radio = QRadioButton("All", objectName="allRadio")
        self.some_radio = QRadioButton("At most", objectName="someRadio")
        self.limit_spin = _spin("limitSpin", 1, 10_000_000, 100)
        self.first_radio = QRadioButton("the first N", objectName="firstRadio")
        self.random_radio = QRadioButton("N at random, seed", objectName="randomRadio")
        self.seed_spin = _spin("seedSpin", 0, 2_000_000_000, 0)
        for pair in ((self.all_radio, self.some_radio), (self.first_radio, self.random_radio)):
            group = QButtonGroup(self)
            for button in pair:
                group.addButton(button)
        self.all_radio.setChecked(True)
        self.first_radio.setChecked(True)
        for widget in (
            self.all_radio,
            self.some_radio,
            self.limit_spin,
            self.first_radio,
            self.random_radio,
            self.seed_spin,
        ):
            count.addWidget(widget)
        count.addStretch(1)
        layout.addWidget(count_box)

        # Into the collection selected in the tree, if any; else named after the dataset.
        self.target = ImportTargetBox(collections, collection or "")
        layout.addWidget(self.target)
        self.error_label = plain_label(name="errorLabel")
        self.error_label.setStyleSheet("color: #b3261e;")
        self.error_label.hide()
        layout.addWidget(self.error_label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.import_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.import_button.setText("Import")
        buttons.accepted.connect(self.try_accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        self.file_button.clicked.connect(self.choose_file)
        self.folder_button.clicked.connect(self.choose_folder)
        self.path_edit.editingFinished.connect(lambda: self.set_path(self.path_edit.text()))
        self.dataset_combo.currentIndexChanged.connect(lambda _: self._dataset_changed())
        self.local_radio.toggled.connect(lambda _: self._source_changed())
        for widget in (self.some_radio, self.random_radio):
            widget.toggled.connect(lambda _: self._count_changed())
        self.download.finished_ok.connect(self._downloaded)
        (self.download_radio if download else self.local_radio).setChecked(True)
        self._source_changed()
        self._dataset_changed()
        self._count_changed()
        self.path_edit.textChanged.connect(lambda _: self._update_import_button())
        self.target.collection.editTextChanged.connect(lambda _: self._update_import_button())
        if path is not None:
            self.set_path(path)
        self._update_import_button()

    # Source ---------------------------------------------------------------------------------

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Dataset file", str(Path.home()))
        if path:
            self.set_path(path)

    def choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Folder with the dataset's files", str(Path.home()))
        if path:
            self.set_path(path)

    def set_path(self, path: str | Path) -> None:
        """Use ``path`` as the source; select the dataset it holds when that is unambiguous."""
        text = str(path).strip()
        self.path_edit.setText(text)
        if not text:
            return
        source = Path(text)
        if not source.exists():
            self.detected.setText(f"{source} does not exist.")
            return
        name = detect_dataset(source)
        if name is not None and name in self.infos:
            self.detected.setText(f"Detected: {name}. Choose another dataset above if this is wrong.")
            self.select_dataset(name)
        else:
            self.detected.setText("The format was not recognised unambiguously: choose the dataset above.")
        self._refresh_splits()

    def select_dataset(self, name: str) -> None:
        index = self.dataset_combo.findData(name)
        if index >= 0:
            self.dataset_combo.setCurrentIndex(index)

    @property
    def dataset(self) -> str | None:
        return self.dataset_combo.currentData()

    @property
    def info(self) -> DatasetInfo | None:
        return self.infos.get(self.dataset or "")

    def _source_changed(self) -> None:
        local = self.local_radio.isChecked()
        for widget in (self.path_edit, self.file_button, self.folder_button):
            widget.setEnabled(local)
        self.download.setEnabled(not local)

    def _dataset_changed(self) -> None:
        info = self.info
        self.metadata.setPlainText(metadata_text(info) if info else "")
        self.download.set_dataset(info)
        if info is not None and (not self.target.collection_name or self.target.collection_name in self.infos):
            self.target.set_default_name(info.name)
        self._refresh_splits()

    def _downloaded(self, folder: Path) -> None:
        self.path_edit.setText(str(folder))
        self.detected.setText(f"Using the downloaded files in {folder}.")
        self._refresh_splits()

    # Splits and counts ----------------------------------------------------------------------

    def available_splits(self) -> list[str]:
        """The splits the chosen files hold (all of the dataset's splits when unknown)."""
        info = self.info
        if info is None:
            return []
        text = self.path_edit.text().strip()
        show_note(self.files_label, "")
        self._files_problem = None
        if not text or not Path(text).exists():
            return list(info.splits)
        try:
            files = dataset_files(info.name, text)
        except ThoughtDeskError as error:
            show_note(self.files_label, str(error))
            self._files_problem = str(error)
            return list(info.splits)
        show_note(
            self.files_label,
            "Files: "
            + ", ".join(f"{file.name} ({'several splits' if split == '*' else split})" for split, file in files),
        )
        found = [split for split, _ in files]
        if "*" in found:
            return list(info.splits)
        return found

    def _refresh_splits(self) -> None:
        for box in self.split_boxes.values():
            self.splits_layout.removeWidget(box)
            box.deleteLater()
        self.split_boxes = {}
        for split in self.available_splits():
            box = QCheckBox(split, objectName=f"split_{split}")
            box.setChecked(True)
            box.toggled.connect(lambda _: self._update_import_button())
            self.splits_layout.insertWidget(self.splits_layout.count() - 1, box)
            self.split_boxes[split] = box
        self._update_import_button()

    def set_splits(self, splits: list[str]) -> None:
        for split, box in self.split_boxes.items():
            box.setChecked(split in splits)

    def _count_changed(self) -> None:
        some = self.some_radio.isChecked()
        for widget in (self.limit_spin, self.first_radio, self.random_radio):
            widget.setEnabled(some)
        self.seed_spin.setEnabled(some and self.random_radio.isChecked())

    # Result ---------------------------------------------------------------------------------

    def problem(self) -> str | None:
        """What keeps the dialog from importing (the Import button is disabled while there is
        something), or None when the choice is valid."""
        text = self.path_edit.text().strip()
        if not text:
            return "Choose a file or folder, or download the dataset first."
        if not Path(text).exists():
            return f"{text} does not exist."
        if self.dataset is None:
            return "Choose the dataset."
        if self._files_problem is not None:
            return self._files_problem
        if not any(box.isChecked() for box in self.split_boxes.values()):
            return "Tick at least one split."
        if not self.target.collection_name:
            return "Name the collection to import into."
        return None

    def _update_import_button(self) -> None:
        problem = self.problem()
        self.import_button.setEnabled(problem is None)
        self.import_button.setToolTip(problem or "")

    def request(self) -> ImportRequest:
        """The import the dialog describes; raises ``ValueError`` saying what is missing."""
        problem = self.problem()
        if problem is not None:
            raise ValueError(problem)
        text = self.path_edit.text().strip()
        splits = [split for split, box in self.split_boxes.items() if box.isChecked()]
        some = self.some_radio.isChecked()
        return ImportRequest(
            path=Path(text),
            collection=self.target.collection_name,
            dataset=self.dataset,
            splits=splits if len(splits) < len(self.split_boxes) else None,
            limit=self.limit_spin.value() if some else None,
            seed=self.seed_spin.value() if some and self.random_radio.isChecked() else None,
            on_duplicate=self.target.on_duplicate.currentData(),
            on_error=self.target.on_error.currentData(),
        )

    def try_accept(self) -> None:
        try:
            self.request()
        except ValueError as error:
            show_note(self.error_label, str(error))
            return
        show_note(self.error_label, "")
        self.accept()
