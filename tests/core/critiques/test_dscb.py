"""DS Critique Bank records: reading with line numbers, validation, conversion and back, losslessly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.paths import FIXTURES
from thoughtdesk.core.critiques.dscb import looks_like_dscb, read_dscb
from thoughtdesk.core.critiques.dscb_export import record_from
from thoughtdesk.core.critiques.dscb_mapping import (
    cot_for,
    critiques_for,
    explanation_ratings_for,
    parsed_from_elements,
    raw_output_of,
    sample_for,
    split_choices,
)
from thoughtdesk.core.critiques.parse import parse_critique
from thoughtdesk.core.critiques.records import Critique, CritiqueRating, ExplanationRating, ds_layout_text
from thoughtdesk.core.errors import DataFileError
from thoughtdesk.core.library.records import Answer, GeneratedCot, Sample, model_repr

DSCB = FIXTURES / "dscb"
FILES = sorted(DSCB.glob("*.jsonl"))


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def round_trip(record: dict, sample: Sample | None = None) -> dict:
    """A record through the ThoughtDesk records and back, without a library."""
    sample = sample or sample_for(record)
    cot = cot_for(record, sample, 1)
    # What the library does to the records: JSON columns.
    cot.extra = json.loads(json.dumps(cot.extra))
    critiques = critiques_for(record)
    for c in critiques:
        c.elements = json.loads(json.dumps(c.elements))
    return record_from(record["dataset"], sample, cot, critiques, explanation_ratings_for(record))


def test_the_five_file_kinds_are_there_with_every_documented_field():
    assert [p.name for p in FILES] == [
        "DSCB-dev-crowd-anno.jsonl",
        "DSCB-dev-non-anno.jsonl",
        "DSCB-train-crowd-anno.jsonl",
        "DSCB-train-expert.jsonl",
        "DSCB-train-silver.jsonl",
    ]
    keys = set().union(*(r.keys() for p in FILES for r in lines(p)))
    assert {"id", "qid", "dataset", "question", "gold_answer", "student_model", "student_prompt"} <= keys
    assert {"student_llm_options", "student_answer", "student_accuracy", "student_explanation"} <= keys
    assert {"student_raw_output", "critiques", "explanation_annotations", "annotation_batch"} <= keys
    critique_keys = set().union(*(c.keys() for p in FILES for r in lines(p) for c in r["critiques"]))
    assert {"critique_model", "critique_llm_options", "critique_text", "critique_elements"} <= critique_keys
    assert {"critique_annotations", "edited_by"} <= critique_keys  # an unknown field at critique level


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_fixture_record_reads_and_comes_back_equal(path):
    records = list(read_dscb(path))
    assert [r.line for r in records] == list(range(1, len(lines(path)) + 1))
    samples: dict = {}
    for record in records:
        sample = samples.setdefault(record.key, sample_for(record.data))
        assert round_trip(record.data, sample) == record.data


def test_looks_like_dscb(tmp_path):
    assert all(looks_like_dscb(p) for p in FILES)
    assert not looks_like_dscb(FIXTURES / "datasets" / "gsm8k" / "test.jsonl")
    assert not looks_like_dscb(FIXTURES / "thoughtsource" / "edge_cases.json")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    assert not looks_like_dscb(tmp_path / "empty.jsonl")
    assert not looks_like_dscb(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    ("question", "stem", "choices"),
    [
        (
            "Which process? (A) a change in phase (B) thermal expansion (C) condensation",
            "Which process?",
            ["a change in phase", "thermal expansion", "condensation"],
        ),
        ("Quelle planète ? (A) Vénus (B) Mercure", "Quelle planète ?", ["Vénus", "Mercure"]),
        # Letters in parentheses in the stem stay there: the run that closes the question wins.
        (
            "Gene (B) and gene (A) differ how? (A) size (B) shape",
            "Gene (B) and gene (A) differ how?",
            ["size", "shape"],
        ),
        ("Compare (A) and (B). (A) same (B) different", "Compare (A) and (B).", ["same", "different"]),
        ("No choices here", None, None),
        ("Only one (A) choice", None, None),
    ],
)
def test_split_choices(question, stem, choices):
    parsed = split_choices(question)
    assert parsed == (None if stem is None else (stem, choices))


def test_sample_maps_the_gold_letter_and_keeps_the_original_text():
    record = lines(DSCB / "DSCB-train-silver.jsonl")[0]
    sample = sample_for(record)
    assert sample.id == "Mercury_7175875" and sample.type == "multiplechoice"
    assert sample.choices == ["a change in phase", "thermal expansion", "condensation", "evaporation"]
    assert sample.answer == ["thermal expansion"]
    assert sample.question.endswith("Which process explains this?")
    assert sample.extra == {"dscb": {"question": record["question"], "gold_answer": "B"}}
    unparsed = sample_for({**record, "question": "Free text, no choices", "gold_answer": "Q"})
    assert unparsed.question == "Free text, no choices" and unparsed.choices == [] and unparsed.answer == []


def test_cot_carries_model_prompt_options_answer_and_correctness():
    record = lines(DSCB / "DSCB-train-silver.jsonl")[1]
    cot = cot_for(record, sample_for(record), 2)
    assert cot.id == record["id"] and cot.cot == record["student_explanation"]
    assert cot.cot_trigger == "QA_reasoning_step1"
    assert cot.model == model_repr("Llama-2-7b-Chat", max_new_tokens=512, do_sample=False)
    assert [(a.answer, a.correct_answer) for a in cot.answers] == [("A", False)]
    # "Explanation: <explanation>\nAnswer: (A)": rebuilt from the CoT and its answer, not kept twice.
    assert "raw_output" not in cot.extra["dscb"] and cot.extra["dscb"]["raw_output_label"] == "Explanation"
    assert raw_output_of(cot.extra["dscb"], cot) == record["student_raw_output"]
    assert cot.extra["dscb"]["llm_options"] == record["student_llm_options"] and cot.extra["dscb"]["line"] == 2


@pytest.mark.parametrize(
    ("raw", "derived"),
    [
        ("Reasoning: {e}\nAnswer: ({a})", True),
        ("Explanation: {e}\nAnswer: ({a}) ", False),  # a trailing space
        ("Explanation: {e}\n\nAnswer: ({a})", False),
        ("explanation: {e}\nAnswer: ({a})", False),
        ("Explanation: {e}\nAnswer: {a}", False),
        ("{e}", False),
    ],
)
def test_a_raw_output_is_kept_unless_it_is_exactly_the_usual_layout(raw, derived):
    record = lines(DSCB / "DSCB-train-silver.jsonl")[1]
    record["student_raw_output"] = raw.format(e=record["student_explanation"], a=record["student_answer"])
    cot = cot_for(record, sample_for(record), 2)
    assert ("raw_output" not in cot.extra["dscb"]) is derived
    assert round_trip(record) == record


def test_critiques_and_annotations_become_rows():
    record = lines(DSCB / "DSCB-train-crowd-anno.jsonl")[1]
    critiques = critiques_for(record)
    assert [c.critique_model for c in critiques] == ["gpt-4-0613", "gpt-3.5-turbo-0613"]
    first, second = critiques
    assert first.source == "import" and first.elements == record["critiques"][0]["critique_elements"]
    assert first.parsed.dimension == "incorrect_information" and first.parsed.explanation_score == 1.0
    assert [(r.author, r.score, r.extra) for r in first.ratings] == [("W3", 3, {"seconds_spent": 41})]
    # "Incorrect information" and a score written as text are read, the elements kept as they were.
    assert second.parsed.dimension == "incorrect_information" and second.parsed.explanation_score == 2.0
    assert second.elements is not None and second.elements["explanation_score"] == "2"
    assert second.ratings == []
    ratings = explanation_ratings_for(record)
    assert [(r.author, r.score, r.dimensions, r.extra) for r in ratings] == [("W3", 0, (), {"confidence": "high"})]


def test_elements_parsed_without_the_text():
    none = parsed_from_elements(
        {
            "main_flaw": "None",
            "dimension": "None",
            "general_feedback": "ok",
            "specific_feedback": "ok",
            "explanation_score": 5,
        }
    )
    assert none.main_flaw is None and none.outcome("main_flaw").status == "parsed"
    assert none.outcome("main_flaw").raw == "None" and none.dimension is None and none.explanation_score == 5.0
    odd = parsed_from_elements({"main_flaw": "x", "dimension": "vibes", "explanation_score": 7})
    assert odd.outcome("dimension").status == "unparseable" and odd.outcome("explanation_score").status == "unparseable"
    assert odd.outcome("general_feedback").status == "missing" and odd.explanation_score is None
    # Without elements the text is parsed.
    record = lines(DSCB / "DSCB-dev-non-anno.jsonl")[2]
    (critique,) = critiques_for(record)
    assert critique.elements is None and critique.parsed == parse_critique("Explanation score: 4")


def write(tmp_path: Path, *records) -> Path:
    path = tmp_path / "DSCB-bad.jsonl"
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records) + "\n",
        encoding="utf-8",
    )
    return path


GOOD = lines(DSCB / "DSCB-dev-crowd-anno.jsonl")[0]


def changed(path: str, value) -> dict:
    record = json.loads(json.dumps(GOOD))
    target = record
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if key.isdigit() else target[key]
    last: int | str = int(keys[-1]) if keys[-1].isdigit() else keys[-1]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return record


@pytest.mark.parametrize(
    ("bad", "field", "message"),
    [
        ('{"id": "x", "qid": ', None, "invalid JSON"),
        ("[1, 2]", None, "must be a JSON object, not a list"),
        (changed("qid", KeyError), "field qid", "is missing"),
        (changed("gold_answer", 2), "field gold_answer", "must be text, not a number"),
        (changed("critiques", {"a": 1}), "field critiques", "must be a list, not an object"),
        (changed("critiques.1", "text"), "field critiques[1]", "must be an object, not text"),
        (
            changed("critiques.0.critique_elements.explanation_score", "high"),
            "field critiques[0].critique_elements.explanation_score",
            "must be a number, not the text 'high'",
        ),
        (
            changed("critiques.2.critique_annotations.0.critique_score", 7),
            "field critiques[2].critique_annotations[0].critique_score",
            "must be a whole number 0-3",
        ),
        (
            changed("explanation_annotations.0.dimensions", "incorrect_information"),
            "field explanation_annotations[0].dimensions",
            "must be a list, not text",
        ),
        (changed("student_accuracy", "yes"), "field student_accuracy", "must be 1, 0 or null"),
        (changed("student_llm_options", [1]), "field student_llm_options", "must be an object or null"),
    ],
)
def test_bad_records_name_file_line_and_field(tmp_path, bad, field, message):
    path = write(tmp_path, GOOD, GOOD, bad)
    with pytest.raises(DataFileError) as raised:
        list(read_dscb(path))
    text = str(raised.value)
    assert text.startswith(f"{path}, line 3: ") and "\n" not in text
    assert message in text
    if field:
        assert field in text


def test_skip_mode_collects_bad_records_and_goes_on(tmp_path):
    path = write(tmp_path, GOOD, "not json", changed("qid", KeyError), "", GOOD)
    errors: list[DataFileError] = []
    records = list(read_dscb(path, on_error="skip", errors=errors))
    assert [r.line for r in records] == [1, 5]
    assert [e.line for e in errors] == [2, 3]


def test_a_thoughtdesk_cot_exports_in_the_same_shape():
    sample = Sample(id="q1", question="2+2?", choices=["3", "4"], answer=["4"])
    cot = GeneratedCot(
        id="td-1-2",
        cot="Two and two make four.",
        cot_trigger="kojima-01",
        model=model_repr("gemma-3-270m", temperature=0.0, max_tokens=256),
        answers=[Answer(answer="B", correct_answer=True)],
    )
    parsed = parse_critique(
        'The explanation states or suggests the following:\n * Main flaw (standalone statement): "None"\n'
        " * Dimension: None\n\nConsider these points for revising the explanation:\n * General: Fine\n"
        " * Specific: Fine\n\nExplanation score: 5"
    )
    critique = Critique(
        cot_pk=1, critique_model="DS-7B", raw_text="...", parsed=parsed, ratings=[CritiqueRating("ana", 2)]
    )
    record = record_from("toy", sample, cot, [critique], [ExplanationRating("ana", 5, ("irrelevant",))])
    assert record == {
        "id": "td-1-2",
        "qid": "q1",
        "dataset": "toy",
        "question": "2+2? (A) 3 (B) 4",
        "gold_answer": "B",
        "student_model": "gemma-3-270m",
        "student_prompt": "kojima-01",
        "student_llm_options": {"temperature": 0.0, "max_tokens": 256},
        "student_answer": "B",
        "student_accuracy": 1,
        "student_explanation": "Two and two make four.",
        "student_raw_output": "Two and two make four.",
        "critiques": [
            {
                "critique_model": "DS-7B",
                "critique_llm_options": {},
                "critique_text": "...",
                "critique_elements": {
                    "main_flaw": "None",
                    "dimension": None,
                    "general_feedback": "Fine",
                    "specific_feedback": "Fine",
                    "explanation_score": 5.0,
                },
                "critique_annotations": [{"critique_score": 2, "worker": "ana"}],
            }
        ],
        "explanation_annotations": [{"explanation_score": 5, "dimensions": ["irrelevant"], "worker": "ana"}],
    }


# Generated records ------------------------------------------------------------------------------

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
_json_scalar = st.none() | st.booleans() | st.integers(-1000, 1000) | _text
_json = st.recursive(
    _json_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=6
)
_unknown = st.dictionaries(_text.map(lambda k: "x_" + k), _json, max_size=2)


def _maybe(draw, record: dict, key: str, strategy) -> None:
    choice = draw(st.integers(0, 2))
    if choice == 1:
        record[key] = draw(strategy)
    elif choice == 2:
        record[key] = None


@st.composite
def dscb_records(draw) -> dict:
    letters = draw(st.integers(0, 5))
    choices = [draw(_text.filter(lambda t: "(" not in t)) for _ in range(letters)]
    question = draw(_text) + "".join(f" ({chr(65 + i)}) {c}" for i, c in enumerate(choices))
    record: dict = {
        "id": draw(_text),
        "qid": draw(_text),
        "dataset": draw(_text),
        "question": question,
        "gold_answer": draw(st.sampled_from(["A", "B", "C", "Z", "", "(B)"])),
        "student_model": draw(_text),
    }
    _maybe(draw, record, "student_prompt", _text)
    _maybe(draw, record, "student_llm_options", st.dictionaries(_text, _json, max_size=3))
    _maybe(draw, record, "student_answer", _text)
    _maybe(draw, record, "student_accuracy", st.sampled_from([0, 1, 0.5, 1.0, True]))
    _maybe(draw, record, "student_explanation", _text)
    _maybe(draw, record, "student_raw_output", _text)
    if draw(st.booleans()):  # the usual raw output (rebuilt from explanation and answer), or nearly
        label = draw(st.sampled_from(["Explanation", "Reasoning", "Answer"]))
        explanation, answer = record.get("student_explanation"), record.get("student_answer")
        tail = draw(st.sampled_from(["", " "]))
        record["student_raw_output"] = f"{label}: {explanation}\nAnswer: ({answer}){tail}"
    critiques = []
    for _ in range(draw(st.integers(0, 3))):
        c: dict = {"critique_model": draw(_text)}
        _maybe(draw, c, "critique_llm_options", st.dictionaries(_text, _json, max_size=2))
        _maybe(draw, c, "critique_text", _text)
        elements_choice = draw(st.integers(0, 2))
        if elements_choice:
            elements: dict = {}
            for key in ("main_flaw", "dimension", "general_feedback", "specific_feedback"):
                _maybe(draw, elements, key, st.sampled_from(["None", "incorrect_reasoning", "Irrelevant"]) | _text)
            _maybe(draw, elements, "explanation_score", st.integers(-2, 8) | st.sampled_from(["3", "2/5", 4.5]))
            elements.update(draw(_unknown))
            c["critique_elements"] = elements if elements_choice == 1 else None
        _maybe(
            draw,
            c,
            "critique_annotations",
            st.lists(
                st.fixed_dictionaries(
                    {"critique_score": st.none() | st.integers(0, 3) | st.just(2.0), "worker": st.none() | _text},
                    optional={"x_time": st.integers(0, 99)},
                ),
                max_size=3,
            ),
        )
        if isinstance(c.get("critique_elements"), dict) and draw(st.booleans()):
            # The text the DS models write for these elements (stored once: rebuilt from them), or nearly.
            bullet = draw(st.sampled_from([" * ", "* ", "- "]))
            text = ds_layout_text({"explanation_score": None, **c["critique_elements"]}, bullet)
            if text is not None:
                c["critique_text"] = text + draw(st.sampled_from(["", "\n"]))
        c.update(draw(_unknown))
        critiques.append(c)
    choice = draw(st.integers(0, 2))
    if choice:
        record["critiques"] = critiques if choice == 1 else None
    _maybe(
        draw,
        record,
        "explanation_annotations",
        st.lists(
            st.fixed_dictionaries(
                {
                    "explanation_score": st.none() | st.integers(0, 5),
                    "dimensions": st.none() | st.lists(_text, max_size=3),
                    "worker": _text,
                },
                optional={"x_note": _json},
            ),
            max_size=3,
        ),
    )
    record.update(draw(_unknown))
    return record


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dscb_records())
def test_generated_records_come_back_equal(record):
    # Through a JSON line first, as a file would carry it, and validated as the reader does.
    from thoughtdesk.core.critiques.dscb import validate_record

    data = validate_record(json.loads(json.dumps(record)), None, 1)
    assert round_trip(data) == data


def test_model_field_keeps_each_records_options():
    record = lines(DSCB / "DSCB-train-silver.jsonl")[0]
    sample = sample_for(record)
    models = [
        cot_for({**record, "student_llm_options": options}, sample).model
        for options in ({"temperature": 0}, {"temperature": 0.0}, {"temperature": False}, {"stop": ["\n"]}, {}, None)
    ]
    assert models == [
        "{'name': 'gpt-4-0613', 'temperature': 0}",
        "{'name': 'gpt-4-0613', 'temperature': 0.0}",
        "{'name': 'gpt-4-0613', 'temperature': False}",
        "{'name': 'gpt-4-0613', 'stop': ['\\n']}",
        "gpt-4-0613",
        "gpt-4-0613",
    ]


def test_looks_like_dscb_reads_only_the_start_of_a_one_line_file(tmp_path):
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"x": {"y": ["a" * 100 for _ in range(30000)]}}))  # 3 MB, one line
    assert not looks_like_dscb(big)
    padded = tmp_path / "padded.jsonl"
    padded.write_text("\n\n" + json.dumps(GOOD) + "\n")
    assert looks_like_dscb(padded)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from tests.helpers.libraries import demo_library
    from thoughtdesk.core.library.store import Library

    with Library.open(demo_library(tmp_path_factory.mktemp("queue") / "lib.sqlite")) as lib:
        yield lib


class _RolledBack(Exception):
    pass


def _stored_rows(lib, write) -> list[list[tuple]]:
    """The critique and rating rows ``write(conn)`` stores, read back; then rolled back."""
    tables = ("critique", "critique_rating", "explanation_rating")
    rows: list[list[tuple]] = []
    with pytest.raises(_RolledBack), lib.transaction() as conn:
        before = [conn.execute(f"SELECT max(id) FROM {t}").fetchone()[0] or 0 for t in tables]
        write(conn)
        rows = [
            conn.execute(f"SELECT * FROM {t} WHERE id > ? ORDER BY id", (b,)).fetchall()
            for t, b in zip(tables, before, strict=True)
        ]
        raise _RolledBack
    return rows


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(record=dscb_records())
def test_rows_queued_from_a_record_are_the_rows_add_imported_stores_for_it(demo, monkeypatch, record):
    # The import queues rows straight from the file's objects (no Critique objects): they must be
    # exactly what add_imported stores for critiques_for and explanation_ratings_for.
    from thoughtdesk.core.critiques import add_imported, store
    from thoughtdesk.core.critiques.dscb import validate_record
    from thoughtdesk.core.critiques.dscb_mapping import queue_rows
    from thoughtdesk.core.critiques.store import ImportedRows

    monkeypatch.setattr(store, "now_iso", lambda: "2026-11-25T00:00:00Z")
    data = validate_record(json.loads(json.dumps(record)), None, 1)
    cot = demo.conn.execute("SELECT min(id) FROM generated_cot").fetchone()[0]

    def objects(conn) -> None:
        critiques = critiques_for(data)
        for critique in critiques:
            critique.cot_pk = cot
        add_imported(conn, critiques, [(cot, rating) for rating in explanation_ratings_for(data)])

    def queued(conn) -> None:
        rows = ImportedRows(conn)
        queue_rows(rows, cot, data)
        rows.write()

    assert _stored_rows(demo, queued) == _stored_rows(demo, objects)
