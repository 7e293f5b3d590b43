"""The README and docs/design.md stay true to the tree (issue 28, point 13: the README listed 19
of 28 benchmarks and missed 7 docs; design.md's migration table stopped at m006 of 14)."""

from __future__ import annotations

import ast
import re
import tomllib

from tests.helpers.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")


def test_the_readme_lists_every_benchmark():
    benchmarks = sorted(path.name for path in (ROOT / "tests" / "benchmarks").glob("bench_*.py"))
    listed = set(re.findall(r"^\| `(bench_[a-z_]+\.py)` \|", README, flags=re.MULTILINE))
    assert [name for name in benchmarks if name not in listed] == [], "README's benchmark table misses these"
    assert listed <= set(benchmarks), f"README lists benchmarks that do not exist: {listed - set(benchmarks)}"


def test_the_readme_links_every_doc_and_contributing():
    docs = sorted(path.name for path in (ROOT / "docs").glob("*.md"))
    missing = [name for name in docs if f"(docs/{name})" not in README]
    assert missing == [], "README links none of these docs"
    assert (ROOT / "CONTRIBUTING.md").is_file() and "(CONTRIBUTING.md)" in README


def test_design_md_lists_every_migration():
    names = [
        node.name
        for path in sorted((ROOT / "desktop" / "thoughtdesk" / "core" / "library" / "migrations").glob("*.py"))
        for node in ast.parse(path.read_text("utf-8")).body
        if isinstance(node, ast.FunctionDef) and re.match(r"m\d{3}_", node.name)
    ]
    assert len(names) >= 14
    assert [name for name in names if f"| `{name}` |" not in DESIGN] == [], "docs/design.md's migration table misses"


def test_links_between_docs_resolve():
    for doc in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            assert (doc.parent / target).resolve().is_file(), f"{doc.name} links {target}, which does not exist"


def test_mypy_checks_the_package_and_the_tests():
    """Issue 28, point 16: tests/ was not type-checked. CI, pre-commit, the README and
    CONTRIBUTING.md run plain ``python -m mypy``: what it checks is pyproject.toml's ``files``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert sorted(config["files"]) == ["desktop/thoughtdesk", "tests"]
    assert "step mypy .venv/bin/python -m mypy\n" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "`.venv/bin/python -m mypy`" in README
    assert "\n.venv/bin/python -m mypy " in (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
