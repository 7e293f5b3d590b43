"""The settings forms shared by the Settings dialog and the first-run wizard.

Both show the same five forms (who you are, library, network, local model, providers), load them
from the stored settings and save them the same way; only the container differs (tabs or pages).
"""

from __future__ import annotations

from thoughtdesk.ui.qt import QSettings
from thoughtdesk.ui.settings.forms import IdentityForm, LibraryForm, LocalModelForm, OfflineForm
from thoughtdesk.ui.settings.options import AppSettings, load_settings, save_settings
from thoughtdesk.ui.settings.provider_forms import ProvidersForm


class SettingsFormSet:
    """Mixed into a dialog: ``_make_forms`` in ``__init__``, ``_save_forms`` on accept."""

    def _make_forms(self, store: QSettings | None) -> None:
        self._store = store
        self.settings: AppSettings = load_settings(store)
        self.identity = IdentityForm()
        self.library = LibraryForm()
        self.offline = OfflineForm()
        self.model = LocalModelForm()
        self.providers = ProvidersForm()
        #: What saving the API keys reported (shown by the caller).
        self.saved_messages: list[str] = []

    def _forms(self):
        return (self.identity, self.library, self.offline, self.model, self.providers)

    def _load_forms(self) -> None:
        for form in self._forms():
            form.load(self.settings)

    def collect(self) -> AppSettings:
        """The settings as the forms show them now."""
        for form in self._forms():
            form.store(self.settings)
        return self.settings

    def failed_messages(self) -> list[str]:
        """What saving reported as not done (a key declined or refused by the keyring)."""
        return [m for m in self.saved_messages if "NOT stored" in m]

    def _save_forms(self) -> None:
        """Store the forms' values: API keys in the keyring, the rest in the settings file."""
        settings = self.collect()
        self.saved_messages = self.providers.save_keys(self)
        save_settings(settings, self._store)
