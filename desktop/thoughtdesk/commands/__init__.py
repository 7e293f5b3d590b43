"""Sub-commands defined outside ``cli.py``, one module per area.

Each module listed in :data:`COMMAND_MODULES` has ``register(sub)`` that adds its sub-parsers to
the ``argparse`` sub-parser group and sets ``func`` on each (``func(args) -> int`` exit status).
Helpers from ``thoughtdesk.cli`` (``open_library(args)``, ``ProgressLine``) are shared.
"""

from __future__ import annotations

import argparse
import importlib

COMMAND_MODULES: list[str] = [
    # one line per module, e.g. "thoughtdesk.commands.evaluate",
    "thoughtdesk.commands.generate",
    "thoughtdesk.commands.evaluate",
    "thoughtdesk.commands.review",
]


def register_all(sub: argparse._SubParsersAction) -> None:
    """Let every command module add its sub-commands."""
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
