"""Issue 28, point 15: every setting is declared once (core/settings/registry.py), and nothing in
the tree uses a settings key that is not declared there; the declarations type what either side
reads, and a bad value says what is allowed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from thoughtdesk.core.settings import registry
from thoughtdesk.core.settings.registry import OPTIONS, SettingValueError, find
from thoughtdesk.core.thinking import REASONING_EFFORTS

PACKAGE = ROOT / "desktop" / "thoughtdesk"
#: Methods whose first argument is a settings key: QSettings' own, and a mapping's ``get`` (core
#: read ``read_settings().get("network/offline")`` before the registry).
KEYED_METHODS = {"value", "setValue", "remove", "contains", "get"}
#: The one module that may make a QSettings (the Qt side of the registry).
ADAPTER = PACKAGE / "ui" / "settings" / "options.py"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` (and ``NAME = "a" + "b"``) assignments."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            text = _text(node.value, found)
            for target in targets:
                if isinstance(target, ast.Name) and text is not None:
                    found[target.id] = text
    return found


def _text(node: ast.expr, names: dict[str, str]) -> str | None:
    """The string ``node`` stands for (a literal, a known constant, or the literal start of a
    ``+`` or an f-string: a family's prefix); None when it is not text known here."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left, names)
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return str(node.values[0].value)
    return None


def settings_keys_in_code() -> list[tuple[str, int, str]]:
    """(file, line, key) of every string key given to a QSettings-style ``value``/``setValue``/
    ``remove``/``contains`` or a ``get`` anywhere in desktop/thoughtdesk: a literal, a module constant (of this
    module or imported from another), or the literal start of a key built with ``+``/f-string."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in PACKAGE.rglob("*.py")}
    constants = {_module_name(path): _string_constants(tree) for path, tree in trees.items()}
    used: list[tuple[str, int, str]] = []
    for path, tree in trees.items():
        names = dict(constants[_module_name(path)])
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in constants:
                for alias in node.names:
                    if alias.name in constants[node.module]:
                        names[alias.asname or alias.name] = constants[node.module][alias.name]
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in KEYED_METHODS
                and node.args
            ):
                key = _text(node.args[0], names)
                if key is not None and "/" in key:  # every settings key has a group; a list's remove("x") has none
                    used.append((str(path.relative_to(ROOT)), node.lineno, key))
    return used


def _declared(key: str) -> bool:
    option = OPTIONS.get(key)
    return find(key) is not None or (option is not None and option.family)


def test_every_settings_key_in_the_code_is_declared() -> None:
    undeclared = [f"{file}:{line}: {key!r}" for file, line, key in settings_keys_in_code() if not _declared(key)]
    assert not undeclared, "settings keys used but not declared in core/settings/registry.py:\n" + "\n".join(undeclared)


def test_the_scan_finds_an_undeclared_key(tmp_path: Path) -> None:
    """The scan itself: a literal, a constant and a prefix built with + are all seen."""
    tree = ast.parse(
        "KEY = 'review/secret'\nQSettings().setValue(KEY, 1)\nstore.value('nope/x')\nstore.remove('columns/' + name)\n"
    )
    names = _string_constants(tree)
    keys = [
        _text(node.args[0], names)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in KEYED_METHODS
    ]
    assert keys == ["review/secret", "nope/x", "columns/"]
    assert [_declared(key) for key in keys if key] == [False, False, True]


def test_only_the_adapter_makes_a_qsettings() -> None:
    """Every read and write goes through ui/settings/options.py's declarations, so no other
    module holds a QSettings of its own (a key typed there would escape the registry)."""
    makers = []
    for path in PACKAGE.rglob("*.py"):
        if path == ADAPTER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "QSettings":
                makers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not makers


def test_keys_are_declared_once_and_well_formed() -> None:
    assert len({option.key for option in OPTIONS.values()}) == len(OPTIONS)
    for key, option in OPTIONS.items():
        assert key == option.key and "/" in key and option.description
        assert option.parse(None) == option.default  # the default is a value the option allows
        assert option.parse(option.stored(option.default)) == option.default


def test_reasoning_efforts_match_the_providers() -> None:
    assert registry.EFFORTS == REASONING_EFFORTS


def test_families_name_their_members() -> None:
    member = find("columns/sampleTable")
    assert member is not None and member.key == "columns/sampleTable" and member.default == []
    assert registry.ACTIVE_QUEUE.at("/data/ward 7.thoughtdesk").key == "review/activeQueue/data/ward 7.thoughtdesk"
    assert find("columns/") is None and find("nowhere/key") is None


@pytest.mark.parametrize(
    ("option", "raw", "value"),
    [
        (registry.OFFLINE, "true", True),
        (registry.OFFLINE, "False", False),
        (registry.OFFLINE, True, True),
        (registry.MAX_RESPONSE_MB, "128", 128),
        (registry.MAX_RESPONSE_MB, 7, 7),
        (registry.USER_NAME, "Ng, Dr.", "Ng, Dr."),
        (registry.COLUMN_WIDTHS, "150,0,90", [150, 0, 90]),
        (registry.COLUMN_WIDTHS, ["150", "0"], [150, 0]),
        (registry.COLUMN_WIDTHS, "150", [150]),
        (registry.COLUMN_WIDTHS, [150], [150]),
        (registry.LOCAL_EFFORT, " High ", "high"),
        (registry.WINDOW_GEOMETRY, b"\x01\x02", b"\x01\x02"),
    ],
)
def test_what_either_side_holds_is_typed(option, raw, value) -> None:
    assert option.parse(raw) == value


@pytest.mark.parametrize(
    ("option", "raw", "says"),
    [
        (registry.OFFLINE, "maybe", "network/offline is 'maybe', not true or false"),
        (registry.MAX_RESPONSE_MB, "0", "generation/max_response_mb is '0', not a whole number from 1 to 4096"),
        (registry.MAX_RESPONSE_MB, "lots", "not a whole number from 1 to 4096"),
        (registry.LIBRARY_PATH, ["/a", "b"], "library/path is a list ('/a', 'b'), not text (put text with a comma in"),
        (registry.OPENAI_EFFORT, "turbo", "providers/openai/reasoning_effort is 'turbo', not one of '', 'none'"),
        (registry.COLUMN_WIDTHS, "wide", "columns/ is 'wide', not whole numbers from 0 to 10000"),
        (registry.WINDOW_GEOMETRY, "geometry", "not binary data as Qt writes it"),
    ],
)
def test_a_bad_value_says_what_is_allowed(option, raw, says) -> None:
    with pytest.raises(SettingValueError) as caught:
        option.parse(raw)
    assert says in str(caught.value)


def test_the_registry_is_cheap_to_import() -> None:
    """Every command and the GUI's first paint read settings: the registry brings nothing but
    the standard library (dataclasses, typing) and thoughtdesk.core.errors."""
    script = (
        "import sys, json; import thoughtdesk.core.errors; before = set(sys.modules);"
        "import thoughtdesk.core.settings.registry; print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    added = set(json.loads(done.stdout))
    ours = {name for name in added if name.split(".")[0] == "thoughtdesk"}
    assert ours == {"thoughtdesk.core.settings", "thoughtdesk.core.settings.registry"}
    others = {name.split(".")[0] for name in added - ours}
    assert others <= set(sys.stdlib_module_names), others - set(sys.stdlib_module_names)


def test_docs_list_every_setting() -> None:
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    missing = [key for key in OPTIONS if f"| `{key}`" not in text]
    assert not missing, "declared in core/settings/registry.py but not in docs/settings.md's table"
