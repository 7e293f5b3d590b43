"""The model library's names wherever a local model is chosen (docs/models.md): a combo box of the
registered models for the planner's, critique and helper model forms and Settings, and a
completer offering ``llamacpp:NAME`` in the dialogs that take ``PROVIDER:MODEL`` text.

Here, below the features, so the generation dialogs and Settings share it. The registry is one
small JSON file and one ``stat`` per model (never a model file): read on the GUI thread, again
each time the list is shown or opened, so models added in Edit ▸ Models… (or by the command line)
appear without a restart.
"""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.models.registry import ModelEntry, ModelRegistry
from thoughtdesk.ui.qt import QComboBox, QCompleter, QEvent, QLineEdit, QObject, QStringListModel, Qt, QWidget
from thoughtdesk.ui.widgets.signals import blocked

#: The first item: no registered model chosen (the path field is used as it is).
NO_CHOICE = "A .gguf file (below), or a model from the library…"


def missing_reason(entry: ModelEntry) -> str:
    """One line: the registered model's file is gone, and what to do."""
    return (
        f"{entry.name}: the registered model's file is missing ({entry.path}); add it again from its new place "
        "in Edit ▸ Models…, or remove it there"
    )


def changed_reason(entry: ModelEntry) -> str:
    return (
        f"{entry.name}: the file at {entry.path} changed since it was registered (another size or time); "
        "add it again in Edit ▸ Models… to check it"
    )


class RegisteredModelChoice(QComboBox):
    """The registered models, ``NAME  (quantization, size)`` each, a missing file marked; the
    first item is :data:`NO_CHOICE`. ``textActivated``/``currentIndexChanged`` as any combo."""

    def __init__(self, parent: QWidget | None = None, registry: ModelRegistry | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("registeredModel")
        self.registry = registry or ModelRegistry()
        self.entries: list[ModelEntry] = []
        self.statuses: list[str] = []
        #: Why the registry could not be read (a damaged models.json), else "".
        self.error = ""
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(24)
        self.refresh()

    def refresh(self) -> None:
        """Read the registry again, keeping the chosen model by name (signals blocked)."""
        chosen = self.entry()
        try:
            entries = self.registry.entries()
            self.error = ""
        except ThoughtDeskError as error:
            entries, self.error = [], str(error)
        with blocked(self):
            self.clear()
            self.entries = entries
            self.statuses = [entry.status() for entry in entries]
            self.addItem(NO_CHOICE if entries else "No models in the library yet (Edit ▸ Models…)", None)
            for entry, status in zip(entries, self.statuses, strict=True):
                self.addItem(self.label(entry, status), entry.name)
                self.setItemData(
                    self.count() - 1, f"{entry.path}\n{self.reason(entry, status) or 'ok'}", Qt.ItemDataRole.ToolTipRole
                )
            self.setCurrentIndex(
                self.findData(chosen.name) if chosen is not None and self.findData(chosen.name) > 0 else 0
            )
        self.setToolTip(self.error or "The models registered in Edit ▸ Models… (or `thoughtdesk models add`)")

    @staticmethod
    def label(entry: ModelEntry, status: str) -> str:
        facts = ", ".join(part for part in (entry.quantization, f"{entry.size / 1e9:.2f} GB") if part)
        mark = {"missing": " — MISSING", "changed": " — CHANGED"}.get(status, "")
        return f"{entry.name}  ({facts}){mark}"

    @staticmethod
    def reason(entry: ModelEntry, status: str) -> str:
        """ "" for a model that is there; else one line saying what is wrong and what to do."""
        if status == "missing":
            return missing_reason(entry)
        if status == "changed":
            return changed_reason(entry)
        return ""

    def entry(self) -> ModelEntry | None:
        index = self.currentIndex() - 1
        return self.entries[index] if 0 <= index < len(self.entries) else None

    def status(self) -> str:
        index = self.currentIndex() - 1
        return self.statuses[index] if 0 <= index < len(self.statuses) else ""

    def current_reason(self) -> str:
        entry = self.entry()
        return self.reason(entry, self.status()) if entry is not None else ""

    def select_path(self, path: str) -> None:
        """Choose the registered model whose file is ``path`` (or a registered name), else none."""
        text = path.strip()
        try:
            resolved = str(Path(text).expanduser().resolve()) if text else ""
        except (OSError, RuntimeError):
            resolved = text
        index = next(
            (i + 1 for i, e in enumerate(self.entries) if e.name == text or e.path in (text, resolved)),
            0,
        )
        with blocked(self):
            self.setCurrentIndex(index)

    def showPopup(self) -> None:
        self.refresh()  # models added elsewhere since the form was built
        super().showPopup()


class RegisteredNamesCompleter(QCompleter):
    """Completes ``llamacpp:NAME`` for the registered models in a ``PROVIDER:MODEL`` line; the
    names are read again each time the line gets the focus."""

    def __init__(self, line: QLineEdit, registry: ModelRegistry | None = None) -> None:
        self.names = QStringListModel()
        super().__init__(self.names, line)
        self.registry = registry or ModelRegistry()
        self.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterMode(Qt.MatchFlag.MatchContains)
        line.setCompleter(self)
        line.installEventFilter(self)
        self.refresh()

    def refresh(self) -> None:
        try:
            entries = self.registry.entries()
        except ThoughtDeskError:
            entries = []
        self.names.setStringList([f"llamacpp:{entry.name}" for entry in entries])

    def choices(self) -> list[str]:
        return self.names.stringList()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FocusIn:
            self.refresh()
        return super().eventFilter(watched, event)
