"""The one place that imports the Qt binding (as qutebrowser does), so a switch stays cheap.

Add names here as you need them (one import line per Qt module).
"""

import sys
from types import ModuleType
from typing import Any

import PySide6  # noqa: F401 - installs the import hook changed below


def _read_sources_once() -> None:
    """PySide6 asks of every module imported after it whether its source mentions "PySide6"
    (``shibokensupport.feature._mod_uses_pyside``, for its ``__feature__`` switches, which
    ThoughtDesk does not use) with ``inspect.getsource``, whose ``inspect.getmodule`` walks all
    of ``sys.modules`` on each call: 35-110 ms of the window's start for ~200 modules (issue 27,
    point 2). The same question is answered here by reading the ``.py`` file once, or in the
    frozen app by asking the module's loader for its source (what ``inspect`` ends up doing,
    after two walks of ``sys.modules``); anything else (extension modules, unreadable files)
    still goes to PySide6's own check. tests/ui/test_qt_binding.py compares the answers."""
    feature = sys.modules.get("shibokensupport.feature")
    pyside_check = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or pyside_check is None or getattr(pyside_check, "read_once", False):
        return

    def uses_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as stream:
                    return b"PySide6" in stream.read()
            except OSError:
                pass
        elif isinstance(path, str) and path.endswith(".pyc") and getattr(sys, "frozen", False):
            get_source = getattr(getattr(module, "__loader__", None), "get_source", None)
            if get_source is not None:
                try:
                    source = get_source(module.__name__)
                except (ImportError, OSError):
                    return bool(pyside_check(module))
                return source is not None and "PySide6" in source
        return bool(pyside_check(module))

    uses_pyside.read_once = True  # type: ignore[attr-defined]
    uses_pyside.pyside_check = pyside_check  # type: ignore[attr-defined]
    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]


_read_sources_once()  # before the Qt modules below and everything imported after them

from PySide6.QtCore import (  # noqa: E402, F401 - the facade: every name is for other modules
    QAbstractListModel,
    QAbstractTableModel,
    QByteArray,
    QCoreApplication,
    QElapsedTimer,
    QEvent,
    QFileInfo,
    QFileSystemWatcher,
    QItemSelectionModel,
    QMarginsF,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QRunnable,
    QSettings,
    QSize,
    QSizeF,
    QSortFilterProxyModel,
    QStandardPaths,
    QStringListModel,
    Qt,
    QThread,
    QThreadPool,
    QTimer,
    QtMsgType,
    QUrl,
    Signal,
    SignalInstance,
    Slot,
    qInstallMessageHandler,
    qVersion,
)
from PySide6.QtGui import (  # noqa: E402, F401 - the facade: every name is for other modules
    QAbstractFileIconProvider,
    QAction,
    QActionGroup,
    QBrush,
    QCloseEvent,
    QColor,
    QDesktopServices,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QIcon,
    QIntValidator,
    QKeyEvent,
    QKeySequence,
    QPageLayout,
    QPageSize,
    QPainter,
    QPalette,
    QPdfWriter,
    QPixmap,
    QResizeEvent,
    QShortcut,
    QStandardItem,
    QStandardItemModel,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
    QUndoCommand,
    QUndoStack,
)
from PySide6.QtNetwork import QLocalServer, QLocalSocket  # noqa: E402, F401 - the facade: for other modules
from PySide6.QtWidgets import (  # noqa: E402, F401 - the facade: every name is for other modules
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QProgressDialog,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QStatusBar,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
    QTabBar,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QTextEdit,
    QToolBar,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)
from PySide6.QtWidgets import (  # noqa: E402
    QFileDialog as _QtFileDialog,
)


class _NameOnlyIcons(QAbstractFileIconProvider):
    """Icons and type names from file names alone. Qt's own provider reads the first bytes of
    every file a file dialog lists to guess its type, and opening and closing the open library
    (or its -wal/-shm) in this process drops every POSIX lock SQLite holds on it: a command run
    on the library meanwhile then takes it for unused, checkpoints and deletes its write-ahead
    log, and this process's committed writes are lost ("disk I/O error")."""

    def __init__(self) -> None:
        super().__init__()
        style = QApplication.style()  # made on the GUI thread; used from Qt's file-info thread
        self._folder = style.standardIcon(QStyle.StandardPixmap.SP_DirIcon)
        self._file = style.standardIcon(QStyle.StandardPixmap.SP_FileIcon)

    def icon(self, what: object) -> QIcon:  # Qt's two overloads in one
        if isinstance(what, QFileInfo):
            return self._folder if what.isDir() else self._file
        return self._folder if what == QAbstractFileIconProvider.IconType.Folder else self._file

    def type(self, info: QFileInfo) -> str:
        if info.isDir():
            return "Folder"
        suffix = info.suffix()
        return f"{suffix.upper()} file" if suffix else "File"


_NO_OPTIONS = _QtFileDialog.Option(0)


class QFileDialog(_QtFileDialog):
    """Qt's file dialog whose listing never opens the files it lists (see :class:`_NameOnlyIcons`);
    the static functions the app calls build one. A platform's native dialog is used where there
    is one, as Qt's own static functions do."""

    _icons: _NameOnlyIcons | None = None

    @classmethod
    def configured(cls, parent: QWidget | None, caption: str, directory: str, filter: str = "") -> _QtFileDialog:
        """A dialog at ``directory`` (a folder, or a file to preselect) with the safe icon provider."""
        if cls._icons is None:
            cls._icons = _NameOnlyIcons()
        dialog = _QtFileDialog(parent, caption, "", filter)
        dialog.setIconProvider(cls._icons)
        if directory:
            info = QFileInfo(directory)
            if info.isDir():
                dialog.setDirectory(directory)
            else:
                dialog.setDirectory(info.absolutePath())
                dialog.selectFile(info.fileName())
        return dialog

    @staticmethod
    def _run(dialog: _QtFileDialog, selected_filter: str, options: _QtFileDialog.Option) -> tuple[str, str]:
        dialog.setOptions(options)
        if selected_filter:
            dialog.selectNameFilter(selected_filter)
        try:
            if dialog.exec() == _QtFileDialog.DialogCode.Accepted and dialog.selectedFiles():
                return dialog.selectedFiles()[0], dialog.selectedNameFilter()
            return "", ""
        finally:
            dialog.deleteLater()

    @staticmethod
    def _file_name(
        save: bool, parent: QWidget | None, caption: str, dir: str, filter: str, selected: str, options: Any
    ) -> tuple[str, str]:
        """An existing file to open, or (``save``) a file name to write; ("", "") when cancelled."""
        dialog = QFileDialog.configured(parent, caption, dir, filter)
        if save:
            dialog.setAcceptMode(_QtFileDialog.AcceptMode.AcceptSave)
        dialog.setFileMode(_QtFileDialog.FileMode.AnyFile if save else _QtFileDialog.FileMode.ExistingFile)
        return QFileDialog._run(dialog, selected, options)

    @staticmethod
    def getOpenFileName(
        parent: QWidget | None = None,
        caption: str = "",
        dir: str = "",
        filter: str = "",
        selectedFilter: str = "",
        options: _QtFileDialog.Option = _NO_OPTIONS,
    ) -> tuple[str, str]:
        return QFileDialog._file_name(False, parent, caption, dir, filter, selectedFilter, options)

    @staticmethod
    def getSaveFileName(
        parent: QWidget | None = None,
        caption: str = "",
        dir: str = "",
        filter: str = "",
        selectedFilter: str = "",
        options: _QtFileDialog.Option = _NO_OPTIONS,
    ) -> tuple[str, str]:
        return QFileDialog._file_name(True, parent, caption, dir, filter, selectedFilter, options)

    @staticmethod
    def getExistingDirectory(
        parent: QWidget | None = None,
        caption: str = "",
        dir: str = "",
        options: _QtFileDialog.Option = _QtFileDialog.Option.ShowDirsOnly,
    ) -> str:
        dialog = QFileDialog.configured(parent, caption, dir)
        dialog.setFileMode(_QtFileDialog.FileMode.Directory)
        return QFileDialog._run(dialog, "", options)[0]
