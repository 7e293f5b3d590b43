"""File ▸ Export collection: which format, which file, and for chat-format fine-tuning examples
which CoTs (issue 16, point 16).

The formats are the CLI's (``thoughtdesk export --format``): ThoughtSource JSON, DS Critique
Bank records, samples as JSONL or CSV, answers as CSV, chat JSONL and Parquet. The dialog only
chooses; :class:`~thoughtdesk.ui.importing.actions.ImportingController` checks the target file
(never the open library; asks before replacing a file) and writes it in a background task.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from thoughtdesk.core.datasets.generic import parquet_missing_hint
from thoughtdesk.core.importing.flat_export import ChatFilter
from thoughtdesk.ui.qt import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.sizing import compact_combo


@dataclass(frozen=True)
class ExportFormat:
    """One choice of the format list: its CLI name, what the user reads, the file ending."""

    key: str
    text: str
    suffix: str
    what: str  # what the count after the export counts


#: In the order the dialog lists them; ``key`` is ``thoughtdesk export --format``'s value.
EXPORT_FORMATS = (
    ExportFormat("thoughtsource", "ThoughtSource collection (JSON)", ".json", "sample(s)"),
    ExportFormat("dscb", "DS Critique Bank records (JSON Lines)", ".jsonl", "DS Critique Bank record(s)"),
    ExportFormat("processbench", "ProcessBench records (JSON Lines)", ".jsonl", "ProcessBench record(s)"),
    ExportFormat("prm800k", "PRM800K labelled solutions (JSON Lines)", ".jsonl", "PRM800K record(s)"),
    ExportFormat(
        "prm-jsonl", "Step-labelled training records for process reward models (JSON Lines)", ".jsonl", "record(s)"
    ),
    ExportFormat("samples-jsonl", "Samples with their CoTs, answers and verdicts (JSON Lines)", ".jsonl", "sample(s)"),
    ExportFormat("samples-csv", "Samples, one row per generated CoT (CSV)", ".csv", "row(s)"),
    ExportFormat("answers-csv", "Answers, one row per answer (CSV)", ".csv", "answer row(s)"),
    ExportFormat("chat-jsonl", "Chat examples for fine-tuning (JSON Lines)", ".jsonl", "chat example(s)"),
    ExportFormat(
        "parquet", "Samples, one row per generated CoT (Parquet, for the Hugging Face Hub)", ".parquet", "row(s)"
    ),
)
FORMATS_BY_KEY = {f.key: f for f in EXPORT_FORMATS}


@dataclass(frozen=True)
class ExportRequest:
    """What the export dialog chose."""

    collection: str
    path: Path
    fmt: str = "thoughtsource"
    filters: ChatFilter = ChatFilter()
    system: str | None = None


def parse_labels(text: str) -> tuple[str, ...]:
    """Label keys typed as ``a, b c``: split at commas and spaces, blanks and repeats dropped."""
    keys: list[str] = []
    for key in text.replace(",", " ").split():
        if key not in keys:
            keys.append(key)
    return tuple(keys)


class ExportDialog(QDialog):
    """The export choices: format, file, and the chat-JSONL filters (enabled for that format)."""

    def __init__(self, collection: str, parent: QWidget | None = None, folder: Path | None = None) -> None:
        super().__init__(parent)
        self.collection = collection
        self.setWindowTitle(f"Export {collection}")
        self.setObjectName("exportDialog")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.format_combo = QComboBox()
        self.format_combo.setObjectName("exportFormat")
        compact_combo(self.format_combo, 40)
        parquet = importlib.util.find_spec("pyarrow") is not None
        for index, fmt in enumerate(EXPORT_FORMATS):
            self.format_combo.addItem(fmt.text, fmt.key)
            if fmt.key == "parquet" and not parquet:
                item = self.format_combo.model().item(index)  # type: ignore[attr-defined]  # a QStandardItemModel
                item.setEnabled(False)
                item.setToolTip(f"needs pyarrow: {parquet_missing_hint()}")
        form.addRow("&Format:", self.format_combo)
        self.path_edit = QLineEdit(str((folder or Path.home()) / f"{collection}.json"))
        self.path_edit.setObjectName("exportPath")
        self.path_edit.setMinimumWidth(320)
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self.browse)
        row = QHBoxLayout()
        row.addWidget(self.path_edit, 1)
        row.addWidget(browse)
        file_label = QLabel("F&ile:")
        file_label.setBuddy(self.path_edit)  # a row holding a layout gets no buddy by itself
        form.addRow(file_label, row)
        layout.addLayout(form)
        self.note = QLabel()
        self.note.setObjectName("exportNote")
        self.note.setWordWrap(True)
        layout.addWidget(self.note)

        self.chat = QGroupBox("Which CoTs become fine-tuning examples")
        self.chat.setObjectName("chatFilters")
        chat = QFormLayout(self.chat)
        self.correct_only = QCheckBox("Only CoTs with an answer judged &correct")
        self.preferred_only = QCheckBox("Only CoTs a reviewer marked &preferred")
        chat.addRow(self.correct_only)
        chat.addRow(self.preferred_only)
        self.labels = QLineEdit()
        self.labels.setObjectName("chatLabels")
        self.labels.setPlaceholderText("label keys set to true, all of them (e.g. faithful, reviewed)")
        chat.addRow("&Labels:", self.labels)
        self.system = QPlainTextEdit()
        self.system.setObjectName("chatSystem")
        self.system.setPlaceholderText("a system message put before every example (optional)")
        self.system.setTabChangesFocus(True)
        self.system.setFixedHeight(self.fontMetrics().lineSpacing() * 4)
        chat.addRow("&System text:", self.system)
        layout.addWidget(self.chat)
        layout.addStretch(1)  # a taller dialog keeps its rows together; the space goes below them

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Export")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.format_combo.currentIndexChanged.connect(self._format_changed)
        self.path_edit.textChanged.connect(self._update_ok)
        self._format_changed()
        self.resize(680, self.sizeHint().height())  # room for a path; still far inside 1366x768

    @property
    def fmt(self) -> ExportFormat:
        """The chosen format."""
        return FORMATS_BY_KEY[self.format_combo.currentData()]

    def set_format(self, key: str) -> None:
        """Choose the format named ``key`` (one of :data:`EXPORT_FORMATS`)."""
        self.format_combo.setCurrentIndex(self.format_combo.findData(key))

    def _format_changed(self) -> None:
        fmt = self.fmt
        self.chat.setEnabled(fmt.key == "chat-jsonl")
        notes = {
            "thoughtsource": "Everything: samples, CoTs, answers, annotations, critiques. Imports back losslessly.",
            "dscb": "One record per generated CoT with its critiques and ratings.",
            "processbench": "One record per CoT with a first error; imported ones equal to the file's.",
            "prm800k": "One line per CoT imported from PRM800K, with the labeler's current step labels.",
            "prm-jsonl": '{"prompt", "completions", "labels"} per CoT and reviewer (TRL\'s stepwise format).',
            "samples-jsonl": "One object per sample with its CoTs, answers, both verdicts and annotations.",
            "samples-csv": "For spreadsheets: a sample without a CoT gets one row with the CoT columns empty.",
            "answers-csv": "Per-answer results with ThoughtDesk's verdicts, for R or pandas.",
            "chat-jsonl": '{"messages": [...]} per CoT kept by the choices below (the format of most trainers).',
            "parquet": "The samples-CSV rows as a Parquet file; imports back with File ▸ Import ▸ Table.",
        }
        self.note.setText(notes[fmt.key])
        text = self.path_edit.text().strip()
        if text:  # keep the name the user chose, with the format's ending
            path = Path(text)
            if path.suffix.lower() in {f.suffix for f in EXPORT_FORMATS} and path.suffix.lower() != fmt.suffix:
                self.path_edit.setText(str(path.with_suffix(fmt.suffix)))
        self._update_ok()

    def _update_ok(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.path_edit.text().strip()))

    def browse(self) -> None:
        """Pick the file in a save dialog (the controller asks before replacing one)."""
        fmt = self.fmt
        chosen, _ = QFileDialog.getSaveFileName(
            self,
            f"Export {self.collection} as {fmt.text}",
            self.path_edit.text().strip() or str(Path.home() / f"{self.collection}{fmt.suffix}"),
            f"{fmt.text} (*{fmt.suffix});;All files (*)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if chosen:
            self.path_edit.setText(chosen)

    def request(self) -> ExportRequest:
        """The export the dialog describes."""
        fmt = self.fmt.key
        chat = fmt == "chat-jsonl"
        filters = (
            ChatFilter(self.correct_only.isChecked(), self.preferred_only.isChecked(), parse_labels(self.labels.text()))
            if chat
            else ChatFilter()
        )
        system = self.system.toPlainText().strip() if chat else ""
        return ExportRequest(
            self.collection, Path(self.path_edit.text().strip()).expanduser(), fmt, filters, system or None
        )
