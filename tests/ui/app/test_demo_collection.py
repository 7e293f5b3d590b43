"""Shape checks for the embedded demo collection (resources/demo_collection.json).

Plain ``json`` only: these tests pin down the ThoughtSource shape the first-start demo must
have, independently of the importer (import round-trip tests live with the importer).
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from tests.helpers.paths import ROOT

DEMO_PATH = ROOT / "resources" / "demo_collection.json"

SAMPLE_KEYS = {"id", "ref_id", "question", "type", "choices", "context", "cot", "answer", "generated_cot", "feedback"}
GENERATED_COT_KEYS = {
    "id",
    "fragments_version",
    "instruction",
    "cot_trigger",
    "cot_trigger_template",
    "prompt_text",
    "cot",
    "answers",
    "author",
    "date",
    "api_service",
    "model",
    "comment",
    "annotations",
}
ANSWER_KEYS = {
    "id",
    "answer_extraction",
    "answer_extraction_template",
    "answer_extraction_text",
    "answer",
    "correct_answer",
}
ANNOTATION_KEYS = {"author", "date", "key", "value"}
# Which demo datasets belong to which domain the demo is meant to show.
DOMAIN_OF_DATASET = {"gsm8k": "math", "med_qa": "medicine", "pubmed_qa": "medicine", "commonsense_qa": "common sense"}
FLAG_LABELS = {"Incorrect reasoning", "Insufficient knowledge", "Incorrect reading comprehension", "Too verbose"}


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    with DEMO_PATH.open(encoding="utf-8") as handle:
        return json.load(handle)


def _samples(demo: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (dataset, split, sample)
        for dataset, splits in demo.items()
        for split, samples in splits.items()
        for sample in samples
    ]


def _generated(demo: dict[str, Any]) -> list[dict[str, Any]]:
    return [cot for _, _, sample in _samples(demo) for cot in sample["generated_cot"]]


def _annotations(demo: dict[str, Any]) -> list[dict[str, Any]]:
    return [annotation for cot in _generated(demo) for annotation in cot["annotations"]]


def test_collection_has_enough_samples_in_three_domains(demo):
    samples = _samples(demo)
    assert len(samples) >= 12
    domains = {DOMAIN_OF_DATASET[dataset] for dataset, _, _ in samples}
    assert domains == {"math", "medicine", "common sense"}


def test_every_record_has_every_thoughtsource_key(demo):
    for dataset, split, sample in _samples(demo):
        where = f"{dataset}/{split}/{sample['id']}"
        assert set(sample) == SAMPLE_KEYS, where
        for cot in sample["generated_cot"]:
            assert set(cot) == GENERATED_COT_KEYS, f"{where}/{cot['id']}"
            for answer in cot["answers"]:
                assert set(answer) == ANSWER_KEYS, f"{where}/{cot['id']}"
            for annotation in cot["annotations"]:
                assert set(annotation) == ANNOTATION_KEYS, f"{where}/{cot['id']}"


def test_ids_are_unique(demo):
    sample_ids = [sample["id"] for _, _, sample in _samples(demo)]
    assert len(sample_ids) == len(set(sample_ids))
    inner_ids = [cot["id"] for cot in _generated(demo)]
    inner_ids += [answer["id"] for cot in _generated(demo) for answer in cot["answers"]]
    assert len(inner_ids) == len(set(inner_ids))


def test_every_sample_has_reference_cot_and_two_models(demo):
    for dataset, split, sample in _samples(demo):
        where = f"{dataset}/{split}/{sample['id']}"
        assert sample["cot"] and all(isinstance(step, str) and step for step in sample["cot"]), where
        assert len(sample["generated_cot"]) >= 2, where
        model_names = {ast.literal_eval(cot["model"])["name"] for cot in sample["generated_cot"]}
        assert len(model_names) >= 2, where
        services = {cot["api_service"] for cot in sample["generated_cot"]}
        assert services == {"openai_chat", "llama.cpp"}, where


def test_every_generated_cot_has_text_and_an_answer(demo):
    for cot in _generated(demo):
        assert cot["cot"].strip(), cot["id"]
        assert len(cot["answers"]) >= 1, cot["id"]
        for answer in cot["answers"]:
            assert answer["answer"].strip(), cot["id"]
            assert isinstance(answer["correct_answer"], bool), cot["id"]


def test_gold_answers_and_choice_counts(demo):
    expected_choice_count = {"med_qa": 4, "pubmed_qa": 3, "commonsense_qa": 5}
    for dataset, split, sample in _samples(demo):
        where = f"{dataset}/{split}/{sample['id']}"
        assert sample["answer"], where
        if sample["type"] == "multiplechoice":
            assert len(sample["choices"]) == expected_choice_count[dataset], where
            for gold in sample["answer"]:
                assert gold in sample["choices"], where
        else:
            assert sample["type"] == "number", where
            assert sample["choices"] == [], where
            for gold in sample["answer"]:
                float(gold)  # a numeric gold answer, kept as a string the ThoughtSource way


def test_correct_answer_flags_match_gold(demo):
    """The extracted answer must agree with correct_answer, so the demo's accuracy is honest."""
    wrong = 0
    for _, _, sample in _samples(demo):
        for cot in sample["generated_cot"]:
            for answer in cot["answers"]:
                text = answer["answer"].strip().rstrip(".")
                if sample["type"] == "number":
                    matches = float(text) == float(sample["answer"][0])
                else:
                    letter = "ABCDE"[sample["choices"].index(sample["answer"][0])]
                    matches = text == f"{letter}) {sample['answer'][0]}"
                assert matches == answer["correct_answer"], cot["id"]
                wrong += not answer["correct_answer"]
    total = len(_generated(demo))
    # Roughly a third wrong, so accuracy views and error annotations have something to show.
    assert 0.2 <= wrong / total <= 0.5


def test_annotations_use_thoughtsource_labels(demo):
    annotations = _annotations(demo)
    assert len(annotations) >= 6
    annotated_cots = [cot for cot in _generated(demo) if cot["annotations"]]
    assert len(annotated_cots) >= 4
    assert len({annotation["author"] for annotation in annotations}) >= 2
    for annotation in annotations:
        if annotation["key"] in FLAG_LABELS:
            assert annotation["value"] == "true"
        elif annotation["key"] == "comment":
            assert isinstance(annotation["value"], str) and annotation["value"]
        else:
            assert annotation["key"] == "preferred"
    preferred = [annotation for annotation in annotations if annotation["key"] == "preferred"]
    assert preferred and all(annotation["value"] is True for annotation in preferred)


def test_some_text_needs_plain_text_rendering(demo):
    """At least one text carries HTML-special characters, to exercise plain-text rendering."""
    texts = [sample["question"] + sample["context"] for _, _, sample in _samples(demo)]
    texts += [cot["cot"] for cot in _generated(demo)]
    assert any("<" in text for text in texts)
    assert any(">" in text for text in texts)
    assert any("&" in text for text in texts)
