"""The settings forms shared by the Settings dialog and the first-run wizard.

Both show the same five forms (who you are, library, network, local model, providers), load them
from the stored settings and save them the same way; only the container differs (tabs or pages).
Each container *has* a :class:`SettingsFormSet` (``forms``) and puts its forms where it wants.
"""

from __future__ import annotations

from thoughtdesk.ui.qt import QSettings, QWidget
from thoughtdesk.ui.settings.forms import IdentityForm, KeySaveResult, LibraryForm, LocalModelForm, OfflineForm
from thoughtdesk.ui.settings.options import AppSettings, load_settings, save_settings
from thoughtdesk.ui.settings.provider_forms import ProvidersForm

SettingsForm = IdentityForm | LibraryForm | OfflineForm | LocalModelForm | ProvidersForm


class SettingsFormSet:
    """The five forms, loaded from ``store`` (the app's settings when None) and saved back to it."""

    def __init__(self, store: QSettings | None = None) -> None:
        self.store = store
        self.settings: AppSettings = load_settings(store)
        self.identity = IdentityForm()
        self.library = LibraryForm()
        self.offline = OfflineForm()
        self.model = LocalModelForm()
        self.providers = ProvidersForm()
        #: What saving did to each newly typed API key (shown by the container).
        self.key_results: list[KeySaveResult] = []

    def forms(self) -> tuple[SettingsForm, ...]:
        """The forms, in the order they are shown."""
        return (self.identity, self.library, self.offline, self.model, self.providers)

    def load(self) -> None:
        """Show the stored settings in every form."""
        for form in self.forms():
            form.load(self.settings)

    def collect(self) -> AppSettings:
        """The settings as the forms show them now."""
        for form in self.forms():
            form.store(self.settings)
        return self.settings

    def save(self, parent: QWidget | None) -> None:
        """Store the forms' values: API keys in the keyring (``parent`` owns any question asked
        about that), the rest in the settings file."""
        settings = self.collect()
        self.key_results = self.providers.save_keys(parent)
        save_settings(settings, self.store)

    def saved_messages(self) -> list[str]:
        """What saving the API keys did, in words."""
        return [result.text for result in self.key_results]

    def failed_messages(self) -> list[str]:
        """What saving reported as not done (a key declined or refused by the keyring)."""
        return [result.text for result in self.key_results if not result.ok]
