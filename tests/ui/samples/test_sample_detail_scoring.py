"""The Samples detail tells an answer ThoughtDesk found no answer in from one never scored."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QLabel

from thoughtdesk.core.evaluation.rescoring import rescore
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.samples.sample_detail import SampleDetail


def test_not_extractable_is_shown_with_its_reason_and_never_scored_as_not_scored(qtbot, tmp_path) -> None:
    sample = {
        "id": "q1",
        "question": "Which colour?",
        "type": "multiplechoice",
        "choices": ["red", "blue", "green"],
        "answer": ["red"],
        "generated_cot": [
            {"cot": "Either.", "answers": [{"answer": "A or B <b>x</b>", "correct_answer": None}]},
        ],
    }
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"d": {"test": [sample]}}), encoding="utf-8")
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, path, collection="c")
        pk = lib.conn.execute("SELECT id FROM sample").fetchone()[0]
        detail = SampleDetail()
        qtbot.addWidget(detail)
        detail.show_sample(load_sample(lib, pk))
        before = [label.text() for label in detail.findChildren(QLabel, "cotAnswer")]
        rescore(lib, "c")
        detail.show_sample(load_sample(lib, pk))
        after = detail.findChildren(QLabel, "cotAnswer")
    assert before == ["Answer: A or B <b>x</b>    not scored"]
    assert len(after) == 1 and after[0].text().startswith("Answer: A or B <b>x</b>    ✗ not extractable (ambiguous")
    assert after[0].textFormat().name == "PlainText"  # model text is never live markup
