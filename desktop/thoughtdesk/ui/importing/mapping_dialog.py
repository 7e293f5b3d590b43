"""The generic-import mapping dialog: which column is the question, choices, answer, CoT...

For a JSON, JSON Lines, CSV or TSV file that is not a known dataset. Every change to the
mapping refreshes a preview of the first rows as they would be stored, with the reason shown in
the row for a record that cannot be mapped. Mappings are saved by name (``SavedMappings``, a
JSON file in the user config folder) and can be loaded again for the next file.
"""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.datasets import ColumnMapping, preview
from thoughtdesk.core.datasets.generic import first_row_is_data, head_records
from thoughtdesk.core.datasets.mapping_preview import PreviewRow, preview_mapping
from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.importing.mappings import SavedMappings
from thoughtdesk.core.library.records import ANSWER_TYPES
from thoughtdesk.ui.importing.widgets import ImportRequest, ImportTargetBox
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTimer,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked
from thoughtdesk.ui.widgets.sizing import compact_combo, fit_to_screen

#: Optional mapping fields, in form order: (attribute, label).
OPTIONAL_FIELDS = (
    ("answer", "Answer"),
    ("cot", "Reference CoT"),
    ("context", "Context"),
    ("id", "Id"),
    ("split", "Split"),
)
ANSWER_FORMATS = (
    ("auto", "auto (text, letter or 1-based number)"),
    ("text", "choice text"),
    ("letter", "letter A, B, …"),
    ("index1", "number, 1-based"),
    ("index0", "number, 0-based"),
)
PREVIEW_HEADERS = ("line", "split", "id", "question", "choices", "answer", "reference CoT", "context", "error")
#: Preview column widths in pixels (line and split are short; the question needs room).
PREVIEW_WIDTHS = {
    "line": 48,
    "split": 80,
    "id": 120,
    "question": 280,
    "choices": 200,
    "answer": 140,
    "reference CoT": 220,
    "context": 120,
}
NONE_TEXT = "(none)"


class MappingDialog(QDialog):
    """Map a table file's columns to sample fields, preview, save/load mappings, import."""

    def __init__(
        self,
        path: Path,
        collections: list[str],
        parent: QWidget | None = None,
        *,
        saved: SavedMappings | None = None,
        preview_rows: int = 8,
        collection: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mappingDialog")
        self.setWindowTitle("Import a table with a column mapping")
        fit_to_screen(self, 1000, 720)
        self.path = Path(path)
        self.saved = saved or SavedMappings()
        self.preview_rows = preview_rows
        self.columns: list[str] = []
        self.rows: list[PreviewRow] = []
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(f"File: {self.path}", name="fileLabel"))

        saved_row = QHBoxLayout()
        self.saved_combo = QComboBox(objectName="savedCombo")
        self.load_button = QPushButton("Load", objectName="loadMappingButton")
        self.save_name = QLineEdit(objectName="saveNameEdit")
        self.save_name.setPlaceholderText("name to save this mapping as")
        self.save_button = QPushButton("Save mapping", objectName="saveMappingButton")
        for widget, stretch in (
            (plain_label("Saved mappings:", wrap=False), 0),
            (self.saved_combo, 1),
            (self.load_button, 0),
            (self.save_name, 1),
            (self.save_button, 0),
        ):
            saved_row.addWidget(widget, stretch)
        layout.addLayout(saved_row)

        mapping_box = QGroupBox("Columns")
        # Two columns of fields, so the preview below keeps most of the dialog's height.
        columns = QHBoxLayout(mapping_box)
        answer_form, other_form = QFormLayout(), QFormLayout()
        columns.addLayout(answer_form, 1)
        columns.addSpacing(16)
        columns.addLayout(other_form, 1)
        self.question = QComboBox(objectName="map_question")
        answer_form.addRow("Question:", self.question)
        self.choices = QComboBox(objectName="map_choices")
        self.choices.setEditable(True)
        self.choices.setToolTip("one column holding a list, or several columns separated by |")
        choices_edit = self.choices.lineEdit()  # an editable combo box always has one
        if choices_edit is not None:
            choices_edit.setPlaceholderText("a list column, or col1|col2|…")
        answer_form.addRow("Choices:", self.choices)
        self.optional: dict[str, QComboBox] = {}
        for attribute, label in OPTIONAL_FIELDS:
            combo = QComboBox(objectName=f"map_{attribute}")
            self.optional[attribute] = combo
            (answer_form if attribute == "answer" else other_form).addRow(f"{label}:", combo)
        self.answer_type = QComboBox(objectName="map_answer_type")
        self.answer_type.addItems(list(ANSWER_TYPES))
        self.answer_type.setCurrentText("text")  # until a choices column is found or chosen
        answer_form.addRow("Answer type:", self.answer_type)
        self.answer_format = QComboBox(objectName="map_answer_format")
        for value, text in ANSWER_FORMATS:
            self.answer_format.addItem(text, value)
        answer_form.addRow("Answer holds:", self.answer_format)
        # Entries are column names, or a headerless file's first row (a whole question): the
        # combo boxes must not be as wide as them, or the dialog outgrows a laptop screen.
        for combo in (self.saved_combo, self.question, self.choices, *self.optional.values(), self.answer_format):
            compact_combo(combo)
        self.dataset_name = QLineEdit(self.path.stem, objectName="datasetNameEdit")
        other_form.addRow("Dataset name:", self.dataset_name)
        self.no_header = QCheckBox("First row is data (no header): columns by position", objectName="noHeaderCheck")
        self.no_header.setToolTip("For CSV/TSV files without a header row, such as MMLU's: columns are named 1, 2, 3…")
        self.no_header.setEnabled(self.path.suffix.lower() in (".csv", ".tsv"))
        self.no_header.setChecked(first_row_is_data(self.path))  # detected; the user can change it
        other_form.addRow("", self.no_header)
        layout.addWidget(mapping_box)

        self.table = QTableWidget(0, len(PREVIEW_HEADERS), objectName="previewTable")
        self.table.setHorizontalHeaderLabels(list(PREVIEW_HEADERS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)  # one line per record; the tooltip has the whole text
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        for name, width in PREVIEW_WIDTHS.items():
            self.table.setColumnWidth(PREVIEW_HEADERS.index(name), width)
        layout.addWidget(self.table, 1)
        self.status = plain_label(name="previewStatus")
        layout.addWidget(self.status)
        # Into the collection selected in the tree, if any; else named after the file.
        self.target = ImportTargetBox(collections, collection or self.path.stem)
        layout.addWidget(self.target)
        self.error_label = plain_label(name="errorLabel")
        self.error_label.setStyleSheet("color: #b3261e;")
        layout.addWidget(self.error_label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.import_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.import_button.setText("Import")
        buttons.accepted.connect(self.try_accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        self._timer = QTimer(self, singleShot=True, interval=120)
        self._timer.timeout.connect(self.refresh_preview)
        self._load_columns()
        for combo in (self.question, self.choices, self.answer_type, self.answer_format, *self.optional.values()):
            combo.currentIndexChanged.connect(lambda _: self._timer.start())
        self.choices.editTextChanged.connect(lambda _: self._timer.start())
        self.no_header.toggled.connect(lambda _: self._header_toggled())
        self.target.collection.editTextChanged.connect(lambda _: self._update_import_button())
        self.load_button.clicked.connect(lambda: self.load_saved(self.saved_combo.currentText()))
        self.save_button.clicked.connect(lambda: self.save_current(self.save_name.text()))
        self._reload_saved_names()
        self.refresh_preview()

    # Columns and mapping --------------------------------------------------------------------

    def _load_columns(self) -> None:
        # The first records are read once; every change of the mapping re-maps these.
        self._head = None
        for combo in (self.question, self.choices, *self.optional.values()):
            combo.clear()
        try:
            self._head = head_records(self.path, max(20, self.preview_rows), header=not self.no_header.isChecked())
            self.columns, _ = preview(self.path, 20, records=self._head)
        except ThoughtDeskError as error:
            self.columns = []
            self.status.setText(str(error))
        self.question.addItems(self.columns)
        self.choices.addItem("")
        self.choices.addItems(self.columns)
        for combo in self.optional.values():
            combo.addItem(NONE_TEXT, None)
            for column in self.columns:
                combo.addItem(column, column)
        if self.no_header.isChecked():
            self._guess_by_position()
        else:
            self._guess()

    def _header_toggled(self) -> None:
        self._load_columns()
        self.refresh_preview()

    def _guess_by_position(self) -> None:
        """A headerless table: the question first; if the last column holds letters (A, B, ...),
        the columns between are the choices (MMLU's layout)."""
        if not self.columns:
            return
        self.question.setCurrentText(self.columns[0])
        last = self.columns[-1]
        values = [r.get(last, "") for _, r in self._head or [] if isinstance(r, dict)]
        if len(self.columns) >= 3 and values and all(len(v.strip()) == 1 and v.strip().isalpha() for v in values):
            self.choices.setCurrentText("|".join(self.columns[1:-1]))
            self.set_field("answer", last)
            self.answer_type.setCurrentText("multiplechoice")
            self.answer_format.setCurrentIndex(max(0, self.answer_format.findData("letter")))

    def _guess(self) -> None:
        """Preselect columns whose names say what they are (question, answer, ...)."""
        lowered = {column.lower(): column for column in self.columns}
        guesses = {
            "question": ("question", "problem", "stem", "query", "prompt", "text"),
            "answer": ("answer", "label", "answerkey", "correct", "target"),
            "cot": ("explanation", "rationale", "cot", "exp", "solution"),
            "context": ("context", "passage", "paragraph"),
            "id": ("id", "qid", "uid"),
            "split": ("split",),
        }
        for attribute, names in guesses.items():
            column = next((lowered[name] for name in names if name in lowered), None)
            if column is None:
                continue
            if attribute == "question":
                self.question.setCurrentText(column)
            else:
                self.set_field(attribute, column)
        choice = next((lowered[n] for n in ("choices", "options") if n in lowered), None)
        if choice is not None:
            self.choices.setCurrentText(choice)
            self.answer_type.setCurrentText("multiplechoice")

    def set_field(self, attribute: str, column: str | None) -> None:
        """Map sample field ``attribute`` (answer, cot, context, id, split) to ``column``."""
        combo = self.optional[attribute]
        index = combo.findData(column) if column is not None else 0
        if column is not None and index < 0:  # a nested key (a.b) or a column not in the first rows
            combo.addItem(column, column)
            index = combo.count() - 1
        combo.setCurrentIndex(index)

    def mapping(self) -> ColumnMapping:
        """The mapping as currently chosen; ``ValueError`` when it is incomplete."""
        choices = [c.strip() for c in self.choices.currentText().split("|") if c.strip()]
        return ColumnMapping(
            question=self.question.currentText(),
            choices=choices,
            answer_type=self.answer_type.currentText(),
            answer_format=self.answer_format.currentData(),
            header=not self.no_header.isChecked(),
            **{attribute: combo.currentData() for attribute, combo in self.optional.items()},
        )

    def apply_mapping(self, mapping: ColumnMapping) -> None:
        """Show ``mapping`` in the form (e.g. a saved one) and refresh the preview."""
        if self.no_header.isChecked() == mapping.header:  # a saved mapping says whether row 1 is data
            with blocked(self.no_header):  # the columns are reloaded right here, once
                self.no_header.setChecked(not mapping.header)
            self._load_columns()
        if self.question.findText(mapping.question) < 0:
            self.question.addItem(mapping.question)
        self.question.setCurrentText(mapping.question)
        self.choices.setCurrentText("|".join(mapping.choices))
        for attribute in self.optional:
            self.set_field(attribute, getattr(mapping, attribute))
        self.answer_type.setCurrentText(mapping.answer_type)
        self.answer_format.setCurrentIndex(max(0, self.answer_format.findData(mapping.answer_format)))
        self.refresh_preview()

    # Preview --------------------------------------------------------------------------------

    def problem(self) -> str | None:
        """Why the dialog cannot import yet (the Import button waits), or None."""
        if not self.columns:
            return "The file has no columns to map."
        try:
            self.mapping()
        except ValueError as error:
            return str(error)
        if self.rows and all(item.error for item in self.rows):
            return "None of the first records can be mapped: see the preview."
        if not self.target.collection_name:
            return "Name the collection to import into."
        return None

    def _update_import_button(self) -> None:
        problem = self.problem()
        self.import_button.setEnabled(problem is None)
        self.import_button.setToolTip(problem or "")

    def refresh_preview(self) -> None:
        """Map the first rows with the current mapping and show them (errors inline)."""
        self._timer.stop()
        try:
            self._show_preview()
        finally:
            self._update_import_button()

    def _show_preview(self) -> None:
        try:
            self.rows = preview_mapping(self.path, self.mapping(), self.preview_rows, records=self._head)
        except (ValueError, ThoughtDeskError) as error:
            self.rows = []
            self.table.setRowCount(0)
            self.status.setText(f"Cannot preview: {error}")
            return
        self.table.setRowCount(len(self.rows))
        for row, item in enumerate(self.rows):
            for column, text in enumerate(_cells(item)):
                cell = QTableWidgetItem(text)  # items show plain text, never markup
                cell.setToolTip(text[:2000])
                self.table.setItem(row, column, cell)
        bad = sum(1 for item in self.rows if item.error)
        self.status.setText(
            f"First {len(self.rows)} record(s) as they would be stored; {bad} cannot be mapped."
            if bad
            else f"First {len(self.rows)} record(s) as they would be stored."
        )

    def preview_texts(self) -> list[list[str]]:
        """The preview table's cells (for tests and screen readers)."""
        return [
            [
                item.text() if (item := self.table.item(r, c)) is not None else ""
                for c in range(self.table.columnCount())
            ]
            for r in range(self.table.rowCount())
        ]

    # Saved mappings -------------------------------------------------------------------------

    def _reload_saved_names(self) -> None:
        self.saved_combo.clear()
        try:
            self.saved_combo.addItems(self.saved.names())
        except ThoughtDeskError as error:
            self.error_label.setText(str(error))
        self.load_button.setEnabled(self.saved_combo.count() > 0)

    def save_current(self, name: str) -> bool:
        try:
            self.saved.save(name, self.mapping())
        except (ValueError, OSError, ThoughtDeskError) as error:
            self.error_label.setText(f"Cannot save the mapping: {error}")
            return False
        self._reload_saved_names()
        self.saved_combo.setCurrentText(name.strip())
        self.error_label.setText("")
        self.status.setText(f"Mapping saved as {name.strip()!r}.")
        return True

    def load_saved(self, name: str) -> bool:
        try:
            mapping = self.saved.get(name)
        except (KeyError, ThoughtDeskError) as error:
            self.error_label.setText(f"Cannot load mapping {name!r}: {error}")
            return False
        self.apply_mapping(mapping)
        return True

    # Result ---------------------------------------------------------------------------------

    def request(self) -> ImportRequest:
        if not self.target.collection_name:
            raise ValueError("Name the collection to import into.")
        return ImportRequest(
            path=self.path,
            collection=self.target.collection_name,
            dataset=self.dataset_name.text().strip() or self.path.stem,
            mapping=self.mapping(),
            on_duplicate=self.target.on_duplicate.currentData(),
            on_error=self.target.on_error.currentData(),
        )

    def try_accept(self) -> None:
        try:
            self.request()
        except ValueError as error:
            self.error_label.setText(str(error))
            return
        self.accept()


def _cells(item: PreviewRow) -> list[str]:
    line = "" if item.line is None else str(item.line)
    if item.sample is None:
        return [line, "", "", "", "", "", "", "", item.error or ""]
    s = item.sample
    cot = " ".join(step for step in s.cot if isinstance(step, str)) if isinstance(s.cot, list) else ""
    return [
        line,
        item.split or "",
        s.id,
        s.question,
        " | ".join(str(c) for c in s.choices or ()),
        ", ".join(str(a) for a in s.answer or ()),
        cot,
        s.context or "",
        "",
    ]


def choose_table_file(parent: QWidget) -> Path | None:
    """A file picker for table files; ``None`` when cancelled."""
    path, _ = QFileDialog.getOpenFileName(
        parent,
        "Table to import",
        str(Path.home()),
        "Tables (*.json *.jsonl *.jsonlines *.ndjson *.csv *.tsv *.parquet);;All files (*)",
    )
    return Path(path) if path else None
