"""File > Import and Export in the main window: choosing what to import, running it in the
background, and refreshing the views from data computed in the worker."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from thoughtdesk.core.importing.importer import ImportReport, export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.queries import sample_keys
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.app.dialogs import ImportDialog
from thoughtdesk.ui.app.tasks import Task, TaskContext
from thoughtdesk.ui.qt import QDialog, QFileDialog


class ImportExportMixin:
    """Import and export actions of :class:`~thoughtdesk.ui.app.main_window.MainWindow`."""

    # Import and export ------------------------------------------------------------------

    def import_dialog(self) -> None:
        """File > Import > first entry: pick any file; it is routed by what it holds."""
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Import a ThoughtSource collection, a dataset file or a table",
            str(Path.home()),
            "ThoughtSource collections (*.json);;Dataset files and tables (*.json *.jsonl "
            "*.jsonlines *.ndjson *.csv *.tsv *.xml *.txt);;All files (*)",
        )
        if path:
            self.import_path(Path(path))

    def import_path(self, path: Path) -> None:
        """Import ``path``: a ThoughtSource collection directly, a dataset or table via its dialog."""
        from thoughtdesk.ui.importing.dataset_dialog import classify_import_file

        kind = classify_import_file(path)
        if kind == "dataset":
            self.dataset_import_dialog(path)
            return
        if kind == "table":
            self.mapping_import_dialog(path)
            return
        names = [c.name for c in self.library.collections()] if self.library else []
        dialog = ImportDialog(path, names, self)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        self.import_file(path, dialog.collection_name or path.stem, dialog.on_duplicate)

    def dataset_import_dialog(self, path: Path | None = None, *, download: bool = False):
        """The dataset import dialog (local files or a download); imports when accepted."""
        from thoughtdesk.ui.importing.dataset_dialog import DatasetImportDialog

        names = [c.name for c in self.library.collections()] if self.library else []
        dialog = DatasetImportDialog(names, self, path=path, download=download)
        self.import_source_dialog = dialog
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return self.import_request(dialog.request())

    def mapping_import_dialog(self, path: Path | None = None):
        """The generic-import mapping dialog for a JSON/JSONL/CSV/TSV file; imports when accepted."""
        from thoughtdesk.ui.importing.mapping_dialog import MappingDialog, choose_table_file

        path = path or choose_table_file(self)
        if path is None:
            return None
        names = [c.name for c in self.library.collections()] if self.library else []
        dialog = MappingDialog(path, names, self)
        self.import_source_dialog = dialog
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return self.import_request(dialog.request())

    def import_request(self, request) -> Task:
        """Run an ``ImportRequest`` (from the import dialogs) in the background."""
        return self.import_file(request.path, request.collection, request.on_duplicate, request=request)

    def import_file(
        self, path: Path, collection: str | None = None, on_duplicate: str = "fail", *, request=None
    ) -> Task:
        """Import in the background with a progress dialog; the tree and table refresh after.

        Without ``request`` the file is a ThoughtSource collection; with one (an
        ``ImportRequest``) it is a dataset's original files or a mapped table. Bad records
        skipped by ``request.on_error == "skip"`` are saved in a report beside the library.
        """
        from thoughtdesk.core.importing.importer import import_dataset
        from thoughtdesk.core.importing.report import save_import_report

        library_path = self.library.path
        name = collection or path.stem
        # What the table will show afterwards (the imported collection, the current filters):
        # computed in the worker too, so the GUI thread never scans a large library.
        shown = replace(self.current_filter(), collection_id=-1, dataset=None, split=None)
        sort, descending = self.model.sort_order
        browse: dict = {}

        def work(ctx: TaskContext) -> ImportReport:
            with Library.open(library_path) as lib:
                if request is None or (request.dataset is None and request.mapping is None):
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
                browse["tree"] = lib.tree_stats()
                target = replace(shown, collection_id=lib.collection_id(report.collection) or -1)
                browse["filter"] = target
                browse["keys"] = sample_keys(lib, target, sort, descending)
            save_import_report(library_path, report, path)
            return report

        return self._run(f"Importing {path.name}…", work, lambda report: self._import_done(report, browse))

    def _import_done(self, report: ImportReport, browse: dict) -> None:
        """Show what the worker counted and queried (``browse``): the imported collection."""
        self.last_report = report
        self._populate_tree(browse["tree"], lambda: self.tree.select_collection(report.collection))
        self.model.set_filter(browse["filter"], browse["keys"])
        self._apply_filter()
        self.data_changed.emit()
        self.statusBar().showMessage(report.summary, 10000)
        if report.bad_records:
            from thoughtdesk.core.importing.report import report_text
            from thoughtdesk.ui.importing.widgets import ImportReportDialog

            source = report.report_path.read_text(encoding="utf-8") if report.report_path else report_text(report, "")
            self.report_dialog = ImportReportDialog(report, source, self)
            self.report_dialog.open()

    def export_dialog(self) -> None:
        node = self.tree.current_node()
        if node is None:
            self.show_error("Export", "Select a collection to export first.")
            return
        path, _ = QFileDialog.getSaveFileName(
            self,
            f"Export {node.collection}",
            str(Path.home() / f"{node.collection}.json"),
            "ThoughtSource collections (*.json)",
        )
        if path:
            self.export_collection(node.collection, Path(path))

    def export_collection(self, collection: str, path: Path) -> Task:
        library_path = self.library.path

        def work(ctx: TaskContext) -> int:
            with Library.open(library_path) as lib:
                total = next((c.samples for c in lib.collections() if c.name == collection), 0)
                return export_thoughtsource(lib, collection, path, progress=lambda n: ctx.progress(n, total))

        return self._run(
            f"Exporting {collection}…",
            work,
            lambda n: self.statusBar().showMessage(f"{n} sample(s) written to {path}", 10000),
        )
