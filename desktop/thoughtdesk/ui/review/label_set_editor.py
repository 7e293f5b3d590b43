"""Review ▸ Edit label sets…: define, change and delete the label sets reviewers annotate with.

A label set is a name and an ordered list of labels, each with a colour (``#rrggbb``, used for
span marks) and an optional number key 1-9. Built-in sets (ThoughtSource's four labels, the
clinical set) cannot be changed: editing one and saving makes a copy under a new name. Saving
goes through :func:`thoughtdesk.core.review.save_label_set`, whose checks (a name, no label
twice, no key twice) are shown in the dialog, which then stays open.

A label's stored key is its name when it is created; renaming a label of a saved set keeps the
old key, so annotations made with it stay attached. Every cell is plain text.
"""

from __future__ import annotations

import re

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import Label, LabelSet, delete_label_set, label_sets, save_label_set
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QBrush,
    QColor,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked

COLUMNS = ("Label", "Colour", "Key")
NAME_COLUMN, COLOUR_COLUMN, KEY_COLUMN = range(3)
#: Colours given to new labels in turn (mid-tones: readable as marks in both themes).
NEW_LABEL_COLOURS = ("#d9534f", "#f0ad4e", "#5bc0de", "#9b59b6", "#16a085", "#2980b9", "#e67e22", "#7f8c8d", "#c0392b")
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
#: Item data role holding a row's stored label key (None for a label added in this dialog).
KEY_ROLE = Qt.ItemDataRole.UserRole


class LabelSetEditor(QDialog):
    """Edit one label set at a time; ``saved(name)`` after a save, ``deleted(name)`` after a delete."""

    saved = Signal(str)
    deleted = Signal(str)

    def __init__(self, library: Library, current: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("labelSetEditor")
        self.setWindowTitle("Label sets")
        self.library = library
        self._sets: dict[str, LabelSet] = {}
        self._editing: str | None = None  # the user set being changed (None: a new set or a copy)
        self.set_box = QComboBox(objectName="labelSetPicker")
        self.set_box.currentTextChanged.connect(self._load_set)
        self.new_button = QPushButton("New set", objectName="newLabelSet")
        self.new_button.clicked.connect(self.new_set)
        self.delete_button = QPushButton("Delete set…", objectName="deleteLabelSet")
        self.delete_button.clicked.connect(lambda: self.delete_current())
        self.name = QLineEdit(objectName="labelSetName")
        self.note = plain_label("", name="labelSetNote", selectable=True, keep_height=True)
        self.table = QTableWidget(0, len(COLUMNS), objectName="labelTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COLOUR_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(KEY_COLUMN, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemChanged.connect(self._item_changed)
        row_buttons = QHBoxLayout()
        for text, name, slot in (
            ("Add label", "addLabel", self.add_label),
            ("Remove label", "removeLabel", self.remove_label),
            ("Move up", "labelUp", lambda: self.move_label(-1)),
            ("Move down", "labelDown", lambda: self.move_label(+1)),
        ):
            button = QPushButton(text, objectName=name)
            button.clicked.connect(slot)
            row_buttons.addWidget(button)
        row_buttons.addStretch(1)
        self.error = plain_label("", name="labelSetError", selectable=True, keep_height=True)
        self.error.setStyleSheet("color: #b3261e;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)

        top = QHBoxLayout()
        top.addWidget(plain_label("Set", selectable=True, keep_height=True))
        top.addWidget(self.set_box, 1)
        top.addWidget(self.new_button)
        top.addWidget(self.delete_button)
        name_row = QHBoxLayout()
        name_row.addWidget(plain_label("Name", selectable=True, keep_height=True))
        name_row.addWidget(self.name, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(name_row)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        layout.addLayout(row_buttons)
        help_text = plain_label(
            "Colour: #rrggbb, behind span labels. Key: the number 1–9 that toggles the label, or empty.",
            selectable=True,
            keep_height=True,
        )
        layout.addWidget(help_text)
        layout.addWidget(self.error)
        for label in (self.note, help_text, self.error):  # extra height goes to the table
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout.addWidget(buttons)
        self.resize(640, 540)
        self._fill_sets(current)

    # ---- loading ------------------------------------------------------------------------------

    def _fill_sets(self, current: str | None) -> None:
        self._sets = {s.name: s for s in label_sets(self.library)}
        with blocked(self.set_box):
            self.set_box.clear()
            self.set_box.addItems(list(self._sets))
            if current in self._sets:
                self.set_box.setCurrentText(current)
        self._load_set(self.set_box.currentText())

    def _load_set(self, name: str) -> None:
        chosen = self._sets.get(name)
        if chosen is None:
            return
        self.delete_button.setEnabled(not chosen.builtin)
        self._editing = None if chosen.builtin else chosen.name
        if chosen.builtin:
            self.name.setText(self._free_name(f"{chosen.name} (my copy)"))
            self.note.setText(
                f"“{chosen.name}” is built in and cannot be changed: saving makes a copy under the name above."
            )
        else:
            self.name.setText(chosen.name)
            self.note.setText("")
        self._fill_table(chosen.labels, keep_keys=not chosen.builtin)
        self.error.setText("")

    def _free_name(self, wanted: str) -> str:
        name, number = wanted, 2
        while name in self._sets:
            name, number = f"{wanted} {number}", number + 1
        return name

    def _fill_table(self, labels: tuple[Label, ...], *, keep_keys: bool) -> None:
        with blocked(self.table):
            self.table.setRowCount(0)
            for label in labels:
                self._append_row(label.name, label.colour, label.shortcut, label.key if keep_keys else None)

    def _append_row(self, name: str, colour: str, shortcut: int | None, key: str | None) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        name_item = QTableWidgetItem(name)
        name_item.setData(KEY_ROLE, key)
        self.table.setItem(row, NAME_COLUMN, name_item)
        self.table.setItem(row, COLOUR_COLUMN, QTableWidgetItem(colour))
        self.table.setItem(row, KEY_COLUMN, QTableWidgetItem("" if shortcut is None else str(shortcut)))
        self._show_swatch(row)
        return row

    def _show_swatch(self, row: int) -> None:
        item = self.table.item(row, COLOUR_COLUMN)
        if item is not None and _COLOUR.match(item.text().strip()):
            item.setData(Qt.ItemDataRole.DecorationRole, QColor(item.text().strip()))
        elif item is not None:
            item.setData(Qt.ItemDataRole.DecorationRole, None)
            item.setForeground(QBrush(QColor("#b3261e")))

    def _item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() == COLOUR_COLUMN:
            with blocked(self.table):
                self._show_swatch(item.row())

    # ---- editing ------------------------------------------------------------------------------

    def new_set(self) -> None:
        """Start an empty set under a free name (saved only by Save)."""
        self.name.setText(self._free_name("My labels"))
        self.note.setText("A new set: add its labels, then save.")
        self.delete_button.setEnabled(False)
        self._editing = None
        self._fill_table((), keep_keys=False)
        self.add_label()

    def add_label(self) -> int:
        """Add an empty label row with a colour and a number key no other label has; returns the row."""
        used = {self._text(r, KEY_COLUMN) for r in range(self.table.rowCount())}
        free = next((d for d in range(1, 10) if str(d) not in used), None)
        taken = {self._text(r, COLOUR_COLUMN).lower() for r in range(self.table.rowCount())}
        colour = next(
            (c for c in NEW_LABEL_COLOURS if c not in taken),
            NEW_LABEL_COLOURS[self.table.rowCount() % len(NEW_LABEL_COLOURS)],
        )
        with blocked(self.table):
            row = self._append_row("", colour, free, None)
        self.table.setCurrentCell(row, NAME_COLUMN)
        name_item = self.table.item(row, NAME_COLUMN)
        if name_item is not None:
            self.table.editItem(name_item)
        return row

    def _text(self, row: int, column: int) -> str:
        """A cell's text, stripped ("" for a cell without an item)."""
        item = self.table.item(row, column)
        return item.text().strip() if item is not None else ""

    def remove_label(self) -> None:
        row = self.table.currentRow()
        if row >= 0:
            self.table.removeRow(row)

    def move_label(self, step: int) -> None:
        """Move the current label up (-1) or down (+1): the order is the panel's order."""
        row = self.table.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.table.rowCount():
            return
        with blocked(self.table):
            for column in range(len(COLUMNS)):
                upper, lower = self.table.takeItem(row, column), self.table.takeItem(target, column)
                self.table.setItem(row, column, lower)
                self.table.setItem(target, column, upper)
        self.table.setCurrentCell(target, NAME_COLUMN)

    def label_set(self) -> LabelSet:
        """The set as the dialog shows it; ``ValueError`` naming the row for a bad colour or key."""
        labels = []
        for row in range(self.table.rowCount()):
            name = self._text(row, NAME_COLUMN)
            if not name:
                raise ValueError(f"label {row + 1} has no name")
            colour = self._text(row, COLOUR_COLUMN)
            if not _COLOUR.match(colour):
                raise ValueError(f"label {row + 1} ({name}): the colour must look like #d9534f, not {colour!r}")
            digit = self._text(row, KEY_COLUMN)
            if digit and (not digit.isdigit() or not 1 <= int(digit) <= 9):
                raise ValueError(f"label {row + 1} ({name}): the key is a digit 1 to 9 or empty, not {digit!r}")
            name_item = self.table.item(row, NAME_COLUMN)
            key = (name_item.data(KEY_ROLE) if name_item is not None else None) or name
            labels.append(Label(key, name, colour.lower(), int(digit) if digit else None))
        if not labels:
            raise ValueError("a label set needs at least one label")
        return LabelSet(self.name.text().strip(), tuple(labels))

    def save(self) -> bool:
        """Save the set shown (the dialog closes); a problem is shown and the dialog stays open.

        Changing the name of a user set renames it; a name another set has is refused.
        """
        try:
            wanted = self.label_set()
            if wanted.name in self._sets and wanted.name != self._editing:
                kind = "built-in set" if self._sets[wanted.name].builtin else "label set"
                raise ValueError(f"there is already a {kind} called “{wanted.name}”: choose another name")
            saved = save_label_set(self.library, wanted)
            if self._editing is not None and self._editing != saved.name:
                delete_label_set(self.library, self._editing)  # a rename, not a copy
        except (ValueError, KeyError) as error:
            self.error.setText(str(error))
            return False
        self.saved.emit(saved.name)
        self.accept()
        return True

    def delete_current(self, *, confirm: bool = True) -> bool:
        """Delete the chosen user set (after asking); annotations made with it stay."""
        name = self.set_box.currentText()
        chosen = self._sets.get(name)
        if chosen is None or chosen.builtin:
            return False
        if confirm:
            box = QMessageBox(
                QMessageBox.Icon.Question,
                "Delete label set",
                f"Delete the label set “{name}”? Annotations made with it are kept.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                self,
            )
            box.setTextFormat(Qt.TextFormat.PlainText)
            if box.exec() != QMessageBox.StandardButton.Yes:
                return False
        try:
            delete_label_set(self.library, name)
        except (KeyError, ValueError) as error:
            self.error.setText(str(error))
            return False
        self.deleted.emit(name)
        self._fill_sets(None)
        return True
