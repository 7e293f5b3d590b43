"""Sentence alignment: CoT sentences, the score matrix, greedy groups, re-thresholding and stable ids."""

from __future__ import annotations

import random

import numpy as np
import pytest

from thoughtdesk.core.review.compare.similarity import (
    DEFAULT_THRESHOLD,
    SimilarityMatrix,
    align_sentences,
    cot_sentences,
)

COTS = [
    # CoT 0
    "The patient has fever and cough. A chest X-ray shows consolidation. The answer is B.",
    # CoT 1: paraphrases of 0's first two sentences, an unrelated one, same answer.
    "Fever and cough are present in the patient. The chest X-ray shows a consolidation. "
    "Kidneys are fine. The answer is B.",
    # CoT 2: nothing in common with the others.
    "Cats sleep a lot during daytime hours.",
]


def members_text(alignment, group) -> list[str]:
    return [alignment.sentences[c][s].text for c, s in group.members]


def test_known_inputs_group_paraphrases_and_leave_the_rest_alone() -> None:
    alignment = align_sentences(COTS, threshold=60)
    groups = sorted(members_text(alignment, g) for g in alignment.groups)
    assert groups == sorted(
        [
            ["The patient has fever and cough.", "Fever and cough are present in the patient."],
            ["A chest X-ray shows consolidation.", "The chest X-ray shows a consolidation."],
            ["The answer is B.", "The answer is B."],
        ]
    )
    # Singletons have no group id.
    assert alignment.group_of[1][2] is None  # "Kidneys are fine."
    assert alignment.group_of[2] == (None,)
    # Group ids are the flat index of the first member: CoT 0 sentences are 0, 1, 2.
    assert alignment.group_of[0] == (0, 1, 2)
    assert alignment.group_of[1] == (0, 1, None, 2)


def test_scores_are_word_set_dice_in_percent() -> None:
    matrix = SimilarityMatrix.compute(["Red apples are sweet.", "Sweet, red apples!", "Blue sky."])
    words = [{"red", "apples", "are", "sweet"}, {"sweet", "red", "apples"}, {"blue", "sky"}]
    for i, a in enumerate(words):
        for j, b in enumerate(words):
            expected = 200 * len(a & b) / (len(a) + len(b))
            assert matrix.scores[i, j] == pytest.approx(expected, abs=1e-3)


def test_reference_steps_and_generated_text_align() -> None:
    reference = ["Kittens dig their claws into carpet to stop.", "So the answer is carpet."]
    generated = "To stop, kittens dig their claws into the carpet. The answer is carpet."
    alignment = align_sentences([reference, generated], threshold=50)
    assert alignment.texts[0] == "Kittens dig their claws into carpet to stop.\nSo the answer is carpet."
    assert len(alignment.groups) == 2
    assert alignment.group_of[1] == alignment.group_of[0]


def test_a_group_never_holds_two_sentences_of_one_cot() -> None:
    # CoT 0 says the same thing twice; CoT 1 once. Only one of CoT 0's copies may join.
    cots = ["The drug lowers blood pressure. The drug lowers blood pressure.", "The drug lowers blood pressure."]
    alignment = align_sentences(cots, threshold=50)
    assert len(alignment.groups) == 1
    assert alignment.groups[0].members == ((0, 0), (1, 0))
    assert alignment.group_of[0][1] is None


def random_cots(seed: int, n_cots: int = 15, n_sentences: int = 8) -> list[str]:
    rng = random.Random(seed)
    words = "the patient has fever cough drug dose heart kidney liver answer is likely because of a".split()
    base = [" ".join(rng.choices(words, k=rng.randint(4, 10))) for _ in range(12)]

    def vary(sentence: str) -> str:
        tokens = sentence.split()
        for _ in range(rng.randint(0, 3)):
            tokens[rng.randrange(len(tokens))] = rng.choice(words)
        return " ".join(tokens).capitalize() + "."

    return [" ".join(vary(rng.choice(base)) for _ in range(n_sentences)) for _ in range(n_cots)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rethresholding_matches_a_fresh_computation_in_any_order(seed: int) -> None:
    cots = random_cots(seed)
    thresholds = [90, 40, 70, 20, 55, 100, 1, 65]
    reused = SimilarityMatrix.compute(cots)
    for threshold in thresholds:
        fresh = SimilarityMatrix.compute(cots).groups(threshold)
        assert reused.groups(threshold) == fresh


@pytest.mark.parametrize("seed", [4, 5])
def test_groups_respect_the_threshold_and_the_one_per_cot_rule(seed: int) -> None:
    cots = random_cots(seed)
    matrix = SimilarityMatrix.compute(cots)
    previous_partition = None
    for threshold in [95, 80, 60, 40, 20]:
        alignment = matrix.groups(threshold)
        partition = {}
        for group in alignment.groups:
            cot_ids = [c for c, _ in group.members]
            assert len(cot_ids) == len(set(cot_ids)), "two sentences of one CoT in a group"
            assert group.id == min(matrix.flat_index(c, s) for c, s in group.members)
            # Single linkage: every member is linked to another member at >= threshold.
            for member in group.members:
                row = matrix.scores[matrix.flat_index(*member)]
                best = max(float(row[matrix.flat_index(*other)]) for other in group.members if other != member)
                assert best >= threshold
            for member in group.members:
                partition[member] = group.id
        # Lowering the threshold only merges groups, never splits them (ids can only get smaller).
        if previous_partition is not None:
            for member, group_id in previous_partition.items():
                assert partition[member] <= group_id
                others = [m for m, g in previous_partition.items() if g == group_id]
                assert len({partition[m] for m in others}) == 1
        previous_partition = partition


def test_unrelated_pairs_are_not_grouped_even_at_threshold_zero() -> None:
    alignment = align_sentences(["Alpha beta.", "Gamma delta."], threshold=0)
    assert alignment.groups == ()


def test_empty_and_wordless_input() -> None:
    alignment = align_sentences(["", "...", "2)", "?"], threshold=50)
    assert alignment.groups == ()
    assert align_sentences([], threshold=50).groups == ()
    matrix = SimilarityMatrix.compute(["... !!!", "... !!!"])
    assert np.all(matrix.scores == 0)


@pytest.mark.parametrize("threshold", [-1, 100.5, float("nan")])
def test_threshold_out_of_range_is_refused(threshold: float) -> None:
    with pytest.raises(ValueError, match="threshold"):
        align_sentences(COTS, threshold)


def test_a_single_string_is_not_a_list_of_cots() -> None:
    with pytest.raises(TypeError, match="list of CoTs"):
        SimilarityMatrix.compute("just one text")  # a str (a sequence of str to the type checker), on purpose


def test_default_threshold_is_a_percentage() -> None:
    assert 0 < DEFAULT_THRESHOLD < 100
    assert align_sentences(COTS).threshold == DEFAULT_THRESHOLD


def test_real_thoughtsource_cots_align(shared) -> None:
    import json

    path = shared("thoughtsource", "thoughtsource_67_openai_chat_gpt-3.5-turbo_None_None-kojima-01-zhou-01.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    sample = data["med_qa"]["test"][0]
    cots = [sample["cot"]] + [g["cot"] for g in sample["generated_cot"]]
    alignment = align_sentences(cots, threshold=50)
    for cot, spans in enumerate(alignment.sentences):
        for span in spans:
            assert alignment.texts[cot][span.start : span.end] == span.text
    for group in alignment.groups:
        assert len({c for c, _ in group.members}) == len(group.members)


def test_a_generated_cot_is_split_into_sentences() -> None:
    text, spans = cot_sentences("Give 5 mg. Then wait 2 min.\nCheck the pulse.")
    assert text == "Give 5 mg. Then wait 2 min.\nCheck the pulse."
    assert [s.text for s in spans] == ["Give 5 mg.", "Then wait 2 min.", "Check the pulse."]


def test_reference_steps_stay_whole_and_map_into_joined_text() -> None:
    steps = ["Kittens need grip. They use claws.", "  Carpet gives grip ", "", "So carpet."]
    text, spans = cot_sentences(steps)
    assert text == "Kittens need grip. They use claws.\n  Carpet gives grip \n\nSo carpet."
    assert [s.text for s in spans] == ["Kittens need grip. They use claws.", "Carpet gives grip", "So carpet."]
    assert all(text[s.start : s.end] == s.text for s in spans)


def test_bad_cot_types_are_named() -> None:
    with pytest.raises(TypeError, match="step 1"):
        cot_sentences(["fine", 3])  # type: ignore[list-item]  # the point: a wrong step type is refused by name
    with pytest.raises(TypeError, match="list of CoTs"):
        SimilarityMatrix.compute("one string")
