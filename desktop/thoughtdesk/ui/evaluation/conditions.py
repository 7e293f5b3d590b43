"""The "Compare two conditions" panel of the Results view: McNemar and paired bootstrap."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from thoughtdesk.core.evaluation.evaluate import Comparison, Key, PairedOutcomes, compare_conditions
from thoughtdesk.core.evaluation.metrics import AccuracyRow
from thoughtdesk.ui.qt import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget, Signal
from thoughtdesk.ui.widgets.labels import plain_label
from thoughtdesk.ui.widgets.signals import blocked


def key_text(key: Key) -> str:
    """A condition as the choosers show it: dataset/split · model · condition."""
    return f"{key[0]}/{key[1]} · {key[2]} · {key[3]}"


class ComparePanel(QWidget):
    """Two condition choosers and the result of comparing them on their shared questions.

    ``start_task(work, on_success, on_failed)`` runs ``work()`` (the bootstrap) in the background.
    """

    #: ``(Comparison | None)``: the comparison of the chosen conditions is shown (None: they
    #: share no question).
    compared = Signal(object)

    def __init__(self, start_task: Callable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._start_task = start_task
        self.paired: PairedOutcomes | None = None
        self.keys: list[Key] = []
        #: the last comparison computed and what it was computed from
        self._last: tuple[tuple[Key, Key, dict[str, bool], dict[str, bool]], Comparison | None] | None = None
        self.compare_a = QComboBox(objectName="compareA")
        self.compare_b = QComboBox(objectName="compareB")
        for combo in (self.compare_a, self.compare_b):
            combo.setMinimumContentsLength(40)
            combo.currentIndexChanged.connect(lambda _: self.compare_chosen())
        self.result_label = plain_label(name="compareResult", selectable=True)
        box = QVBoxLayout(self)
        for label, combo in (("Condition A:", self.compare_a), ("Condition B:", self.compare_b)):
            row = QHBoxLayout()
            row.addWidget(QLabel(label))
            row.addWidget(combo, 1)
            box.addLayout(row)
        box.addWidget(self.result_label)
        box.addStretch(1)

    def set_snapshot(self, rows: Sequence[AccuracyRow], paired: PairedOutcomes | None) -> None:
        """New conditions to choose from; keeps the chosen pair when it still exists."""
        # Combo items carry the key's index: Qt would turn a tuple into a list on the way back.
        chosen = (self.chosen(self.compare_a), self.chosen(self.compare_b))
        self.paired = paired
        keys = self.keys = [r.key for r in rows]
        for position, combo in enumerate((self.compare_a, self.compare_b)):
            previous = chosen[position]
            with blocked(combo):
                combo.clear()
                for index, key in enumerate(keys):
                    combo.addItem(key_text(key), index)
                index = keys.index(previous) if previous in keys else -1
                if index < 0 and keys:
                    index = 0 if position == 0 else self._partner_index(keys, self.chosen(self.compare_a))
                combo.setCurrentIndex(index)
        self.compare_chosen()

    def _partner_index(self, keys: list[Key], a: Key | None) -> int:
        """The first other condition that answered some of the same questions as ``a``."""
        if a is None or self.paired is None:
            return min(1, len(keys) - 1)
        questions = self.paired.by_key.get(a, {}).keys()
        for index, key in enumerate(keys):
            if key != a and questions & self.paired.by_key.get(key, {}).keys():
                return index
        return min(1, len(keys) - 1)

    def chosen(self, combo: QComboBox) -> Key | None:
        index = combo.currentData()
        return self.keys[index] if isinstance(index, int) and 0 <= index < len(self.keys) else None

    def choose(self, a: Key, b: Key) -> None:
        """Select conditions ``a`` and ``b`` (comparison starts in the background)."""
        self.compare_a.setCurrentIndex(self.keys.index(a))
        self.compare_b.setCurrentIndex(self.keys.index(b))

    def compare_chosen(self) -> None:
        """Compare the two chosen conditions in the background (McNemar, paired bootstrap)."""
        a, b = self.chosen(self.compare_a), self.chosen(self.compare_b)
        if self.paired is None or a is None or b is None:
            self.result_label.setText("Choose two conditions.")
            return
        if a == b:
            self.result_label.setText("Choose two different conditions.")
            return
        paired = self.paired
        # A live Results tab redraws every few seconds; the bootstrap (seconds of CPU in the
        # thread pool, competing with the GUI thread for the GIL) runs again only when the two
        # conditions' outcomes changed. Its result depends on nothing else (fixed seed).
        inputs = (a, b, paired.by_key.get(a, {}), paired.by_key.get(b, {}))
        if self._last is not None and self._last[0] == inputs:
            self._compare_done((a, b, self._last[1]))
            return
        self.result_label.setText("Comparing…")

        def done(outcome) -> None:
            self._last = (inputs, outcome[2])
            self._compare_done(outcome)

        self._start_task(
            lambda: (a, b, compare_conditions(paired, a, b)),
            done,
            lambda error: self.result_label.setText(f"Could not compare: {error}"),
        )

    def _compare_done(self, outcome) -> None:
        a, b, comparison = outcome
        if (self.chosen(self.compare_a), self.chosen(self.compare_b)) != (a, b):
            return  # the choice changed meanwhile; its own comparison is on the way
        self.compared.emit(comparison)
        if comparison is None:
            self.result_label.setText(
                "These two conditions share no question (different datasets or "
                "samples), so they cannot be compared pairwise."
            )
            return
        c = comparison
        self.result_label.setText(
            f"{c.n} question(s) answered under both (first sample of each; not extractable counts as wrong).\n"
            f"Accuracy A {100 * c.accuracy_a:.1f}%, B {100 * c.accuracy_b:.1f}%; "
            f"A right and B wrong: {c.only_a}, B right and A wrong: {c.only_b}.\n"
            f"McNemar exact p = {c.p_value:.4g}.\n"
            f"Difference A − B: {100 * c.difference:+.1f} percentage points, 95% paired bootstrap interval "
            f"{100 * c.difference_low:+.1f} to {100 * c.difference_high:+.1f}."
        )
