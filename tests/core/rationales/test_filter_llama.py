"""Filtering with the real small model: each stored loss is the 0.9-decayed loss of the
following text's tokens as llama-cpp-python computes them by hand, without and with the rationale."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.core.generation.backends.test_scoring_llama import by_hand
from tests.helpers.libraries import DEMO, demo_library
from thoughtdesk.core.generation.backends import LlamaCppBackend, LlamaCppSettings
from thoughtdesk.core.generation.runs import ModelSpec
from thoughtdesk.core.generation.scoring import weighted_loss
from thoughtdesk.core.library.store import Library
from thoughtdesk.core.rationales.extraction import DEFAULT, context_with_rationale, read_rewrite
from thoughtdesk.core.rationales.mining import filter_table
from thoughtdesk.core.rationales.setup import filter_pass, filter_setup
from thoughtdesk.core.rationales.store import Document, add_rewrite, rationales

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (extra 'local')")
pytestmark = pytest.mark.slow

DOCS = {
    "Tom has 2 apples. He buys 3 more, so he has 5 apples.": (
        "Tom has 2 apples. <BOT>Buying more adds to what he has.<EOT> He buys 3 more, so he has 5 apples."
    ),
    "The sky is dark. It will rain soon.": "The sky is dark. <BOT>Dark clouds bring rain.<EOT> It will rain soon.",
    # Two rationales in one document: the in-process scorer does not share their "without"
    # scorings (its results depend on the evaluation split), so each is still exact by hand.
    "Mia has 4 pens. She loses 1 pen. Now she has 3 pens.": (
        "Mia has 4 pens. <BOT>Losing takes one away.<EOT> She loses 1 pen. <BOT>4 - 1 = 3.<EOT> Now she has 3 pens."
    ),
}


def test_filter_with_the_small_model(tmp_path: Path, gguf_model: Path) -> None:
    from llama_cpp import Llama

    with Library.open(demo_library(tmp_path / "lib.thoughtdesk")) as lib:
        collection_id = lib.require_collection(DEMO)
        for index, (original, output) in enumerate(DOCS.items()):
            rewrite = read_rewrite(original, output)
            assert rewrite.valid
            add_rewrite(
                lib,
                collection_id,
                Document(f"file:t:{index}", "file", original),
                model="openai:m",
                markers=DEFAULT,
                fragment_key=None,
                prompt_text="",
                output=output,
                rewrite=rewrite,
            )

        async def main():
            scorer = LlamaCppBackend(LlamaCppSettings(gguf_model, n_ctx=128, n_threads=2))
            try:
                setup = filter_setup(ModelSpec("llamacpp", "gemma", n_ctx=128, n_threads=2))
                return await filter_pass(lib, DEMO, setup, scorer)
            finally:
                await scorer.aclose()

        summary = asyncio.run(main())
        assert (summary.done, summary.failed) == (4, 0)
        stored = list(rationales(lib, DEMO, scorer="llamacpp:gemma", decay=0.9))
        table = filter_table(lib, DEMO, "llamacpp:gemma", tau=0.0, decay=0.9)
    assert table.scored == 4 and table.kept == sum(1 for r in stored if r.score and r.score.reduction >= 0)
    direct = Llama(model_path=str(gguf_model), n_ctx=128, n_threads=2, logits_all=True, verbose=False)
    try:
        for record in stored:
            assert record.score is not None
            _, without = by_hand(direct, record.preceding, record.following, splits="shared")
            context = context_with_rationale(record.preceding, record.rationale)
            _, with_rationale = by_hand(direct, context, record.following, splits="shared")
            assert record.score.loss_without == pytest.approx(weighted_loss(without), abs=1e-3)
            assert record.score.loss_with == pytest.approx(weighted_loss(with_rationale), abs=1e-3)
            assert record.score.tokens_without == len(without) > 3
    finally:
        direct.close()
