"""Installs the Review tab (Ctrl+2) and the "&Review" menu into the main window.

The :class:`ReviewController` connects the :class:`~thoughtdesk.ui.review.view.ReviewView` to
the window: it follows ``sample_selected`` and ``library_changed``, tells the window about
edits (debounced ``notify_data_changed``), and runs queues, import, export and agreement (file
work in the background through ``window.run_task``, each with its own ``Library``).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from thoughtdesk.core.library.store import Library
from thoughtdesk.core.review import (
    QueueFilter,
    agreement_table,
    create_queue,
    export_annotations,
    import_annotations,
    list_queues,
    load_queue,
)
from thoughtdesk.ui.qt import (
    QAction,
    QFileDialog,
    QInputDialog,
    QKeySequence,
    QLineEdit,
    QObject,
    QSettings,
    Qt,
)
from thoughtdesk.ui.review.dialogs import (
    AgreementDialog,
    QueueDialog,
    TextReportDialog,
    merge_report_text,
)
from thoughtdesk.ui.review.view import ReviewView

ACTIVE_QUEUE_SETTING = "review/activeQueue/"


class ReviewController(QObject):
    """Glue between the main window and the Review tab (see the module docstring)."""

    def __init__(self, window, view: ReviewView) -> None:
        super().__init__(view)
        self.window = window
        self.view = view
        self.last_dialog = None  # the last report/agreement dialog (tests look at it)
        self.last_report = None
        self.last_agreement = None
        self._own_change = False
        self._stale = False  # data changed elsewhere while the tab was hidden
        view.sample_neighbour = self._neighbour
        view.message.connect(lambda text: window.statusBar().showMessage(text, 8000))
        view.annotationsChanged.connect(self._notify)
        window.library_changed.connect(self._library_changed)
        window.sample_selected.connect(self._sample_selected)
        window.data_changed.connect(self._data_changed)
        window.tabs.currentChanged.connect(self._tab_changed)
        self._build_menu()

    # ---- menu ---------------------------------------------------------------------------------

    def _build_menu(self) -> None:
        w, view = self.window, self.view
        menu = w.menu("&Review")
        self.menu = menu
        w.add_action(menu, "&New review queue…", None, self.new_queue_dialog)
        w.add_action(menu, "&Open review queue…", None, self.open_queue_dialog)
        w.add_action(menu, "&Leave the queue", None, self.leave_queue)
        menu.addSeparator()
        self.blind_action = QAction("&Blind mode (hide model and prompt)", w, checkable=True)
        self.blind_action.setChecked(view.blind)
        self.blind_action.setShortcut(QKeySequence("Ctrl+Shift+B"))
        self.blind_action.toggled.connect(view.set_blind)
        menu.addAction(self.blind_action)
        w.addAction(self.blind_action)
        w.add_action(menu, "Set my reviewer &name…", None, self.name_dialog)
        w.add_action(menu, "Edit &label sets…", None, self.label_set_dialog)
        menu.addSeparator()
        # Undo/redo keys are handled by the view's key filter (so a text editor keeps its own
        # Ctrl+Z); these menu entries show them and work by mouse.
        self.undo_action = view.undo_stack.createUndoAction(w, "&Undo")
        self.redo_action = view.undo_stack.createRedoAction(w, "&Redo")
        for action, keys in ((self.undo_action, "Ctrl+Z"), (self.redo_action, "Ctrl+Shift+Z")):
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            view.addAction(action)
            menu.addAction(action)
        menu.addSeparator()
        w.add_action(menu, "&Export my annotations…", None, self.export_dialog)
        w.add_action(menu, "&Import a colleague's annotations…", None, self.import_dialog)
        w.add_action(menu, "&Agreement between reviewers…", None, self.show_agreement)

    # ---- following the window -----------------------------------------------------------------

    def _library_changed(self, library: Library) -> None:
        self.view.set_library(library)
        queue_id = QSettings().value(ACTIVE_QUEUE_SETTING + str(library.path), None)
        if queue_id is not None:
            try:
                self._resume_queue(load_queue(library, int(queue_id)))
            except (KeyError, ValueError, TypeError):
                QSettings().remove(ACTIVE_QUEUE_SETTING + str(library.path))

    def _sample_selected(self, pk: int | None) -> None:
        if pk is None or self._own_change:
            return
        queue = self.view.queue
        if queue is not None:
            if pk in queue.sample_pks:  # jump inside the queue; other samples leave it alone
                self.view.when_shown(lambda: self.view.go_to_queue_index(queue.sample_pks.index(pk)))
            return
        if self.view.stored is None or self.view.stored.pk != pk:
            self.view.when_shown(lambda: self.view.show_sample(pk))

    def _neighbour(self, pk: int | None, step: int) -> int | None:
        model = self.window.model
        row = model.row_of(pk) if pk is not None else None
        if row is None:
            return model.key_at(0)
        return model.key_at(row + step)

    def _tab_changed(self, _index: int) -> None:
        view = self.view
        if self.window.tabs.currentWidget() is view:
            view.setFocus(Qt.FocusReason.OtherFocusReason)
            if self._stale:
                self._stale = False
                view.when_shown(view.reload)
            return
        # Leaving the tab: the Samples tab shows the sample the reviewer was on.
        if view.queue is None and view.stored is not None and self.window.current_sample_key() != view.stored.pk:
            row = self.window.model.row_of(view.stored.pk)
            if row is not None:
                self._own_change = True
                try:
                    self.window.table.selectRow(row)
                finally:
                    self._own_change = False

    def _notify(self) -> None:
        if not self.window.isVisible():
            return  # the window was closed since the edit (its library may be closed too)
        self._own_change = True
        try:
            self.window.notify_data_changed()
        finally:
            self._own_change = False

    def _data_changed(self) -> None:
        if self._own_change:
            return
        if self.view.isVisible():
            self.view.reload()
        else:
            self._stale = True

    # ---- queues -------------------------------------------------------------------------------

    def _collections(self) -> dict[str, list[str]]:
        library = self.window.library
        out: dict[str, list[str]] = {}
        for info in library.collections():
            out[info.name] = sorted({dataset for dataset, _ in library.splits(info.id)})
        return out

    def new_queue_dialog(self) -> QueueDialog:
        node = self.window.tree.current_node()
        dialog = QueueDialog(
            self._collections(), node.collection if node else None, f"Review {date.today().isoformat()}", self.window
        )
        dialog.accepted.connect(lambda: self.create_queue_from(dialog))
        self.last_dialog = dialog
        dialog.open()
        return dialog

    def create_queue_from(self, dialog: QueueDialog) -> None:
        request = dialog.request()
        self.create_queue(
            request.name,
            request.collection,
            QueueFilter(dataset=request.dataset, has_incorrect=request.has_incorrect),
            request.size,
            request.seed,
            request.blind,
        )

    def create_queue(self, name: str, collection: str, spec: QueueFilter, size: int, seed: int, blind: bool = False):
        """Draw, store and start a queue (shown on the Review tab); errors go to a message box."""
        library = self.window.library
        try:
            queue = create_queue(
                library, name, collection, spec, size=size, seed=seed, reviewer=self.view.author, blind=blind
            )
        except (ValueError, KeyError) as error:
            self.window.show_error("New review queue", str(error))
            return None
        self.start_queue(queue.id)
        return queue

    def start_queue(self, queue_id: int) -> None:
        """Work through a stored queue from where it was left; remembered across restarts."""
        library = self.window.library
        queue = load_queue(library, queue_id)
        QSettings().setValue(ACTIVE_QUEUE_SETTING + str(library.path), queue.id)
        self._resume_queue(queue)
        self.window.show_tab(self.view)

    def _resume_queue(self, queue) -> None:
        if queue.blind:
            self.blind_action.setChecked(True)  # the view, the menu and the saved setting agree
        self.view.start_queue(queue)

    def open_queue_dialog(self) -> QInputDialog | None:
        queues = list_queues(self.window.library)
        if not queues:
            self.window.show_error("Open review queue", "There is no review queue yet: use Review ▸ New review queue.")
            return None
        labels = [f"{q.name} — {q.progress_text}" for q in queues]
        dialog = QInputDialog(self.window)
        dialog.setObjectName("openQueueDialog")
        dialog.setWindowTitle("Open review queue")
        dialog.setLabelText("Queue")
        dialog.setComboBoxItems(labels)
        dialog.textValueSelected.connect(lambda text: self.start_queue(queues[labels.index(text)].id))
        self.last_dialog = dialog
        dialog.open()
        return dialog

    def leave_queue(self) -> None:
        QSettings().remove(ACTIVE_QUEUE_SETTING + str(self.window.library.path))
        self.view.leave_queue()

    # ---- reviewer name ------------------------------------------------------------------------

    def name_dialog(self) -> None:
        name, ok = QInputDialog.getText(
            self.window, "Reviewer name", "Your name on annotations:", QLineEdit.EchoMode.Normal, self.view.author
        )
        if ok and name.strip():
            self.view.set_author(name)
            self.view._update_progress()

    def settings_changed(self) -> None:
        """Called by Edit ▸ Settings after OK: annotate under the (possibly new) user name."""
        self.view.sync_author()

    # ---- label sets ---------------------------------------------------------------------------

    def label_set_dialog(self):
        """Open the label-set editor on the set in use; the Review tab follows what it saves."""
        from thoughtdesk.ui.review.label_set_editor import LabelSetEditor

        current = self.view.label_set.name if self.view.label_set is not None else None
        dialog = LabelSetEditor(self.window.library, current, self.window)
        dialog.saved.connect(self.view.reload_label_sets)
        dialog.deleted.connect(lambda _name: self.view.reload_label_sets())
        self.last_dialog = dialog
        dialog.open()
        return dialog

    # ---- exchange and agreement ---------------------------------------------------------------

    def export_dialog(self) -> None:
        suggested = Path.home() / f"annotations-{self.view.author}.json"
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Export my annotations", str(suggested), "ThoughtDesk annotations (*.json)"
        )
        if path:
            self.export_file(Path(path))

    def export_file(self, path: Path):
        """Write this reviewer's annotations to ``path`` in the background."""
        library_path, author = self.window.library.path, self.view.author

        def work(_ctx) -> int:
            with Library.open(library_path) as lib:
                return export_annotations(lib, author, path)

        return self.window.run_task(
            f"Exporting annotations to {path.name}…",
            work,
            lambda n: self.window.statusBar().showMessage(f"{n} annotation(s) by {author} written to {path}", 10000),
        )

    def import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window,
            "Import a colleague's annotations",
            str(Path.home()),
            "Annotations or ThoughtSource collections (*.json);;All files (*)",
        )
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path):
        """Merge a colleague's file (or a ThoughtSource annotator export) and show the report."""
        library_path = self.window.library.path

        def work(_ctx):
            with Library.open(library_path) as lib:
                return import_annotations(lib, path)

        return self.window.run_task(f"Importing annotations from {path.name}…", work, self._imported)

    def _imported(self, report) -> None:
        self.last_report = report
        dialog = TextReportDialog("Annotation import", merge_report_text(report), self.window)
        self.last_dialog = dialog
        dialog.open()
        if report.ok and not report.dry_run:
            self.view.reload()
            self._notify()

    def _agreement_collection(self) -> str | None:
        library = self.window.library
        if self.view.queue is not None:
            return next((c.name for c in library.collections() if c.id == self.view.queue.collection_id), None)
        node = self.window.tree.current_node()
        return node.collection if node else None

    def show_agreement(self):
        """Compute the agreement table of the current collection in the background, then show it."""
        collection = self._agreement_collection()
        if collection is None:
            self.window.show_error("Agreement", "Select a collection first.")
            return None
        library_path = self.window.library.path

        def work(_ctx):
            with Library.open(library_path) as lib:
                return agreement_table(lib, collection)

        def done(rows) -> None:
            self.last_agreement = rows
            dialog = AgreementDialog(collection, rows, self.window)
            self.last_dialog = dialog
            dialog.open()

        return self.window.run_task(f"Computing agreement for {collection}…", work, done)


def install(window) -> ReviewController:
    """Add the Review tab (Ctrl+2) and the Review menu to ``window``."""
    view = ReviewView()
    window.add_tab(view, "Review", "Ctrl+2")
    return ReviewController(window, view)
