"""The left-hand tree: collections, their datasets and splits, with sample counts."""

from __future__ import annotations

from dataclasses import dataclass

from thoughtdesk.core.library.records import CollectionInfo, SplitStats
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import QHeaderView, QStandardItem, QStandardItemModel, Qt, QTreeView, QWidget

NODE_ROLE = Qt.ItemDataRole.UserRole + 2


@dataclass(frozen=True)
class TreeNode:
    """What a tree row stands for: a collection, or a dataset or split inside it."""

    collection_id: int
    collection: str
    dataset: str | None = None
    split: str | None = None


class CollectionTree(QTreeView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("collectionTree")
        self.setHeaderHidden(False)
        self.model_ = QStandardItemModel(self)
        self.model_.setHorizontalHeaderLabels(["Collection", "Samples"])
        self.setModel(self.model_)
        self.setUniformRowHeights(True)
        self.setEditTriggers(QTreeView.EditTrigger.NoEditTriggers)
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)

    def populate(
        self, library: Library | None, stats: list[tuple[CollectionInfo, list[SplitStats]]] | None = None
    ) -> None:
        """Rebuild from the library, keeping the current selection where it still exists.

        ``stats`` is ``library.tree_stats()`` computed beforehand (e.g. in a worker thread after
        an import), so that the GUI thread does not scan a large library.
        """
        selected = self.current_node()
        self.model_.removeRows(0, self.model_.rowCount())
        if library is None:
            return
        root = self.model_.invisibleRootItem()
        for info, split_stats in stats if stats is not None else library.tree_stats():
            c_item = self._row(root, info.name, info.samples, TreeNode(info.id, info.name))
            datasets: dict[str, tuple[QStandardItem, int]] = {}
            for s in split_stats:
                if s.dataset not in datasets:
                    d_item = self._row(c_item, s.dataset, 0, TreeNode(info.id, info.name, s.dataset))
                    datasets[s.dataset] = (d_item, 0)
                d_item, count = datasets[s.dataset]
                datasets[s.dataset] = (d_item, count + s.samples)
                self._row(d_item, s.split, s.samples, TreeNode(info.id, info.name, s.dataset, s.split))
            for d_item, count in datasets.values():
                d_item.parent().child(d_item.row(), 1).setText(str(count))
        self.expandToDepth(0)
        if selected is not None:
            self.select_node(selected)

    @staticmethod
    def _row(parent: QStandardItem, label: str, count: int, node: TreeNode) -> QStandardItem:
        item = QStandardItem(label)
        item.setData(node, NODE_ROLE)
        item.setToolTip(label)
        count_item = QStandardItem(str(count))
        count_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        count_item.setData(node, NODE_ROLE)
        parent.appendRow([item, count_item])
        return item

    def current_node(self) -> TreeNode | None:
        index = self.currentIndex()
        return index.data(NODE_ROLE) if index.isValid() else None

    def select_node(self, node: TreeNode) -> bool:
        """Select the row for ``node`` (matching by collection id, dataset and split)."""

        def walk(item: QStandardItem) -> bool:
            for row in range(item.rowCount()):
                child = item.child(row, 0)
                if child.data(NODE_ROLE) == node:
                    self.setCurrentIndex(child.index())
                    return True
                if walk(child):
                    return True
            return False

        return walk(self.model_.invisibleRootItem())

    def select_collection(self, name: str) -> bool:
        root = self.model_.invisibleRootItem()
        for row in range(root.rowCount()):
            node: TreeNode = root.child(row, 0).data(NODE_ROLE)
            if node.collection == name:
                self.setCurrentIndex(root.child(row, 0).index())
                return True
        return False
