"""The Review tab's controller: the "&Review" menu and the glue between the tab and the window.

The :class:`ReviewController` connects the :class:`~thoughtdesk.ui.review.view.ReviewView` to
the window: it follows ``sample_selected``, ``library_changed``, ``data_changed`` and
``settings_changed``, tells the window about edits (debounced ``notify_data_changed``), and runs
queues, import, export and agreement (file work in the background through ``window.run_task``,
each with its own ``Library``).

The view, and the modules behind it (the review core, rapidfuzz, numpy), are built when first
needed (a :class:`~thoughtdesk.ui.base.deferred.DeferredTab`: :attr:`ReviewController.view`, a
click on the tab, Ctrl+2, a menu entry that needs it), not before the window's first paint
(issue 27, point 2). The menu exists from the start: blind mode is kept in the settings until
the view exists, and Undo and Redo stay disabled until the view's undo stack is attached.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.files import check_export_target
from thoughtdesk.core.library.queries import collection_name
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings.registry import ACTIVE_QUEUE, REVIEW_BLIND
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.base.deferred import DeferredTab
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.throttle import Throttle
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.qt import (
    QAction,
    QFileDialog,
    QInputDialog,
    QKeySequence,
    QLineEdit,
    QMenu,
    QObject,
    Qt,
    QUndoStack,
    QWidget,
    Signal,
)
from thoughtdesk.ui.settings.options import read, remove, write

if TYPE_CHECKING:
    from thoughtdesk.core.review import MergeOutcome, QueueFilter, ReviewQueue
    from thoughtdesk.core.review.agreement import AgreementRow
    from thoughtdesk.core.review.exchange import ExportCounts
    from thoughtdesk.ui.review.dialogs import QueueDialog
    from thoughtdesk.ui.review.label_set_editor import LabelSetEditor
    from thoughtdesk.ui.review.view import ReviewView


class ReviewController(QObject):
    """Glue between the main window and the Review tab (see the module docstring)."""

    #: ``(MergeOutcome)``: a colleague's annotations were merged (or refused) and the report shown.
    annotations_imported = Signal(object)

    def __init__(self, window: WindowApi) -> None:
        super().__init__(window.dialog_parent)
        self.window = window
        self._view: ReviewView | None = None
        #: A blind queue turned blind mode on; leaving it gives back ``_blind_before_queue``.
        self._blind_queue_active = False
        self._blind_before_queue = False
        # Changes made elsewhere reload the tab, at once when shown, else when it is next shown.
        self._reload: Throttle | None = None  # made with the view
        self._tab = DeferredTab(window, "Review", "Ctrl+2", self._build_view)
        window.library_changed.connect(self._library_changed)
        window.sample_selected.connect(self._sample_selected)
        window.data_changed.connect(self._data_changed)
        window.settings_changed.connect(self.settings_changed)
        window.tab_changed.connect(self._tab_changed)
        self._build_menu()

    # ---- the view, built on first use --------------------------------------------------------

    @property
    def view_built(self) -> bool:
        """Whether the Review tab's view exists yet (asking for :attr:`view` builds it)."""
        return self._view is not None

    @property
    def view(self) -> ReviewView:
        """The Review tab's view, built now if it was not yet."""
        return self._view if self._view is not None else self._tab.view()

    def _build_view(self) -> ReviewView:
        """The view, joined to the window and given what it missed: the open library, the
        active queue (resumed as at start-up), the sample selected in the Samples tab."""
        from thoughtdesk.ui.review.view import ReviewView

        window = self.window
        view = ReviewView()
        self._view = view  # before the rest: resuming a blind queue turns blind mode on through the menu
        self._reload = Throttle(view, self._reload_view, delay_ms=None, visible_only=True)
        view.sample_neighbour = window.samples.neighbour
        view.message.connect(lambda text: window.show_status(text, 8000))
        view.annotationsChanged.connect(self._notify)
        self._attach_undo_stack(view, view.undo_stack)
        if view.blind != self.blind_action.isChecked():  # the same setting: kept in step anyway
            self.blind_action.setChecked(view.blind)
        if window.library is not None:
            self._library_changed(window.library)
            self._sample_selected(window.samples.current_sample_key())
        return view

    # ---- menu ---------------------------------------------------------------------------------

    def _build_menu(self) -> None:
        w = self.window
        menu = w.menu("&Review")
        self.menu = menu
        self.action_new_queue = w.add_action(menu, "&New review queue…", None, self.new_queue_dialog)
        w.add_action(menu, "&Open review queue…", None, self.open_queue_dialog)
        w.add_action(menu, "&Leave the queue", None, self.leave_queue)
        menu.addSeparator()
        self.blind_action = w.add_action(menu, "&Blind mode (hide model and prompt)", "Ctrl+Shift+B")
        self.blind_action.setCheckable(True)
        self.blind_action.setChecked(read(REVIEW_BLIND))
        self.blind_action.toggled.connect(self._blind_toggled)
        w.add_action(menu, "Set my reviewer &name…", None, self.name_dialog)
        self.action_label_sets = w.add_action(menu, "Edit &label sets…", None, self.label_set_dialog)
        w.add_action(menu, "&Trajectory of the current CoT…", "Ctrl+Shift+T", self.show_trajectory)
        menu.addSeparator()
        self.undo_action, self.redo_action = self._undo_actions(menu)
        menu.addSeparator()
        w.add_action(menu, "&Export my annotations…", None, self.export_dialog)
        self.action_import = w.add_action(menu, "&Import a colleague's annotations…", None, self.import_dialog)
        w.add_action(menu, "&Agreement between reviewers…", None, self.show_agreement)
        w.writing(self.action_new_queue, self.action_label_sets, self.action_import, self.undo_action, self.redo_action)

    def _undo_actions(self, menu: QMenu) -> tuple[QAction, QAction]:
        """Undo and Redo in the menu, disabled until the view's stack is attached (nothing can be
        undone before the tab exists). Their keys are handled by the view's key filter (so a
        text editor keeps its own Ctrl+Z); the entries show them and work by mouse."""
        actions = []
        for text, keys in (("&Undo", "Ctrl+Z"), ("&Redo", "Ctrl+Shift+Z")):
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.setEnabled(False)
            menu.addAction(action)
            actions.append(action)
        return actions[0], actions[1]

    def _attach_undo_stack(self, view: QWidget, stack: QUndoStack) -> None:
        """Wire Undo and Redo to ``stack`` as ``QUndoStack.createUndoAction(view, "&Undo")``
        would have: enabled when it can, "&Undo <what>" as its text, triggered = undo."""
        for action, prefix, can, can_changed, text, text_changed, act in (
            (
                self.undo_action,
                "&Undo",
                stack.canUndo,
                stack.canUndoChanged,
                stack.undoText,
                stack.undoTextChanged,
                stack.undo,
            ),
            (
                self.redo_action,
                "&Redo",
                stack.canRedo,
                stack.canRedoChanged,
                stack.redoText,
                stack.redoTextChanged,
                stack.redo,
            ),
        ):

            def set_text(what: str, action: QAction = action, prefix: str = prefix) -> None:
                action.setText(f"{prefix} {what}" if what else prefix)

            action.setEnabled(can())
            set_text(text())
            can_changed.connect(action.setEnabled)
            text_changed.connect(set_text)
            action.triggered.connect(act)
            view.addAction(action)

    def _blind_toggled(self, blind: bool) -> None:
        if self._view is not None:
            self._view.set_blind(blind)
        else:  # what the view reads when it is built
            write(REVIEW_BLIND, blind)

    def show_trajectory(self) -> None:
        """Open the current CoT's trajectory (a guided CoT's steps, rationales and candidates)."""
        view = self.view
        pk = view.current_cot_pk()
        if pk is None or view.library is None:
            view.show_message("Select a generated CoT first (the reference has no trajectory).")
            return
        from thoughtdesk.core.generation.runs import is_guided as guided_cot
        from thoughtdesk.ui.trajectories.view import open_trajectory

        if not guided_cot(view.library, pk):
            view.show_message("This CoT was not written by a guided run: it has no trajectory.")
            return
        open_trajectory(view, view.library, pk)

    # ---- following the window -----------------------------------------------------------------

    def _library_changed(self, library: Library) -> None:
        if self._view is None:
            return  # the view is given the library when it is built
        from thoughtdesk.core.review import load_queue

        self._view.set_library(library)
        queue_id = read(ACTIVE_QUEUE.at(str(library.path)))
        if queue_id:
            try:
                self._resume_queue(load_queue(library, queue_id), at_start=True)
            except (KeyError, ValueError, TypeError):
                remove(ACTIVE_QUEUE.at(str(library.path)))

    def _sample_selected(self, pk: int | None) -> None:
        view = self._view
        if pk is None or view is None:
            return  # a view built later asks the Samples tab for its sample
        queue = view.queue
        if queue is not None:
            if pk in queue.sample_pks:  # jump inside the queue; other samples leave it alone
                view.when_shown(lambda: view.nav.go_to_index(queue.sample_pks.index(pk)))
            return
        if view.stored is None or view.stored.pk != pk:
            view.when_shown(lambda: view.show_sample(pk))

    def _tab_changed(self, shown: QWidget) -> None:
        view = self._view
        if view is None or shown is self._tab.page:
            return  # nothing shown yet to leave; the stand-in is replaced by the view at once
        if shown is view:
            view.setFocus(Qt.FocusReason.OtherFocusReason)
            return
        # Leaving the tab: the Samples tab shows the sample the reviewer was on (its
        # sample_selected then names the sample shown here already: nothing to reload).
        samples = self.window.samples
        if view.queue is None and view.stored is not None and samples.current_sample_key() != view.stored.pk:
            samples.select_sample(view.stored.pk)

    def _notify(self) -> None:
        if not self.window.isVisible():
            return  # the window was closed since the edit (its library may be closed too)
        self.window.notify_data_changed(DataChanges(annotations=True, initiator=self))

    def _data_changed(self, changes: DataChanges) -> None:
        if changes.initiator is self:
            return  # the tab made the change and shows it
        if self._reload is not None and (changes.collections or changes.sample_contents):
            self._reload.request()

    def _reload_view(self) -> None:
        self.view.reload()

    # ---- queues -------------------------------------------------------------------------------

    def _library(self) -> Library:
        library = self.window.library
        assert library is not None, "the window always has a library once installed"
        return library

    def _collections(self) -> dict[str, list[str]]:
        library = self._library()
        out: dict[str, list[str]] = {}
        for info in library.collections():
            out[info.name] = sorted({dataset for dataset, _ in library.splits(info.id)})
        return out

    def new_queue_dialog(self) -> QueueDialog:
        """Review ▸ New review queue…: draw a queue from a collection."""
        from thoughtdesk.ui.review.dialogs import QueueDialog

        dialog = QueueDialog(
            self._collections(),
            self.window.samples.current_collection(),
            f"Review {date.today().isoformat()}",
            self.window.dialog_parent,
        )
        dialog.accepted.connect(lambda: self.create_queue_from(dialog))
        dialog.open()
        return dialog

    def create_queue_from(self, dialog: QueueDialog) -> None:
        from thoughtdesk.core.review import QueueFilter

        request = dialog.request()
        self.create_queue(
            request.name,
            request.collection,
            QueueFilter(dataset=request.dataset, has_incorrect=request.has_incorrect),
            request.size,
            request.seed,
            request.blind,
        )

    def create_queue(
        self, name: str, collection: str, spec: QueueFilter, size: int, seed: int, blind: bool = False
    ) -> ReviewQueue | None:
        """Draw, store and start a queue (shown on the Review tab); errors go to a message box."""
        from thoughtdesk.core.review import create_queue

        library = self._library()
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
        from thoughtdesk.core.review import load_queue

        library = self._library()
        queue = load_queue(library, queue_id)
        write(ACTIVE_QUEUE.at(str(library.path)), queue.id)
        self._resume_queue(queue)
        self.window.show_tab(self.view)

    def _resume_queue(self, queue: ReviewQueue, *, at_start: bool = False) -> None:
        self._end_blind_queue()  # another queue replaces one that turned blind mode on
        if queue.blind:
            # At start-up the saved blind setting is the queue's own: off is what came before.
            self._blind_before_queue = False if at_start else self.blind_action.isChecked()
            self._blind_queue_active = True
            self.blind_action.setChecked(True)  # the view, the menu and the saved setting agree
        self.view.nav.start_queue(queue)

    def _end_blind_queue(self) -> None:
        """Blind mode as it was before a blind queue turned it on (off when that queue was
        resumed at start-up): blind mode belongs to the queue, not to the reviewer's later work."""
        if self._blind_queue_active:
            self._blind_queue_active = False
            self.blind_action.setChecked(self._blind_before_queue)

    def open_queue_dialog(self) -> QInputDialog | None:
        """Review ▸ Open review queue…: pick a stored queue to resume."""
        from thoughtdesk.core.review import list_queues

        queues = list_queues(self._library())
        if not queues:
            self.window.show_error("Open review queue", "There is no review queue yet: use Review ▸ New review queue.")
            return None
        labels = [f"{q.name} — {q.progress_text}" for q in queues]
        dialog = QInputDialog(self.window.dialog_parent)
        dialog.setObjectName("openQueueDialog")
        dialog.setWindowTitle("Open review queue")
        dialog.setLabelText("Queue")
        dialog.setComboBoxItems(labels)
        dialog.textValueSelected.connect(lambda text: self.start_queue(queues[labels.index(text)].id))
        dialog.open()
        return dialog

    def leave_queue(self) -> None:
        """Review ▸ Leave the queue: back to the Samples tab's samples."""
        remove(ACTIVE_QUEUE.at(str(self._library().path)))
        if self._view is not None:  # a view built later finds no queue to resume
            self._view.nav.leave_queue()
        self._end_blind_queue()

    # ---- reviewer name ------------------------------------------------------------------------

    def name_dialog(self) -> None:
        """Review ▸ Set my reviewer name…"""
        name, ok = QInputDialog.getText(
            self.window.dialog_parent,
            "Reviewer name",
            "Your name on annotations:",
            QLineEdit.EchoMode.Normal,
            self.view.author,
        )
        if ok and name.strip():
            self.view.set_author(name)
            self.view.nav.update_progress()

    def settings_changed(self) -> None:
        """After Edit ▸ Settings saved (``window.settings_changed``): annotate under the
        (possibly new) user name."""
        if self._view is not None:  # a view built later reads the name then
            self._view.sync_author()

    # ---- label sets ---------------------------------------------------------------------------

    def label_set_dialog(self) -> LabelSetEditor:
        """Open the label-set editor on the set in use; the Review tab follows what it saves."""
        from thoughtdesk.ui.review.label_set_editor import LabelSetEditor

        current = self.view.label_set.name if self.view.label_set is not None else None
        dialog = LabelSetEditor(self._library(), current, self.window.dialog_parent)
        dialog.saved.connect(self.view.reload_label_sets)
        dialog.deleted.connect(lambda _name: self.view.reload_label_sets())
        dialog.open()
        return dialog

    # ---- exchange and agreement ---------------------------------------------------------------

    def export_dialog(self) -> None:
        """Review ▸ Export my annotations…"""
        suggested = Path.home() / f"annotations-{self.view.author}.json"
        path, _ = QFileDialog.getSaveFileName(
            self.window.dialog_parent, "Export my annotations", str(suggested), "ThoughtDesk annotations (*.json)"
        )
        if path:
            self.export_file(Path(path))

    def export_file(self, path: Path) -> Task[ExportCounts] | None:
        """Write this reviewer's annotations and ratings to ``path`` in the background.

        Never onto the open library or its -wal/-shm files (refused with a dialog); the save
        dialog has asked before replacing an existing file."""
        from thoughtdesk.core.review.exchange import export_review

        library_path, author = self._library().path, self.view.author
        try:
            check_export_target(path, libraries=[library_path], force=True)
        except ThoughtDeskError as error:
            self.window.show_error("Export my annotations", str(error))
            return None

        def work(_ctx: TaskContext) -> ExportCounts:
            with Library.open(library_path) as lib:
                return export_review(lib, author, path, force=True)

        return self.window.run_task(
            f"Exporting annotations to {path.name}…",
            work,
            lambda counts: self.window.show_status(f"{counts.summary} by {author} written to {path}", 10000),
        )

    def import_dialog(self) -> None:
        """Review ▸ Import a colleague's annotations…"""
        path, _ = QFileDialog.getOpenFileName(
            self.window.dialog_parent,
            "Import a colleague's annotations",
            str(Path.home()),
            "Annotations or ThoughtSource collections (*.json);;All files (*)",
        )
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path) -> Task[MergeOutcome]:
        """Merge a colleague's file (or a ThoughtSource annotator export) and show the report."""
        from thoughtdesk.core.review import import_annotations

        library_path = self._library().path

        def work(_ctx: TaskContext) -> MergeOutcome:
            with Library.open(library_path) as lib:
                return import_annotations(lib, path)

        return self.window.run_task(f"Importing annotations from {path.name}…", work, self._imported)

    def _imported(self, report: MergeOutcome) -> None:
        from thoughtdesk.ui.review.dialogs import MergeOutcomeDialog, merge_outcome_text

        dialog = MergeOutcomeDialog("Annotation import", merge_outcome_text(report), self.window.dialog_parent)
        dialog.open()
        if report.ok and not report.dry_run:
            if self._view is not None:  # a view built later reads them
                self._view.reload()
            self._notify()
        self.annotations_imported.emit(report)

    def _agreement_collection(self) -> str | None:
        if self.view.queue is not None:
            return collection_name(self._library(), self.view.queue.collection_id)
        return self.window.samples.current_collection()

    def show_agreement(self) -> Task[list[AgreementRow]] | None:
        """Compute the agreement table of the current collection in the background, then show it."""
        collection = self._agreement_collection()
        if collection is None:
            self.window.show_error("Agreement", "Select a collection first.")
            return None
        from thoughtdesk.core.review import agreement_table
        from thoughtdesk.ui.review.dialogs import AgreementDialog

        library_path = self._library().path

        def work(_ctx: TaskContext) -> list[AgreementRow]:
            with Library.open(library_path) as lib:
                return agreement_table(lib, collection)

        def done(rows: list[AgreementRow]) -> None:
            AgreementDialog(collection, rows, self.window.dialog_parent).open()

        return self.window.run_task(f"Computing agreement for {collection}…", work, done)
