"""Alt+letter mnemonics that each do one thing (as KDE's accelerator manager does).

Two visible widgets with one mnemonic ("&Samples and prompts" and "&Start run") make Qt cycle
the focus between them on Alt+S instead of pressing either. :func:`distinct_mnemonics` gives
every widget of a dialog its own letter among the widgets that can be seen with it: those on
other pages of a tab widget can share one. A widget keeps its letter when it is free; else it
takes the first free letter that starts a word of its text, else any free letter of it, else
none. Buttons are served first (Start, Cancel), then tabs, then labels, check boxes and boxes.
"""

from __future__ import annotations

from collections.abc import Callable

from thoughtdesk.ui.qt import QAbstractButton, QGroupBox, QLabel, QTabBar, QTabWidget, QWidget

_Scope = tuple[int, ...]


def mnemonic(text: str) -> str | None:
    """The Alt+letter of a widget text ("&Start" -> "s"; "&&" is a literal ampersand)."""
    i = 0
    while i < len(text) - 1:
        if text[i] == "&":
            if text[i + 1] == "&":
                i += 2
                continue
            return text[i + 1].lower()
        i += 1
    return None


def _plain(text: str) -> str:
    """``text`` without its mnemonic marker (literal ampersands kept doubled)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "&" and i + 1 < len(text):
            if text[i + 1] == "&":
                out.append("&&")
                i += 2
                continue
            i += 1
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _with_letter(plain: str, position: int) -> str:
    return plain[:position] + "&" + plain[position:]


def _candidates(plain: str) -> list[int]:
    """Positions in ``plain`` to put a mnemonic at: word starts first, then any letter."""
    letters = [i for i, ch in enumerate(plain) if ch.isalnum() and (i == 0 or plain[i - 1] != "&")]
    starts = [i for i in letters if i == 0 or not plain[i - 1].isalnum()]
    return starts + [i for i in letters if i not in starts]


def _scope(widget: QWidget, pages: dict[int, int]) -> _Scope:
    """The tab pages (by id) that hold ``widget``, outermost first."""
    chain: list[int] = []
    parent = widget.parentWidget()
    while parent is not None:
        if id(parent) in pages:
            chain.append(id(parent))
        parent = parent.parentWidget()
    return tuple(reversed(chain))


def _together(a: _Scope, b: _Scope) -> bool:
    """Whether widgets in scopes ``a`` and ``b`` can be seen at once (one holds the other)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _tab_setter(bar: QTabBar, index: int) -> Callable[[str], None]:
    return lambda text: bar.setTabText(index, text)


def distinct_mnemonics(root: QWidget) -> None:
    """Give each widget under ``root`` an Alt+letter no widget seen with it has (see the module)."""
    pages = {
        id(tabs.widget(i)): i for tabs in root.findChildren(QTabWidget) for i in range(tabs.count()) if tabs.widget(i)
    }
    claims = []  # (scope depth, rank, order, scope, text, setter)
    for order, widget in enumerate(root.findChildren(QWidget)):
        scope = _scope(widget, pages)
        entries: list[tuple[int, str, Callable[[str], None]]]
        if isinstance(widget, QAbstractButton):
            entries = [(0, widget.text(), widget.setText)]
        elif isinstance(widget, QTabBar):
            entries = [(1, widget.tabText(i), _tab_setter(widget, i)) for i in range(widget.count())]
        elif isinstance(widget, QLabel) and widget.buddy() is not None:
            entries = [(2, widget.text(), widget.setText)]
        elif isinstance(widget, QGroupBox):
            entries = [(2, widget.title(), widget.setTitle)]
        else:
            continue
        for rank, text, setter in entries:
            if mnemonic(text) is not None:
                claims.append((len(scope), rank, order, scope, text, setter))
    claims.sort(key=lambda c: (c[0], c[1], c[2]))
    taken: list[tuple[_Scope, str]] = []
    for _depth, _rank, _order, scope, text, setter in claims:
        used = {letter for other, letter in taken if _together(scope, other)}
        wanted = mnemonic(text)
        if wanted is not None and wanted not in used:
            taken.append((scope, wanted))
            continue
        plain = _plain(text)
        for position in _candidates(plain):
            letter = plain[position].lower()
            if letter not in used:
                setter(_with_letter(plain, position))
                taken.append((scope, letter))
                break
        else:
            setter(plain)
