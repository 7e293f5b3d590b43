"""Small dialogs: import options, about, keyboard shortcuts."""

from __future__ import annotations

import platform
from pathlib import Path

from thoughtdesk import __version__
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

SHORTCUTS = [
    ("Ctrl+F", "search the samples"),
    ("Up / Down, j / k", "next / previous sample in the table"),
    ("Ctrl+I", "import a file"),
    ("Ctrl+E", "export the selected collection"),
    ("Ctrl+Shift+N", "new library"),
    ("Ctrl+O", "open a library"),
    ("Escape", "clear the search"),
    ("Ctrl+1 / 2 / 3 / 4", "Samples / Review / Results / Runs tab"),
    ("Ctrl+G", "plan a generation run"),
    ("Ctrl+,", "settings"),
    ("Review: 1–9", "toggle a label (on selected text: a span label)"),
    ("Review: j / k", "next / previous CoT"),
    ("Review: n / p", "next / previous sample"),
    ("Review: c", "comment on the CoT"),
    ("Review: s", "mark the CoT preferred"),
    ("Review: Alt+1…5 / Alt+0", "quality score / clear it"),
    ("Review: Ctrl+Z / Ctrl+Shift+Z", "undo / redo"),
    ("Ctrl+Shift+B", "blind review on or off"),
    ("?", "this list"),
    ("Ctrl+Q", "quit"),
]


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
        file_label = QLabel()
        file_label.setTextFormat(Qt.TextFormat.PlainText)
        file_label.setText(str(path))
        form.addRow("File:", file_label)
        self.collection = QComboBox()
        self.collection.setObjectName("collectionCombo")
        self.collection.setEditable(True)
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
        return self.duplicates.checkedButton().property("value")


def about_text() -> str:
    import PySide6

    return (
        f"ThoughtDesk {__version__}\n\n"
        "A local workbench for chain-of-thought reasoning data: load QA datasets, generate, "
        "compare, annotate, critique and score CoTs. Everything stays in one SQLite file on "
        "this computer.\n\n"
        f"Python {platform.python_version()}, Qt for Python (PySide6) {PySide6.__version__} (LGPLv3).\n"
        "Libraries: sqlite-utils (Apache-2.0), msgspec (BSD-3), httpx (BSD-3), keyring (MIT), "
        "pyqtgraph (MIT), NumPy and SciPy (BSD-3), platformdirs (MIT), rapidfuzz (MIT).\n"
        "ThoughtSource collection format: OpenBioLink/ThoughtSource (MIT). Datasets keep their "
        "own licences; see the dataset catalogue."
    )


def shortcuts_text() -> str:
    width = max(len(k) for k, _ in SHORTCUTS)
    return "\n".join(f"{k.ljust(width)}   {v}" for k, v in SHORTCUTS)
