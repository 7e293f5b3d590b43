"""The fragment editor: instructions, CoT triggers and answer extractions, with undo.

Every change goes through one :class:`QUndoStack` as a snapshot command (the library before and
after; fragments are small immutable records, so a snapshot is a list of references), and is
saved at once through :class:`~thoughtdesk.core.generation.fragment_store.FragmentStore`. Fragment texts
are user data: they are shown in item views and plain-text editors only, never as rich text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.generation.fragment_store import FragmentStore, replace_contents
from thoughtdesk.core.generation.fragments import (
    ALL_KINDS,
    Fragment,
    FragmentImportOutcome,
    FragmentKind,
    FragmentLibrary,
    import_fragments,
)
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QAbstractTableModel,
    QEvent,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QKeyEvent,
    QKeySequence,
    QLineEdit,
    QMessageBox,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    Qt,
    QTableView,
    QTabWidget,
    QUndoCommand,
    QUndoStack,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label

KIND_TITLES: dict[str, str] = {
    "instruction": "Instructions",
    "cot_trigger": "CoT triggers",
    "answer_extraction": "Answer extractions",
    "critique": "Critique prompts",
    "critique_system": "Critique system texts",
    "rationale_extraction": "Rationale extraction",
    "guide": "Guided generation",
    "judge": "Pairwise judge prompts",
    "judge_system": "Pairwise judge system texts",
}
COLUMNS = ("Key", "Text", "Citation", "Source")


class FragmentTableModel(QAbstractTableModel):
    """The fragments of one kind as rows (key, text on one line, citation, source)."""

    def __init__(self, library: FragmentLibrary, kind: FragmentKind, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.kind = kind
        self.rows: list[Fragment] = library.of_kind(kind)

    def reload(self) -> None:
        self.beginResetModel()
        self.rows = self.library.of_kind(self.kind)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # Qt API
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or role != Qt.ItemDataRole.DisplayRole:
            return None
        fragment = self.rows[index.row()]
        # Item views draw DisplayRole as plain text; line breaks are shown as a visible mark.
        values = (fragment.key, fragment.text.replace("\n", " ⏎ "), fragment.citation or "", fragment.source)
        return values[index.column()]

    def row_of(self, key: str) -> int | None:
        return next((row for row, fragment in enumerate(self.rows) if fragment.key == key), None)


class SnapshotCommand(QUndoCommand):
    """One change to the library, undone and redone by swapping whole snapshots."""

    def __init__(
        self,
        editor: FragmentEditor,
        text: str,
        before: list[Fragment],
        after: list[Fragment],
        select_before: tuple[str, str] | None,
        select_after: tuple[str, str] | None,
    ) -> None:
        super().__init__(text)
        self.editor = editor
        self.before, self.after = before, after
        self.select_before, self.select_after = select_before, select_after

    def redo(self) -> None:
        self.editor._restore(self.after, self.select_after)

    def undo(self) -> None:
        self.editor._restore(self.before, self.select_before)


class FragmentEditor(QWidget):
    """Browse and edit the fragment library; ``fragments_changed`` after every saved change."""

    fragments_changed = Signal()

    def __init__(
        self, library: FragmentLibrary, store: FragmentStore | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("fragmentEditor")
        self.setWindowTitle("Prompt fragments")
        self.library = library
        self.store = store
        self.undo_stack = QUndoStack(self)
        self._build()
        self._show_current()
        if store is not None and store.unreadable is not None:
            self._report(
                f"Your saved fragments could not be read ({store.unreadable}); showing the "
                "built-in ones. The file is kept aside at your next change.",
                error=True,
            )

    # Layout ---------------------------------------------------------------------------------

    def _build(self) -> None:
        self.tabs = QTabWidget(objectName="fragmentKinds")
        self.models: dict[str, FragmentTableModel] = {}
        self.views: dict[str, QTableView] = {}
        for kind in ALL_KINDS:
            model = FragmentTableModel(self.library, kind, self)
            view = QTableView(objectName=f"fragments_{kind}")
            view.setModel(model)
            view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
            view.setWordWrap(False)
            view.verticalHeader().setVisible(False)
            view.verticalHeader().setDefaultSectionSize(24)
            view.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
            view.setColumnWidth(0, 140)
            view.selectionModel().currentRowChanged.connect(lambda *_: self._show_current())
            self.models[kind], self.views[kind] = model, view
            self.tabs.addTab(view, KIND_TITLES[kind])
        self.tabs.currentChanged.connect(lambda _: self._show_current())

        self.key_edit = QLineEdit(objectName="fragmentKey")
        self.text_edit = QPlainTextEdit(objectName="fragmentText")
        self.text_edit.setTabChangesFocus(True)
        self.citation_edit = QLineEdit(objectName="fragmentCitation")
        self.citation_edit.setPlaceholderText("e.g. Kojima et al. 2022, Large Language Models are Zero-Shot Reasoners")
        self.note_edit = QLineEdit(objectName="fragmentNote")
        self.source_label = plain_label(name="fragmentSource", wrap=False)
        self.apply_button = QPushButton("&Apply changes", objectName="applyFragment")
        self.apply_button.setToolTip("Save the edited key, text, citation and note (Ctrl+Return)")
        self.apply_button.clicked.connect(self.apply_edits)
        for editor in (self.key_edit, self.text_edit, self.citation_edit, self.note_edit):
            editor.installEventFilter(self)
        form_box = QWidget()
        form = QFormLayout(form_box)
        form.addRow("&Key", self.key_edit)
        form.addRow("&Text", self.text_edit)
        form.addRow("&Citation", self.citation_edit)
        form.addRow("&Note", self.note_edit)
        form.addRow("Source", self.source_label)
        form.addRow("", self.apply_button)

        buttons = QHBoxLayout()
        self.add_button = self._button(buttons, "&New", "newFragment", self.add_new, "Add a fragment of this kind")
        self.duplicate_button = self._button(
            buttons,
            "&Duplicate",
            "duplicateFragment",
            self.duplicate_current,
            "Copy the selected fragment under a new key",
        )
        self.delete_button = self._button(
            buttons,
            "De&lete",
            "deleteFragment",
            self.delete_current,
            "Delete the selected fragment (Undo brings it back)",
        )
        self.import_button = self._button(
            buttons,
            "&Import fragments.json…",
            "importFragments",
            self.import_dialog,
            "Add the fragments of a ThoughtSource or ThoughtDesk fragments file",
        )
        self.restore_button = self._button(
            buttons,
            "Restore built-in",
            "restoreBuiltin",
            self.restore_builtin,
            "Bring back built-in fragments you deleted",
        )
        buttons.addStretch(1)
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcut(QKeySequence.StandardKey.Redo)
        for action in (self.undo_action, self.redo_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.addAction(action)
        self.undo_button = self._button(buttons, "Undo", "undoFragment", self.undo_stack.undo, "Undo (Ctrl+Z)")
        self.redo_button = self._button(buttons, "Redo", "redoFragment", self.undo_stack.redo, "Redo (Ctrl+Shift+Z)")
        self.undo_stack.canUndoChanged.connect(self.undo_button.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.redo_button.setEnabled)
        self.undo_button.setEnabled(False)
        self.redo_button.setEnabled(False)

        self.status = plain_label(name="fragmentStatus")

        splitter = QSplitter()
        splitter.addWidget(self.tabs)
        splitter.addWidget(form_box)
        splitter.setSizes([560, 400])
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.status)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt API
        # Ctrl+Return applies from inside the form; an event filter, because the text editor
        # would otherwise take the key as a line break.
        if (
            isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.apply_edits()
            return True
        return super().eventFilter(watched, event)

    def _button(self, layout: QHBoxLayout, text: str, name: str, slot: Callable[[], object], tip: str) -> QPushButton:
        button = QPushButton(text, objectName=name)
        button.setToolTip(tip)
        button.clicked.connect(slot)
        layout.addWidget(button)
        return button

    # Selection ------------------------------------------------------------------------------

    def current_kind(self) -> FragmentKind:
        return ALL_KINDS[self.tabs.currentIndex()]

    def current_fragment(self) -> Fragment | None:
        kind = self.current_kind()
        index = self.views[kind].currentIndex()
        rows = self.models[kind].rows
        return rows[index.row()] if index.isValid() and index.row() < len(rows) else None

    def select(self, kind: str, key: str) -> bool:
        """Show the fragment ``key`` of ``kind``; False if there is none."""
        self.tabs.setCurrentIndex(ALL_KINDS.index(kind))  # a kind that is not one raises ValueError, as before
        row = self.models[kind].row_of(key)
        if row is None:
            return False
        view = self.views[kind]
        view.selectRow(row)
        view.scrollTo(self.models[kind].index(row, 0))
        self._show_current()
        return True

    def _show_current(self) -> None:
        fragment = self.current_fragment()
        for widget in (
            self.key_edit,
            self.text_edit,
            self.citation_edit,
            self.note_edit,
            self.apply_button,
            self.duplicate_button,
            self.delete_button,
        ):
            widget.setEnabled(fragment is not None)
        self.key_edit.setText(fragment.key if fragment else "")
        self.text_edit.setPlainText(fragment.text if fragment else "")
        self.citation_edit.setText((fragment.citation or "") if fragment else "")
        self.citation_edit.setCursorPosition(0)  # show the authors, not the end of the reference
        self.note_edit.setText((fragment.note or "") if fragment else "")
        if fragment is None:
            self.source_label.setText("")
        else:
            builtin = self.store is not None and self.store.is_builtin(fragment)
            self.source_label.setText(f"{fragment.source}{' (built-in)' if builtin else ''}")

    # Changes --------------------------------------------------------------------------------

    def _change(self, label: str, operation: Callable[[FragmentLibrary], Fragment | None]) -> Fragment | None:
        """Apply ``operation`` to the library as one undoable, saved step; errors are shown."""
        current = self.current_fragment()
        before = list(self.library)
        try:
            result = operation(self.library)
        except ThoughtDeskError as error:
            replace_contents(self.library, before)
            self._report(str(error), error=True)
            return None
        after = list(self.library)
        if after == before:
            return result
        select_before = (current.kind, current.key) if current else None
        select_after = (result.kind, result.key) if result is not None else None
        self.undo_stack.push(SnapshotCommand(self, label, before, after, select_before, select_after))
        self._report(label)
        return result

    def _restore(self, fragments: list[Fragment], select: tuple[str, str] | None) -> None:
        """Set the library to a snapshot, refresh the views, save, and tell listeners."""
        replace_contents(self.library, fragments)
        for model in self.models.values():
            model.reload()
        if select is not None and (select[0], select[1]) in self.library:
            self.select(*select)
        else:
            self._show_current()
        self._save()
        self.fragments_changed.emit()

    def _save(self) -> None:
        if self.store is None:
            return
        try:
            self.store.save(self.library)
        except OSError as error:
            self._report(
                f"Could not save your fragments to {self.store.path}: {error}. "
                "Check that the folder is writable; your changes are kept while the app is open.",
                error=True,
            )

    def _report(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #b3261e;" if error else "")

    def add_new(self, text: str | None = None, key: str | None = None) -> Fragment | None:
        """Add a fragment of the current kind (a placeholder text to edit when none is given)."""
        kind = self.current_kind()
        if key is None:
            number = len(self.library.of_kind(kind)) + 1
            key = f"my-{kind.replace('_', '-')}-{number}"
            while (kind, key) in self.library:
                number += 1
                key = f"my-{kind.replace('_', '-')}-{number}"
        fragment = Fragment(key=key, kind=kind, text=text or "New fragment: write its text here.", source="user")
        added = self._change(f"Add {key}", lambda lib: lib.add(fragment))
        if added is not None and text is None:
            self.text_edit.setFocus()
            self.text_edit.selectAll()
        return added

    def apply_edits(self) -> Fragment | None:
        """Save the form's key, text, citation and note into the selected fragment."""
        fragment = self.current_fragment()
        if fragment is None:
            return None
        key, text = self.key_edit.text().strip(), self.text_edit.toPlainText()
        citation, note = self.citation_edit.text().strip(), self.note_edit.text().strip()
        if (key, text, citation, note) == (fragment.key, fragment.text, fragment.citation or "", fragment.note or ""):
            return fragment
        return self._change(
            f"Edit {fragment.key}",
            lambda lib: lib.edit(fragment.kind, fragment.key, text=text, new_key=key, citation=citation, note=note),
        )

    def duplicate_current(self) -> Fragment | None:
        fragment = self.current_fragment()
        if fragment is None:
            return None
        return self._change(f"Duplicate {fragment.key}", lambda lib: lib.duplicate(fragment.kind, fragment.key))

    def delete_current(self) -> Fragment | None:
        fragment = self.current_fragment()
        if fragment is None:
            return None
        row = self.views[fragment.kind].currentIndex().row()

        def delete(lib: FragmentLibrary) -> Fragment | None:
            lib.delete(fragment.kind, fragment.key)
            remaining = lib.of_kind(fragment.kind)
            return remaining[min(row, len(remaining) - 1)] if remaining else None

        self._change(f"Delete {fragment.key}", delete)
        return fragment

    def restore_builtin(self) -> list[Fragment]:
        store = self.store
        if store is None:
            return []
        restored: list[Fragment] = []

        def restore(lib: FragmentLibrary) -> Fragment | None:
            restored.extend(store.restore_builtin(lib))
            return restored[0] if restored else None

        self._change("Restore built-in fragments", restore)
        if not restored:
            self._report("Every built-in fragment is present.")
        return restored

    def import_file(self, path: str | Path, *, replace_conflicts: bool = False) -> FragmentImportOutcome | None:
        """Merge a ThoughtSource or ThoughtDesk fragments file, or DS Critique Bank's
        DSCB-prompts.json (critique template and student prompts), as one undoable step."""
        path = Path(path)
        report: list[FragmentImportOutcome] = []

        def merge(lib: FragmentLibrary) -> Fragment | None:
            report.append(import_fragments(lib, path, on_conflict="replace" if replace_conflicts else "keep"))
            changed = report[0].added + report[0].replaced
            return changed[0] if changed else None

        self._change(f"Import {path.name}", merge)
        if not report:
            return None
        result = report[0]
        parts = [
            f"{len(result.added)} added",
            f"{len(result.replaced)} replaced",
            f"{result.unchanged} already present",
        ]
        if result.conflicts:
            keys = ", ".join(f"{f.key} ({KIND_TITLES[f.kind].lower().removesuffix('s')})" for f in result.conflicts[:6])
            parts.append(f"{len(result.conflicts)} kept as they were because your text differs: {keys}")
        self._report(f"Imported {path.name}: " + "; ".join(parts) + ".")
        return result

    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Import prompt fragments",
            str(Path.home()),
            "Fragments or DSCB-prompts.json (*.json);;All files (*)",
        )
        if not path:
            return
        result = self.import_file(path)
        if result is None or not result.conflicts:
            return
        answer = QMessageBox.question(
            self,
            "Fragments with the same key",
            f"{len(result.conflicts)} fragment(s) in {Path(path).name} have keys you already use with "
            "another text. Replace your texts with the imported ones? (Undo reverts it.)",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.import_file(path, replace_conflicts=True)
