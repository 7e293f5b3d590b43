"""Dialogs of the Review tab: comment, new review queue, merge outcome, agreement table.

Every text that comes from data (comments, file paths, unmatched records, label names, author
names) is put in plain-text widgets: ``QPlainTextEdit``, ``QTableWidgetItem`` or labels set to
``Qt.PlainText``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from thoughtdesk.core.review import MergeOutcome
from thoughtdesk.core.review.agreement import AgreementRow
from thoughtdesk.ui.qt import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QEvent,
    QFormLayout,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label


class CommentDialog(QDialog):
    """Edit the comment on one CoT; Ctrl+Return saves, Escape cancels. Plain text only."""

    def __init__(self, title: str, comment: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commentDialog")
        self.setWindowTitle("Comment")
        self.editor = QPlainTextEdit(objectName="commentEditor")
        self.editor.setPlainText(comment)
        self.editor.setPlaceholderText("What is wrong or notable in this CoT? (empty removes the comment)")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        # Ctrl+Return is caught on the editor itself (a window shortcut would need the dialog to
        # be the active window first, which it is not yet right after it opens).
        self.editor.installEventFilter(self)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(title, bold=True, name="commentFor", selectable=True, keep_height=True))
        layout.addWidget(self.editor)
        layout.addWidget(plain_label("Ctrl+Return saves · Escape cancels", selectable=True, keep_height=True))
        layout.addWidget(buttons)
        self.resize(520, 300)

    def text(self) -> str:
        return self.editor.toPlainText()

    def eventFilter(self, obj, event) -> bool:  # Qt override
        if (
            obj is self.editor
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.accept()
            return True
        return super().eventFilter(obj, event)


@dataclass(frozen=True, slots=True)
class QueueRequest:
    """What the new-queue dialog asks for (sizes in samples)."""

    name: str
    collection: str
    dataset: str | None
    has_incorrect: bool
    size: int
    seed: int
    blind: bool


class QueueDialog(QDialog):
    """Create a review queue: a seeded random subset of a collection."""

    ANY = "(any dataset)"

    def __init__(
        self, collections: dict[str, list[str]], current: str | None, default_name: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("queueDialog")
        self.setWindowTitle("New review queue")
        self._collections = collections
        self.name = QLineEdit(default_name, objectName="queueName")
        self.collection = QComboBox(objectName="queueCollection")
        self.collection.addItems(list(collections))
        if current in collections:
            self.collection.setCurrentText(current)
        self.dataset = QComboBox(objectName="queueDataset")
        self.collection.currentTextChanged.connect(self._fill_datasets)
        self._fill_datasets(self.collection.currentText())
        self.has_incorrect = QCheckBox("Only samples with at least one incorrect CoT", objectName="queueIncorrect")
        self.has_incorrect.setChecked(True)
        self.size_box = QSpinBox(objectName="queueSize")
        self.size_box.setRange(1, 100_000)
        self.size_box.setValue(50)
        self.size_box.setSuffix(" samples")
        self.seed = QSpinBox(objectName="queueSeed")
        self.seed.setRange(0, 2_000_000_000)
        self.blind = QCheckBox("Blind review (hide model and prompt, shuffle CoTs)", objectName="queueBlind")
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Collection", self.collection)
        form.addRow("Dataset", self.dataset)
        form.addRow("", self.has_incorrect)
        form.addRow("Size", self.size_box)
        form.addRow("Random seed", self.seed)
        form.addRow("", self.blind)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def _fill_datasets(self, collection: str) -> None:
        self.dataset.clear()
        self.dataset.addItems([self.ANY, *self._collections.get(collection, [])])

    def request(self) -> QueueRequest:
        dataset = self.dataset.currentText()
        return QueueRequest(
            name=self.name.text().strip(),
            collection=self.collection.currentText(),
            dataset=None if dataset in ("", self.ANY) else dataset,
            has_incorrect=self.has_incorrect.isChecked(),
            size=self.size_box.value(),
            seed=self.seed.value(),
            blind=self.blind.isChecked(),
        )


def merge_outcome_text(report: MergeOutcome, limit: int = 500) -> str:
    """The merge outcome as plain text: the summary, then every unmatched record with why."""
    lines = [report.summary]
    if report.authors:
        lines.append("Authors merged: " + ", ".join(report.authors))
    if report.unmatched:
        lines.append("")
        lines.append("Not matched:")
        for item in report.unmatched[:limit]:
            lines.append(f"  {item.where}: {item.reason}")
        if len(report.unmatched) > limit:
            lines.append(f"  … and {len(report.unmatched) - limit} more")
    if report.error is None and not report.dry_run:
        lines.append("")
        lines.append("Nothing stored was overwritten by another author's annotation.")
    return "\n".join(lines)


class MergeOutcomeDialog(QDialog):
    """The merge outcome as read-only plain text."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reportDialog")
        self.setWindowTitle(title)
        self.view = QPlainTextEdit(objectName="reportText")
        self.view.setReadOnly(True)
        self.view.setPlainText(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(buttons)
        self.resize(720, 420)


AGREEMENT_COLUMNS = ("Label", "n items", "Raters", "Cohen's κ", "Fleiss' κ", "Krippendorff's α", "% agreement")


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


class AgreementDialog(QDialog):
    """Agreement per label between reviewers, as a table (plain-text cells)."""

    def __init__(self, collection: str, rows: Sequence[AgreementRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("agreementDialog")
        self.setWindowTitle(f"Agreement between reviewers — {collection}")
        self.table = QTableWidget(len(rows), len(AGREEMENT_COLUMNS), objectName="agreementTable")
        self.table.setHorizontalHeaderLabels(list(AGREEMENT_COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        for r, row in enumerate(rows):
            cells = (
                row.label,
                str(row.n_items),
                ", ".join(row.raters),
                _number(row.cohen),
                _number(row.fleiss),
                _number(row.alpha),
                _number(row.percent_agreement, 1),
            )
            for c, text in enumerate(cells):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.resizeColumnsToContents()
        note = (
            "Items are generated CoTs; a reviewer rated a CoT when they left any annotation on it, and "
            "an unset label counts as “no”. Cohen's κ needs exactly two reviewers; “—” means undefined "
            "(e.g. everyone always said “no”)."
        )
        if not rows:
            note = "No labels to compare yet: import a colleague's annotations first (Review ▸ Import)."
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(plain_label(note, name="agreementNote", selectable=True, keep_height=True))
        layout.addWidget(buttons)
        self.resize(860, 360)

    def cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""
