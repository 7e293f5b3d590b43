"""Re-score every answer in the ThoughtSource collection files and list disagreements.

Run as a script for a report, from the repository root:
``PYTHONPATH=desktop python -m tests.core.evaluation.answers.ts_agreement [FILE ...]``.
Agreement counts: ours "correct" vs stored True, ours "incorrect" vs stored False, and ours
"unextractable" vs stored False (ThoughtSource folds unextractable answers into False; we keep
them apart, so these are reported on their own line). Answers whose stored value is null were
never scored by ThoughtSource and are left out of the rate.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.paths import SHARED
from thoughtdesk.core.evaluation.answers import Extraction, extract_answer

DEFAULT_DIR = SHARED / "thoughtsource"


@dataclass(slots=True)
class Disagreement:
    file: str
    dataset: str
    split: str
    sample_id: str
    cot_id: str
    answer_type: str
    choices: list[str]
    gold: list[str]
    extraction_output: str
    cot_tail: str
    stored: bool | None
    ours: Extraction


@dataclass(slots=True)
class AgreementReport:
    compared: int = 0
    agree: int = 0
    unextractable_vs_false: int = 0
    unscored: int = 0
    counts: Counter = field(default_factory=Counter)
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def rate(self) -> float:
        """Share (0..1) of compared answers on which we agree; unextractable vs False agrees."""
        return self.agree / self.compared if self.compared else 1.0


def collection_files(folder: Path = DEFAULT_DIR) -> list[Path]:
    return sorted(folder.resolve().glob("*.json"))


def rescore_files(files: list[Path]) -> AgreementReport:
    """Re-score every answer of every file with :func:`extract_answer` against the stored label."""
    report = AgreementReport()
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for dataset, splits in data.items():
            for split, samples in splits.items():
                for sample in samples:
                    for cot in sample.get("generated_cot") or []:
                        for answer in cot.get("answers") or []:
                            _compare(report, path.name, dataset, split, sample, cot, answer)
    return report


def _compare(
    report: AgreementReport, file: str, dataset: str, split: str, sample: dict, cot: dict, answer: dict
) -> None:
    stored = answer.get("correct_answer")
    ours = extract_answer(
        sample.get("type", ""),
        extraction_output=answer.get("answer"),
        cot=cot.get("cot"),
        choices=sample.get("choices") or [],
        gold=sample.get("answer") or [],
    )
    report.counts[(ours.outcome, stored)] += 1
    if stored is None:
        report.unscored += 1
        return
    report.compared += 1
    agrees = (ours.outcome == "correct") == bool(stored)
    if agrees:
        report.agree += 1
        if ours.outcome == "unextractable":
            report.unextractable_vs_false += 1
        return
    report.disagreements.append(
        Disagreement(
            file,
            dataset,
            split,
            str(sample.get("id")),
            str(cot.get("id")),
            sample.get("type", ""),
            list(sample.get("choices") or []),
            list(sample.get("answer") or []),
            str(answer.get("answer")),
            str(cot.get("cot") or "")[-300:],
            stored,
            ours,
        )
    )


def main(argv: list[str]) -> int:
    files = [Path(a) for a in argv] or collection_files()
    report = rescore_files(files)
    for d in report.disagreements:
        print(f"--- {d.file} {d.dataset}/{d.split} sample {d.sample_id} cot {d.cot_id} ({d.answer_type})")
        print(f"    choices {d.choices} gold {d.gold}")
        print(f"    extraction output: {d.extraction_output!r}")
        print(f"    cot tail: {d.cot_tail[-200:]!r}")
        print(f"    stored {d.stored}; ours {d.ours.outcome} {d.ours.value!r} via {d.ours.method} {d.ours.reason}")
    print(
        f"compared {report.compared}, agree {report.agree} ({report.rate:.2%}), "
        f"of which ours unextractable vs stored False: {report.unextractable_vs_false}; "
        f"disagree {len(report.disagreements)}; not scored by ThoughtSource (null): {report.unscored}"
    )
    for key, value in sorted(report.counts.items(), key=str):
        print(f"    ours {key[0]:>13} / stored {key[1]!s:>5}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
