"""The About dialog: version, Qt/PySide6/Python versions, licences of libraries and datasets.

Shown as plain text in a read-only, scrollable box (dataset metadata is data: never rich text).
"""

from __future__ import annotations

import platform

from thoughtdesk.core.paths import resource_path
from thoughtdesk.ui.qt import (
    QDialog,
    QDialogButtonBox,
    QIcon,
    QLabel,
    QPlainTextEdit,
    Qt,
    QVBoxLayout,
    QWidget,
    qVersion,
)

#: (distribution name, what it does here, licence) of the libraries shipped with the app.
BUNDLED_LIBRARIES: tuple[tuple[str, str, str], ...] = (
    ("PySide6-Essentials", "Qt for Python: the user interface", "LGPL-3.0 (Qt: LGPL-3.0)"),
    ("shiboken6", "PySide6's binding runtime", "LGPL-3.0"),
    ("llama-cpp-python", "local GGUF models (llama.cpp, MIT)", "MIT"),
    ("pyqtgraph", "plots", "MIT"),
    ("msgspec", "fast JSON", "BSD-3-Clause"),
    ("httpx", "HTTP for model providers and downloads", "BSD-3-Clause"),
    ("httpcore", "httpx's transport", "BSD-3-Clause"),
    ("sqlite-utils", "the library file (SQLite)", "Apache-2.0"),
    ("keyring", "API keys in the system keyring", "MIT"),
    ("numpy", "numbers", "BSD-3-Clause"),
    ("scipy", "statistics", "BSD-3-Clause"),
    ("platformdirs", "per-user folders", "MIT"),
    ("RapidFuzz", "string similarity", "MIT"),
    ("tenacity", "retries", "Apache-2.0"),
    ("aiolimiter", "rate limits", "MIT"),
    ("filelock", "the model library's lock file", "Unlicense"),
)


def _installed_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version  # here: the window's start does not need it

    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def about_report() -> str:
    """The whole About text (plain text, one section per topic)."""
    import PySide6

    from thoughtdesk import __version__

    lines = [
        f"ThoughtDesk {__version__}",
        "",
        "A local workbench for chain-of-thought reasoning data: load QA datasets, generate, "
        "compare, annotate, critique and score CoTs. Everything stays in one SQLite file on this "
        "computer. ThoughtDesk itself is MIT-licensed.",
        "",
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"Qt {qVersion()}, PySide6 {PySide6.__version__}, on {platform.platform(terse=True)}",
        "",
        "Libraries",
        "---------",
    ]
    for name, purpose, licence in BUNDLED_LIBRARIES:
        lines.append(f"{name} {_installed_version(name)}: {licence} — {purpose}")
    lines += [
        "",
        "Qt and PySide6 are used under the LGPL-3.0: they are separate shared libraries that you may "
        "replace with your own build (see https://www.qt.io/licensing and https://doc.qt.io/qtforpython/).",
        "ThoughtSource collection format and prompt fragments: OpenBioLink/ThoughtSource (MIT).",
        "",
        "Datasets (each keeps its own licence; ThoughtDesk downloads them from their sources only when asked)",
        "--------",
    ]
    lines += dataset_licence_lines()
    return "\n".join(lines)


def dataset_licence_lines() -> list[str]:
    """One line per catalogue dataset: name, title, licence and where it comes from."""
    try:
        from thoughtdesk.core.datasets import catalogue

        infos = catalogue()
    except Exception as error:  # the About box must open even if a loader is broken
        return [f"(the dataset catalogue could not be read: {type(error).__name__}: {error})"]
    return [f"{info.name} — {info.title}: {info.licence} ({info.homepage})" for info in infos]


def app_icon() -> QIcon:
    """The application icon (``resources/thoughtdesk.svg``)."""
    return QIcon(str(resource_path("thoughtdesk.svg")))


class AboutDialog(QDialog):
    """Scrollable plain-text About box with the icon and a Close button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About ThoughtDesk")
        self.setWindowIcon(app_icon())
        self.resize(760, 560)
        layout = QVBoxLayout(self)
        header = QLabel()
        header.setPixmap(app_icon().pixmap(64, 64))
        header.setAlignment(Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(header)
        self.body = QPlainTextEdit(objectName="aboutText")
        self.body.setReadOnly(True)
        self.body.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.body.setPlainText(about_report())
        layout.addWidget(self.body, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def text(self) -> str:
        """The About text shown (plain text, like ``QMessageBox.text()``)."""
        return self.body.toPlainText()
