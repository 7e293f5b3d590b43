"""The first-run wizard: name, library, offline mode, local model, providers.

Shown by ``run_gui`` before the main window when ``firstRun/done`` is not set (and
``THOUGHTDESK_NO_WIZARD`` is not 1). Finishing saves everything (keys to the keyring) and sets
``firstRun/done``; cancelling starts the app with the defaults and the wizard comes back next
time. The Settings dialog (Edit > Settings…) edits the same later.
"""

from __future__ import annotations

from thoughtdesk.ui.qt import QSettings, QVBoxLayout, QWidget, QWizard, QWizardPage
from thoughtdesk.ui.settings.formset import SettingsFormSet
from thoughtdesk.ui.settings.options import mark_first_run_done


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

    def validatePage(self) -> bool:  # Qt's name
        validate = getattr(self.form, "validate", None)
        return validate() if validate is not None else True


class FirstRunWizard(SettingsFormSet, QWizard):
    """Collects the first settings; ``settings`` holds them after ``accept``."""

    def __init__(self, store: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("firstRunWizard")
        self.setWindowTitle("Welcome to ThoughtDesk")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.resize(720, 560)
        self._make_forms(store)
        pages = [
            ("Who are you?", "Your name marks the annotations you make.", self.identity, "pageName"),
            (
                "Your library",
                "Where ThoughtDesk keeps your data (leave empty for the default).",
                self.library,
                "pageLibrary",
            ),
            ("Offline mode", "For machines where nothing may leave the computer.", self.offline, "pageOffline"),
            ("Local model", "A model that runs on this computer (optional).", self.model, "pageModel"),
            (
                "Model providers",
                "Remote APIs (optional; not used while offline mode is on).",
                self.providers,
                "pageProviders",
            ),
        ]
        self.pages: list[FormPage] = []
        for title, subtitle, form, name in pages:
            page = FormPage(title, subtitle, form, name)
            self.pages.append(page)
            self.addPage(page)
        self._load_forms()

    def accept(self) -> None:
        self._save_forms()
        mark_first_run_done(self._store)
        super().accept()
