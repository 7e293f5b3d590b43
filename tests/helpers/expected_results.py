"""Independent expectations computed straight from ThoughtSource JSON files (not via the library).

The statistics come from other libraries than the code under test uses: statsmodels for the
Wilson interval, scipy's binomtest for McNemar.
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.paths import ROOT
from thoughtdesk.core.evaluation.answers import extract_answer

DEMO = ROOT / "resources" / "demo_collection.json"
FIXTURES = ROOT / "tests" / "fixtures" / "results"
TS67 = "thoughtsource_67_openai_chat_gpt-3.5-turbo_None_None-kojima-01-zhou-01.json"


def model_of(text: str | None) -> str:
    if text is None:
        return "(unknown model)"
    try:
        return ast.literal_eval(text)["name"]
    except (ValueError, SyntaxError, KeyError, TypeError):
        return text or "(unknown model)"


@dataclass
class FileAnswer:
    dataset: str
    split: str
    model: str
    condition: str
    sample_id: str
    outcome: str | None  # None: no stored correctness
    letter: str | None
    correct_value: bool | None
    cot_index: int
    tokens: int | None = None
    cost: float | None = None


@dataclass
class Group:
    n: int = 0
    correct: int = 0
    unextractable: int = 0
    tokens: list[int] = field(default_factory=list)


def file_answers(path: Path, *, rescored: bool) -> list[FileAnswer]:
    """Every answer of a file with its outcome: stored correctness, or extract_answer's verdict."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for dataset, splits in data.items():
        for split, samples in splits.items():
            for sample in samples:
                for index, cot in enumerate(sample.get("generated_cot") or []):
                    for answer in cot.get("answers") or []:
                        parts = (cot.get("instruction"), cot.get("cot_trigger"), answer.get("answer_extraction"))
                        condition = " / ".join(p if p else "-" for p in parts)
                        letter = None
                        outcome: str | None
                        if rescored:
                            e = extract_answer(
                                sample.get("type", ""),
                                extraction_output=answer.get("answer"),
                                cot=cot.get("cot"),
                                choices=sample.get("choices") or [],
                                gold=sample.get("answer") or [],
                            )
                            outcome, letter, value = e.outcome, e.letter, e.correct
                        else:
                            stored = answer.get("correct_answer")
                            outcome = None if stored is None else ("correct" if stored else "incorrect")
                            value = stored
                        usage = cot.get("thoughtdesk") or {}
                        out.append(
                            FileAnswer(
                                dataset,
                                split,
                                model_of(cot.get("model")),
                                condition,
                                sample["id"],
                                outcome,
                                letter,
                                value,
                                index,
                                usage.get("completion_tokens"),
                                usage.get("cost"),
                            )
                        )
    return out


def groups(answers: list[FileAnswer]) -> dict[tuple[str, str, str, str], Group]:
    table: dict[tuple[str, str, str, str], Group] = defaultdict(Group)
    for a in answers:
        if a.outcome is None:
            continue
        g = table[(a.dataset, a.split, a.model, a.condition)]
        g.n += 1
        g.correct += a.outcome == "correct"
        g.unextractable += a.outcome == "unextractable"
        if a.tokens is not None:
            g.tokens.append(a.tokens)
    return dict(table)


def first_correct(answers: list[FileAnswer], key: tuple[str, str, str, str]) -> dict[str, bool]:
    """Question id -> whether the first answer under ``key`` was correct."""
    out: dict[str, bool] = {}
    for a in answers:
        if (a.dataset, a.split, a.model, a.condition) == key and a.outcome is not None and a.sample_id not in out:
            out[a.sample_id] = a.outcome == "correct"
    return out
