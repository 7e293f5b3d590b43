"""Commonsense and open-domain QA: commonsense_qa (+ ECQA explanations), strategy_qa, qed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from thoughtdesk.core.datasets import commonsense_info as info
from thoughtdesk.core.datasets.loading import (
    DatasetLoader,
    FileProbe,
    LoadContext,
    RecordError,
    check_answer,
    has_keys,
    need,
)
from thoughtdesk.core.datasets.readers import csv_header, iter_csv, iter_json_container, iter_jsonl
from thoughtdesk.core.datasets.text import capitalise_first, untokenize
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Sample
from thoughtdesk.core.sentences import split_sentences

# --- commonsense_qa + ECQA -------------------------------------------------------------------


def _ecqa_files(option: Path | None, dataset_file: Path, root: Path) -> list[Path]:
    """ECQA files to use: the ``ecqa=`` option, else an ``ecqa`` folder in or beside the data."""
    if option is not None:
        option = Path(option)
        if option.is_file():
            return [option]
        if not option.is_dir():
            raise DataFileError(option, "ECQA file or folder not found")
        folders = [option]
    else:
        base = root if root.is_dir() else root.parent
        folders = [
            base / "ecqa",
            base.parent / "ecqa",
            dataset_file.parent / "ecqa",
            dataset_file.parent.parent / "ecqa",
        ]
    files: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            files = sorted(folder.glob("cqa_data_*.csv")) + sorted(folder.glob("*ecqa*.jsonl"))
            if files:
                break
    return files


def _explanation_steps(text: str) -> list[str]:
    # ECQA's free-flow explanation (taskB), one step per sentence, as ThoughtSource does.
    return [capitalise_first(span.text) for span in split_sentences(text, lowercase_starts=True)]


def _load_ecqa(files: list[Path]) -> dict[str, list[str]]:
    """CommonsenseQA id -> explanation sentences, from the ECQA CSVs or ThoughtSource's JSONL."""
    explanations: dict[str, list[str]] = {}
    for path in files:
        if path.suffix == ".jsonl":
            for _line, record in iter_jsonl(path):
                if isinstance(record, DataFileError):
                    raise record
                if has_keys(record, "id", "explanation"):
                    explanations[record["id"]] = _explanation_steps(record["explanation"])
            continue
        rows = iter_csv(path)
        header = csv_header(rows) or []
        if "q_no" not in header or "taskB" not in header:
            raise DataFileError(
                path, "not an ECQA file", line=1, hint="expected CSV columns q_no, ..., taskA_pos, taskA_neg, taskB"
            )
        id_column, text_column = header.index("q_no"), header.index("taskB")
        for _line, row in rows:
            if isinstance(row, DataFileError):
                raise row
            explanations[row[id_column]] = _explanation_steps(row[text_column])
    return explanations


def _read_csqa(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    if "ecqa" not in context.cache:
        files = _ecqa_files(context.options.get("ecqa"), path, context.root)
        context.cache["ecqa"] = _load_ecqa(files)
    ecqa: dict[str, list[str]] = context.cache["ecqa"]

    def convert(record: dict, index: int) -> Sample:
        sample_id = need(record, "id")
        question = need(record, "question", dict)
        stem = need(question, "stem", label="question.stem")
        choices_raw = need(question, "choices", list, label="question.choices")
        labels = [str(choice.get("label")) for choice in choices_raw if isinstance(choice, dict)]
        choices = [str(choice.get("text")) for choice in choices_raw if isinstance(choice, dict)]
        if len(choices) != len(choices_raw) or not choices:
            raise RecordError("question.choices", "choices must be {label, text} objects")
        key = record.get("answerKey")
        if key is None:
            # The official test file carries no answers.
            if split != "test":
                raise RecordError("answerKey", "missing answer")
            answer = []
        else:
            check_answer(key, labels, "answerKey")
            answer = [choices[labels.index(key)]]
        return Sample(
            id=sample_id,
            question=stem,
            type="multiplechoice",
            choices=choices,
            answer=answer,
            cot=list(ecqa.get(sample_id, ())),
        )

    yield from context.convert(path, split, iter_jsonl(path), convert)


def _sniff_csqa(probe: FileProbe) -> bool:
    record = probe.jsonl_first
    return (
        has_keys(record, "id", "question")
        and isinstance(record["question"], dict)
        and "question_concept" in record["question"]
    )


# --- strategy_qa -----------------------------------------------------------------------------


def _strategy_sample(record: dict, split: str) -> Sample:
    sample_id = need(record, "qid")
    question = need(record, "question")
    if "answer" not in record or record["answer"] is None:
        if split != "test":
            raise RecordError("answer", "missing answer")
        answer = []
    else:
        value = record["answer"]
        if not isinstance(value, bool):
            raise RecordError("answer", f"answer should be true/false, found {value!r}")
        answer = [str(value)]
    facts = record.get("facts") or []
    extra = {}
    if record.get("decomposition"):
        extra["decomposition"] = list(record["decomposition"])
    return Sample(
        id=sample_id,
        question=question,
        type="bool",
        choices=["True", "False"],
        answer=answer,
        cot=[str(fact) for fact in facts],
        extra=extra,
    )


def _read_strategy(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    items = ((line, value) for line, _, value in iter_json_container(path))
    yield from context.convert(path, split, items, lambda record, index: _strategy_sample(record, split))


def _sniff_strategy(probe: FileProbe) -> bool:
    return has_keys(probe.json_first, "qid", "question")


# --- qed -------------------------------------------------------------------------------------


def _qed_cot(annotation: dict) -> list[str]:
    if annotation.get("explanation_type") != "single_sentence":
        return []  # 'none' and 'multi_sentence' items carry no sentence-level annotation
    cot = []
    sentence = (annotation.get("selected_sentence") or {}).get("string", "").strip()
    if sentence:
        cot.append(f"The answer is contained in the following sentence: {sentence}")
    for equality in annotation.get("referential_equalities") or []:
        in_question = equality["question_reference"]["string"]
        in_sentence = equality["sentence_reference"]["string"]
        bridge = equality["sentence_reference"].get("bridge")
        if not in_sentence:
            continue  # an implicit reference has no words in the sentence to point at
        if bridge is False or bridge is None:
            cot.append(
                f'The noun phrase "{in_sentence}" in the sentence and the noun phrase '
                f'"{in_question}" in the question refer to the same thing.'
            )
        else:
            cot.append(
                f'The noun phrase "{in_sentence}" in the sentence refers to '
                f'"{in_sentence} {bridge} {in_question}" in the question.'
            )
    return [untokenize(step) for step in cot]


def _qed_sample(record: dict) -> Sample:
    sample_id = str(need(record, "example_id", (int, str)))
    question = untokenize(need(record, "question_text").strip())
    question = question[:1].upper() + question[1:]
    if not question.endswith("?"):
        question += "?"
    annotation = need(record, "annotation", dict)
    answers = need(record, "original_nq_answers", list)
    answer = [spans[0]["string"] for spans in answers if spans and isinstance(spans[0], dict)]
    if not answer:
        raise RecordError("original_nq_answers", "missing answer")
    context = f"Title: {untokenize(record.get('title_text', ''))} Text: {untokenize(need(record, 'paragraph_text'))}"
    return Sample(
        id=sample_id, question=question, type="collection", answer=answer, cot=_qed_cot(annotation), context=context
    )


def _read_qed(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    yield from context.convert(path, split, iter_jsonl(path), lambda record, index: _qed_sample(record))


def _sniff_qed(probe: FileProbe) -> bool:
    return has_keys(probe.jsonl_first, "example_id", "question_text", "paragraph_text")


#: This family's datasets, collected by :mod:`thoughtdesk.core.datasets.registry`.
LOADERS: tuple[DatasetLoader, ...] = (
    DatasetLoader(info.COMMONSENSE_QA, _read_csqa, _sniff_csqa),
    DatasetLoader(info.STRATEGY_QA, _read_strategy, _sniff_strategy),
    DatasetLoader(info.QED, _read_qed, _sniff_qed),
)
