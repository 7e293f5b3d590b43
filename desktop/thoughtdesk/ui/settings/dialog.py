"""Edit > Settings…: the first-run wizard's forms as tabs; OK saves them (keys to the keyring)."""

from __future__ import annotations

from thoughtdesk.ui.qt import QDialog, QDialogButtonBox, QSettings, QTabWidget, QVBoxLayout, QWidget
from thoughtdesk.ui.settings.formset import SettingsFormSet


class SettingsDialog(QDialog):
    """The same forms as the wizard (``forms``), as tabs; ``forms.settings`` holds what was saved after OK."""

    def __init__(self, store: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.resize(720, 560)
        self.forms = forms = SettingsFormSet(store)
        self.tabs = QTabWidget(objectName="settingsTabs")
        for form, title in (
            (forms.identity, "You"),
            (forms.library, "Library"),
            (forms.offline, "Network"),
            (forms.model, "Local model"),
            (forms.providers, "Providers"),
        ):
            self.tabs.addTab(form, title)
        forms.load()
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    @property
    def saved_messages(self) -> list[str]:
        """What saving the API keys did, in words (after OK)."""
        return self.forms.saved_messages()

    def failed_messages(self) -> list[str]:
        """What OK could not save (an API key declined or refused by the keyring)."""
        return self.forms.failed_messages()

    def accept(self) -> None:
        for form in (self.forms.library, self.forms.model):
            if not form.validate():
                self.tabs.setCurrentWidget(form)
                return
        self.forms.save(self)
        super().accept()
