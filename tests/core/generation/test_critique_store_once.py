"""A critique run stores the CoT it judges once (issue 15, point 6): the prompt quoting a 3 MB
CoT was stored in the request row and again as the critique's ``prompt_text``, growing the
library by twice the CoT. Both now hold a reference (see prompt_refs); every reader (the run's
requests, the critique records, the ThoughtSource export) gets the prompt as it was sent."""

from __future__ import annotations

import json
from typing import Any

from tests.core.generation.test_critique_runs import CritiqueServer, judge
from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.critiques import critiques_for_cots
from thoughtdesk.core.datasets.ts_extras import load_with_extras
from thoughtdesk.core.generation.runs import (
    CotSelection,
    CritiqueSpec,
    create_critique_run,
    execute_run,
    plan_critique_run,
    run_requests,
)
from thoughtdesk.core.importing.dscb import export_dscb
from thoughtdesk.core.importing.importer import export_thoughtsource
from thoughtdesk.core.library.prompt_refs import is_prompt_ref
from thoughtdesk.core.library.store import Library

MB = 1_000_000


def used_bytes(lib: Library) -> int:
    """Bytes of the library's pages in use (after a checkpoint, so the WAL is counted in)."""
    lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages, free, size = (
        lib.conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count", "page_size")
    )
    return (pages - free) * size


def long_strings(value: Any, key: str = "") -> list[tuple[str, str]]:
    """(key, text) of every string of 100,000 characters or more in a JSON value."""
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in long_strings(v, k)]
    if isinstance(value, list):
        return [found for v in value for found in long_strings(v, key)]
    return [(key, value)] if isinstance(value, str) and len(value) >= 100_000 else []


def test_critiquing_a_3mb_cot_stores_it_once(tmp_path) -> None:
    sentence = "The patient has a fever and a cough, so pneumonia is likely.\n"
    text = (sentence * (3 * MB // len(sentence) + 1))[: 3 * MB]
    library_path = demo_library(tmp_path / "library.thoughtdesk")
    with Library.open(library_path) as lib:
        with lib.transaction() as conn:
            cot_pk = conn.execute("SELECT min(id) FROM generated_cot").fetchone()[0]
            conn.execute("UPDATE generated_cot SET cot = ? WHERE id = ?", (text, cot_pk))
        before = used_bytes(lib)
    with CritiqueServer() as server:
        with Library.open(library_path) as lib:
            plan = plan_critique_run(lib, CritiqueSpec(CotSelection(DEMO, cot_pks=(cot_pk,)), (judge(server),)))
            (planned,) = plan.requests
            assert text in planned.prompt
            run_id = create_critique_run(lib, plan)
        final = execute_run(library_path, run_id)
        assert final.status == "done" and final.done == 1
        sent = server.requests[0].json["messages"]
    assert text in sent[-1]["content"]
    with Library.open(library_path) as lib:
        grown = used_bytes(lib) - before
        stored_request, stored_critique = lib.conn.execute(
            "SELECT q.prompt, c.prompt_text FROM request q JOIN critique c ON c.id = q.result_critique_pk "
            "WHERE q.run_id = ?",
            (run_id,),
        ).fetchone()
        assert len(stored_request) < 10_000 and len(stored_critique) < 10_000  # references, not the CoT
        # Read back whole: the request as planned (and sent), the critique's prompt the same.
        (request,) = run_requests(lib, run_id)
        assert request.prompt == planned.prompt
        (critique,) = critiques_for_cots(lib, [cot_pk])[cot_pk]
        assert critique.prompt_text == planned.prompt and critique.extra["thoughtdesk"]["prompt"] == planned.prompt
        export_thoughtsource(lib, DEMO, tmp_path / "out.json")
        export_dscb(lib, DEMO, tmp_path / "out.jsonl")
    assert grown < 0.2 * len(text), f"the library grew by {grown / MB:.1f} MB critiquing a 3 MB CoT"
    # The exports as before: the CoT, and the critique's prompt whole where they carry it.
    thoughtsource = long_strings(load_with_extras(tmp_path / "out.json"))
    assert sorted(thoughtsource) == sorted([("cot", text), ("prompt_text", planned.prompt), ("prompt", planned.prompt)])
    dscb = [
        found
        for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
        for found in long_strings(json.loads(line))
    ]
    assert ("prompt", planned.prompt) in dscb and not any(is_prompt_ref(v) for _, v in dscb + thoughtsource)
