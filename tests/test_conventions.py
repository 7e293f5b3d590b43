"""The project's standards for tests, checked on the tests themselves.

"Tests wait on the state they need, never on a fixed time: the machines are 2 shared cores" (CI
runs the suite with ``pytest -n 3`` on 2 shared cores, and a loaded machine overruns any guess).
A fixed wait longer than :data:`MAX_FIXED_WAIT_MS` in a test or a test helper fails here:
``qtbot.wait(N)``, ``time.sleep(x)``, ``asyncio.sleep(x)`` (or a bare ``sleep``) whose argument is
a number, or a module constant naming one (in the file or imported from another test module).
Shorter waits pass: pumping Qt's events before a size check, the interval of a loop that polls a
state. The few long waits that are right are in :data:`ALLOWED`, each with its reason: a fake
server slow on purpose, or a test that a thing does NOT happen, where time passing is all there
is to wait on. ``tests/benchmarks`` is not part of the suite (its fake servers' latency is what
they measure) and is not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.paths import ROOT

TESTS = ROOT / "tests"
NOT_CHECKED = (TESTS / "benchmarks",)
MAX_FIXED_WAIT_MS = 200

#: (file, function) -> why a fixed wait longer than MAX_FIXED_WAIT_MS is right there.
ALLOWED: dict[tuple[str, str], str] = {
    (
        "tests/ui/generation/test_runs_panel.py",
        "test_pause_resume_cancel_and_resume_to_the_end",
    ): "nothing is sent while paused: no state to wait on; a broken pause claims a request within ~50 ms",
    (
        "tests/ui/generation/test_critique_dialog.py",
        "test_critique_run_pauses_resumes_cancels_and_resumes_to_the_end_in_the_runs_tab",
    ): "nothing is sent while paused (as test_runs_panel's PAUSE_MS)",
    (
        "tests/ui/generation/test_autolabel_run.py",
        "test_an_autolabel_run_is_listed_paused_and_resumed_in_the_runs_tab",
    ): "nothing is sent while paused (as test_runs_panel's PAUSE_MS)",
    (
        "tests/ui/generation/test_rationale_runs_tab.py",
        "test_a_rationale_run_pauses_and_resumes_in_the_runs_tab",
    ): "nothing is sent while paused (as test_runs_panel's PAUSE_MS)",
    (
        "tests/core/generation/test_critique_runs.py",
        "test_pause_resume_and_cancel",
    ): "nothing is sent while paused: no state to wait on (the fake server counts the requests it gets)",
}


def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _number(node.operand)
        return None if value is None else -value
    return None


def _module_file(module: str) -> Path | None:
    path = ROOT.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _constants(path: Path, seen: frozenset[Path] = frozenset()) -> dict[str, float]:
    """The module's numeric constants: its own (``NAME = 500``) and those it imports from the
    tests' modules (``from tests.x import NAME``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, float] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tests."):
            source = _module_file(node.module)
            if source is not None and source not in seen:
                theirs = _constants(source, seen | {path})
                found.update({a.asname or a.name: theirs[a.name] for a in node.names if a.name in theirs})
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = _number(node.value) if node.value is not None else None
            if value is not None:
                found.update({t.id: value for t in targets if isinstance(t, ast.Name)})
    return found


def _wait_ms(call: ast.Call, constants: dict[str, float]) -> float | None:
    """The fixed time ``call`` waits, in milliseconds, or None when it is no fixed wait."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        owner, name = func.value.id, func.attr
    elif isinstance(func, ast.Name):
        owner, name = "", func.id
    else:
        return None
    if (owner, name) == ("qtbot", "wait"):
        scale = 1.0
    elif name == "sleep" and owner in ("time", "asyncio", ""):
        scale = 1000.0
    else:
        return None
    if not call.args:
        return None
    arg = call.args[0]
    value = constants.get(arg.id) if isinstance(arg, ast.Name) else _number(arg)
    return None if value is None else value * scale


def fixed_waits(path: Path) -> list[tuple[str, int, float]]:
    """(enclosing function, line, milliseconds) of every fixed wait in ``path``."""
    constants = _constants(path)
    found: list[tuple[str, int, float]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, function or child.name)  # a nested function counts as its test's
                continue
            if isinstance(child, ast.Call):
                ms = _wait_ms(child, constants)
                if ms is not None:
                    found.append((function or "<module>", child.lineno, ms))
            visit(child, function)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if not any(p.is_relative_to(skip) for skip in NOT_CHECKED))


def test_no_test_waits_a_fixed_time():
    long_waits = []
    used = set()
    for path in _test_files():
        name = path.relative_to(ROOT).as_posix()
        for function, line, ms in fixed_waits(path):
            if ms <= MAX_FIXED_WAIT_MS:
                continue
            if (name, function) in ALLOWED:
                used.add((name, function))
                continue
            long_waits.append(f"{name}:{line} ({function}) waits a fixed {ms:g} ms")
    assert not long_waits, (
        "tests wait on the state they need, never on a fixed time (2 shared cores): use qtbot.waitUntil / "
        "waitSignal, an Event, or poll the file or row; a wait that must stay goes in ALLOWED with its reason:\n"
        + "\n".join(long_waits)
    )
    assert not set(ALLOWED) - used, f"ALLOWED lists waits that are gone: {sorted(set(ALLOWED) - used)}"


def test_the_check_finds_fixed_waits(tmp_path):
    """The check itself: literals, constants and imported constants are found; state waits are not."""
    (tmp_path / "sample.py").write_text(
        "import asyncio, time\n"
        "from time import sleep\n"
        "HOLD = 1.5\n"
        "def test_a(qtbot):\n"
        "    qtbot.wait(1500)\n"
        "    qtbot.waitUntil(lambda: True, timeout=5000)\n"
        "    time.sleep(HOLD)\n"
        "    def inner():\n"
        "        sleep(0.3)\n"
        "    async def go():\n"
        "        await asyncio.sleep(0.01)\n"
        "    time.sleep(delay)\n",
        encoding="utf-8",
    )
    assert fixed_waits(tmp_path / "sample.py") == [
        ("test_a", 5, 1500.0),
        ("test_a", 7, 1500.0),
        ("test_a", 9, 300.0),
        ("test_a", 11, 10.0),
    ]
