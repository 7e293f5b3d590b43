"""Which samples a run covers: a :class:`SampleSelection` turned into the stored samples
(:class:`SampleRef`: what a prompt needs, and the gold answer for scoring), and a few-shot
spec into its exemplars."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from thoughtdesk.core.generation.prompts import Exemplar
from thoughtdesk.core.generation.runs.spec import FewShotSpec, RunSpecError, SampleSelection
from thoughtdesk.core.library.queries import SampleFilter, sample_keys
from thoughtdesk.core.library.store import Library


@dataclass(frozen=True, slots=True)
class SampleRef:
    """The parts of a stored sample a prompt needs, plus its gold answer for scoring."""

    pk: int
    dataset: str
    split: str
    sample_id: str
    question: str
    type: str
    choices: list[Any]
    context: str | None
    answer: list[Any]

    @property
    def label(self) -> str:
        return f"{self.dataset}/{self.split}/{self.sample_id}"


_SAMPLE_SQL = "SELECT id, dataset, split, sample_id, question, type, choices, context, answer FROM sample"


def sample_refs(lib: Library, pks: list[int]) -> list[SampleRef]:
    """The samples with primary keys ``pks``, in that order (absent keys are left out)."""
    out: dict[int, SampleRef] = {}
    for start in range(0, len(pks), 500):
        chunk = pks[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for r in lib.conn.execute(f"{_SAMPLE_SQL} WHERE id IN ({marks})", chunk):
            choices = json.loads(r[6]) if r[6] else []
            answer = json.loads(r[8]) if r[8] else []
            out[r[0]] = SampleRef(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4] or "",
                r[5] or "",
                choices if isinstance(choices, list) else [],
                r[7],
                answer if isinstance(answer, list) else [answer],
            )
    return [out[pk] for pk in pks if pk in out]


def select_samples(lib: Library, selection: SampleSelection) -> list[SampleRef]:
    """The samples a selection names, in stored order (explicit keys: in the given order)."""
    cid = lib.require_collection(selection.collection)
    if selection.sample_pks:
        given = list(dict.fromkeys(selection.sample_pks))
        found = {
            row[0]
            for row in lib.conn.execute(
                f"SELECT id FROM sample WHERE collection_id = ? AND id IN ({','.join('?' * len(given))})", (cid, *given)
            )
        }
        missing = [pk for pk in given if pk not in found]
        if missing:
            raise RunSpecError(f"sample key(s) {missing[:5]} are not in collection {selection.collection!r}")
        return sample_refs(lib, given)
    splits = lib.splits(cid)
    for name, known in (("dataset", {d for d, _ in splits}), ("split", {s for _, s in splits})):
        wanted = selection.datasets if name == "dataset" else selection.splits
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise RunSpecError(
                f"collection {selection.collection!r} has no {name} "
                f"{', '.join(map(repr, unknown))} (it has: {', '.join(sorted(known))})"
            )
    pks: list[int] = []
    for dataset, split in splits:
        if (selection.datasets and dataset not in selection.datasets) or (
            selection.splits and split not in selection.splits
        ):
            continue
        keys = list(
            sample_keys(
                lib,
                SampleFilter(
                    collection_id=cid,
                    dataset=dataset,
                    split=split,
                    search=selection.search,
                    answer_type=selection.answer_type,
                ),
            )
        )
        if selection.limit is not None and len(keys) > selection.limit:
            if selection.seed is not None:
                chosen = set(random.Random(selection.seed).sample(keys, selection.limit))
                keys = [k for k in keys if k in chosen]
            else:
                keys = keys[: selection.limit]
        pks.extend(keys)
    if not pks:
        raise RunSpecError(f"no samples of collection {selection.collection!r} match the selection")
    return sample_refs(lib, pks)


def exemplars_of(lib: Library, collection: str, dataset: str, few_shot: FewShotSpec) -> list[Exemplar]:
    """``few_shot.k`` exemplars with reference CoTs drawn from ``dataset``'s split ``few_shot.split``."""
    cid = lib.require_collection(collection)
    rows = lib.conn.execute(
        "SELECT question, choices, context, cot, answer, id FROM sample WHERE collection_id = ? "
        "AND dataset = ? AND split = ? AND cot IS NOT NULL AND cot NOT IN ('[]', 'null') ORDER BY position",
        (cid, dataset, few_shot.split),
    ).fetchall()
    if len(rows) < few_shot.k:
        raise RunSpecError(
            f"few-shot: dataset {dataset}, split {few_shot.split!r} has {len(rows)} "
            f"sample(s) with a reference CoT; {few_shot.k} exemplar(s) were asked for"
        )
    rng = random.Random(few_shot.seed)
    chosen = rng.sample(rows, few_shot.k)
    out = []
    for question, choices, context, cot, answer, _pk in chosen:
        steps = json.loads(cot)
        gold = json.loads(answer) if answer else []
        out.append(
            Exemplar(
                question=question or "",
                cot=" ".join(str(s) for s in steps) if isinstance(steps, list) else str(steps),
                answer=", ".join(str(a) for a in gold) if isinstance(gold, list) else str(gold),
                answer_choices=tuple(str(c) for c in (json.loads(choices) if choices else [])),
                context=context,
            )
        )
    return out
