"""Keyboard handling of the Review tab: single keys (1-9, j, k, n, p, c, s, [, ], =) and Alt+digits.

Single-letter keys cannot be ``QShortcut``s here: the main window already binds J and K to the
sample table, and two shortcuts on one key are "ambiguous" and neither fires. Instead an
application event filter looks at key events sent to widgets inside the review view and, for
the keys it owns, accepts the ``ShortcutOverride`` (so no window shortcut fires) and runs the
action on the ``KeyPress``. Text inputs (the comment editor, spin boxes, editable combo boxes)
keep every key.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.ui.qt import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QEvent,
    QKeyEvent,
    QKeySequence,
    QLineEdit,
    QObject,
    QPlainTextEdit,
    Qt,
    QTextEdit,
    QWidget,
)

Action = Callable[[], None]
#: A prefix key's handler: the digit typed after it, or None for Delete / Backspace.
PrefixHandler = Callable[[int | None], None]
_CLEAR_KEYS = (int(Qt.Key.Key_Delete), int(Qt.Key.Key_Backspace))
_MODIFIER_KEYS = {
    int(k) for k in (Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta, Qt.Key.Key_AltGr)
}
_DIGITS = {getattr(Qt.Key, f"Key_{d}"): d for d in range(10)}
_PLAIN = (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)


def is_text_input(widget: QObject) -> bool:
    """True for widgets where typed letters and digits are text (they keep every key)."""
    if isinstance(widget, (QLineEdit, QAbstractSpinBox)):
        return True
    if isinstance(widget, (QPlainTextEdit, QTextEdit)):
        return not widget.isReadOnly()
    if isinstance(widget, QComboBox):
        return widget.isEditable()
    return False


class ReviewKeys(QObject):
    """Routes the review keys to actions while the view (or a child) receives them.

    ``letters`` maps a ``Qt.Key`` (no modifier) to an action; ``chords`` maps a key sequence
    text such as ``"Ctrl+Z"`` to one; ``on_digit(d)`` gets 1-9; ``on_alt_digit(d)`` gets
    Alt+0..5. ``prefixes`` maps a ``Qt.Key`` to a :data:`PrefixHandler` for the key typed next;
    ``on_pending(key or None)`` is told when a prefix starts waiting and when it is done (to show
    a hint). Install with :meth:`install`; it goes away with the view.
    """

    def __init__(
        self,
        view: QWidget,
        letters: dict[Qt.Key, Action],
        on_digit: Callable[[int], None],
        on_alt_digit: Callable[[int], None],
        chords: dict[str, Action] | None = None,
        prefixes: dict[Qt.Key, PrefixHandler] | None = None,
        on_pending: Callable[[int | None], None] | None = None,
    ) -> None:
        super().__init__(view)
        self.view = view
        self.letters = {int(key): action for key, action in letters.items()}
        self.chords = {
            # PySide6's stubs lack QKeySequence.__getitem__ (Qt's operator[]), which exists at run time.
            QKeySequence(text)[0].toCombined(): action  # type: ignore[index]
            for text, action in (chords or {}).items()
        }
        self.on_digit = on_digit
        self.on_alt_digit = on_alt_digit
        self.prefixes = {int(key): handler for key, handler in (prefixes or {}).items()}
        self.on_pending = on_pending
        #: The prefix key waiting for its digit, if any.
        self.pending: int | None = None
        #: The application's events pass through this filter (the view is shown).
        self.watching = False

    def install(self) -> None:
        """Watch the application's key events while the view is shown (a key sent to a child
        reaches the view only after the child had it). Hidden, the view costs no other tab a
        Python call per event: the application filter is removed on Hide, put back on Show."""
        self.view.installEventFilter(self)
        if self.view.isVisible():
            self._watch_application(True)

    def _watch_application(self, on: bool) -> None:
        app = QApplication.instance()
        if app is None or on == self.watching:
            return
        self.watching = on
        if on:
            app.installEventFilter(self)  # Qt drops it when this object dies with the view
        else:
            app.removeEventFilter(self)

    def action_for(self, key: int, modifiers: Qt.KeyboardModifier) -> Action | None:
        """The action for this key press, or ``None`` when the key is not the review's."""
        modifiers = Qt.KeyboardModifier(modifiers) & ~Qt.KeyboardModifier.KeypadModifier
        if self.pending is not None:
            return self._after_prefix(self.pending, int(key), modifiers)
        return self._plain_action(key, modifiers)

    def _plain_action(self, key: int, modifiers: Qt.KeyboardModifier) -> Action | None:
        if modifiers == Qt.KeyboardModifier.NoModifier and int(key) in self.prefixes:
            prefix = int(key)
            return lambda: self._set_pending(prefix)
        if modifiers == Qt.KeyboardModifier.NoModifier:
            if key in _DIGITS and _DIGITS[key] > 0:
                digit = _DIGITS[key]
                return lambda: self.on_digit(digit)
            return self.letters.get(int(key))
        if modifiers == Qt.KeyboardModifier.AltModifier and key in _DIGITS and _DIGITS[key] <= 5:
            digit = _DIGITS[key]
            return lambda: self.on_alt_digit(digit)
        return self.chords.get(modifiers.value | int(key))  # QKeyCombination.toCombined() of the press

    def _after_prefix(self, prefix: int, key: int, modifiers: Qt.KeyboardModifier) -> Action | None:
        """The key after a prefix: a digit or Delete finishes it; a bare modifier (Shift pressed
        on the way to a digit) waits; Escape cancels it; another review key (j, Ctrl+Z...)
        cancels it and does its own job; a key that is not the review's leaves it waiting."""
        if key in _MODIFIER_KEYS:
            return None
        handler = self.prefixes[prefix]
        if modifiers == Qt.KeyboardModifier.NoModifier and key in _DIGITS:
            digit = _DIGITS[key]
            return lambda: self._finish(lambda: handler(digit))
        if modifiers == Qt.KeyboardModifier.NoModifier and key in _CLEAR_KEYS:
            return lambda: self._finish(lambda: handler(None))
        if key == int(Qt.Key.Key_Escape):
            return lambda: self._set_pending(None)
        other = self._plain_action(key, modifiers)
        return None if other is None else (lambda: self._finish(other))

    def _set_pending(self, prefix: int | None) -> None:
        self.pending = prefix
        if self.on_pending is not None:
            self.on_pending(prefix)

    def _finish(self, action: Action) -> None:
        self._set_pending(None)
        action()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # Qt override
        kind = event.type()
        if obj is self.view and kind in (QEvent.Type.Show, QEvent.Type.Hide):
            self._watch_application(kind == QEvent.Type.Show)
            return False
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.ShortcutOverride) or not isinstance(event, QKeyEvent):
            return False
        if not isinstance(obj, QWidget) or not self.view.isVisible():
            return False
        if obj is not self.view and not self.view.isAncestorOf(obj):
            return False
        if is_text_input(obj):
            return False
        action = self.action_for(event.key(), event.modifiers())
        if action is None:
            return False
        event.accept()
        if kind == QEvent.Type.KeyPress:
            action()
        return True
