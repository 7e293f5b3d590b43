"""The Qt binding in use must not leak or free references to ``None``.

PySide6 6.12.0 drops one reference to ``None`` on every call of a method returning void; on
Python < 3.12 (where ``None`` is not immortal) a long session then aborts with
"Fatal Python error: none_dealloc". pyproject pins PySide6 below 6.12; this test catches such a
binding if the pin is ever lifted.
"""

from __future__ import annotations

import sys

from thoughtdesk.ui.qt import QTextEdit


def test_void_calls_keep_the_reference_count_of_none(qtbot):
    edit = QTextEdit()
    qtbot.addWidget(edit)
    before = sys.getrefcount(None)
    for _ in range(2000):
        edit.setFixedHeight(40)
        edit.setPlainText("x")
    after = sys.getrefcount(None)
    # Other threads may hold or release a few references meanwhile; a broken binding loses 4,000.
    assert abs(after - before) < 200, f"None refcount changed by {after - before} over 4,000 Qt calls"


def test_pyside_reads_a_modules_source_once_not_through_inspect(tmp_path, monkeypatch):
    """PySide6's import hook asks of every module imported after it whether it uses PySide6;
    inspect.getsource walked all of sys.modules per module (issue 27, point 2: 35-110 ms of the
    window's start). ui/qt.py answers from the file itself, without inspect."""
    import inspect

    import thoughtdesk.ui.qt  # noqa: F401 - installs the quicker check

    (tmp_path / "td_fresh_plain.py").write_text("VALUE = 1\n", encoding="utf-8")
    (tmp_path / "td_fresh_qt.py").write_text("import PySide6.QtCore\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    asked: list[object] = []

    def getsource(module: object) -> str:
        asked.append(module)
        return ""

    monkeypatch.setattr(inspect, "getsource", getsource)
    feature = sys.modules["shibokensupport.feature"]
    for name in ("td_fresh_plain", "td_fresh_qt"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        monkeypatch.delitem(feature.pyside_feature_dict, name, raising=False)
        __import__(name)  # the import statement's way, which the hook wraps (import_module is not)
    assert asked == []
    # The hook's record of the two: -1 "ignore this module", 0 "uses PySide6".
    assert feature.pyside_feature_dict["td_fresh_plain"] == -1
    assert feature.pyside_feature_dict["td_fresh_qt"] == 0


def test_the_quicker_check_answers_as_pysides_own_on_every_loaded_module():
    import thoughtdesk.ui.qt  # noqa: F401 - installs the quicker check

    check = sys.modules["shibokensupport.feature"]._mod_uses_pyside
    own = check.pyside_check  # PySide6's own, kept by ui/qt.py
    modules = [module for module in list(sys.modules.values()) if isinstance(getattr(module, "__file__", None), str)]
    assert len(modules) > 100
    differ = [module.__name__ for module in modules if check(module) != own(module)]
    assert not differ
    assert any(check(module) for module in modules) and not all(check(module) for module in modules)


def test_in_the_frozen_app_a_modules_source_comes_from_its_loader(monkeypatch):
    """In the frozen app a module's ``__file__`` is a ``.pyc`` without its ``.py``: the quicker
    check asks the loader for the source, as ``inspect`` does in the end; the same answers."""
    import types

    import thoughtdesk.ui.qt  # noqa: F401 - installs the quicker check

    class Loader:
        def __init__(self, source):
            self.source = source

        def get_source(self, name):
            return self.source

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    check = sys.modules["shibokensupport.feature"]._mod_uses_pyside
    for index, source in enumerate([None, "import PySide6.QtCore\n", "VALUE = 1\n"]):
        module = types.ModuleType(f"td_frozen_{index}")
        module.__file__ = f"/nonexistent/_internal/td_frozen_{index}.pyc"
        module.__loader__ = Loader(source)  # type: ignore[assignment]  # a stand-in with get_source only
        assert check(module) == check.pyside_check(module) == (source is not None and "PySide6" in source)
