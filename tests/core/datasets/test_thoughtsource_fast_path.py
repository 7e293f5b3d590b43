"""ThoughtSource reading has two paths: a sample with exactly ThoughtSource's keys and types is
decoded by msgspec into strict structs (fast), anything else is read field by field (careful:
keeps extra keys, notes missing ones, names the field that is wrong). The fast path must be
taken where it is meant to be and must read what the careful path reads.

Switched off, the fast path only makes reading slower, so the tests make the other path
unavailable (:func:`only_fast_path`, :func:`only_careful_path`) and compare.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.paths import SHARED
from thoughtdesk.core.datasets import thoughtsource
from thoughtdesk.core.datasets.thoughtsource import ThoughtSourceFile
from thoughtdesk.core.library.records import ANNOTATION_KEYS, ANSWER_KEYS, COT_KEYS, SAMPLE_KEYS, Sample
from thoughtdesk.core.paths import resource_path

DEMO = resource_path("demo_collection.json")


@contextmanager
def only_fast_path() -> Iterator[None]:
    """Within: reaching the careful path fails the test."""

    def careful(obj, path, where):
        raise AssertionError(f"the careful path ran for {where}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(thoughtsource, "sample_from_json", careful)
        yield


@contextmanager
def only_careful_path() -> Iterator[None]:
    """Within: the strict decoder refuses every sample, as it does an unusual one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(thoughtsource, "STRICT_DECODER", msgspec.json.Decoder(int))
        yield


def read(path: Path) -> list[tuple[str, str, int, Sample]]:
    return [(r.dataset, r.split, r.index, r.sample) for r in ThoughtSourceFile(path).records()]


def both_paths(path: Path) -> tuple[list, list]:
    with only_fast_path():
        fast = read(path)
    with only_careful_path():
        careful = read(path)
    return fast, careful


def in_order(record: dict, keys: tuple[str, ...]) -> dict:
    """The keys in ThoughtSource's order, as its files have them."""
    return {key: record[key] for key in keys}


# Values of the types ThoughtSource allows, odd ones included (null, unicode, nested JSON).
TEXT = st.text(max_size=12)
MAYBE_TEXT = st.none() | TEXT
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
ANSWER = st.fixed_dictionaries(
    {
        "id": MAYBE_TEXT,
        "answer_extraction": MAYBE_TEXT,
        "answer_extraction_template": MAYBE_TEXT,
        "answer_extraction_text": MAYBE_TEXT,
        "answer": MAYBE_TEXT,
        "correct_answer": st.none() | st.booleans(),
    }
).map(lambda d: in_order(d, ANSWER_KEYS))
ANNOTATION = st.fixed_dictionaries({"author": MAYBE_TEXT, "date": MAYBE_TEXT, "key": TEXT, "value": JSON}).map(
    lambda d: in_order(d, ANNOTATION_KEYS)
)
COT = st.fixed_dictionaries(
    {
        **{key: MAYBE_TEXT for key in COT_KEYS if key not in ("answers", "annotations")},
        "answers": st.lists(ANSWER, max_size=2),
        "annotations": st.lists(ANNOTATION, max_size=2),
    }
).map(lambda d: in_order(d, COT_KEYS))
SAMPLE = st.fixed_dictionaries(
    {
        "id": TEXT,
        "ref_id": MAYBE_TEXT,
        "question": TEXT,
        "type": st.none() | st.sampled_from(["multiplechoice", "bool", "number", "text", "collection"]),
        "choices": st.none() | st.lists(JSON, max_size=3),
        "context": MAYBE_TEXT,
        "cot": st.none() | st.lists(JSON, max_size=3),
        "answer": st.none() | st.lists(JSON, max_size=2),
        "generated_cot": st.lists(COT, max_size=2),
        "feedback": JSON,
    }
).map(lambda d: in_order(d, SAMPLE_KEYS))


@settings(max_examples=20, deadline=None)
@given(SAMPLE)
def test_the_strategies_write_exactly_thoughtsources_keys(sample):
    assert tuple(sample) == SAMPLE_KEYS
    for cot in sample["generated_cot"]:
        assert tuple(cot) == COT_KEYS
        assert all(tuple(a) == ANSWER_KEYS for a in cot["answers"])
        assert all(tuple(n) == ANNOTATION_KEYS for n in cot["annotations"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(SAMPLE, min_size=1, max_size=3))
def test_exact_samples_take_the_fast_path_and_read_as_the_careful_path(tmp_path, samples):
    path = tmp_path / "collection.json"
    path.write_text(json.dumps({"med_qa": {"test": samples}}), encoding="utf-8")
    fast, careful = both_paths(path)
    assert fast == careful
    assert [s.missing for *_, s in fast] == [()] * len(samples)


def test_the_demo_collection_takes_the_fast_path_throughout():
    fast, careful = both_paths(DEMO)
    assert len(fast) == 16 and fast == careful


@pytest.mark.shared
@pytest.mark.parametrize("name", ["thoughtsource_67_openai_chat_gpt-3.5-turbo_None_None-kojima-01-zhou-01.json"])
def test_a_real_collection_reads_the_same_on_both_paths(shared, name):
    # On a real file some samples go each way; whichever way, the result is the same.
    fast_or_not = read(shared("thoughtsource", name))
    with only_careful_path():
        careful = read(SHARED / "thoughtsource" / name)
    assert fast_or_not == careful and len(careful) > 100


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.update(subsetType="x"),  # a key of another tool
        lambda s: s.pop("ref_id"),  # an older file
        lambda s: s["generated_cot"][0]["answers"][0].update(sentences=[]),
        lambda s: s["generated_cot"][0].pop("cot_trigger_template"),
        lambda s: s.update(generated_cot=None),  # an error the careful path names
    ],
)
def test_unusual_samples_take_the_careful_path(tmp_path, change):
    sample = json.loads(DEMO.read_text(encoding="utf-8"))["med_qa"]["test"][0]
    change(sample)
    path = tmp_path / "collection.json"
    path.write_text(json.dumps({"med_qa": {"test": [sample]}}), encoding="utf-8")
    with only_fast_path(), pytest.raises(AssertionError, match="the careful path ran for dataset med_qa"):
        read(path)
