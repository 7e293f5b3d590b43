"""Sizes that fit a laptop: 1366x768 screens with a taskbar, where clinicians review CoTs.

Three things made windows wider or taller than such a screen: combo boxes as wide as their
longest entry (a headerless CSV's first row is a whole question), one-line labels as wide as
their text (a streamed prompt), and initial sizes chosen on a large monitor. :func:`compact_combo`,
:class:`ElidedLabel` and :func:`fit_to_screen` are the remedies; ``tests/ui/app/test_fits_laptop.py``
checks every window against :data:`LAPTOP_CLIENT`.
"""

from __future__ import annotations

import html

from thoughtdesk.core.visible_text import elide
from thoughtdesk.ui.qt import QComboBox, QGuiApplication, QLabel, QPainter, QRect, QSize, QSizePolicy, Qt, QWidget

#: The screen the application must fit: a 1366x768 laptop with a 40 px taskbar...
LAPTOP_SCREEN = QSize(1366, 768)
TASKBAR_PX = 40
#: ...and a window frame around the client area (title bar and borders of common desktops).
FRAME = QSize(16, 38)
#: The largest client area (the widget's own size) a top-level window may need at minimum.
LAPTOP_CLIENT = QSize(
    LAPTOP_SCREEN.width() - FRAME.width(), LAPTOP_SCREEN.height() - TASKBAR_PX - FRAME.height()
)  # 1350 x 690


#: Shown characters an :class:`ElidedLabel` keeps (a one-line label shows far fewer).
ELIDED_CHARS = 2_000


def compact_combo(combo: QComboBox, chars: int = 16) -> QComboBox:
    """Let ``combo`` be narrower than its longest entry (about ``chars`` characters at least);
    its popup still shows entries in full. Returns ``combo``."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    return combo


def fit_to_screen(widget: QWidget, width: int, height: int, available: QRect | None = None) -> QSize:
    """Resize a top-level ``widget`` to ``width`` x ``height``, or less where the screen's
    available area (``available``: that of the widget's screen, else the primary one) minus a
    window frame is smaller. Screens smaller than the laptop's are not designed for, so the
    bound is never below :data:`LAPTOP_CLIENT` (the offscreen test screen is 800x800).
    Returns the size set."""
    if available is None:
        screen = widget.screen() or QGuiApplication.primaryScreen()
        available = screen.availableGeometry() if screen is not None else QRect(0, 0, width, height)
    bound = QSize(available.width() - FRAME.width(), available.height() - FRAME.height()).expandedTo(LAPTOP_CLIENT)
    size = QSize(width, height).boundedTo(bound)
    widget.resize(size)
    return size


class ElidedLabel(QLabel):
    """A one-line plain-text label that never widens its window: a long text is drawn cut with
    "…" (at the right, or in the middle with ``mode``: for paths), and shown whole in the tooltip;
    ``text()`` is the whole text (invisible characters revealed, cut past :data:`ELIDED_CHARS`)."""

    def __init__(
        self,
        text: str = "",
        *,
        name: str = "",
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
        max_hint: int = 400,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.mode = mode
        self.max_hint = max_hint
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        # Preferred: the whole text's width (up to ``max_hint``) when there is room, less when not.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        if name:
            self.setObjectName(name)
        self.setText(text)

    def setText(self, text: str) -> None:  # Qt's name
        text = elide(text, ELIDED_CHARS)  # invisible characters shown; never megabytes to measure
        super().setText(text)
        # Qt guesses whether a tooltip is rich text: escaped inside a paragraph, it is shown literally.
        self.setToolTip(text if not text else f"<p>{html.escape(text, quote=False)}</p>")

    def minimumSizeHint(self) -> QSize:  # Qt API
        return QSize(self.fontMetrics().horizontalAdvance("…") * 4, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # Qt API
        hint = super().sizeHint()
        return QSize(min(hint.width(), self.max_hint), hint.height())

    def paintEvent(self, _event) -> None:  # Qt API: draw the text elided to the width
        painter = QPainter(self)
        rect = self.contentsRect()
        elided = self.fontMetrics().elidedText(self.text(), self.mode, rect.width())
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, self.alignment() | Qt.AlignmentFlag.AlignVCenter, elided)
        painter.end()
