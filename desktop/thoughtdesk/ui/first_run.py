"""The first-run wizard: name, library, offline mode, local model, providers.

Shown by ``run_gui`` before the main window when ``firstRun/done`` is not set (and
``THOUGHTDESK_NO_WIZARD`` is not 1). Finishing saves everything (keys to the keyring) and sets
``firstRun/done``; cancelling starts the app with the defaults and the wizard comes back next
time. The Settings dialog (Edit > Settings…) edits the same later.
"""

from __future__ import annotations

from thoughtdesk.ui.provider_forms import ProvidersForm
from thoughtdesk.ui.qt import QSettings, QVBoxLayout, QWidget, QWizard, QWizardPage
from thoughtdesk.ui.settings import AppSettings, load_settings, mark_first_run_done, save_settings
from thoughtdesk.ui.settings_forms import IdentityForm, LibraryForm, LocalModelForm, OfflineForm


class FormPage(QWizardPage):
    """A wizard page around one form; ``validate`` (if the form has it) guards Next."""

    def __init__(self, title: str, subtitle: str, form: QWidget, name: str) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setTitle(title)
        self.setSubTitle(subtitle)
        self.form = form
        layout = QVBoxLayout(self)
        layout.addWidget(form)

    def validatePage(self) -> bool:  # noqa: N802 - Qt's name
        validate = getattr(self.form, "validate", None)
        return validate() if validate is not None else True


class FirstRunWizard(QWizard):
    """Collects the first settings; ``settings`` holds them after ``accept``."""

    def __init__(self, store: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("firstRunWizard")
        self.setWindowTitle("Welcome to ThoughtDesk")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.resize(720, 560)
        self._store = store
        self.settings: AppSettings = load_settings(store)
        self.identity = IdentityForm()
        self.library = LibraryForm()
        self.offline = OfflineForm()
        self.model = LocalModelForm()
        self.providers = ProvidersForm()
        self.saved_messages: list[str] = []
        pages = [
            ("Who are you?", "Your name marks the annotations you make.", self.identity, "pageName"),
            ("Your library", "Where ThoughtDesk keeps your data (leave empty for the default).",
             self.library, "pageLibrary"),
            ("Offline mode", "For machines where nothing may leave the computer.", self.offline, "pageOffline"),
            ("Local model", "A model that runs on this computer (optional).", self.model, "pageModel"),
            ("Model providers", "Remote APIs (optional; not used while offline mode is on).",
             self.providers, "pageProviders"),
        ]
        self.pages: list[FormPage] = []
        for title, subtitle, form, name in pages:
            page = FormPage(title, subtitle, form, name)
            self.pages.append(page)
            self.addPage(page)
        for form in self._forms():
            form.load(self.settings)

    def _forms(self):
        return (self.identity, self.library, self.offline, self.model, self.providers)

    def collect(self) -> AppSettings:
        """The settings as the pages show them now."""
        for form in self._forms():
            form.store(self.settings)
        return self.settings

    def accept(self) -> None:
        settings = self.collect()
        self.saved_messages = self.providers.save_keys(self)
        save_settings(settings, self._store)
        mark_first_run_done(self._store)
        super().accept()
