"""Dataset statistics against hand-computed small collections in a real library file: counts,
answer types, choice counts, token lengths, n-gram overlap of known duplicates, the JSON shape,
cancelling, and the hashed overlap equal to plain Python sets."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from thoughtdesk.core.errors import Cancelled, ThoughtDeskError
from thoughtdesk.core.importing.importer import import_records
from thoughtdesk.core.library.records import GeneratedCot, Sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.stats import NgramHasher, NgramSet, collection_statistics, shared_counts, token_count, tokens
from thoughtdesk.core.stats import overlap as overlap_module


def store(path, records, collection="c"):
    with Library.open(path) as lib:
        import_records(lib, [(d, s, sample, "") for d, s, sample in records], collection=collection)
    return path


@pytest.fixture
def small(tmp_path):
    """Two datasets; token counts by hand: each question's words are listed in its comment."""
    records = [
        # "What is 2 + 3?" -> what, is, 2, 3: 4 tokens; reference: 2 + 3 = 5 -> 3 tokens
        ("math", "test", Sample(id="1", question="What is 2 + 3?", type="number", choices=None, cot=["2 + 3 = 5."])),
        # 6 tokens; two reference steps joined: "Add them." + "It's 10." -> add, them, it, s, 10 = 5
        (
            "math",
            "test",
            Sample(
                id="2",
                question="Tom has 4 apples, gets 6",
                type="number",
                choices=None,
                cot=["Add them.", "It's 10."],
                generated_cot=[GeneratedCot(cot="four plus six"), GeneratedCot(cot="ten")],
            ),
        ),
        ("math", "train", Sample(id="3", question="One two three", type="number", choices=None, cot=[])),
        (
            "med",
            "test",
            Sample(
                id="a",
                question="Which drug treats angina?",
                type="multiplechoice",
                choices=["nitrate", "aspirin", "insulin", "none"],
                context="A patient with chest pain.",
                cot=[],
            ),
        ),
        (
            "med",
            "test",
            Sample(id="b", question="Pick one", type="multiplechoice", choices=["yes", "no", "maybe"], cot=[]),
        ),
        ("med", "test", Sample(id="c", question="", type=None, choices=None, cot=[])),
    ]
    return store(tmp_path / "lib.thoughtdesk", records)


def test_tokens_are_casefolded_words_without_punctuation():
    assert tokens("Let's say 3.5 mg/kg.") == ["let", "s", "say", "3", "5", "mg", "kg"]
    assert tokens("ÄRZTIN überweist") == ["ärztin", "überweist"]
    assert token_count("Let's say 3.5 mg/kg.") == 7 and token_count(None) == 0 and token_count("?!") == 0


def test_counts_types_choices_and_lengths_by_hand(small):
    with Library.open(small, create=False) as lib:
        stats = collection_statistics(lib, "c")
    by = {(s.dataset, s.split): s for s in stats.splits}
    assert list(by) == [("math", "test"), ("math", "train"), ("med", "test")]
    math = by[("math", "test")]
    assert (math.samples, math.generated_cots, math.with_reference_cot, math.with_generated_cot) == (2, 2, 2, 1)
    assert math.answer_types == {"number": 2} and math.choice_counts == {0: 2}
    q = math.lengths["question"]
    assert (q.count, q.minimum, q.maximum, q.mean, q.percentiles[50]) == (2, 4, 6, 5.0, 5.0)
    r = math.lengths["reference_cot"]
    assert (r.count, r.minimum, r.maximum) == (2, 3, 5)
    g = math.lengths["generated_cot"]
    assert (g.count, g.minimum, g.maximum, g.mean) == (2, 1, 3, 2.0)
    assert math.lengths["context"].count == 0
    med = by[("med", "test")]
    assert med.answer_types == {"multiplechoice": 2, "": 1}
    assert med.choice_counts == {4: 1, 3: 1, 0: 1}
    assert med.with_context == 1 and med.lengths["context"].maximum == 5  # a, patient, with, chest, pain
    assert med.lengths["question"].count == 2  # the empty question is not a length-0 text
    assert med.lengths["question"].percentiles[25] == pytest.approx(2.5)  # lengths 2 and 4, linear


def test_overlap_of_known_duplicates(tmp_path):
    shared = "the patient reports crushing chest pain radiating to the left arm since this morning"
    rng = random.Random(5)
    words = [f"w{i}" for i in range(400)]

    def fresh() -> str:
        return " ".join(rng.choices(words, k=20))

    records = []
    for i in range(10):
        records.append(("a", "test", Sample(id=str(i), question=fresh(), cot=[fresh()])))
        records.append(("b", "test", Sample(id=str(i), question=fresh(), cot=[fresh()])))
        records.append(("c", "test", Sample(id=str(i), question=fresh(), cot=[fresh()])))
    # One question of a appears in b, with other case and punctuation: the normalisation matches it.
    records.append(("a", "test", Sample(id="dup", question=shared, cot=[])))
    records.append(("b", "train", Sample(id="dup", question=shared.upper().replace(" to ", ", to... "), cot=[])))
    path = store(tmp_path / "lib.thoughtdesk", records)
    with Library.open(path, create=False) as lib:
        stats = collection_statistics(lib, "c", overlap=True, n=8)
        by_split = collection_statistics(lib, "c", overlap=True, n=8, overlap_by="split")
    question, cot = stats.overlap
    assert (question.field, cot.field, question.n) == ("question", "reference_cot", 8)
    assert question.units == ["a", "b", "c"]
    ngrams_of_shared = len(tokens(shared)) - 8 + 1
    assert question.shared[0][1] == question.shared[1][0] == ngrams_of_shared
    assert question.sizes[0] == 10 * (20 - 8 + 1) + ngrams_of_shared  # random 8-grams of 400 words: distinct
    assert question.shared[0][2] == question.shared[1][2] == 0
    assert question.containment[0][1] == pytest.approx(ngrams_of_shared / question.sizes[0])
    union = question.sizes[0] + question.sizes[1] - ngrams_of_shared
    assert question.jaccard[0][1] == pytest.approx(ngrams_of_shared / union)
    assert question.containment[0][0] == 1.0
    assert all(cot.shared[i][j] == 0 for i in range(3) for j in range(3) if i != j)
    units = by_split.overlap[0].units
    assert units == ["a/test", "b/test", "c/test", "b/train"]  # first-stored order
    assert by_split.overlap[0].shared[0][3] == ngrams_of_shared and by_split.overlap[0].shared[0][1] == 0


def test_short_texts_count_as_one_ngram_of_their_own_length():
    hasher = NgramHasher(5)
    a = np.unique(hasher.hashes(["Chest pain?", "one two three four five six"]))
    b = np.unique(hasher.hashes(["chest, PAIN", "pain chest"]))
    assert len(a) == 3  # the short question, and the long one's 2 five-grams
    assert shared_counts([a, b])[0][1] == 1  # word order matters, case and punctuation do not


def test_hashed_counts_equal_python_sets():
    rng = random.Random(11)
    words = [f"t{i}" for i in range(30)]
    units = [[" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(200)] for _ in range(5)]
    n = 3
    exact = []
    for texts in units:
        grams = set()
        for text in texts:
            toks = tokens(text)
            grams |= {tuple(toks)} if len(toks) < n else {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}
        exact.append(grams)
    hasher = NgramHasher(n)
    arrays = []
    for texts in units:
        s = NgramSet()
        for start in range(0, 200, 37):  # batches, as the library pass feeds them
            s.add(hasher.hashes(texts[start : start + 37]))
        arrays.append(s.array())
    assert shared_counts(arrays) == [[len(a & b) for b in exact] for a in exact]


def test_pairwise_fallback_beyond_62_units_agrees(monkeypatch):
    rng = np.random.default_rng(3)
    arrays = [np.unique(rng.integers(0, 300, 100).astype(np.uint64)) for _ in range(64)]
    fast = shared_counts(arrays[:10])
    assert fast == [[len(np.intersect1d(a, b)) for b in arrays[:10]] for a in arrays[:10]]
    slow = shared_counts(arrays)
    assert slow[3][9] == fast[3][9] and slow[63][0] == len(np.intersect1d(arrays[63], arrays[0]))


def test_compacting_keeps_every_distinct_hash(monkeypatch):
    monkeypatch.setattr(overlap_module, "COMPACT_AT", 10)
    s = NgramSet()
    for start in range(0, 100, 7):
        s.add(np.arange(start, start + 7, dtype=np.uint64) % 50)
    assert s.array().tolist() == list(range(50))


def test_json_shape(small):
    with Library.open(small, create=False) as lib:
        data = json.loads(json.dumps(collection_statistics(lib, "c", overlap=True, n=2).to_json()))
    assert set(data) == {"collection", "tokens", "splits", "overlap"}
    split = data["splits"][0]
    assert {"dataset", "split", "samples", "generated_cots", "answers", "annotations"} <= set(split)
    assert split["answer_types"] == {"number": 2} and split["choice_counts"] == {"0": 2}
    assert set(split["token_lengths"]) == {"question", "context", "reference_cot", "generated_cot"}
    assert split["token_lengths"]["question"] == {
        "count": 2, "mean": 5.0, "min": 4, "max": 6, "p5": 4.1, "p25": 4.5, "p50": 5.0, "p75": 5.5, "p95": 5.9
    }  # fmt: skip
    overlap = data["overlap"]
    assert overlap["by"] == "dataset" and [f["field"] for f in overlap["fields"]] == ["question", "reference_cot"]
    first = overlap["fields"][0]
    assert first["n"] == 2 and first["units"] == ["math", "med"]
    assert {"distinct_ngrams", "shared_ngrams", "containment", "jaccard"} <= set(first)
    assert len(first["containment"]) == 2 and len(first["containment"][0]) == 2


def test_overlap_of_one_field_keeps_every_length(small):
    with Library.open(small, create=False) as lib:
        both = collection_statistics(lib, "c", overlap=True, n=2)
        one = collection_statistics(lib, "c", overlap=True, n=2, overlap_fields=("question",))
    assert [m.field for m in one.overlap] == ["question"] and one.overlap[0] == both.overlap[0]
    assert [s.to_json() for s in one.splits] == [s.to_json() for s in both.splits]


def test_cancel_stops_with_nothing_changed_and_progress_counts_samples(small):
    seen = []
    with Library.open(small, create=False) as lib:
        collection_statistics(lib, "c", progress=lambda done, total: seen.append((done, total)))
        with pytest.raises(Cancelled, match="statistics cancelled"):
            collection_statistics(lib, "c", cancel=lambda: True)
    assert seen[-1] == (6, 6)


def test_unknown_collection_and_bad_options_are_one_line_errors(small):
    with Library.open(small, create=False) as lib:
        with pytest.raises(ThoughtDeskError, match="no collection named 'nope'"):
            collection_statistics(lib, "nope")
        with pytest.raises(ValueError, match="overlap_by"):
            collection_statistics(lib, "c", overlap=True, overlap_by="model")
        with pytest.raises(ValueError, match="overlap_fields"):
            collection_statistics(lib, "c", overlap=True, overlap_fields=("generated_cot",))
    with pytest.raises(ValueError, match="at least 1"):
        NgramHasher(0)


def test_a_split_written_by_another_connection_meanwhile_is_added_not_a_crash(small, monkeypatch):
    from thoughtdesk.core.stats import collect

    monkeypatch.setattr(collect, "CHUNK", 2)
    written: list[int] = []

    def progress(done: int, total: int) -> None:
        if not written:  # after the first chunk, another process stores a new split
            store(small, [("late", "test", Sample(id="z", question="a new question here"))])
            written.append(done)

    with Library.open(small, create=False) as lib:
        stats = collection_statistics(lib, "c", overlap=True, n=2, progress=progress)
    assert [(s.dataset, s.split, s.samples) for s in stats.splits][-1] == ("late", "test", 1)
    assert sum(s.samples for s in stats.splits) == 7 and stats.overlap[0].units[-1] == "late"
