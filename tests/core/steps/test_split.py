"""Step lists: a trace's own list, else paragraphs or sentences; ids that survive export and re-import."""

from __future__ import annotations

import json

from thoughtdesk.core.importing.importer import export_thoughtsource, import_thoughtsource
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.steps.split import (
    cot_steps,
    reasoning_steps,
    reference_steps,
    step_id,
    text_steps,
)


def test_paragraphs_when_the_text_has_several_else_sentences():
    text = "First we add. Then we check.\n\nSo 3 + 4 = 7.\n\n  The answer is 7.  "
    steps = text_steps(text)
    assert [s.text for s in steps] == ["First we add. Then we check.", "So 3 + 4 = 7.", "The answer is 7."]
    assert all(text[s.start : s.end] == s.text for s in steps)
    one = "Give 5 mg. Then wait 2 min.\nDone."
    assert [s.text for s in text_steps(one)] == ["Give 5 mg.", "Then wait 2 min.", "Done."]


def test_reasoning_traces_are_split_by_paragraph_only():
    trace = "Let me think. 9.8 vs 9.11.\n\nSo 9.8 is larger."
    assert [s.text for s in reasoning_steps(trace)] == ["Let me think. 9.8 vs 9.11.", "So 9.8 is larger."]
    assert reasoning_steps(None) == [] and reasoning_steps("  \n ") == []


def test_a_cots_own_step_list_wins_and_is_found_in_its_text():
    steps = ["3*4=12.", "2+12=15.\n\n# Answer\n\n15"]
    text = "\n".join(steps)
    got = cot_steps(text, {"steps": steps})
    assert [s.text for s in got] == steps  # not split at the blank lines inside step 2
    assert (got[1].start, got[1].end) == (8, len(text))
    assert [s.text for s in cot_steps(text, {"steps": "not a list"})] != steps  # a bad value: the text is split


def test_reference_steps_are_the_samples_list():
    assert [s.text for s in reference_steps(["a", "b", 3])] == ["a", "b", "3"]
    assert reference_steps(None) == []


def test_ids_depend_on_index_and_text_only():
    assert step_id(0, "x") == step_id(0, "x") != step_id(1, "x") != step_id(0, "y")
    assert step_id(2, "So 3 + 4 = 7.").startswith("s2-") and len(step_id(2, "z")) == 11
    assert [s.id for s in text_steps("A.\n\nB.")] == [step_id(0, "A."), step_id(1, "B.")]


def test_step_ids_survive_a_thoughtsource_export_and_re_import(tmp_path):
    own = ["Step one.", "Step two\n\nwith a blank line."]
    collection = {
        "demo": {
            "test": [
                {
                    "id": "q1",
                    "ref_id": "",
                    "question": "2+2?",
                    "type": "number",
                    "choices": [],
                    "context": "",
                    "cot": ["Add.", "Four."],
                    "answer": ["4"],
                    "feedback": [],
                    "generated_cot": [
                        {
                            "id": "c1",
                            "fragments_version": "",
                            "instruction": None,
                            "cot_trigger": None,
                            "cot_trigger_template": "",
                            "prompt_text": "",
                            "cot": "Step one.\nStep two\n\nwith a blank line.",
                            "answers": [],
                            "author": "",
                            "date": "",
                            "api_service": "",
                            "model": "m",
                            "comment": "",
                            "annotations": [],
                            "steps": own,
                        }
                    ],
                }
            ]
        }
    }
    source = tmp_path / "in.json"
    source.write_text(json.dumps(collection))

    def ids(lib: Library, name: str) -> tuple[list[str], list[str]]:
        pk = lib.conn.execute(
            "SELECT s.id FROM sample s JOIN collection c ON c.id = s.collection_id WHERE c.name = ?", (name,)
        ).fetchone()[0]
        stored = load_sample(lib, pk)
        assert stored is not None
        cot = stored.sample.generated_cot[0]
        return [s.id for s in cot_steps(cot.cot, cot.extra)], [s.id for s in reference_steps(stored.sample.cot)]

    with Library.open(tmp_path / "a.thoughtdesk") as lib:
        import_thoughtsource(lib, source, collection="one")
        first = ids(lib, "one")
        export_thoughtsource(lib, "one", tmp_path / "out.json")
    with Library.open(tmp_path / "b.thoughtdesk") as lib:
        import_thoughtsource(lib, tmp_path / "out.json", collection="two")
        again = ids(lib, "two")
    assert first == again
    assert first[0] == [step_id(0, own[0]), step_id(1, own[1])]


def test_the_step_counts_equal_the_step_lists() -> None:
    """The Review tab's "N steps" (cot_step_count, reasoning_step_count) counts what cot_steps and
    reasoning_steps give, without building the steps."""
    from thoughtdesk.core.steps.split import cot_step_count, cot_steps, reasoning_step_count, reasoning_steps

    texts = ["", "One. Two. Three.", "One. Two.\n\nThree. Four. Five.", "  \n\n  ", "a\n\n\n\nb\n \nc"]
    for text in texts:
        assert cot_step_count(text) == len(cot_steps(text))
        assert reasoning_step_count(text) == len(reasoning_steps(text))
    own = {"steps": ["One. Two.", "Three."]}
    assert cot_step_count("One. Two. Three.", own) == len(cot_steps("One. Two. Three.", own)) == 2
    assert cot_step_count(None) == reasoning_step_count(None) == 0
