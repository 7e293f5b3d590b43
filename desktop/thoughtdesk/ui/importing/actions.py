"""File ▸ Import and File ▸ Export collection: choosing what to import, running it in the
background, and showing the imported collection from data computed in the worker.

File ▸ Import… (Ctrl+I) picks any file and routes it by what it holds; its submenu opens each
kind of import directly (a ThoughtSource collection, a dataset's original files, a table with a
column mapping, a download from the catalogue, a DS Critique Bank file). File ▸ Export collection
writes any format of ``thoughtdesk export`` (ThoughtSource JSON, DS Critique Bank records,
samples as JSONL/CSV, answers as CSV, chat JSONL with its filters, Parquet) in the background.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.files import check_export_target, library_part, looks_like_export
from thoughtdesk.core.library.queries import Browse, browse
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.settings import registry
from thoughtdesk.ui.base.changes import DataChanges
from thoughtdesk.ui.base.tasks import Task, TaskContext
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.qt import QDialog, QFileDialog, QMenu, QMessageBox, QObject, Signal
from thoughtdesk.ui.settings.options import QtSettings

if TYPE_CHECKING:  # imported where used: the window's start does not need them
    from thoughtdesk.core.importing.importer import ImportOutcome
    from thoughtdesk.ui.importing.export_dialog import ExportRequest
    from thoughtdesk.ui.importing.widgets import ImportRequest, SkipLogDialog

#: Where and in which format the last export went: the export dialog starts from them.


@dataclass(frozen=True)
class ImportDone:
    """What the import worker hands back: the report, and the Samples tab's new content."""

    report: ImportOutcome
    browse: Browse


class ImportingController(QObject):
    """File ▸ Import (and its submenu) and File ▸ Export collection."""

    #: ``(ImportOutcome)``: an import finished and the Samples tab shows the collection.
    imported = Signal(object)

    def __init__(self, window: WindowApi) -> None:
        super().__init__(window.dialog_parent)
        self._window = window
        self.skip_log_dialog: SkipLogDialog | None = None
        file_menu = window.menu("&File")
        self.action_import = window.add_action(file_menu, "&Import…", "Ctrl+I", self.import_dialog)
        self.action_export = window.add_action(file_menu, "&Export collection…", "Ctrl+E", self.export_dialog)
        window.writing(self.action_import)
        self.import_menu = self._import_menu()
        self.action_import.setMenu(self.import_menu)

    def _import_menu(self) -> QMenu:
        menu = QMenu("&Import", self._window.dialog_parent)
        menu.setObjectName("menu_Import")
        entries = (
            ("ThoughtSource collection JSON… (or any file, recognised by its content)", self.import_dialog),
            ("Dataset from its original files…", lambda: self.dataset_import_dialog()),
            ("Table (JSON, JSONL, CSV, TSV, Parquet) with a column mapping…", lambda: self.mapping_import_dialog()),
            ("Download a dataset from the catalogue…", lambda: self.dataset_import_dialog(download=True)),
            ("DS Critique Bank file (JSONL)…", lambda: self.dscb_import_dialog()),
        )
        for text, slot in entries:
            action = menu.addAction(text)
            action.triggered.connect(lambda _checked=False, slot=slot: slot())
        return menu

    def _collection_names(self) -> list[str]:
        library = self._window.library
        return [c.name for c in library.collections()] if library is not None else []

    def _selected_collection(self) -> str | None:
        """The collection selected in the Samples tree: where an import goes unless changed."""
        return self._window.samples.current_collection() if self._window.library is not None else None

    # Choosing what to import ------------------------------------------------------------------

    def import_dialog(self) -> None:
        """File ▸ Import… (and the submenu's first entry): pick any file; routed by what it holds."""
        path, _ = QFileDialog.getOpenFileName(
            self._window.dialog_parent,
            "Import a ThoughtSource collection, a dataset file or a table",
            str(Path.home()),
            "ThoughtSource collections (*.json);;Dataset files and tables (*.json *.jsonl "
            "*.jsonlines *.ndjson *.csv *.tsv *.parquet *.xml *.txt);;DS Critique Bank files (*.jsonl);;All files (*)",
        )
        if path:
            self.import_path(Path(path))

    def import_path(self, path: Path) -> None:
        """Import ``path``: a ThoughtSource collection directly, a dataset or table via its dialog."""
        from thoughtdesk.core.importing.detect import classify_import_file, import_of_the_library, not_importable
        from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog

        library = self._window.library
        what = library_part(path, library.path) if library is not None else None
        if what is not None:  # refused unread: reading it would drop this process's SQLite locks
            self._window.show_error("Import", import_of_the_library(path, what))
            return
        kind = classify_import_file(path)
        if kind == "unknown":  # a picture, a PDF, a binary file: no dialog can import it
            self._window.show_error("Import", str(not_importable(path)))
            return
        if kind == "dataset":
            self.dataset_import_dialog(path)
            return
        if kind == "table":
            self.mapping_import_dialog(path)
            return
        if kind == "dscb":
            self.dscb_import_dialog(path)
            return
        if kind == "steps":
            self.steps_import_dialog(path)
            return
        if kind == "traces":
            self.traces_import_dialog(path)
            return
        dialog = ImportDialog(
            path, self._collection_names(), self._window.dialog_parent, default=self._selected_collection()
        )
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        self.import_file(path, dialog.collection_name or path.stem, dialog.on_duplicate)

    def dataset_import_dialog(self, path: Path | None = None, *, download: bool = False) -> Task[ImportDone] | None:
        """The dataset import dialog (local files or a download); imports when accepted."""
        from thoughtdesk.ui.importing.dataset_dialog import DatasetImportDialog

        dialog = DatasetImportDialog(
            self._collection_names(),
            self._window.dialog_parent,
            path=path,
            download=download,
            collection=self._selected_collection(),
        )
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return self.import_request(dialog.request())

    def mapping_import_dialog(self, path: Path | None = None) -> Task[ImportDone] | None:
        """The generic-import mapping dialog for a JSON/JSONL/CSV/TSV file; imports when accepted."""
        from thoughtdesk.ui.importing.mapping_dialog import MappingDialog, choose_table_file

        path = path or choose_table_file(self._window.dialog_parent)
        if path is None:
            return None
        dialog = MappingDialog(
            path, self._collection_names(), self._window.dialog_parent, collection=self._selected_collection()
        )
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return self.import_request(dialog.request())

    def dscb_import_dialog(self, path: Path | None = None) -> Task[ImportDone] | None:
        """A DS Critique Bank file: which collection, what to do with questions already there."""
        from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
        from thoughtdesk.ui.importing.widgets import ImportRequest

        if path is None:
            chosen, _ = QFileDialog.getOpenFileName(
                self._window.dialog_parent,
                "Import a DS Critique Bank file",
                str(Path.home()),
                "DS Critique Bank files (*.jsonl);;All files (*)",
            )
            if not chosen:
                return None
            path = Path(chosen)
        dialog = ImportDialog(
            path, self._collection_names(), self._window.dialog_parent, default=self._selected_collection()
        )
        dialog.setWindowTitle("Import a DS Critique Bank file")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        request = ImportRequest(path, dialog.collection_name or path.stem, on_duplicate=dialog.on_duplicate, dscb=True)
        return self.import_request(request)

    def traces_import_dialog(self, path: Path) -> Task[ImportDone] | None:
        """A reasoning-trace JSON Lines file: which collection, what to do with samples already there."""
        from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
        from thoughtdesk.ui.importing.widgets import ImportRequest

        dialog = ImportDialog(
            path, self._collection_names(), self._window.dialog_parent, default=self._selected_collection()
        )
        dialog.setWindowTitle("Import reasoning traces")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        request = ImportRequest(
            path, dialog.collection_name or path.stem, on_duplicate=dialog.on_duplicate, traces=True
        )
        return self.import_request(request)

    def steps_import_dialog(self, path: Path) -> Task[ImportDone] | None:
        """A ProcessBench or PRM800K file (docs/steps.md): which collection, what to do with
        problems already there."""
        from thoughtdesk.ui.importing.thoughtsource_dialog import ImportDialog
        from thoughtdesk.ui.importing.widgets import ImportRequest

        dialog = ImportDialog(
            path, self._collection_names(), self._window.dialog_parent, default=self._selected_collection()
        )
        dialog.setWindowTitle("Import a ProcessBench or PRM800K file")
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        request = ImportRequest(path, dialog.collection_name or path.stem, on_duplicate=dialog.on_duplicate, steps=True)
        return self.import_request(request)

    # Importing --------------------------------------------------------------------------------

    def import_request(self, request: ImportRequest) -> Task[ImportDone] | None:
        """Run an :class:`ImportRequest` (from the import dialogs) in the background."""
        return self.import_file(request.path, request.collection, request.on_duplicate, request=request)

    def import_file(
        self,
        path: Path,
        collection: str | None = None,
        on_duplicate: str = "fail",
        *,
        request: ImportRequest | None = None,
    ) -> Task[ImportDone] | None:
        """Import in the background with a progress dialog; the Samples tab shows the collection.

        Without ``request`` the file is a ThoughtSource collection; with one it is a DS Critique
        Bank file (``request.dscb``), a dataset's original files or a mapped table. Bad records
        skipped by ``request.on_error == "skip"`` are saved in a report beside the library.
        """
        library = self._window.library
        if library is None:
            return None
        library_path = library.path
        name = collection or path.stem
        # What the Samples tab will show afterwards (the imported collection, the current
        # filters): computed in the worker too, so the GUI thread never scans a large library.
        state = self._window.samples.browse_state()
        shown = replace(state.filter, collection_id=-1, dataset=None, split=None)

        def work(ctx: TaskContext) -> ImportDone:
            from thoughtdesk.core.importing.dscb import import_dscb
            from thoughtdesk.core.importing.importer import import_dataset, import_thoughtsource
            from thoughtdesk.core.importing.skip_log import save_skip_log

            report: ImportOutcome
            with Library.open(library_path) as lib:
                if request is not None and request.steps:
                    from thoughtdesk.core.importing.step_files import import_step_file

                    report = import_step_file(
                        lib,
                        path,
                        collection=name,
                        on_duplicate=on_duplicate,
                        progress=ctx.progress,
                        cancel=ctx.cancelled,
                    )
                elif request is not None and request.traces:
                    from thoughtdesk.core.importing.traces import import_traces

                    report = import_traces(
                        lib,
                        path,
                        collection=name,
                        on_duplicate=on_duplicate,
                        on_error=request.on_error,
                        progress=ctx.progress,
                        cancel=ctx.cancelled,
                    )
                elif request is not None and request.dscb:
                    report = import_dscb(
                        lib,
                        path,
                        collection=name,
                        on_duplicate=on_duplicate,
                        on_error=request.on_error,
                        progress=ctx.progress,
                        cancel=ctx.cancelled,
                    )
                elif request is None or (request.dataset is None and request.mapping is None):
                    report = import_thoughtsource(
                        lib,
                        path,
                        collection=name,
                        on_duplicate=on_duplicate,
                        progress=ctx.progress,
                        cancel=ctx.cancelled,
                    )
                else:
                    report = import_dataset(
                        lib,
                        path,
                        dataset=request.dataset,
                        mapping=request.mapping,
                        collection=name,
                        splits=request.splits,
                        limit=request.limit,
                        seed=request.seed,
                        on_duplicate=on_duplicate,
                        on_error=request.on_error,
                        progress=ctx.progress,
                        cancel=ctx.cancelled,
                    )
                ctx.progress(0, 0)
                target = replace(shown, collection_id=lib.collection_id(report.collection) or -1)
                after = browse(lib, replace(state, filter=target))
            save_skip_log(library_path, report, path)
            return ImportDone(report, after)

        return self._window.run_task(f"Importing {path.name}…", work, self._import_done)

    def _import_done(self, done: ImportDone) -> None:
        """Show what the worker counted and queried: the imported collection."""
        from thoughtdesk.core.importing.skip_log import skip_log_text
        from thoughtdesk.ui.importing.widgets import SkipLogDialog

        report = done.report
        samples = self._window.samples
        samples.show_browse(done.browse, report.collection)
        # The Samples tab shows the import already; the other views refresh.
        self._window.notify_data_changed(DataChanges.imported(initiator=samples))
        self._window.show_status(report.summary, 10000)
        if report.bad_records:
            source = (
                report.skip_log_path.read_text(encoding="utf-8") if report.skip_log_path else skip_log_text(report, "")
            )
            self.skip_log_dialog = SkipLogDialog(report, source, self._window.dialog_parent)
            self.skip_log_dialog.open()
        self.imported.emit(report)

    # Exporting --------------------------------------------------------------------------------

    def export_dialog(self) -> Task[str] | None:
        """File ▸ Export collection…: the collection of the Samples tab's current row, in the
        format, file and (for chat JSONL) filters chosen in :class:`ExportDialog`."""
        from thoughtdesk.ui.importing.export_dialog import FORMATS_BY_KEY, ExportDialog

        collection = self._window.samples.current_collection()
        if collection is None:
            self._window.show_error("Export", "Select a collection to export first.")
            return None
        # The dialog opens where and as the last export went (remembered in the settings file).
        settings = QtSettings()
        folder = settings.get(registry.EXPORT_FOLDER)
        dialog = ExportDialog(collection, self._window.dialog_parent, folder=Path(folder) if folder else None)
        fmt = settings.get(registry.EXPORT_FORMAT)
        if fmt in FORMATS_BY_KEY:
            dialog.set_format(fmt)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        request = dialog.request()
        settings.set(registry.EXPORT_FOLDER, str(request.path.parent))
        settings.set(registry.EXPORT_FORMAT, request.fmt)
        return self.export(request)

    def export_collection(self, collection: str, path: Path, *, dscb: bool = False) -> Task[str] | None:
        """Write ``collection`` as a ThoughtSource file (or with ``dscb`` as DS Critique Bank
        JSON Lines, one record per generated CoT) in the background, replacing ``path`` unasked
        (never the open library)."""
        from thoughtdesk.ui.importing.export_dialog import ExportRequest

        return self.export(ExportRequest(collection, path, "dscb" if dscb else "thoughtsource"), confirm=False)

    def export(self, request: ExportRequest, *, confirm: bool = True) -> Task[str] | None:
        """Run an :class:`ExportRequest` in the background with progress and Cancel.

        Never onto the open library (or its -wal/-shm files) or a folder; with ``confirm`` an
        existing file is replaced only after the user said yes (the question says when it is not
        an earlier export). A failed or cancelled export leaves no file under the target's name.
        """
        from thoughtdesk.core.importing.flat_export import require_pyarrow
        from thoughtdesk.ui.importing.export_dialog import FORMATS_BY_KEY

        library = self._window.library
        if library is None:
            return None
        library_path, collection, path, fmt = library.path, request.collection, request.path, request.fmt
        try:
            check_export_target(path, libraries=[library_path], force=True)
            if fmt == "parquet":
                require_pyarrow()
        except ThoughtDeskError as error:
            self._window.show_error("Export", str(error))
            return None
        if confirm and path.exists() and not self._confirm_replace(path):
            return None

        what = FORMATS_BY_KEY[fmt].what

        def work(ctx: TaskContext) -> str:
            from thoughtdesk.core.importing.dscb import export_dscb
            from thoughtdesk.core.importing.flat_export import describe_written, export_flat
            from thoughtdesk.core.importing.importer import export_thoughtsource

            def counted(total: int) -> Callable[[int], None]:
                # ThoughtSource and DSCB exports report a count only; a cancel raises from here,
                # inside their part-file block, so nothing is left under the target's name.
                def progress(done: int) -> None:
                    if ctx.cancelled():
                        raise Cancelled("export")
                    ctx.progress(done, total)

                return progress

            if ctx.cancelled():  # Cancel pressed before the work started: nothing opened or written
                raise Cancelled("export")
            with Library.open(library_path, create=False) as lib:
                if fmt == "thoughtsource":
                    from thoughtdesk.core.datasets.ts_extras import side_path

                    total = next((c.samples for c in lib.collections() if c.name == collection), 0)
                    written = f"{export_thoughtsource(lib, collection, path, progress=counted(total))} {what}"
                    side = side_path(path)
                    if side.is_file():  # as the command line says it: the user must keep both files
                        return f"{written} (ThoughtDesk's extras, which ThoughtSource's loader refuses, in {side.name} beside it)"
                    return written
                if fmt == "dscb":
                    return f"{export_dscb(lib, collection, path, progress=counted(0))} {what}"
                if fmt in ("processbench", "prm800k", "prm-jsonl"):
                    from thoughtdesk.core.importing.step_files import export_steps

                    return f"{export_steps(lib, collection, path, fmt, progress=counted(0)).records} {what}"
                count = export_flat(
                    lib,
                    collection,
                    path,
                    fmt,
                    filters=request.filters,
                    system=request.system,
                    progress=ctx.progress,
                    cancel=ctx.cancelled,
                )
                return describe_written(lib, collection, fmt, count)  # what the rows are, as the CLI says

        return self._window.run_task(
            f"Exporting {collection}…",
            work,
            lambda written: self._window.show_status(f"{written} of {collection!r} written to {path}", 10000),
        )

    def _confirm_replace(self, path: Path) -> bool:
        """Ask before replacing ``path``; a file that is no earlier export says so, default No."""
        if looks_like_export(path):
            text = f"{path} already exists (an earlier export). Replace it?"
        else:
            text = (
                f"{path} already exists and is not an earlier ThoughtDesk export. "
                "Replacing it destroys what it holds. Replace it anyway?"
            )
        answer = QMessageBox.question(
            self._window.dialog_parent,
            "Replace file",
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes
