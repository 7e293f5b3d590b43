"""The layout rules of docs/design.md ("Layout", "Layers"), checked on the source itself.

import-linter (``lint-imports``, run by CI and pre-commit) checks the layers between packages;
these tests check what it does not: cycles between any two modules (imports inside functions
included), private names taken from another module, the documented module map, and a small top.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers.paths import ROOT

SOURCE = ROOT / "desktop"
PACKAGE = SOURCE / "thoughtdesk"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every ``import``/``from ... import`` in the file, wherever it stands."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def _graph() -> dict[str, set[str]]:
    """Module -> modules it imports (within thoughtdesk; a package's own __init__ excluded)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for module, names in _imports(path):
            for target in [module, *(f"{module}.{n}" for n in names)]:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_counting_imports_inside_functions():
    assert _cycles(_graph()) == []


def test_no_module_takes_private_names_from_another():
    """A leading underscore means "this module's own": other modules use the public names."""
    modules = _modules()
    taken = []
    for name, path in modules.items():
        for module, names in _imports(path):
            if module in modules and module != name:
                taken += [f"{name} imports {module}.{n}" for n in names if n.startswith("_") and n != "__version__"]
    assert taken == []


def test_the_top_of_ui_stays_small():
    loose = sorted(p.name for p in (PACKAGE / "ui").glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= 6, loose


def test_design_notes_map_every_module_and_only_those():
    """docs/design.md's Layout block names each module once; a new or removed module updates it."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    block = text.split("```", 2)[1]
    listed: set[str] = set()
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        match = re.match(r"^(\s*)(\S+?)(/)?(?:\s{2,}|$)", line)
        if not match or match.group(2).startswith("--"):
            continue
        indent, entry, is_dir = len(match.group(1)), match.group(2), match.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = "/".join([p for _, p in stack] + [entry])
        if is_dir:
            stack.append((indent, entry))
        elif path.startswith("desktop/thoughtdesk/") and path.endswith(".py"):
            listed.add(path)
    actual = {str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent == PACKAGE}
    assert sorted(actual - listed) == [], "modules missing from docs/design.md's map"
    assert sorted(listed - actual) == [], "docs/design.md's map names modules that do not exist"


def test_signals_are_blocked_only_through_the_blocked_helper():
    # ``with blocked(widget):`` restores the previous state even when the block raises; a raw
    # blockSignals(True) ... blockSignals(False) pair leaves a widget deaf after an exception.
    offenders = [
        str(path.relative_to(SOURCE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "signals.py" and ".blockSignals(" in path.read_text(encoding="utf-8")
    ]
    assert offenders == [], f"use thoughtdesk.ui.widgets.signals.blocked in: {offenders}"


def test_every_module_stays_under_600_lines():
    # Issue 28, point 16: long modules hide their seams (runs/commit.py had 953 lines, cli/generate.py
    # 848, ui/review/view.py 736 ...); every one was split along a seam, and stays under the bar.
    long = {
        str(path.relative_to(SOURCE)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert long == {}, f"split these along a seam: {long}"
