"""Science and exam QA: aqua, open_book_qa, entailment_bank, worldtree."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

from thoughtdesk.core.datasets import science_info as info
from thoughtdesk.core.datasets.loading import (
    DatasetLoader,
    FileProbe,
    LoadContext,
    RecordError,
    check_answer,
    has_keys,
    need,
)
from thoughtdesk.core.datasets.math_word import derived_id
from thoughtdesk.core.datasets.readers import csv_header, iter_csv, iter_jsonl, load_json
from thoughtdesk.core.datasets.text import as_sentence, untokenize
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Sample

# --- aqua ------------------------------------------------------------------------------------

_AQUA_OPTION = re.compile(r"^\s*([A-E])\s*\)\s*(.*)$", re.S)


def _aqua_sample(record: dict, index: int, split: str) -> Sample:
    question = need(record, "question")
    options = need(record, "options", list)
    labels, choices = [], []
    for position, option in enumerate(options):
        match = _AQUA_OPTION.match(str(option))
        if not match:
            raise RecordError(f"options[{position}]", f"option {option!r} does not start with 'A)'..'E)'")
        labels.append(match.group(1))
        choices.append(match.group(2).strip())
    correct = need(record, "correct").strip()
    check_answer(correct, labels, "correct")
    rationale = record.get("rationale") or ""
    cot = [line.strip() for line in rationale.splitlines() if line.strip()]
    return Sample(
        id=derived_id("aqua", split, index),
        question=question,
        type="multiplechoice",
        choices=choices,
        answer=[choices[labels.index(correct)]],
        cot=cot,
    )


def _read_aqua(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    yield from context.convert(path, split, iter_jsonl(path), lambda record, index: _aqua_sample(record, index, split))


def _sniff_aqua(probe: FileProbe) -> bool:
    return has_keys(probe.jsonl_first, "question", "options", "rationale", "correct")


# --- open_book_qa ----------------------------------------------------------------------------


def _obqa_facts(path: Path) -> dict[str, str]:
    """id -> fact1 from the matching Additional/*_complete.jsonl when ``path`` is a Main file."""
    if path.name.endswith("_complete.jsonl"):
        return {}
    complete = path.parent.parent / "Additional" / f"{path.stem}_complete.jsonl"
    facts: dict[str, str] = {}
    if complete.is_file():
        for _, record in iter_jsonl(complete):
            if has_keys(record, "id", "fact1"):
                facts[record["id"]] = record["fact1"]
    return facts


def _read_obqa(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    facts = _obqa_facts(path)

    def convert(record: dict, index: int) -> Sample:
        sample_id = need(record, "id")
        question = need(record, "question", dict)
        stem = need(question, "stem", label="question.stem")
        raw = need(question, "choices", list, label="question.choices")
        labels = [str(choice.get("label")) for choice in raw if isinstance(choice, dict)]
        choices = [str(choice.get("text")) for choice in raw if isinstance(choice, dict)]
        key = need(record, "answerKey")
        check_answer(key, labels, "answerKey")
        fact = record.get("fact1") or facts.get(sample_id)
        return Sample(
            id=sample_id,
            question=stem,
            type="multiplechoice",
            choices=choices,
            answer=[choices[labels.index(key)]],
            cot=[fact] if fact else [],
        )

    yield from context.convert(path, split, iter_jsonl(path), convert)


def _sniff_obqa(probe: FileProbe) -> bool:
    record = probe.jsonl_first
    return (
        has_keys(record, "id", "question", "answerKey")
        and isinstance(record["question"], dict)
        and "question_concept" not in record["question"]
        and "stem" in record["question"]
    )


# --- entailment_bank -------------------------------------------------------------------------

_STEP = re.compile(r"^(?P<premises>.+?)\s*->\s*(?P<conclusion>.+)$")


def _entailment_cot(record: dict) -> list[str]:
    proof = record.get("proof") or ""
    meta = record.get("meta") or {}
    triples: dict[str, str] = meta.get("triples") or {}
    intermediates: dict[str, str] = dict(meta.get("intermediate_conclusions") or {})
    cot: list[str] = []
    for step in (part.strip() for part in proof.split(";")):
        if not step:
            continue
        match = _STEP.match(step)
        if not match:
            raise RecordError("proof", f"proof step {step!r} is not 'premises -> conclusion'")
        for premise in (p.strip() for p in match.group("premises").split("&")):
            if premise in triples:
                cot.append(as_sentence(untokenize(triples[premise])))
            elif premise in intermediates:
                continue  # already stated as the conclusion of an earlier step
            else:
                raise RecordError("proof", f"proof step uses unknown premise {premise!r}")
        conclusion = match.group("conclusion").strip()
        if conclusion == "hypothesis":
            text = record.get("hypothesis") or ""
        else:
            label, _, text = conclusion.partition(":")
            text = text.strip() or intermediates.get(label.strip(), "")
            intermediates.setdefault(label.strip(), text)
        if text:
            cot.append(f"Therefore, {untokenize(text).rstrip('.')}.")
    return cot


def _read_entailment(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    def convert(record: dict, index: int) -> Sample:
        return Sample(
            id=need(record, "id"),
            question=need(record, "question"),
            type="text",
            answer=[need(record, "answer")],
            cot=_entailment_cot(record),
        )

    yield from context.convert(path, split, iter_jsonl(path), convert)


def _sniff_entailment(probe: FileProbe) -> bool:
    return has_keys(probe.jsonl_first, "id", "context", "question", "answer", "hypothesis", "proof")


# --- worldtree -------------------------------------------------------------------------------

_INLINE_CHOICE = re.compile(r"\s*\(([A-J1-9])\)\s*")
WORLDTREE_COLUMNS = ("QuestionID", "AnswerKey", "explanation", "question")


def _tablestore_facts(folder: Path) -> dict[str, str]:
    """UID -> sentence from WorldTree tablestore TSVs (non-[SKIP] columns joined by spaces)."""
    facts: dict[str, str] = {}
    for table in sorted(folder.glob("*.tsv")):
        with open(table, encoding="utf-8", errors="replace", newline="") as handle:
            rows = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(rows, [])
            if "[SKIP] UID" not in header:
                continue
            uid_column = header.index("[SKIP] UID")
            keep = [i for i, name in enumerate(header) if not name.startswith("[SKIP]")]
            for row in rows:
                if len(row) > uid_column:
                    words = [row[i].strip() for i in keep if i < len(row) and row[i].strip()]
                    facts[row[uid_column]] = " ".join(words)
    return facts


def _worldtree_facts(option: Path | None, path: Path, root: Path) -> dict[str, str]:
    if option is not None:
        option = Path(option)
        if option.is_dir():
            return _tablestore_facts(option)
        data = load_json(option)
        if not isinstance(data, dict):
            raise DataFileError(option, "expected a JSON object UID -> fact sentence")
        return {str(key): str(value) for key, value in data.items()}
    base = root if root.is_dir() else root.parent
    for folder in (base, base.parent, path.parent.parent):
        for candidate in (folder / "tablestore" / "v2.1" / "tables", folder / "tables"):
            if candidate.is_dir():
                return _tablestore_facts(candidate)
        for name in (
            "worldtree_corpus_sentences_extended.json",
            "entailmentbank/supporting_data/worldtree_corpus_sentences_extended.json",
            "supporting_data/worldtree_corpus_sentences_extended.json",
        ):
            if (folder / name).is_file():
                return _worldtree_facts(folder / name, path, root)
    return {}


def _read_worldtree(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    if "facts" not in context.cache:
        context.cache["facts"] = _worldtree_facts(context.options.get("facts"), path, context.root)
    facts: dict[str, str] = context.cache["facts"]
    rows = iter_csv(path, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = csv_header(rows) or []
    missing = [name for name in WORLDTREE_COLUMNS if name not in header]
    if missing:
        raise DataFileError(path, f"missing column(s) {', '.join(missing)}", line=1)
    column = {name: header.index(name) for name in header}

    def convert(row: list[str], index: int) -> Sample:
        parts = _INLINE_CHOICE.split(row[column["question"]].strip())
        question, labels, choices = parts[0].strip(), parts[1::2], [p.strip() for p in parts[2::2]]
        if not choices:
            raise RecordError("question", "no inline choices '(A) ... (B) ...' in the question")
        key = row[column["AnswerKey"]].strip()
        if not key:
            raise RecordError("AnswerKey", "missing answer")
        check_answer(key, labels, "AnswerKey")
        cot = []
        for token in row[column["explanation"]].split():
            uid = token.split("|", 1)[0]
            if uid in facts:
                cot.append(as_sentence(re.sub(r"\((.*?) ; .*?\)", r"\1", facts[uid])))
        return Sample(
            id=row[column["QuestionID"]],
            question=question,
            type="multiplechoice",
            choices=choices,
            answer=[choices[labels.index(key)]],
            cot=cot,
        )

    yield from context.convert(path, split, rows, convert)


def _sniff_worldtree(probe: FileProbe) -> bool:
    header = probe.csv_first("\t", csv.QUOTE_NONE)
    return all(name in header for name in WORLDTREE_COLUMNS)


#: This family's datasets, collected by :mod:`thoughtdesk.core.datasets.registry`.
LOADERS: tuple[DatasetLoader, ...] = (
    DatasetLoader(info.AQUA, _read_aqua, _sniff_aqua),
    DatasetLoader(info.OPEN_BOOK_QA, _read_obqa, _sniff_obqa),
    DatasetLoader(info.ENTAILMENT_BANK, _read_entailment, _sniff_entailment),
    DatasetLoader(info.WORLDTREE, _read_worldtree, _sniff_worldtree),
)
