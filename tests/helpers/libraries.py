"""Library files for tests: real SQLite files holding a known collection."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from thoughtdesk.core.importing.importer import import_thoughtsource
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.paths import resource_path

DEMO = "demo"


def demo_library(path: Path) -> Path:
    """A fresh library file at ``path`` with the shipped demo collection (16 samples, 4 datasets).

    A copy of one made once per test process (an import costs 0.1-0.2 s, a copy under 1 ms,
    and ~300 tests start from this library)."""
    shutil.copyfile(_demo_template(), path)
    return path


_template: list[Path] = []


def _demo_template() -> Path:
    if not _template:
        folder = Path(tempfile.mkdtemp(prefix="thoughtdesk-demo-template-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        path = folder / "demo.thoughtdesk"
        with Library.open(path) as lib:
            import_thoughtsource(lib, resource_path("demo_collection.json"), collection=DEMO)
        # Closed: SQLite folded its write-ahead log into the file, which is the whole library.
        assert not path.with_name(path.name + "-wal").exists()
        _template.append(path)
    return _template[0]


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


#: The data fields a sample view shows, each filled long in turn by :func:`field_library`:
#: ``steps`` is many reference steps of about 100 characters, ``step`` one long step; ``answer``
#: is the first CoT's extracted answer, ``critique`` its critique's main flaw and raw text,
#: ``comment`` a review comment on it by the reviewer and one by another author.
FIELDS = ("question", "context", "choice", "gold", "steps", "step", "cot", "answer", "critique", "comment")
#: How the long text is made: prose, one unbroken word, or dense with invisible characters
#: (U+202E then "ab", repeated: every third character a bidi override, no break opportunity).
KINDS = ("plain", "word", "invisible")
#: The review comments' authors (the benchmark and tests review as REVIEWER).
REVIEWER, OTHER_REVIEWER = "bench", "other"


def field_text(kind: str, chars: int) -> str:
    """``chars`` characters of ``kind`` (see :data:`KINDS`)."""
    if kind == "plain":
        sentence = "The patient has a fever and a cough, so pneumonia is likely. "
        unit = sentence
    elif kind == "word":
        unit = "abcdefghij"
    elif kind == "invisible":
        unit = "\u202eab"
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return (unit * (chars // len(unit) + 1))[:chars]


def field_sample_id(field: str, kind: str, chars: int) -> str:
    return f"{field}-{kind}-{chars}"


def field_library(path: Path, cases: list[tuple[str, str, int]], *, tiny: bool = True) -> dict[str, int]:
    """A library whose collection ``Long`` holds one sample per ``(field, kind, chars)`` case, the
    review fixture's first sample with that one field made long (see :data:`FIELDS`), and with
    ``tiny`` a ``tiny`` sample left as it is (a baseline). Returns sample primary keys by
    :func:`field_sample_id` (and ``"tiny"``)."""
    import json

    from tests.helpers.paths import FIXTURES
    from thoughtdesk.core.critiques.records import Critique, ElementOutcome, ParsedCritique
    from thoughtdesk.core.critiques.store import add_critique

    data = json.loads((FIXTURES / "review_ui" / "review_collection.json").read_text(encoding="utf-8"))
    base = data["med_qa"]["test"][0]
    samples = []
    long_texts: dict[str, str] = {}
    for field, kind, chars in cases:
        sample = json.loads(json.dumps(base))
        sample["id"] = field_sample_id(field, kind, chars)
        text = field_text(kind, chars)
        cot = sample["generated_cot"][0]
        if field == "question":
            sample["question"] = text
        elif field == "context":
            sample["context"] = text
        elif field == "choice":
            sample["choices"][2] = text
        elif field == "gold":
            sample["answer"] = [text]
        elif field == "steps":
            step = field_text(kind, 100)
            sample["cot"] = [step] * max(1, chars // 100)
        elif field == "step":
            sample["cot"] = [text, "Fever and cough point to pneumonia."]
        elif field == "cot":
            cot["cot"] = text
        elif field == "answer":
            cot["answers"][0]["answer"] = text
        elif field == "critique":
            long_texts[sample["id"]] = text
        elif field == "comment":
            date = "2024/01/02 03:04:05"
            cot["annotations"] = [
                {"key": "comment", "value": text, "author": author, "date": date}
                for author in (REVIEWER, OTHER_REVIEWER)
            ]
        else:
            raise ValueError(f"unknown field {field!r}")
        samples.append(sample)
    if tiny:
        sample = json.loads(json.dumps(base))
        sample["id"] = "tiny"
        samples.append(sample)
    source = path.with_suffix(".json")
    source.write_text(json.dumps({"med_qa": {"test": samples}}, ensure_ascii=False), encoding="utf-8")
    with Library.open(path) as lib:
        import_thoughtsource(lib, source, collection=LONG)
        pks = dict(lib.conn.execute("SELECT sample_id, id FROM sample").fetchall())
        for sample_id, text in long_texts.items():
            cot_pk = lib.conn.execute(
                "SELECT id FROM generated_cot WHERE sample_pk = ? ORDER BY position LIMIT 1", (pks[sample_id],)
            ).fetchone()[0]
            parsed = ParsedCritique(
                main_flaw=text,
                dimension="incorrect_reasoning",
                general_feedback="Too long.",
                specific_feedback=text[:1000],
                explanation_score=2,
                outcomes={
                    e: ElementOutcome("parsed")
                    for e in ("main_flaw", "dimension", "general_feedback", "specific_feedback", "explanation_score")
                },
            )
            with lib.transaction() as conn:
                add_critique(conn, Critique(cot_pk=cot_pk, critique_model="critic", raw_text=text, parsed=parsed))
    source.unlink()
    return pks
