"""The detail pane wraps whatever a record holds (issue 16, point 3): MedMCQA questions joined
by no-break spaces (244 of 4,183 records) and unbroken tokens ran off the right edge."""

from __future__ import annotations

import json

from tests.helpers.widgets import child, content
from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.reader import load_sample
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import QLabel
from thoughtdesk.ui.samples.sample_detail import SampleDetail
from thoughtdesk.ui.widgets.labels import breakable_text

NBSP = "\u00a0"
QUESTION = NBSP.join(
    "Which of the following is the most common site of carcinoid tumour in the gastrointestinal tract".split()
)
TOKEN = "CC(=O)OC1=CC=CC=C1C(=O)O" * 12  # 288 characters without a space (a SMILES string)


def test_breakable_text_only_adds_break_opportunities():
    assert breakable_text(QUESTION) == QUESTION.replace(NBSP, " ")
    shown = breakable_text(f"see {TOKEN} here")
    assert shown.replace("\u200b", "") == f"see {TOKEN} here"
    assert max(len(part) for part in shown.split("\u200b")[1:-1]) <= 24
    assert breakable_text("short words stay as they are") == "short words stay as they are"


def test_the_detail_pane_wraps_no_break_spaces_and_long_tokens(qtbot, tmp_path):
    record = {
        "id": "medmcqa_nbsp",
        "ref_id": "",
        "question": QUESTION,
        "type": "multiplechoice",
        "choices": [
            "Appendix",
            f"Ileum{NBSP}and{NBSP}terminal{NBSP}ileum{NBSP}of{NBSP}the{NBSP}small{NBSP}bowel",
            "Rectum",
            TOKEN,
        ],
        "context": "",
        "cot": [f"Carcinoids{NBSP}arise{NBSP}most{NBSP}often{NBSP}in{NBSP}the{NBSP}small{NBSP}intestine, {TOKEN}."],
        "answer": ["Appendix"],
        "feedback": [],
        "generated_cot": [],
    }
    source = tmp_path / "medmcqa.json"
    source.write_text(json.dumps({"medmc_qa": {"train": [record]}}), encoding="utf-8")
    with Library.open(tmp_path / "lib.thoughtdesk") as lib:
        import_thoughtsource(lib, source, collection="MedMCQA")
        pk = lib.conn.execute("SELECT id FROM sample").fetchone()[0]
        stored = load_sample(lib, pk)
    assert stored is not None and stored.sample.question == QUESTION  # the library keeps the no-break spaces

    detail = SampleDetail()
    qtbot.addWidget(detail)
    detail.resize(380, 600)
    detail.show()
    detail.show_sample(stored)
    qtbot.wait(50)
    assert detail.horizontalScrollBar().maximum() == 0
    viewport = detail.viewport().width()
    for label in content(detail).findChildren(QLabel):
        assert label.width() <= viewport, f"{label.objectName()} is {label.width()} px in a {viewport} px pane"
    question = child(content(detail), QLabel, "question")
    assert question.text() == QUESTION.replace(NBSP, " ")
    assert question.height() > 2 * question.fontMetrics().lineSpacing()  # wrapped over lines
