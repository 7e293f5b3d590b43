"""Math word problem datasets: gsm8k, svamp, asdiv, mawps, multiarith, addsub, singleeq.

Their reference CoTs are the worked solutions (gsm8k) or the equations turned into readable
steps (the others); answers are numbers written without thousands separators or ``.0``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

from thoughtdesk.core.datasets import math_word_info as info
from thoughtdesk.core.datasets.equations import equation_steps, expression_steps, prefix_to_infix
from thoughtdesk.core.datasets.loading import DatasetLoader, FileProbe, LoadContext, RecordError, has_keys, need
from thoughtdesk.core.datasets.readers import csv_header, iter_csv, iter_json_container, iter_jsonl
from thoughtdesk.core.datasets.text import format_number, untokenize
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Sample

_CALCULATOR = re.compile(r"<<[^>]*>>")


def derived_id(dataset: str, split: str, index: int) -> str:
    """The id of a record without its own id: ``{dataset}_{split}_{index}`` as ThoughtSource does."""
    return f"{dataset}_{split}_{index}"


# --- gsm8k -----------------------------------------------------------------------------------


def _gsm8k_sample(record: dict, index: int, split: str) -> Sample:
    question = need(record, "question")
    solution = need(record, "answer")
    lines = [line.strip() for line in solution.strip().splitlines() if line.strip()]
    if not lines or not lines[-1].startswith("####"):
        raise RecordError("answer", "the solution has no final line '#### <answer>'")
    final = format_number(lines[-1][4:].strip())
    if not final:
        raise RecordError("answer", "missing answer after '####'")
    cot = []
    for line in lines[:-1]:
        if " ** " in line:  # socratic variant: "sub-question ** step"
            line = line.split(" ** ", 1)[1]
        cot.append(_CALCULATOR.sub("", line).strip())
    return Sample(
        id=derived_id("gsm8k", split, index),
        question=question,
        type="number",
        answer=[final],
        cot=[line for line in cot if line],
    )


def _read_gsm8k(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    yield from context.convert(path, split, iter_jsonl(path), lambda record, index: _gsm8k_sample(record, index, split))


def _sniff_gsm8k(probe: FileProbe) -> bool:
    record = probe.jsonl_first
    return (
        has_keys(record, "question", "answer")
        and len(record) == 2
        and isinstance(record["answer"], str)
        and "####" in record["answer"]
    )


# --- svamp -----------------------------------------------------------------------------------


def _svamp_sample(record: dict) -> Sample:
    body = need(record, "Body").strip()
    question = need(record, "Question").strip()
    answer = need(record, "Answer", (int, float))
    equation = need(record, "Equation")
    steps = expression_steps(equation)
    cot = steps[0] if steps else [f"We compute {equation.strip()}."]
    kind = str(record.get("Type") or "").strip()
    if kind:
        cot = [f"To get to the correct answer we have to perform {kind}."] + cot
    text = f"{body} {question}" if body.endswith((".", "?", "!")) else f"{body}, {question[:1].lower()}{question[1:]}"
    return Sample(id=str(need(record, "ID")), question=text, type="number", answer=[format_number(answer)], cot=cot)


def _read_svamp(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    items = ((line, value) for line, _, value in iter_json_container(path))
    yield from context.convert(path, split, items, lambda record, index: _svamp_sample(record))


def _sniff_svamp(probe: FileProbe) -> bool:
    return has_keys(probe.json_first, "Body", "Question", "Equation", "Answer")


# --- asdiv -----------------------------------------------------------------------------------

_UNIT = re.compile(r"\(\s*[^()\d]*[A-Za-z][^()]*\)")
_ANSWER_WITH_UNIT = re.compile(r"^\s*(-?[\d,]*\.?\d+)\s*(\(.*\))?\s*$")


#: The right side of a division with remainder, as ASDiv writes it: ``47/6=7 r5``.
_REMAINDER = re.compile(r"^\s*(\d+)\s*r\s*(\d+)\s*$")
_LAST_RESULT = re.compile(r" and get [^ ]+\.$")


def _asdiv_steps(formula: str) -> list[str]:
    steps: list[str] = []
    for part in formula.split(";"):
        part = part.strip()
        if not part:
            continue
        plain = _UNIT.sub("", part)
        left, _, right = plain.partition("=")
        worked = expression_steps(left) if "=" in plain else None
        if worked and worked[0]:
            found = worked[0]
            remainder = _REMAINDER.match(right)
            if remainder and " divide " in found[-1] and int(worked[1]) == int(remainder.group(1)):
                # "Surplus" problems ask for the remainder: "get 7 with remainder 5", not 7.833333.
                quotient, rest = remainder.groups()
                found[-1] = _LAST_RESULT.sub(f" and get {quotient} with remainder {rest}.", found[-1])
            steps.extend(found)
        else:
            steps.append(part if part.endswith(".") else f"{part}.")
    return steps


def _read_asdiv(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    try:
        root = ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        line, column = error.position
        raise DataFileError(path, f"malformed XML: {error}", line=line, column=column + 1) from None
    problems = root.findall("ProblemSet/Problem")
    if root.tag != "Machine-Reading-Corpus-File" or not problems:
        raise DataFileError(
            path, "not an ASDiv corpus file", hint="expected <Machine-Reading-Corpus-File><ProblemSet><Problem>"
        )

    def convert(problem: ElementTree.Element, index: int) -> Sample:
        fields = {child.tag: (child.text or "").strip() for child in problem}
        problem_id = problem.get("ID")
        if not problem_id:
            raise RecordError("ID", "missing attribute 'ID'")
        for name in ("Body", "Question", "Answer"):
            if not fields.get(name):
                raise RecordError(name, f"missing element <{name}>")
        match = _ANSWER_WITH_UNIT.match(fields["Answer"])
        answer = format_number(match.group(1)) if match else fields["Answer"]
        return Sample(
            id=problem_id,
            question=f"{fields['Body']} {fields['Question']}",
            type="number" if match else "text",
            answer=[answer],
            cot=_asdiv_steps(fields.get("Formula", "")),
        )

    # ElementTree keeps no line numbers: find where each <Problem> starts in the raw text (same
    # order as findall); if the counts disagree, the record number alone is reported.
    raw = path.read_bytes()
    starts = [match.start() for match in re.finditer(rb"<Problem[\s>]", raw)]
    lines: list[int | None] = [None] * len(problems)
    if len(starts) == len(problems):
        line, previous = 1, 0
        for position, start in enumerate(starts):
            line += raw.count(b"\n", previous, start)
            previous = start
            lines[position] = line
    yield from context.convert(path, split, zip(lines, problems, strict=False), convert)


def _sniff_asdiv(probe: FileProbe) -> bool:
    if not probe.name.lower().endswith(".xml"):
        return False
    try:
        with open(probe.path, encoding="utf-8", errors="replace") as handle:
            return "<Machine-Reading-Corpus-File" in handle.read(4096)
    except OSError:
        return False


# --- mawps (SVAMP authors' cross-validation CSVs) ---------------------------------------------

_MAWPS_COLUMNS = ("Question", "Numbers", "Equation", "Answer")


def _read_mawps(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
    rows = iter_csv(path)
    header = csv_header(rows)
    if header is None:
        raise DataFileError(path, "empty file")
    missing = [name for name in _MAWPS_COLUMNS if name not in header]
    if missing:
        raise DataFileError(path, f"missing column(s) {', '.join(missing)}", line=1)
    column = {name: header.index(name) for name in header}

    def convert(row: list[str], index: int) -> Sample:
        numbers = row[column["Numbers"]].split()
        values = {f"number{i}": format_number(value) for i, value in enumerate(numbers)}
        question = re.sub(r"number\d+", lambda m: values.get(m.group(), m.group()), row[column["Question"]])
        try:
            infix = prefix_to_infix([values.get(token, token) for token in row[column["Equation"]].split()])
        except ValueError as error:
            raise RecordError("Equation", str(error)) from None
        if re.search(r"number\d+", infix):
            raise RecordError("Numbers", "the equation uses a number missing from 'Numbers'")
        steps = expression_steps(infix)
        answer = row[column["Answer"]].strip()
        if not answer:
            raise RecordError("Answer", "missing answer")
        return Sample(
            id=derived_id("mawps", split, index),
            question=untokenize(question),
            type="number",
            answer=[format_number(answer)],
            cot=steps[0] if steps else [f"We compute {infix}."],
        )

    yield from context.convert(path, split, rows, convert)


def _sniff_mawps(probe: FileProbe) -> bool:
    return probe.name.lower().endswith(".csv") and all(name in probe.csv_first() for name in _MAWPS_COLUMNS)


# --- multiarith / addsub / singleeq (MAWPS-style JSON arrays) ---------------------------------


def _mawps_json_reader(name: str):
    def convert(record: dict, index: int) -> Sample:
        question = need(record, "sQuestion").strip()
        equations = need(record, "lEquations", list)
        solutions = need(record, "lSolutions", list)
        if not solutions:
            raise RecordError("lSolutions", "missing answer")
        answer = format_number(solutions[0])
        cot = [step for equation in equations for step in equation_steps(str(equation), answer)]
        own_id = record.get("iIndex")
        return Sample(
            id=str(own_id) if own_id is not None else derived_id(name, "test", index),
            question=question,
            type="number",
            answer=[answer],
            cot=cot,
        )

    def read(path: Path, split: str, context: LoadContext) -> Iterator[tuple[str, Sample]]:
        items = ((line, value) for line, _, value in iter_json_container(path))
        yield from context.convert(path, split, items, convert)

    return read


def _sniff_multiarith(probe: FileProbe) -> bool:
    return has_keys(probe.json_first, "sQuestion", "lEquations", "lAlignments")


def _sniff_addsub(probe: FileProbe) -> bool:
    record = probe.json_first
    return (
        has_keys(record, "sQuestion", "lEquations", "lSolutions", "iIndex")
        and "lAlignments" not in record
        and "templateNumber" not in record
    )


def _sniff_singleeq(probe: FileProbe) -> bool:
    return has_keys(probe.json_first, "sQuestion", "lEquations", "templateNumber")


#: This family's datasets, collected by :mod:`thoughtdesk.core.datasets.registry`.
LOADERS: tuple[DatasetLoader, ...] = (
    DatasetLoader(info.GSM8K, _read_gsm8k, _sniff_gsm8k),
    DatasetLoader(info.SVAMP, _read_svamp, _sniff_svamp),
    DatasetLoader(info.ASDIV, _read_asdiv, _sniff_asdiv),
    DatasetLoader(info.MAWPS, _read_mawps, _sniff_mawps),
    DatasetLoader(info.MULTIARITH, _mawps_json_reader("multiarith"), _sniff_multiarith),
    DatasetLoader(info.ADDSUB, _mawps_json_reader("addsub"), _sniff_addsub),
    DatasetLoader(info.SINGLEEQ, _mawps_json_reader("singleeq"), _sniff_singleeq),
)
