"""The first-run wizard: name, library, offline mode, local model, providers.

Shown by ``run_gui`` before the main window when ``firstRun/done`` is not set (and
``THOUGHTDESK_NO_WIZARD`` is not 1). Finishing saves everything (keys to the keyring) and sets
``firstRun/done``; cancelling starts the app with the defaults and the wizard comes back next
time. The Settings dialog (Edit > Settings…) edits the same later.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.ui.qt import QSettings, QVBoxLayout, QWidget, QWizard, QWizardPage
from thoughtdesk.ui.settings.formset import SettingsFormSet
from thoughtdesk.ui.settings.options import mark_first_run_done


class FormPage(QWizardPage):
    """A wizard page around one form; ``validate`` (if given) guards Next."""

    def __init__(
        self, title: str, subtitle: str, form: QWidget, name: str, validate: Callable[[], bool] | None = None
    ) -> None:
        super().__init__()
        self.setObjectName(name)
        self.setTitle(title)
        self.setSubTitle(subtitle)
        self.form = form
        self._validate = validate
        layout = QVBoxLayout(self)
        layout.addWidget(form)

    def validatePage(self) -> bool:  # Qt's name
        return self._validate() if self._validate is not None else True


class FirstRunWizard(QWizard):
    """Collects the first settings in its :class:`SettingsFormSet` (``forms``), saved on ``accept``."""

    def __init__(self, store: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("firstRunWizard")
        self.setWindowTitle("Welcome to ThoughtDesk")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnStartPage, True)
        self.resize(720, 560)
        self.forms = forms = SettingsFormSet(store)
        self.pages = [
            FormPage("Who are you?", "Your name marks the annotations you make.", forms.identity, "pageName"),
            FormPage(
                "Your library",
                "Where ThoughtDesk keeps your data (leave empty for the default).",
                forms.library,
                "pageLibrary",
                forms.library.validate,
            ),
            FormPage(
                "Offline mode", "For machines where nothing may leave the computer.", forms.offline, "pageOffline"
            ),
            FormPage(
                "Local model",
                "A model that runs on this computer (optional).",
                forms.model,
                "pageModel",
                forms.model.validate,
            ),
            FormPage(
                "Model providers",
                "Remote APIs (optional; not used while offline mode is on).",
                forms.providers,
                "pageProviders",
            ),
        ]
        for page in self.pages:
            self.addPage(page)
        forms.load()

    def failed_messages(self) -> list[str]:
        """What finishing could not save (an API key declined or refused by the keyring)."""
        return self.forms.failed_messages()

    def accept(self) -> None:
        self.forms.save(self)
        mark_first_run_done(self.forms.store)
        super().accept()
