"""The annotation panel: one reviewer's labels, span labels, comment, mark and score on a CoT.

The panel only shows a :class:`~thoughtdesk.core.review.CotReview` and reports what the user
clicked through signals; the review view turns those into undoable operations. Everything from
data (label names, spans, comments, other reviewers' notes) is shown as plain text: check box
texts have their ``&`` doubled (Qt would read a mnemonic), lists and editors are plain text.
"""

from __future__ import annotations

from thoughtdesk.core.review import CotReview, Label, LabelSet, Span
from thoughtdesk.core.visible_text import reveal_prefix
from thoughtdesk.ui.qt import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QKeySequence,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QShortcut,
    Qt,
    QToolButton,
    QVBoxLayout,
    QWidget,
    Signal,
)
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.long_text import fill_text
from thoughtdesk.ui.widgets.signals import blocked

#: Shown characters of the comment and of the other reviewers' notes (the comment dialog edits
#: the whole comment).
COMMENT_CHARS = 20_000

#: Short, so the panel fits a laptop screen: ``?`` lists every key (Help > Keyboard shortcuts).
KEY_HELP = (
    "Keys: 1–9 label (on selected text: a span) · j / k CoT · n / p sample · c comment · "
    "[ / ] / = prefer left / right / tie · ? all keys"
)


def button_text(text: str) -> str:
    """``text`` for a button or check box: ``&`` doubled so Qt shows it instead of a mnemonic."""
    return text.replace("&", "&&")


def short(text: str, limit: int = 60) -> str:
    """One line of at most ``limit`` shown characters (for list rows), invisible characters
    revealed; only the start of ``text`` is looked at (a comment may be 10 MB)."""
    head = text[: limit * 4]
    line = " ".join(head.split())
    if len(head) == len(text) and reveal_prefix(line, limit)[1] == len(line):
        return reveal_prefix(line, limit)[0]
    return reveal_prefix(line, limit - 1)[0] + "…"


class AnnotationPanel(QWidget):
    """Controls for the current CoT; emits what the user asked for, never writes itself."""

    labelToggled = Signal(str)  # label key, whole CoT
    spanRemoveRequested = Signal(str, object)  # label key, Span
    commentRequested = Signal()
    preferredToggled = Signal(bool)
    qualityChosen = Signal(object)  # 1..5 or None
    labelSetChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("annotationPanel")
        self._label_set: LabelSet | None = None
        self._review: CotReview | None = None
        self._read_only: str | None = None  # why nothing can be written, or None
        self.title = plain_label(
            "No CoT selected", bold=True, name="annotationTitle", selectable=True, keep_height=True
        )
        self.set_box = QComboBox(objectName="labelSetChooser")
        self.set_box.currentTextChanged.connect(self._label_set_chosen)
        self.label_box = QGroupBox("Labels")
        self.label_layout = QVBoxLayout(self.label_box)
        self.checks: dict[str, QCheckBox] = {}

        self.span_list = QListWidget(objectName="spanList")
        self.span_list.setMaximumHeight(52)  # compact: the whole panel fits a laptop screen
        # Long quotes wrap inside the panel instead of needing a horizontal scroll bar.
        self.span_list.setWordWrap(True)
        self.span_list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.span_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.span_list.setToolTip("Span labels of this CoT; Delete removes the selected one")
        delete = QShortcut(QKeySequence(Qt.Key.Key_Delete), self.span_list)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self._remove_selected_span)
        self.remove_span_button = QPushButton("Remove span label", objectName="removeSpan")
        self.remove_span_button.clicked.connect(self._remove_selected_span)

        self.comment_view = QPlainTextEdit(objectName="commentView")
        self.comment_view.setReadOnly(True)
        self.comment_view.setMaximumHeight(52)
        self.comment_view.setPlaceholderText("No comment (press c to write one)")
        self._shown_comment = self._shown_others = ""
        self.comment_button = QPushButton("Edit comment… (c)", objectName="editComment")
        self.comment_button.clicked.connect(self.commentRequested)

        self.preferred = QCheckBox("Preferred (s)", objectName="preferredCheck")
        self.preferred.setToolTip("The preferred CoT of this sample (s)")
        self.preferred.clicked.connect(lambda checked: self.preferredToggled.emit(checked))
        self.quality_buttons: list[QToolButton] = []
        quality_row = QHBoxLayout()
        quality_row.addWidget(plain_label("Quality", selectable=True, keep_height=True))
        for score in range(1, 6):
            button = QToolButton(objectName=f"quality{score}")
            button.setText(str(score))
            button.setCheckable(True)
            button.setToolTip(f"Quality {score} of 5 (Alt+{score})")
            button.clicked.connect(lambda _checked, s=score: self._quality_clicked(s))
            quality_row.addWidget(button)
            self.quality_buttons.append(button)
        quality_row.addStretch(1)

        self.others = QPlainTextEdit(objectName="otherReviewers")
        self.others.setReadOnly(True)
        self.others.setMaximumHeight(52)
        self.others.setPlaceholderText("No other reviewer annotated this CoT")
        self.help = plain_label(KEY_HELP, name="keyHelp", selectable=True, keep_height=True)

        layout = QVBoxLayout(self)
        layout.setSpacing(4)
        layout.addWidget(self.title)
        row = QHBoxLayout()
        row.addWidget(plain_label("Label set", selectable=True, keep_height=True))
        row.addWidget(self.set_box, 1)
        layout.addLayout(row)
        layout.addWidget(self.label_box)
        # Each section's title shares its row with its button: the panel fits 1366x768 unscrolled.
        span_title = plain_label("Span labels", selectable=True, keep_height=True)
        span_title.setToolTip("Select text in the CoT, then press the label's number")
        span_row = QHBoxLayout()
        span_row.addWidget(span_title, 1)
        span_row.addWidget(self.remove_span_button)
        layout.addLayout(span_row)
        layout.addWidget(self.span_list)
        comment_row = QHBoxLayout()
        comment_row.addWidget(plain_label("Comment", selectable=True, keep_height=True), 1)
        comment_row.addWidget(self.comment_button)
        layout.addLayout(comment_row)
        layout.addWidget(self.comment_view)
        quality_row.insertWidget(0, self.preferred)
        quality_row.insertSpacing(1, 12)
        layout.addLayout(quality_row)
        layout.addWidget(plain_label("Other reviewers", selectable=True, keep_height=True))
        layout.addWidget(self.others)
        layout.addWidget(self.help)
        layout.addStretch(1)
        self.setEnabled(False)

    # ---- showing ----------------------------------------------------------------------------

    def _label_set_chosen(self, name: str) -> None:
        if name:  # an empty box (no label set to choose) chooses nothing
            self.labelSetChosen.emit(name)

    def set_label_sets(self, names: list[str], current: str) -> None:
        """The label sets to choose from (no signal)."""
        with blocked(self.set_box):
            self.set_box.clear()
            self.set_box.addItems(names)
            self.set_box.setCurrentText(current)

    def set_label_set(self, label_set: LabelSet) -> None:
        """Rebuild the label check boxes for ``label_set``."""
        self._label_set = label_set
        for check in self.checks.values():
            check.deleteLater()
        self.checks = {}
        for label in label_set.labels:
            check = QCheckBox(button_text(self._check_text(label)))
            check.setObjectName("labelCheck")
            check.setProperty("labelKey", label.key)
            check.clicked.connect(lambda _checked, key=label.key: self.labelToggled.emit(key))
            self.label_layout.addWidget(check)
            self.checks[label.key] = check
        with blocked(self.set_box):
            self.set_box.setCurrentText(label_set.name)
        if self._review is not None:
            self.show_review(self._review, self.title.text())

    @staticmethod
    def _check_text(label: Label) -> str:
        return f"{label.shortcut}  {label.name}" if label.shortcut else label.name

    def show_review(self, review: CotReview | None, title: str, others: str = "") -> None:
        """Show one CoT's review (``None``: nothing to annotate, e.g. the reference)."""
        self._review = review
        self.title.setText(title)
        self.setEnabled(review is not None)
        review = review or CotReview(cot_pk=-1, author="")
        for key, check in self.checks.items():
            check.setChecked(review.labels.get(key, False))
        self.span_list.clear()
        names = {label.key: label.name for label in self._label_set.labels} if self._label_set else {}
        for key, span in review.spans:
            item = QListWidgetItem(f"{names.get(key, key)}: “{short(span.text)}” ({span.start}–{span.end})")
            item.setData(Qt.ItemDataRole.UserRole, (key, span))
            self.span_list.addItem(item)
        self.remove_span_button.setEnabled(bool(review.spans) and self._read_only is None)
        if self._shown_comment != review.comment:  # capped and revealed: a comment may be 10 MB
            self._shown_comment = review.comment
            fill_text(self.comment_view, review.comment, COMMENT_CHARS)
        self.preferred.setChecked(review.preferred)
        for score, button in enumerate(self.quality_buttons, start=1):
            button.setChecked(review.quality == score)
        if self._shown_others != others:
            self._shown_others = others
            fill_text(self.others, others, COMMENT_CHARS)

    def review(self) -> CotReview | None:
        return self._review

    def set_read_only(self, reason: str | None) -> None:
        """``reason``: the library cannot be written, so the controls that change a review are
        disabled with it as their tooltip (the label set chooser and the texts stay usable)."""
        self._read_only = reason
        self._apply_read_only()

    def _writing_controls(self) -> list[QWidget]:
        return [
            self.label_box,
            self.remove_span_button,
            self.comment_button,
            self.preferred,
            *self.quality_buttons,
        ]

    def _apply_read_only(self) -> None:
        reason = self._read_only
        for widget in self._writing_controls():
            if reason is not None:
                widget.setEnabled(False)
            elif widget is not self.remove_span_button:
                widget.setEnabled(True)
            plain = widget.property("plainTip")
            if plain is None:
                plain = widget.toolTip()
                widget.setProperty("plainTip", plain)
            widget.setToolTip(reason or str(plain))

    # ---- user actions -----------------------------------------------------------------------

    def _quality_clicked(self, score: int) -> None:
        current = self._review.quality if self._review else None
        self.qualityChosen.emit(None if current == score else score)  # clicking the set score clears it

    def _remove_selected_span(self) -> None:
        item = self.span_list.currentItem()
        if item is not None:
            key, span = item.data(Qt.ItemDataRole.UserRole)
            if isinstance(span, Span):
                self.spanRemoveRequested.emit(key, span)
