"""Medical QA datasets: pubmed_qa, med_qa, medmc_qa and six MMLU medical subjects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from thoughtdesk.core.datasets import medical_info as info
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
from thoughtdesk.core.datasets.readers import iter_csv, iter_json_container, iter_jsonl, load_json
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.sentences import split_sentences

# --- pubmed_qa -------------------------------------------------------------------------------

_PUBMED_CHOICES = ["yes", "no", "maybe"]


def _pubmed_test_ids(path: Path, context: LoadContext) -> set[str] | None:
    """PMIDs of the official test split, from test_ground_truth.json beside ori_pqal.json."""
    truth = path.with_name("test_ground_truth.json")
    if not truth.is_file():
        return None
    data = load_json(truth)
    if not isinstance(data, dict):
        raise DataFileError(truth, "expected a JSON object PMID -> label")
    return set(data)


def _read_pubmed(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    test_ids = _pubmed_test_ids(path, context)

    def convert(item: tuple[str, dict], index: int) -> Sample:
        pmid, record = item
        question = need(record, "QUESTION")
        decision = need(record, "final_decision")
        check_answer(decision, _PUBMED_CHOICES, "final_decision")
        contexts = need(record, "CONTEXTS", list)
        return Sample(
            id=pmid,
            ref_id=pmid,
            question=question,
            type="multiplechoice",
            choices=list(_PUBMED_CHOICES),
            answer=[decision],
            context="\n".join(str(text) for text in contexts),
            cot=[span.text for span in split_sentences(record.get("LONG_ANSWER") or "")],
        )

    items = ((line, (str(key), value)) for line, key, value in iter_json_container(path))
    for _, sample in context.convert(path, split, items, convert):
        if test_ids is None:
            yield ("train" if split == "*" else split), sample
        else:
            yield ("test" if sample.id in test_ids else "train"), sample


def _sniff_pubmed(probe: FileProbe) -> bool:
    return has_keys(probe.json_first, "QUESTION", "CONTEXTS", "final_decision")


# --- med_qa ----------------------------------------------------------------------------------


def _medqa_sample(record: dict, index: int, split: str) -> Sample:
    question = need(record, "question")
    options = need(record, "options", dict)
    letter = need(record, "answer_idx")
    labels = sorted(options)
    choices = [str(options[label]) for label in labels]
    if letter not in options:
        raise RecordError("answer_idx", f"answer {letter!r} is not among the options {labels}")
    answer = str(options[letter])
    stated = record.get("answer")
    if isinstance(stated, str) and stated.strip() != answer.strip():
        raise RecordError("answer", f"answer text {stated!r} differs from option {letter}: {answer!r}")
    return Sample(
        id=derived_id("med_qa", split, index),
        question=question,
        type="multiplechoice",
        choices=choices,
        answer=[answer],
    )


def _read_medqa(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    yield from context.convert(path, split, iter_jsonl(path), lambda record, index: _medqa_sample(record, index, split))


def _sniff_medqa(probe: FileProbe) -> bool:
    return has_keys(probe.jsonl_first, "question", "options", "answer_idx")


# --- medmc_qa --------------------------------------------------------------------------------

_MEDMC_OPTIONS = ("opa", "opb", "opc", "opd")


def _medmc_sample(record: dict, split: str) -> Sample:
    # Hot path of the 200k-record benchmark: plain dict access, checks only where needed.
    if type(record) is not dict:
        raise RecordError(None, f"expected a JSON object, found {type(record).__name__}")
    try:
        question = record["question"]
        choices = [record["opa"], record["opb"], record["opc"], record["opd"]]
        sample_id = record["id"]
    except KeyError as error:
        raise RecordError(error.args[0], f"missing field {error.args[0]!r}") from None
    if not isinstance(question, str):
        raise RecordError("question", "field 'question' should be text")
    for name, choice in zip(_MEDMC_OPTIONS, choices, strict=False):
        if not isinstance(choice, str):
            raise RecordError(name, f"field {name!r} should be text")
    cop = record.get("cop")
    if cop is None:
        # The official test split has no answers: allowed there, an error anywhere else.
        if split != "test":
            raise RecordError("cop", "missing answer")
        answer: list[str] = []
    else:
        if type(cop) is not int or not 1 <= cop <= 4:
            raise RecordError("cop", f"answer index {cop!r} is not 1-4 (cop is 1-based)")
        answer = [choices[cop - 1]]
    explanation = record.get("exp")
    return Sample(
        id=str(sample_id),
        question=question,
        type="multiplechoice",
        choices=choices,
        answer=answer,
        cot=[explanation] if explanation else [],
    )


def _read_medmc(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    yield from context.convert(path, split, iter_jsonl(path), lambda record, index: _medmc_sample(record, split))


def _sniff_medmc(probe: FileProbe) -> bool:
    return has_keys(probe.jsonl_first, "question", "opa", "opb", "opc", "opd", "id")


# --- MMLU medical subjects (headerless CSV: question, A, B, C, D, answer letter) --------------


def _mmlu_reader(name: str):
    def read(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
        def convert(row: list[str], index: int) -> Sample:
            question, *choices, letter = row
            letter = letter.strip()
            if not letter:
                raise RecordError("answer (column 6)", "missing answer")
            if letter not in "ABCD" or len(letter) != 1:
                raise RecordError("answer (column 6)", f"answer {letter!r} is not among the choices A-D")
            return Sample(
                id=derived_id(name, split, index),
                question=question,
                type="multiplechoice",
                choices=choices,
                answer=[choices["ABCD".index(letter)]],
            )

        yield from context.convert(path, split, iter_csv(path, header=False, columns=6), convert)

    return read


def _sniff_mmlu(probe: FileProbe) -> bool:
    if not probe.name.lower().endswith(".csv"):
        return False
    row = probe.csv_first()
    return len(row) == 6 and row[5].strip() in ("A", "B", "C", "D")


#: This family's datasets, collected by :mod:`thoughtdesk.core.datasets.registry`.
LOADERS: tuple[DatasetLoader, ...] = (
    DatasetLoader(info.PUBMED_QA, _read_pubmed, _sniff_pubmed),
    DatasetLoader(info.MED_QA, _read_medqa, _sniff_medqa),
    DatasetLoader(info.MEDMC_QA, _read_medmc, _sniff_medmc),
    *(DatasetLoader(subject, _mmlu_reader(subject.name), _sniff_mmlu) for subject in info.MMLU_SUBJECTS),
)
