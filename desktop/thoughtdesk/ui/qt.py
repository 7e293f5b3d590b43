"""The one place that imports the Qt binding (as qutebrowser does), so a switch stays cheap.

Add names here as you need them (one import line per Qt module).
"""

from PySide6.QtCore import (  # noqa: F401
    QAbstractListModel, QAbstractTableModel, QByteArray, QCoreApplication, QElapsedTimer, QEvent, QFileSystemWatcher,
    QItemSelectionModel, QMimeData, QModelIndex, QObject, QPersistentModelIndex, QPoint, QRect,
    QRunnable, QSettings, QSize, QSortFilterProxyModel, QStandardPaths, Qt, QThread, QThreadPool,
    QTimer, QUrl, Signal, Slot, qVersion,
)
from PySide6.QtGui import (  # noqa: F401
    QAction, QActionGroup, QBrush, QCloseEvent, QColor, QDesktopServices, QFont, QFontMetrics,
    QGuiApplication, QIcon, QIntValidator, QKeyEvent, QKeySequence, QPainter, QPalette, QPixmap,
    QShortcut, QStandardItem, QStandardItemModel, QTextCharFormat, QTextCursor, QTextDocument,
    QTextOption, QUndoCommand, QUndoStack,
)
from PySide6.QtWidgets import (  # noqa: F401
    QAbstractItemView, QAbstractSpinBox, QApplication, QButtonGroup, QCheckBox, QComboBox, QDialog,
    QDialogButtonBox, QDockWidget, QDoubleSpinBox, QFileDialog, QFormLayout, QFrame, QGridLayout,
    QGroupBox, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QLineEdit, QListView, QListWidget,
    QListWidgetItem, QMainWindow, QMenu, QMessageBox, QPlainTextEdit, QProgressBar,
    QProgressDialog, QPushButton, QRadioButton, QScrollArea, QSizePolicy, QSlider, QSpinBox,
    QSplitter, QStackedWidget, QStatusBar, QStyle, QStyledItemDelegate, QStyleOptionProgressBar, QTableView, QTableWidget, QTableWidgetItem,
    QTabWidget, QTextBrowser, QTextEdit, QToolBar, QToolButton, QTreeView, QVBoxLayout, QWidget,
    QWizard, QWizardPage,
)
