"""File ▸ Import of a ThoughtSource collection: which collection it goes into, and what happens
to samples that are already there."""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.ui.qt import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QRadioButton,
    Qt,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.sizing import ElidedLabel, compact_combo


class ImportDialog(QDialog):
    """Where an import goes and what happens to samples that are already there."""

    def __init__(
        self, path: Path, collections: list[str], parent: QWidget | None = None, default: str | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import")
        self.setObjectName("importDialog")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        file_label = ElidedLabel(str(path), name="importFile", mode=Qt.TextElideMode.ElideMiddle)
        form.addRow("File:", file_label)
        self.collection = QComboBox()
        self.collection.setObjectName("collectionCombo")
        self.collection.setEditable(True)
        compact_combo(self.collection, 24)
        self.collection.addItems(collections)
        self.collection.setEditText(default or path.stem)
        self.collection.setToolTip("type a new name to create a collection, or pick an existing one")
        form.addRow("Into collection:", self.collection)
        layout.addLayout(form)
        layout.addWidget(QLabel("Samples that are already in the collection:"))
        self.duplicates = QButtonGroup(self)
        for value, text in (
            ("skip", "Skip them (keep what is stored)"),
            ("replace", "Replace them with the file's version"),
            ("fail", "Stop and change nothing"),
        ):
            button = QRadioButton(text)
            button.setObjectName(f"dup_{value}")
            button.setProperty("value", value)
            self.duplicates.addButton(button)
            layout.addWidget(button)
            if value == "skip":
                button.setChecked(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    @property
    def collection_name(self) -> str:
        return self.collection.currentText().strip()

    @property
    def on_duplicate(self) -> str:
        button = self.duplicates.checkedButton()
        return "fail" if button is None else button.property("value")  # one option is always checked
