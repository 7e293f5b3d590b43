"""Generate > Mine rationales…: extract and filter in the background against a local fake server,
the histogram and kept/dropped counts follow tau, export, cancel, errors in one plain line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.rationales.test_mining import rewriting
from tests.helpers.libraries import DEMO, demo_library
from tests.helpers.servers import FakeModelServer, Reply
from thoughtdesk.core.generation.fragments import FragmentLibrary
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.generation.rationales_dialog import RationalesDialog
from thoughtdesk.ui.qt import Qt


@pytest.fixture
def dialog(qtbot, tmp_path: Path):
    path = demo_library(tmp_path / "lib.thoughtdesk")
    widget = RationalesDialog(path, [DEMO], FragmentLibrary.defaults())
    qtbot.addWidget(widget)
    widget.show()
    return widget


def wait_idle(qtbot, dialog: RationalesDialog, timeout: int = 60000) -> None:
    qtbot.waitUntil(lambda: dialog.task is None, timeout=timeout)


def test_extract_filter_histogram_tau_and_export(qtbot, dialog, fake_server: FakeModelServer, tmp_path) -> None:
    fake_server.responder = rewriting
    dialog.model.setText("openai:m")
    dialog.model_url.setText(fake_server.base_url)
    qtbot.mouseClick(dialog.extract_button, Qt.MouseButton.LeftButton)
    assert dialog.cancel_button.isEnabled() and not dialog.filter_button.isEnabled()
    wait_idle(qtbot, dialog)
    assert "Extraction: 16 done now, 0 done before, 0 failed of 16." == dialog.status.text()
    assert dialog.progress.value() == dialog.progress.maximum() == 16

    fake_server.responder = None  # the toy echo model scores
    dialog.scorer.setText("openai:m")
    dialog.scorer_url.setText(fake_server.base_url)
    qtbot.mouseClick(dialog.filter_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    assert dialog.status.text().startswith("Filtering: 16 done now")
    table = dialog.table
    assert table is not None and table.scored == 16
    heights = dialog.bars.opts["height"]
    assert int(sum(heights)) == 16
    dialog.tau.setValue(0.0)
    assert "At tau 0: 16 kept (100.0 %), 0 dropped." in dialog.counts.text()
    assert dialog.preset.currentText() == "web (0)" and dialog.tau_line.value() == 0.0
    high = max(table.reductions) + 1
    dialog.tau.setValue(high)
    assert "0 kept (0.0 %), 16 dropped" in dialog.counts.text() and dialog.preset.currentText() == "custom"

    dialog.tau.setValue(0.0)
    out = tmp_path / "kept.jsonl"
    dialog.export_to(out)
    assert dialog.status.text() == f"16 rationales written to {out}."
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["messages"][1]["role"] == "assistant"

    # It opens at 720 x 640 and can shrink to fit a 1366 x 768 screen with its title bar.
    assert dialog.width() <= 1366 and dialog.height() <= 700
    minimum = dialog.minimumSizeHint()
    assert minimum.width() <= 1366 and minimum.height() <= 700
    dialog.grab().save(str(tmp_path / "rationales_dialog.png"))


def test_cancel_keeps_what_finished(qtbot, dialog, fake_server: FakeModelServer) -> None:
    def slow(record):
        reply = rewriting(record)
        assert reply is not None
        reply.delay = 0.5
        return reply

    fake_server.responder = slow
    dialog.model.setText("openai:m")
    dialog.model_url.setText(fake_server.base_url)
    # The pass is a run of the engine: Cancel lets the calls in flight finish and stores them
    # (they are paid for), so fewer in flight than documents leaves some undone.
    dialog.extract_concurrency.setValue(2)
    qtbot.mouseClick(dialog.extract_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=30000)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    assert "cancelled; what finished is kept" in dialog.status.text()
    with Library.open(dialog.library_path) as lib:
        (stored,) = lib.conn.execute("SELECT count(*) FROM rationale_doc").fetchone()
        (run,) = lib.conn.execute("SELECT status FROM run").fetchone()
    assert 1 <= stored < 16
    assert run == "cancelled"  # and the next pass resumes it


def test_errors_are_one_plain_line(qtbot, dialog, fake_server: FakeModelServer) -> None:
    qtbot.mouseClick(dialog.extract_button, Qt.MouseButton.LeftButton)
    assert "name a model as PROVIDER:MODEL" in dialog.status.text()
    dialog.model.setText("openai:m")
    dialog.markers.setText("<BOT>")
    qtbot.mouseClick(dialog.extract_button, Qt.MouseButton.LeftButton)
    assert "three dots" in dialog.status.text()
    dialog.scorer.setText("anthropic:claude")
    dialog.scorer_url.setText(fake_server.root_url)
    dialog.markers.setText("<BOT>...<EOT>")
    fake_server.responder = lambda record: Reply(body={"choices": [{"index": 0, "message": {"content": "x"}}]})
    # A scorer that cannot score is refused before the pass, with the reason, in one line.
    qtbot.mouseClick(dialog.filter_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    assert dialog.status.text().startswith("anthropic:claude cannot score text: Anthropic's Messages API")
    assert "Filtering cannot start with this scorer" in dialog.status.text() and "\n" not in dialog.status.text()
    assert dialog.status.textFormat() == Qt.TextFormat.PlainText
    assert fake_server.requests == []


def test_the_scorer_note_shows_memory_or_why_it_cannot_score(qtbot, dialog, gguf_model, tmp_path) -> None:
    """Point 1 of issue 14: the scoring copy's memory is shown before Filter loads it."""
    from tests.helpers.screenshots import save_screenshot
    from thoughtdesk.ui.generation.rationales_dialog import PROBLEM_STYLE

    note = dialog.findChild(type(dialog.status), "rationaleScorerNote")
    dialog.scorer.setText(f"llamacpp:{gguf_model}")
    qtbot.waitUntil(lambda: "GB more memory" in note.text(), timeout=30000)
    assert "scores text exactly in-process" in note.text() and "2,048 positions" in note.text()
    assert note.styleSheet() == ""
    dialog.n_ctx.setValue(512)  # the memory follows the context size
    qtbot.waitUntil(lambda: "about 1.1 GB" in note.text() and "512 positions" in note.text(), timeout=30000)
    save_screenshot(dialog, tmp_path, "rationales-gguf-scorer")
    dialog.scorer.setText("anthropic:claude")
    qtbot.waitUntil(lambda: "cannot score text" in note.text(), timeout=10000)
    assert note.text().endswith("Filtering cannot start with it.") and note.styleSheet() == PROBLEM_STYLE
    dialog.scorer.setText("")
    qtbot.waitUntil(lambda: note.text() == "", timeout=10000)


def test_filter_probes_a_server_once_and_stops_if_it_ignores_echo(qtbot, dialog, fake_server) -> None:
    from tests.ui.generation.test_guide_panel import _no_echo

    fake_server.responder = rewriting
    dialog.model.setText("openai:m")
    dialog.model_url.setText(fake_server.base_url)
    qtbot.mouseClick(dialog.extract_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    before = len(fake_server.requests)
    fake_server.responder = _no_echo
    dialog.scorer.setText("openai:m")
    dialog.scorer_url.setText(fake_server.base_url)
    qtbot.mouseClick(dialog.filter_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    assert "cannot score text: the server answered without the prompt's log-probs (echo ignored)" in (
        dialog.status.text()
    )
    assert len(fake_server.requests) == before + 1  # one probe, not a failed call per rationale


def test_the_rewriting_model_gets_prompts_as_generate_sends_them(qtbot, dialog, monkeypatch) -> None:
    """The dialog sent a local model raw completions, unlike `generate`, the planner and
    `rationales extract` (a GGUF's chat template): it now takes the same default."""
    from thoughtdesk.core.errors import ThoughtDeskError
    from thoughtdesk.core.generation.defaults import default_chat
    from thoughtdesk.core.rationales import setup as mining_setup

    built = []

    def recorded(spec):  # the model the dialog would call, and no call
        built.append(spec)
        raise ThoughtDeskError("stopped by the test")

    monkeypatch.setattr(mining_setup, "build_backend", recorded)  # the one setup builds the backend
    for model, url in (("llamacpp:/m/a.gguf", ""), ("openai:m", "http://127.0.0.1:9/v1"), ("anthropic:c", "")):
        dialog.model.setText(model)
        dialog.model_url.setText(url)
        dialog.start_extract()
        wait_idle(qtbot, dialog)
        assert built[-1].model == model.partition(":")[2]
        assert built[-1].chat is default_chat(built[-1].provider, "chat") is True, model


def test_filter_in_the_papers_layout(qtbot, dialog, fake_server: FakeModelServer, tmp_path) -> None:
    """Issue 23, point 18: the Scoring layout box sends RATIONALYST's chat prompts; the scores are
    stored apart from the default layout's and the export uses them."""
    fake_server.responder = rewriting
    dialog.model.setText("openai:m")
    dialog.model_url.setText(fake_server.base_url)
    qtbot.mouseClick(dialog.extract_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    fake_server.responder = None
    dialog.scorer.setText("openai:m")
    dialog.scorer_url.setText(fake_server.base_url)
    dialog.scoring_layout.setCurrentIndex(dialog.scoring_layout.findData("paper"))
    sent = len(fake_server.requests)
    qtbot.mouseClick(dialog.filter_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    assert dialog.status.text().startswith("Filtering: 16 done now"), dialog.status.text()
    scoring = [str(r.json["prompt"]) for r in fake_server.requests[sent + 1 :]]  # after the one probe
    assert len(scoring) == 32 and all(p.startswith("<|begin_of_text|><|start_header_id|>system") for p in scoring)
    assert dialog.scored_by == "openai:m [paper layout]"
    with Library.open(dialog.library_path) as lib:
        scorers = {row[0] for row in lib.conn.execute("SELECT DISTINCT scorer FROM rationale_score")}
    assert scorers == {"openai:m [paper layout]"}
    dialog.tau.setValue(-100.0)
    target = tmp_path / "kept.jsonl"
    dialog.export_to(target)
    assert len(target.read_text(encoding="utf-8").splitlines()) == 16


def test_one_keep_rule_for_the_summary_the_dialog_and_the_export(
    qtbot, dialog: RationalesDialog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28, point 11: ``filtering.keeps`` is the only keep rule. Three rationales scored
    with reductions 1.0, 1.25 (exactly tau) and 2.0: the filter summary (``filter_table``, what
    ``rationales filter`` prints), the dialog's counts and the export keep the same two, and a
    changed rule (``>`` for ``>=``) changes all three together (before, each coded its own)."""
    from thoughtdesk.core.rationales import filtering
    from thoughtdesk.core.rationales.filtering import LossReduction
    from thoughtdesk.core.rationales.mining import filter_table
    from thoughtdesk.core.rationales.store import add_score

    tau = 1.25
    with Library.open(dialog.library_path) as lib:
        cid = lib.require_collection(DEMO)
        with lib.transaction() as conn:
            conn.execute(
                "INSERT INTO rationale_doc (collection_id, doc_key, source, model, markers, prompt_text, original, "
                "output, similarity, valid, created) VALUES (?, 'd', 'file', 'm', '[]', '', '', '', 1, 1, 'now')",
                (cid,),
            )
            for position in range(3):
                conn.execute(
                    "INSERT INTO rationale (doc_id, position, preceding, rationale, following) "
                    "VALUES ((SELECT max(id) FROM rationale_doc), ?, 'a', ?, 'c')",
                    (position, f"r{position}"),
                )
        ids = [row[0] for row in lib.conn.execute("SELECT id FROM rationale ORDER BY position")]
        for rid, with_loss in zip(ids, (2.0, 1.75, 1.0), strict=True):  # reductions 1.0, 1.25, 2.0: exact
            add_score(lib, rid, scorer="s", decay=0.9, result=LossReduction(3.0, with_loss, 4, 4))

    def counts() -> tuple[int, int, int]:
        with Library.open(dialog.library_path) as lib:
            table = filter_table(lib, DEMO, "s", tau=tau, decay=0.9)
        dialog.table, dialog.scored_by = table, "s"
        dialog.tau.setValue(0.0)
        dialog.tau.setValue(tau)
        shown = int(dialog.counts.text().split(f"At tau {tau:g}: ")[1].split(" kept")[0])
        out = tmp_path / "kept.jsonl"
        dialog.export_to(out)
        exported = len(out.read_text(encoding="utf-8").splitlines())
        return table.kept, shown, exported

    assert counts() == (2, 2, 2)
    monkeypatch.setattr(filtering, "keeps", lambda reduction, tau: reduction > tau)
    assert counts() == (1, 1, 1)


@pytest.mark.parametrize(("model", "url"), [("openai:m", "http://127.0.0.1:9/v1"), ("llamacpp:/m/a.gguf", "")])
def test_the_dialog_and_the_cli_build_the_same_setup(
    qtbot, dialog: RationalesDialog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, url: str
) -> None:
    """Issue 28, point 11: one setup (core/rationales/setup.py). From the same choices the
    dialog and `rationales extract|filter` build equal setups: the same model, prompt, markers,
    concurrency (defaults 8 and 32; the dialog hard-coded them), retry policy and scorer label;
    and a changed concurrency reaches both."""
    from thoughtdesk.cli import rationales
    from thoughtdesk.cli.main import build_parser
    from thoughtdesk.core.paths import CONFIG_DIR_ENV
    from thoughtdesk.core.rationales.setup import (
        DEFAULT_EXTRACT_CONCURRENCY,
        DEFAULT_FILTER_CONCURRENCY,
        MINING_RETRY,
    )

    monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path / "config"))
    parser = build_parser()
    base = ["--base-url", url] if url else []
    dialog.model.setText(model)
    dialog.model_url.setText(url)
    dialog.scorer.setText(model)
    dialog.scorer_url.setText(url)
    dialog.markers.setText("[[R]]...[[/R]]")
    dialog.scoring_layout.setCurrentIndex(dialog.scoring_layout.findData("paper"))

    def cli(*args: str):
        return parser.parse_args(["rationales", *args, *base, "--markers", "[[R]]...[[/R]]"])

    extract = rationales.extraction_setup_of(cli("extract", DEMO, "--model", model))
    assert dialog.extraction_setup() == extract
    assert (extract.concurrency, extract.retry) == (DEFAULT_EXTRACT_CONCURRENCY, MINING_RETRY)
    scored = rationales.filter_setup_of(cli("filter", DEMO, "--scorer", model, "--layout", "paper"))
    assert dialog.filter_setup() == scored
    assert (scored.concurrency, scored.retry, scored.label) == (
        DEFAULT_FILTER_CONCURRENCY,
        MINING_RETRY,
        f"{scored.scorer.label} [paper layout]",
    )

    dialog.extract_concurrency.setValue(3)
    dialog.filter_concurrency.setValue(5)
    assert dialog.extraction_setup() == rationales.extraction_setup_of(
        cli("extract", DEMO, "--model", model, "--concurrency", "3")
    )
    assert dialog.filter_setup() == rationales.filter_setup_of(
        cli("filter", DEMO, "--scorer", model, "--layout", "paper", "--concurrency", "5")
    )
