"""The export formats by name, without the code that writes them: the command line lists them
in ``export --format``'s choices, and ``thoughtdesk collections`` (the same command module)
should not import the exporters, the library reader and their dependencies to do so."""

from __future__ import annotations

#: The flat exports of :mod:`thoughtdesk.core.importing.flat_export`.
FLAT_FORMATS = ("samples-jsonl", "samples-csv", "answers-csv", "chat-jsonl", "parquet")

#: The step-labelled exports of :mod:`thoughtdesk.core.importing.step_files` (docs/steps.md).
STEP_FORMATS = ("processbench", "prm800k", "prm-jsonl")
#: The preference-pair exports of :mod:`thoughtdesk.core.importing.preference_export` (TRL's formats).
PREFERENCE_FORMATS = ("dpo", "reward")
#: Where preference pairs come from.
PREFERENCE_SOURCES = ("human", "judge", "both")
