"""The compare view's word-diff pane: two CoTs chosen in two boxes, the first one's deletions and
the second one's insertions marked, and a one-line summary.

Long text (issue 15): a word diff of two 20,000-character CoTs takes 1.5 s, so up to
:data:`SYNC_DIFF_CHARS` characters it is computed in place, up to :data:`DIFF_CHARS` in a worker
(the texts shown plain meanwhile), beyond that not at all, which the summary says. Every
document is escaped HTML from :mod:`thoughtdesk.ui.review.compare.safe_text` (untrusted text).
"""

from __future__ import annotations

from collections.abc import Sequence

from thoughtdesk.core.review.compare.colours import Theme
from thoughtdesk.core.review.compare.similarity import DiffOp, word_diff
from thoughtdesk.ui.base.tasks import Task
from thoughtdesk.ui.qt import QComboBox, QHBoxLayout, QSplitter, Qt, QTextEdit, QVBoxLayout, QWidget
from thoughtdesk.ui.review.compare.safe_text import diff_side_html, to_html_escaped, wrap_document
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.long_text import wrap_mode_for
from thoughtdesk.ui.widgets.signals import blocked

#: Characters of the two texts together up to which the word diff is computed in place (~30 ms).
SYNC_DIFF_CHARS = 4_000
#: Up to this many it is computed in a worker (1.5 s at most); beyond, no word diff.
DIFF_CHARS = 40_000


def read_only_text(name: str) -> QTextEdit:
    """A scrolling, read-only text view for escaped HTML; pasting never brings markup in."""
    view = QTextEdit()
    view.setObjectName(name)
    view.setReadOnly(True)
    view.setAcceptRichText(False)
    view.setUndoRedoEnabled(False)
    return view


class WordDiffPane(QWidget):
    """Word diff between two of the shown CoTs. :meth:`set_choices` names the CoTs,
    :meth:`set_texts` gives their texts (as aligned) and the theme; :meth:`show_pair` picks two."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._texts: Sequence[str] = ()
        self._theme: Theme = "light"
        self._pair: tuple[str, str] | None = None  # the pair a worker is diffing
        self.first, self.second = QComboBox(objectName="diffFirstChoice"), QComboBox(objectName="diffSecondChoice")
        for box in (self.first, self.second):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(22)
            box.currentIndexChanged.connect(self.refresh)
        self.summary = plain_label("", name="diffSummary", selectable=True, keep_height=True)
        self.summary.setWordWrap(False)  # "−32 words, +126 words" on one line
        self.a, self.b = read_only_text("diffFirst"), read_only_text("diffSecond")
        sides = QSplitter(Qt.Orientation.Horizontal)
        sides.addWidget(self.a)
        sides.addWidget(self.b)
        bar = QHBoxLayout()
        for widget in (
            plain_label("Word diff", selectable=True, keep_height=True),
            self.first,
            plain_label("→", selectable=True, keep_height=True),
            self.second,
            self.summary,
        ):
            bar.addWidget(widget)
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(sides, 1)

    def set_choices(self, labels: Sequence[str]) -> None:
        """The CoTs to choose from (the first two chosen); no diff is computed yet."""
        for box in (self.first, self.second):
            with blocked(box):
                box.clear()
                box.addItems(list(labels))
                if box is self.second and len(labels) > 1:
                    box.setCurrentIndex(1)

    def set_texts(self, texts: Sequence[str], theme: Theme) -> None:
        """The CoTs' texts (in the order of the choices) and the theme; the diff is shown again."""
        self._texts, self._theme = texts, theme
        self.refresh()

    def show_pair(self, first: int, second: int) -> None:
        """Word diff of CoT ``first`` (deletions) against CoT ``second`` (insertions)."""
        self.first.setCurrentIndex(first)
        self.second.setCurrentIndex(second)
        self.refresh()

    def refresh(self, _index: int = 0) -> None:
        """Show the diff of the chosen pair: in place, from a worker, or not at all (too long)."""
        first, second = self.first.currentIndex(), self.second.currentIndex()
        if min(first, second) < 0 or max(first, second) >= len(self._texts):
            return
        a, b = self._texts[first], self._texts[second]
        for view, text in ((self.a, a), (self.b, b)):
            mode = wrap_mode_for(text)  # an unbroken word wrapped at boundaries costs seconds
            if view.wordWrapMode() != mode:
                view.setWordWrapMode(mode)
        size = len(a) + len(b)
        if size <= SYNC_DIFF_CHARS:
            self._show(word_diff(a, b))
            return
        # Shown plain at once; the diff follows from a worker, or never when too long.
        self.a.setHtml(wrap_document(to_html_escaped(a)))
        self.b.setHtml(wrap_document(to_html_escaped(b)))
        if size > DIFF_CHARS:
            self.summary.setText(f"no word diff: {size:,} characters (limit {DIFF_CHARS:,})")
            return
        self.summary.setText("word diff…")
        self._pair = (a, b)

        def done(ops: list[DiffOp], pair: tuple[str, str] = (a, b)) -> None:
            if self._pair == pair:  # still the pair shown
                self._show(ops)

        Task(lambda _ctx: word_diff(a, b)).on_success(done).owned_by(self).start()

    def _show(self, ops: list[DiffOp]) -> None:
        self._pair = None
        self.a.setHtml(diff_side_html(ops, "a", self._theme))
        self.b.setHtml(diff_side_html(ops, "b", self._theme))
        removed = sum(len(op.text.split()) for op in ops if op.kind == "delete")
        added = sum(len(op.text.split()) for op in ops if op.kind == "insert")
        self.summary.setText(f"−{removed} words, +{added} words")
