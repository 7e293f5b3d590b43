"""Per-dataset expectations computed straight from an original record, independently of the
loaders (so a loader bug shows up as a mismatch): where the files live, how to read the first
record, and what the first sample must look like."""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path


def _jsonl_first(path: Path) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.loads(handle.readline())


def _json_first(path: Path):
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        key = next(iter(data))
        return key, data[key]
    return data[0]


def _csv_first(path: Path) -> dict[str, str]:
    """The first row under the header, by column name."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle)
        first = next(rows)
        return dict(zip(first, next(rows), strict=False))


def _csv_first_row(path: Path) -> list[str]:
    """The first row of a file without a header."""
    with open(path, encoding="utf-8", newline="") as handle:
        return next(csv.reader(handle))


def _text(element: ElementTree.Element, path: str) -> str:
    found = element.find(path)
    assert found is not None and found.text is not None, f"no {path} text"
    return found.text


def _num(value) -> str:
    text = str(value).replace(",", "")
    number = float(text)
    return str(int(number)) if number == int(number) else text


def gsm8k(folder: Path):
    raw = _jsonl_first(folder / "test.jsonl")
    lines = raw["answer"].split("\n")
    cot = [re.sub(r"<<.*?>>", "", line).strip() for line in lines[:-1]]
    return "test", dict(
        id="gsm8k_test_0",
        question=raw["question"],
        type="number",
        answer=[_num(lines[-1].replace("####", "").strip())],
        cot=cot,
        choices=[],
    )


def svamp(folder: Path):
    raw = _json_first(folder / "SVAMP.json")
    return "train", dict(
        id=raw["ID"],
        type="number",
        answer=[_num(raw["Answer"])],
        question_contains=[raw["Body"], raw["Question"][1:]],
        cot_min=2,
    )


def asdiv(folder: Path):
    problem = ElementTree.parse(folder / "ASDiv.xml").getroot().find("ProblemSet/Problem")
    assert problem is not None
    answer = _text(problem, "Answer").split(" (")[0]
    return "train", dict(
        id=problem.get("ID"),
        type="number",
        answer=[answer],
        question=f"{_text(problem, 'Body')} {_text(problem, 'Question')}",
        cot_min=1,
    )


def mawps(folder: Path):
    row = _csv_first(next(folder.rglob("train.csv")))
    numbers = row["Numbers"].split()
    question_numbers = [_num(n) for n in numbers]
    return "train", dict(
        id="mawps_train_0",
        type="number",
        answer=[_num(row["Answer"])],
        question_contains=question_numbers,
        no_text="number0",
        cot_min=1,
    )


def _math_json(name: str, file: str, split: str = "test"):
    def expect(folder: Path):
        raw = _json_first(folder / file)
        return split, dict(
            id=str(raw["iIndex"]),
            type="number",
            question=raw["sQuestion"].strip(),
            answer=[_num(raw["lSolutions"][0])],
            cot_min=1,
        )

    return expect


def aqua(folder: Path):
    raw = _jsonl_first(folder / "test.json")
    choices = [option[2:] for option in raw["options"]]
    answer = choices["ABCDE".index(raw["correct"])]
    return "test", dict(
        id="aqua_test_0",
        type="multiplechoice",
        question=raw["question"],
        choices=[c.strip() for c in choices],
        answer=[answer.strip()],
        cot=[line.strip() for line in raw["rationale"].split("\n") if line.strip()],
    )


def commonsense_qa(folder: Path):
    raw = _jsonl_first(folder / "dev_rand_split.jsonl")
    choices = [choice["text"] for choice in raw["question"]["choices"]]
    labels = [choice["label"] for choice in raw["question"]["choices"]]
    return "validation", dict(
        id=raw["id"],
        type="multiplechoice",
        question=raw["question"]["stem"],
        choices=choices,
        answer=[choices[labels.index(raw["answerKey"])]],
    )


def strategy_qa(folder: Path):
    raw = _json_first(folder / "dev.json")
    return "validation", dict(
        id=raw["qid"],
        type="bool",
        question=raw["question"],
        answer=[str(raw["answer"])],
        cot=raw["facts"],
        extra={"decomposition": raw["decomposition"]},
    )


def qed(folder: Path):
    raw = _jsonl_first(folder / "qed-dev.jsonlines")
    sentence = raw["annotation"]["selected_sentence"]["string"].split(" ")[0]
    return "validation", dict(
        id=str(raw["example_id"]),
        type="collection",
        answer=[spans[0]["string"] for spans in raw["original_nq_answers"]],
        cot_contains=sentence,
        context_contains=raw["title_text"],
        cot_min=2,
    )


def pubmed_qa(folder: Path):
    pmid, raw = _json_first(folder / "ori_pqal.json")
    truth = json.loads((folder / "test_ground_truth.json").read_text())
    return ("test" if pmid in truth else "train"), dict(
        id=pmid,
        type="multiplechoice",
        question=raw["QUESTION"],
        choices=["yes", "no", "maybe"],
        answer=[raw["final_decision"]],
        context="\n".join(raw["CONTEXTS"]),
        cot_contains=raw["LONG_ANSWER"][:40],
    )


def med_qa(folder: Path):
    raw = _jsonl_first(folder / "phrases_no_exclude_test.jsonl")
    return "test", dict(
        id="med_qa_test_0",
        type="multiplechoice",
        question=raw["question"],
        choices=[raw["options"][k] for k in "ABCD"],
        answer=[raw["answer"]],
    )


def medmc_qa(folder: Path):
    raw = _jsonl_first(folder / "MedMCQA_test.json")
    choices = [raw[k] for k in ("opa", "opb", "opc", "opd")]
    return "validation", dict(
        id=raw["id"],
        type="multiplechoice",
        question=raw["question"],
        choices=choices,
        answer=[choices[raw["cop"] - 1]],
        cot=[raw["exp"]] if raw["exp"] else [],
    )


def _mmlu(subject: str):
    def expect(folder: Path):
        row = _csv_first_row(folder / f"{subject}_test.csv")
        return "test", dict(
            id=f"mmlu_{subject}_test_0",
            type="multiplechoice",
            question=row[0],
            choices=row[1:5],
            answer=[row[1 + "ABCD".index(row[5])]],
        )

    return expect


def open_book_qa(folder: Path):
    raw = _jsonl_first(next(folder.rglob("test_complete.jsonl")))
    choices = [choice["text"] for choice in raw["question"]["choices"]]
    labels = [choice["label"] for choice in raw["question"]["choices"]]
    return "test", dict(
        id=raw["id"],
        type="multiplechoice",
        question=raw["question"]["stem"],
        choices=choices,
        answer=[choices[labels.index(raw["answerKey"])]],
        cot=[raw["fact1"]],
    )


def entailment_bank(folder: Path):
    raw = _jsonl_first(next(folder.rglob("task_1/dev.jsonl")))
    return "validation", dict(
        id=raw["id"],
        type="text",
        question=raw["question"],
        answer=[raw["answer"]],
        cot_min=2,
        cot_contains=raw["meta"]["triples"]["sent1"][:20],
    )


#: dataset -> (folder name under shared/ or fixtures/, expectation function)
EXPECTATIONS = {
    "gsm8k": ("gsm8k", gsm8k),
    "svamp": ("svamp", svamp),
    "asdiv": ("asdiv", asdiv),
    "mawps": ("mawps", mawps),
    "multiarith": ("multiarith", _math_json("multiarith", "MultiArith.json")),
    "addsub": ("addsub", _math_json("addsub", "AddSub.json")),
    "singleeq": ("singleeq", _math_json("singleeq", "questions.json")),
    "aqua": ("aqua", aqua),
    "commonsense_qa": ("commonsense_qa", commonsense_qa),
    "strategy_qa": ("strategyqa", strategy_qa),
    "qed": ("qed", qed),
    "pubmed_qa": ("pubmedqa", pubmed_qa),
    "med_qa": ("medqa", med_qa),
    "medmc_qa": ("medmcqa", medmc_qa),
    "open_book_qa": ("openbookqa", open_book_qa),
    "entailment_bank": ("entailmentbank", entailment_bank),
    **{
        f"mmlu_{s}": ("mmlu_medical", _mmlu(s))
        for s in (
            "anatomy",
            "clinical_knowledge",
            "college_biology",
            "college_medicine",
            "medical_genetics",
            "professional_medicine",
        )
    },
}

#: Samples per split in the shared real files (counts from MANIFEST.md).
REAL_COUNTS = {
    "gsm8k": {"train": 7473, "test": 1319},
    "svamp": {"train": 1000},
    "asdiv": {"train": 2305},
    "mawps": {"train": 1537, "validation": 384},
    "multiarith": {"test": 600},
    "addsub": {"test": 395},
    "singleeq": {"test": 508},
    "aqua": {"validation": 254, "test": 254},
    "commonsense_qa": {"train": 9741, "validation": 1221, "test": 1140},
    "strategy_qa": {"train": 2061, "validation": 229},
    "qed": {"validation": 1355},
    "pubmed_qa": {"train": 500, "test": 500},
    "med_qa": {"test": 1273},
    "medmc_qa": {"validation": 4183},
    "open_book_qa": {"train": 4957, "validation": 500, "test": 500},
    "entailment_bank": {"validation": 187, "test": 340},
    "mmlu_anatomy": {"test": 135},
    "mmlu_clinical_knowledge": {"test": 265},
    "mmlu_college_biology": {"test": 144},
    "mmlu_college_medicine": {"test": 173},
    "mmlu_medical_genetics": {"test": 100},
    "mmlu_professional_medicine": {"test": 272},
}

#: Datasets whose every labelled sample must carry a reference CoT (min share of samples).
COT_SHARE = {
    "gsm8k": 1.0,
    "svamp": 1.0,
    "asdiv": 1.0,
    "mawps": 1.0,
    "multiarith": 1.0,
    "addsub": 1.0,
    "singleeq": 1.0,
    "aqua": 1.0,
    "strategy_qa": 1.0,
    "pubmed_qa": 1.0,
    "open_book_qa": 1.0,
    "entailment_bank": 1.0,
    "qed": 0.75,
    "medmc_qa": 0.5,
    "commonsense_qa": 0.25,
}
