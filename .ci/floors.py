"""Print pyproject.toml's dependencies pinned to their floors, one requirement a line, for
``pip install -r``: the check that the floors are true installs exactly these and runs tests.

    python .ci/floors.py [--extra NAME]... [--skip NAME]... > floors.txt

Every dependency must have a ``>=`` floor (a dependency without one fails here: a floor that is
not stated cannot be checked). ``--skip`` leaves a distribution out (tests that need it skip).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def floor_pins(pyproject: Path, extras: list[str], skip: list[str]) -> list[str]:
    """``name[extras]==floor ; marker`` for the dependencies and the given extras."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    skipped = {canonicalize_name(name) for name in skip}
    pins: dict[str, Requirement] = {}
    for text in wanted:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name in skipped:
            continue
        floors = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if len(floors) != 1:
            raise SystemExit(f"{text!r} in pyproject.toml has no single >= floor")
        pin = Requirement(f"{requirement.name}=={floors[0]}")
        pin.extras, pin.marker = set(requirement.extras), requirement.marker
        if name in pins:  # named twice (e.g. in two extras): one pin, with every extra asked for
            if pins[name].specifier != pin.specifier:
                raise SystemExit(f"{requirement.name} has two different floors in pyproject.toml")
            pin.extras |= pins[name].extras
        pins[name] = pin
    return [str(pin) for pin in pins.values()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extra", action="append", default=[], help="an optional-dependencies group to include")
    parser.add_argument("--skip", action="append", default=[], help="a distribution to leave out")
    parser.add_argument("--pyproject", type=Path, default=Path(__file__).resolve().parents[1] / "pyproject.toml")
    args = parser.parse_args()
    sys.stdout.write("".join(pin + "\n" for pin in floor_pins(args.pyproject, args.extra, args.skip)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
