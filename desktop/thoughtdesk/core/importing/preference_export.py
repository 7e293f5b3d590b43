"""Preference pairs for preference training (issue 26, point 4; docs/judges.md): TRL's formats.

* ``dpo``: one ``{"prompt", "chosen", "rejected", "metadata"}`` object a line, strings (TRL's
  *standard* preference format with an explicit prompt, which DPO recommends);
* ``reward``: one ``{"chosen": [user, assistant], "rejected": [user, assistant], "metadata"}``
  object a line (TRL's *conversational* format with the prompt implicit in both sides, which
  RewardTrainer recommends).

The prompt is the sample as chat-jsonl writes it (context, question, lettered options); a side
is the CoT followed by its first extracted answer when the CoT does not already end with it.

Pairs come from human pairwise preferences (table ``pairwise_preference``; a tie is never a
pair) and from *consistent* judge verdicts (the same winner in both orders: a tie, a flip or an
unparseable verdict is never a pair). ``metadata`` says where each pair comes from: per source
``{"source": "human", "author", "date", "blind"}`` or ``{"source": "judge", "judge",
"template", "template_version", "date"}``, plus the sample and both CoTs. A pair several
sources agree on is written once with all of them; a pair they disagree on (one chose A, another
B) is left out and counted, never decided for them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from thoughtdesk.core.errors import ThoughtDeskError
from thoughtdesk.core.files import export_file
from thoughtdesk.core.importing.flat_export import LETTERS
from thoughtdesk.core.importing.formats import PREFERENCE_FORMATS
from thoughtdesk.core.judges.analysis import consistent_pairs, judge_names
from thoughtdesk.core.library.store import Library

Source = Literal["human", "judge", "both"]


@dataclass
class PreferencePair:
    """CoT ``chosen`` preferred over CoT ``rejected`` of sample ``sample_pk``, by ``provenance``."""

    sample_pk: int
    chosen: int
    rejected: int
    provenance: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PreferenceExport:
    """What an export wrote: ``records`` pairs, ``conflicts`` pairs left out because their
    sources disagreed, ``human``/``judge``: the source verdicts read."""

    records: int
    conflicts: int
    human: int
    judge: int


def _human(lib: Library, collection_id: int) -> list[tuple[int, int, int, dict[str, Any]]]:
    rows = lib.conn.execute(
        "SELECT p.sample_pk, p.first_cot_pk, p.second_cot_pk, p.preferred_cot_pk, p.author, p.date, p.blind "
        "FROM pairwise_preference p JOIN sample s ON s.id = p.sample_pk "
        "WHERE s.collection_id = ? AND p.preferred_cot_pk IS NOT NULL ORDER BY p.id",
        (collection_id,),
    ).fetchall()
    out = []
    for sample, first, second, preferred, author, date, blind in rows:
        other = second if preferred == first else first
        out.append(
            (sample, preferred, other, {"source": "human", "author": author, "date": date, "blind": bool(blind)})
        )
    return out


def _judged(lib: Library, collection_id: int, judge: str | None) -> list[tuple[int, int, int, dict[str, Any]]]:
    out = []
    for pair in consistent_pairs(lib, collection_id, judge=judge):
        winner = pair.winner or 0
        loser = pair.high_cot_pk if winner == pair.low_cot_pk else pair.low_cot_pk
        out.append(
            (
                pair.sample_pk,
                winner,
                loser,
                {
                    "source": "judge",
                    "judge": pair.judge.model,
                    "template": pair.judge.template,
                    "template_version": pair.judge.template_version,
                    "date": pair.created,
                },
            )
        )
    return out


def preference_pairs(
    lib: Library, collection: str, *, source: Source = "both", judge: str | None = None
) -> tuple[list[PreferencePair], int, int, int]:
    """The pairs of ``collection`` from ``source``; also the pairs left out because their sources
    disagreed, and the human and judge verdicts read. ``judge``: only that judge model's verdicts
    (an unknown one is an error naming the judges there are)."""
    cid = lib.require_collection(collection)
    if judge is not None and source != "human":
        known = judge_names(lib, collection)
        if judge not in known:
            raise ThoughtDeskError(
                f"--judge {judge!r}: no pairwise verdicts by that judge in {collection!r} "
                f"(judges: {', '.join(known) or 'none; `thoughtdesk judge --pairwise` makes them'})"
            )
    human = _human(lib, cid) if source in ("human", "both") else []
    judged = _judged(lib, cid, judge) if source in ("judge", "both") else []
    by_pair: dict[tuple[int, int], list[tuple[int, int, int, dict[str, Any]]]] = defaultdict(list)
    for item in human + judged:
        by_pair[(min(item[1], item[2]), max(item[1], item[2]))].append(item)
    pairs: list[PreferencePair] = []
    conflicts = 0
    for items in by_pair.values():
        if len({item[1] for item in items}) > 1:
            conflicts += 1  # one source chose one CoT, another the other: not decided for them
            continue
        sample, chosen, rejected, _ = items[0]
        pairs.append(PreferencePair(sample, chosen, rejected, [item[3] for item in items]))
    return pairs, conflicts, len(human), len(judged)


def _prompt(question: str, choices: list[Any], context: str | None) -> str:
    parts = [context.strip()] if context and context.strip() else []
    parts.append(question or "")
    if choices:
        parts.append("\n".join(f"{LETTERS[i]}) {choice}" for i, choice in enumerate(choices[: len(LETTERS)])))
    return "\n\n".join(parts)


def _texts(lib: Library, cot_pks: list[int]) -> dict[int, tuple[str, str, str]]:
    """Each CoT's reply text (the CoT, then its first answer), model and id."""
    out: dict[int, tuple[str, str, str]] = {}
    for start in range(0, len(cot_pks), 500):
        chunk = cot_pks[start : start + 500]
        for pk, cot, model, cot_id, answer in lib.conn.execute(
            "SELECT g.id, coalesce(g.cot, ''), coalesce(g.model_name, g.model, ''), g.cot_id, "
            "(SELECT answer FROM answer WHERE cot_pk = g.id AND answer IS NOT NULL AND answer != '' "
            f"ORDER BY position LIMIT 1) FROM generated_cot g WHERE g.id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            reply = cot.strip()
            if answer and not reply.endswith(answer.strip()):
                reply = f"{reply}\n\nAnswer: {answer.strip()}" if reply else f"Answer: {answer.strip()}"
            out[pk] = (reply, model, cot_id or "")
    return out


def export_preferences(
    lib: Library, collection: str, path: Path, fmt: str, *, source: Source = "both", judge: str | None = None
) -> PreferenceExport:
    """Write ``collection``'s preference pairs to ``path`` as ``fmt`` (``dpo`` or ``reward``),
    whole or not at all."""
    if fmt not in PREFERENCE_FORMATS:
        raise ThoughtDeskError(f"unknown preference format {fmt!r}; use one of {', '.join(PREFERENCE_FORMATS)}")
    pairs, conflicts, n_human, n_judge = preference_pairs(lib, collection, source=source, judge=judge)
    texts = _texts(lib, sorted({pk for p in pairs for pk in (p.chosen, p.rejected)}))
    samples: dict[int, tuple[str, str]] = {}
    for pk in sorted({p.sample_pk for p in pairs}):
        row = lib.conn.execute(
            "SELECT dataset, split, sample_id, question, choices, context FROM sample WHERE id = ?", (pk,)
        ).fetchone()
        choices = json.loads(row[4]) if row[4] else []
        samples[pk] = (
            f"{row[0]}/{row[1]}/{row[2]}",
            _prompt(row[3], choices if isinstance(choices, list) else [], row[5]),
        )
    with export_file(Path(path)) as out:
        for pair in pairs:
            label, prompt = samples[pair.sample_pk]
            chosen, rejected = texts[pair.chosen], texts[pair.rejected]
            metadata = {
                "collection": collection,
                "sample": label,
                "chosen_cot": {"pk": pair.chosen, "cot_id": chosen[2], "model": chosen[1]},
                "rejected_cot": {"pk": pair.rejected, "cot_id": rejected[2], "model": rejected[1]},
                "provenance": pair.provenance,
            }
            if fmt == "dpo":
                record: dict[str, Any] = {"prompt": prompt, "chosen": chosen[0], "rejected": rejected[0]}
            else:
                user = {"role": "user", "content": prompt}
                record = {
                    "chosen": [user, {"role": "assistant", "content": chosen[0]}],
                    "rejected": [user, {"role": "assistant", "content": rejected[0]}],
                }
            out.write(json.dumps({**record, "metadata": metadata}, ensure_ascii=False) + "\n")
    return PreferenceExport(len(pairs), conflicts, n_human, n_judge)
