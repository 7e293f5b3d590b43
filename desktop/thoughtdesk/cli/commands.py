"""Every sub-command by name: the module that registers it and its one-line help.

``thoughtdesk`` imports only the module of the command it runs (``cli/main.py``): ``--help``
lists every command from this table without importing any of them, and ``thoughtdesk stats
--help`` imports ``cli/stats.py`` alone. A module registers its commands with
:func:`add_command`, so the one-line help is written once, here. A test fails when the table and
the modules disagree (``tests/cli/test_lazy_commands.py``). Adding a command: a row here (in the
order ``--help`` lists it, beside the other rows of its module: the full parser registers all
of a module's commands at its first row), ``add_command(sub, NAME, ...)`` in the module's
``register(sub)``, its examples in ``cli/help.py``. A command lives in the module of its feature
(``critique`` and ``revise`` beside ``critiques``, ``judge`` beside ``judgements``); the options
and execution every run command shares are ``cli/run_options.py`` and ``cli/run_execution.py``.

This module imports nothing of ThoughtDesk: it is read on every start.
"""

from __future__ import annotations

import argparse
from collections import namedtuple

TYPE_CHECKING = False  # typing's own would import typing, which a start does not otherwise need
if TYPE_CHECKING:
    from typing import Any

#: Where a sub-command is: ``module`` under ``thoughtdesk.cli``; ``help`` as ``--help`` lists it.
#: (collections' namedtuple, not typing's NamedTuple: typing is not imported on every start.)
Command = namedtuple("Command", ["module", "help"])


#: In the order ``thoughtdesk --help`` lists them (``gui``, the default, is cli/main.py's own).
COMMANDS: dict[str, Command] = {
    "import": Command(
        "library",
        "import a ThoughtSource collection JSON file, a DS Critique Bank JSONL file (recognised by its records), "
        "a dataset's original files (--dataset) or any table (--map)",
    ),
    "datasets": Command("library", "list the dataset catalogue (or one dataset's metadata)"),
    "export": Command(
        "library",
        "export a collection: ThoughtSource JSON, DS Critique Bank JSONL, samples or answers as JSONL/CSV, "
        "chat JSONL for fine-tuning, Parquet, preference pairs (DPO, reward models)",
    ),
    "collections": Command("library", "list the collections in the library"),
    "stats": Command(
        "stats",
        "counts, answer types, choice counts and token lengths per dataset and split; with --overlap the "
        "n-gram overlap between datasets (docs/stats.md)",
    ),
    "generate": Command("generate", "generate CoTs for a collection with one or more models"),
    "resume": Command("generate", "send the missing requests of a run (a batch run: poll, fetch, submit)"),
    "critique": Command(
        "critiques", "critique the CoTs of a collection with one or more critique models (a judge panel)"
    ),
    "revise": Command(
        "critiques", "revise critiqued CoTs from their critiques' feedback with one or more models (a run)"
    ),
    "critiques": Command(
        "critiques", "analyse a collection's critiques: per critique model, per student condition, agreement"
    ),
    "judge": Command(
        "judges", "compare the CoTs of each sample pairwise with judge models, both orders (docs/judges.md)"
    ),
    "judgements": Command(
        "judges",
        "pairwise judges' figures: position consistency, first-position rate, wins and Bradley-Terry strengths",
    ),
    "cots": Command(
        "cots", "work on stored CoTs: split-thinking splits <think> blocks off the visible text (docs/reasoning.md)"
    ),
    "fragments": Command("fragments", "list (the default) or import prompt fragments and critique templates"),
    "runs": Command("runs", "list generation and critique runs; rename or delete one"),
    "evaluate": Command("evaluate", "accuracy of a collection by dataset, split, model and prompt condition"),
    "revisions": Command("evaluate", "accuracy before and after revision per condition, with McNemar's test"),
    "annotations": Command("review", "export or import reviewers' annotations"),
    "agreement": Command("review", "agreement between reviewers per label"),
    "autolabel": Command(
        "steps", "label each step of a collection's CoTs by rollouts reaching the gold answer (Math-Shepherd)"
    ),
    "logprobs": Command(
        "rationales",
        "print the token log-probs of a continuation after a prompt (exact; backends that cannot say so)",
    ),
    "rationales": Command(
        "rationales", "mine rationales from CoTs or documents (RATIONALYST): extract, filter, export"
    ),
    "trajectories": Command(
        "trajectories", "print the guided CoTs of a collection step by step (rationales, candidates, scores)"
    ),
    "report": Command("report", "write a review report (HTML or PDF) of a collection or a review queue"),
    "library": Command("admin", "where the library file is (for Datasette, sqlite-utils, sqlite3)"),
    "backup": Command("admin", "copy the library to a new file while it stays open (SQLite online backup)"),
    "keys": Command("admin", "store, list or delete API keys (kept in the system keyring)"),
    "models": Command("model_library", "the local model library: add, list, show, remove, download GGUF models"),
}


def add_command(sub: argparse._SubParsersAction, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """``sub.add_parser(name, ...)`` with the one-line help of :data:`COMMANDS`."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=COMMANDS[name].help, **kwargs)
    return parser
