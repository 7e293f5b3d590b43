"""Library files for tests: real SQLite files holding a known collection."""

from __future__ import annotations

from pathlib import Path

from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import resource_path

DEMO = "demo"


def demo_library(path: Path) -> Path:
    """A fresh library file at ``path`` with the shipped demo collection (16 samples, 4 datasets)."""
    with Library.open(path) as lib:
        import_thoughtsource(lib, resource_path("demo_collection.json"), collection=DEMO)
    return path


LONG = "Long"


def long_text_library(path: Path, question_chars: int, cot_chars: int, *, prose: bool = False) -> Path:
    """A library whose collection ``Long`` holds one sample (the review fixture's first) with a
    question of ``question_chars`` characters in one unbroken word and a first generated CoT of
    ``cot_chars`` characters (one unbroken word, or sentences when ``prose``); its other CoTs
    and the reference stay short (issue 15, point 7)."""
    import json

    from tests.helpers.paths import FIXTURES

    data = json.loads((FIXTURES / "review_ui" / "review_collection.json").read_text(encoding="utf-8"))
    sample = data["med_qa"]["test"][0]
    data = {"med_qa": {"test": [sample]}}
    sample["question"] = "Q" * question_chars
    if prose:
        sentence = "The patient has a fever and a cough, so pneumonia is likely. "
        text = (sentence * (cot_chars // len(sentence) + 1))[:cot_chars]
    else:
        text = "C" * cot_chars
    sample["generated_cot"][0]["cot"] = text
    source = path.with_suffix(".json")
    source.write_text(json.dumps(data), encoding="utf-8")
    with Library.open(path) as lib:
        import_thoughtsource(lib, source, collection=LONG)
    source.unlink()
    return path
