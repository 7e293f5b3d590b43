"""What the Results tab's computed pages share (Revisions, Judges vs humans): a figure set
computed in the thread pool from the chosen collection, debounced and only while shown, with a
status line; and their tables' set-up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.base.throttle import Throttle
from thoughtdesk.ui.base.window_api import WindowApi
from thoughtdesk.ui.evaluation.critiques_view import RowsModel
from thoughtdesk.ui.qt import QAbstractItemView, QHeaderView, QTableView, QWidget
from thoughtdesk.ui.widgets.labels import plain_label

R = TypeVar("R")


def results_table(name: str, model: RowsModel, stretch: int | None) -> QTableView:
    """A read-only table of ``model``, one row selected at a time, column ``stretch`` stretched."""
    table = QTableView(objectName=name)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    if stretch is not None:
        table.horizontalHeader().setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    return table


class ComputedPage(QWidget, Generic[R]):
    """A page whose figures :meth:`compute` (in a worker) makes from the library file and the
    collection ``collection()`` names; :meth:`show_result` shows them (None: no collection)."""

    #: Said before the error when the computation failed.
    failure: ClassVar[str] = "Could not compute"

    def __init__(
        self,
        window: WindowApi,
        collection: Callable[[], str],
        name: str,
        status_name: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.window_ = window
        self.collection = collection
        self._tasks: set[Task[object]] = set()
        self.status = plain_label(name=status_name, wrap=True)
        self._refresh = Throttle(self, self._refresh_task, delay_ms=250, visible_only=True)
        self._refresh.stale = True

    @staticmethod
    def compute(path: Path, collection: str) -> R:
        """The page's figures (in a worker thread: open the library at ``path`` itself)."""
        raise NotImplementedError

    def show_result(self, result: R | None) -> None:
        """Show ``result`` (None: no collection chosen)."""
        raise NotImplementedError

    def schedule_refresh(self) -> None:
        """Recompute soon (debounced); while hidden, only remember that it is stale."""
        self._refresh.request()

    def is_idle(self) -> bool:
        return not self._refresh.busy() and not self._tasks

    def _refresh_task(self) -> Task[R] | None:
        library = self.window_.library
        collection = self.collection()
        if library is None or not collection:
            self.show_result(None)
            return None
        self.status.setText("Computing…")
        path, compute = library.path, self.compute
        return (
            Task(lambda _ctx: compute(path, collection))
            .on_success(self.show_result)
            .on_failure(lambda error: self.status.setText(f"{self.failure}: {error}"))
            .owned_by(self, self._tasks)
        )
