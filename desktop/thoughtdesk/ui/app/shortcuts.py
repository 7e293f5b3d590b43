"""The keyboard shortcuts list (Help ▸ Keyboard shortcuts)."""

from __future__ import annotations

from thoughtdesk.ui.qt import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QLabel,
    QScrollArea,
    Qt,
    QVBoxLayout,
    QWidget,
)
from thoughtdesk.ui.widgets.labels import plain_label

#: (keys, what they do), in the order the list shows them.
SHORTCUTS: list[tuple[str, str]] = [
    ("Ctrl+F", "search the samples"),
    ("Up / Down, j / k", "next / previous sample in the table"),
    ("Ctrl+I", "import a file"),
    ("Ctrl+E", "export the selected collection"),
    ("Ctrl+Shift+R", "export a review report (HTML or PDF)"),
    ("Ctrl+Shift+N", "new library"),
    ("Ctrl+O", "open a library"),
    ("Escape", "clear the search"),
    ("Ctrl+1 / 2 / 3 / 4", "Samples / Review / Results / Runs tab"),
    ("Ctrl+G", "plan a generation run"),
    ("Ctrl+Shift+G", "critique CoTs (a critique run)"),
    ("Ctrl+,", "settings"),
    ("Review: 1–9", "toggle a label (on selected text: a span label)"),
    ("Review: j / k", "next / previous CoT"),
    ("Review: n / p", "next / previous sample"),
    ("Review: c", "comment on the CoT"),
    ("Review: s", "mark the CoT preferred"),
    (
        "Review: [ / ] / =",
        "pairwise: prefer the left / right CoT of the pair (the current CoT and the next), = a tie; again takes it back",
    ),
    ("Review: Alt+1…5 / Alt+0", "quality score / clear it"),
    ("Review: e then 0…5 / e Delete", "explanation score of the CoT / clear it"),
    ("Review: d then 1…8 / d 0", "toggle a flaw dimension / clear them"),
    ("Review: f / Shift+F", "next / previous critique of the CoT"),
    ("Review: r then 0…3 / r Delete", "rate the focused critique / clear it"),
    ("Review: Alt+Down / Alt+Up", "next / previous step of the CoT (Steps tab)"),
    ("Review: - / 0 / +", "rate the step -1 / 0 / +1 (again: clear)"),
    ("Review: x / Shift+X", "first error at this step (earlier steps +1) / no step is wrong"),
    ("Review: u / w", "flag the step (unsure) / write a corrected step"),
    ("Review: o then 1…4 / o Delete", "finish reason found_error, solution, bad_problem, give_up / clear"),
    ("Review: t", "steps of the CoT's text / of its reasoning trace"),
    ("Review: Ctrl+Z / Ctrl+Shift+Z", "undo / redo"),
    ("Ctrl+Shift+B", "blind review on or off"),
    ("Ctrl+Shift+T", "trajectory of the current CoT (a guided CoT's steps and candidates)"),
    ("?", "this list"),
    ("Ctrl+Q", "quit"),
]


class ShortcutsDialog(QDialog):
    """Help ▸ Keyboard shortcuts: keys and what they do in two aligned columns (a grid, not
    padded text: padding aligns only in a fixed-width font), each phrase on one line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard shortcuts")
        grid_box = QWidget()
        grid = QGridLayout(grid_box)
        grid.setHorizontalSpacing(24)
        grid.setVerticalSpacing(3)
        for row, (keys, what) in enumerate(SHORTCUTS):
            key_label = plain_label(keys, wrap=False, bold=True)
            key_label.setObjectName("shortcutKeys")
            grid.addWidget(key_label, row, 0, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            grid.addWidget(plain_label(what, wrap=False, name="shortcutText"), row, 1, Qt.AlignmentFlag.AlignTop)
        grid.setColumnStretch(1, 1)
        # Scrolls rather than outgrow a small screen if the list grows.
        scroll = QScrollArea(objectName="shortcutsScroll")
        scroll.setWidget(grid_box)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addWidget(buttons)
        hint = grid_box.sizeHint()
        scroll.setMinimumWidth(hint.width() + scroll.verticalScrollBar().sizeHint().width())
        self.resize(hint.width() + 60, min(hint.height() + 80, 640))

    def rows(self) -> list[tuple[str, str]]:
        """The (keys, what) pairs as shown, top to bottom."""
        keys = [label.text() for label in self.findChildren(QLabel, "shortcutKeys")]
        texts = [label.text() for label in self.findChildren(QLabel, "shortcutText")]
        return list(zip(keys, texts, strict=True))
