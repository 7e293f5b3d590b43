"""Kept rationales as chat fine-tuning records (JSONL): the user turn is the preceding text, the
assistant turn the rationale, as a rationale model is trained in RATIONALYST."""

from __future__ import annotations

import json
from pathlib import Path

from thoughtdesk.core.files import check_export_target, export_file
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.extraction import RationaleError
from thoughtdesk.core.rationales.store import rationales, scorers


def chat_record(preceding: str, rationale: str) -> dict[str, list[dict[str, str]]]:
    """``{"messages": [{"role": "user", "content": preceding}, {"role": "assistant", "content": rationale}]}``."""
    return {"messages": [{"role": "user", "content": preceding}, {"role": "assistant", "content": rationale}]}


def pick_scorer(lib: Library, collection: str, scorer: str | None, decay: float) -> str:
    """The scorer whose scores decide what is kept: the one named, else the only one stored."""
    stored = [(name, d) for name, d, _ in scorers(lib, collection) if d == decay]
    names = sorted({name for name, _ in stored})
    if scorer is not None:
        if scorer not in names:
            known = ", ".join(names) or "none yet"
            raise RationaleError(
                f"collection {collection!r} has no rationales scored by {scorer!r} at decay {decay:g} "
                f"(scored by: {known}); run `thoughtdesk rationales filter` first"
            )
        return scorer
    if not names:
        raise RationaleError(
            f"collection {collection!r} has no scored rationales at decay {decay:g}: run "
            "`thoughtdesk rationales filter` first, or export all of them with --unfiltered"
        )
    if len(names) > 1:
        raise RationaleError(f"collection {collection!r} was scored by several scorers ({', '.join(names)}): name one")
    return names[0]


def export_rationales(
    lib: Library,
    collection: str,
    out: str | Path,
    *,
    tau: float,
    decay: float,
    scorer: str | None = None,
    unfiltered: bool = False,
    force: bool = False,
) -> int:
    """Write the kept rationales (loss reduction >= ``tau``) to ``out`` as JSONL; return how many.

    ``unfiltered`` writes every rationale of a valid rewrite, scored or not. The file is written
    whole or not at all; ``force`` overwrites a file that is not an earlier export.
    """
    path = check_export_target(Path(out), libraries=[lib.path], force=force)
    chosen = None if unfiltered else pick_scorer(lib, collection, scorer, decay)
    count = 0
    with export_file(path) as stream:
        for record in rationales(lib, collection, scorer=chosen, decay=decay):
            if chosen is not None and (record.score is None or not record.score.kept(tau)):
                continue
            stream.write(json.dumps(chat_record(record.preceding, record.rationale), ensure_ascii=False) + "\n")
            count += 1
    return count
