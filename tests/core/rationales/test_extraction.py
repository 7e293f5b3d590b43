"""Reading a rewrite: markers, the validity check (paper's 0.9 rule), the split into records."""

from __future__ import annotations

import pytest

from thoughtdesk.core.generation.fragments import FragmentLibrary
from thoughtdesk.core.rationales.extraction import (
    DEFAULT_PROMPT_KEY,
    Markers,
    RationaleError,
    RationaleRecord,
    context_with_rationale,
    read_rewrite,
    render_prompt,
    similarity,
    split_records,
)

ORIGINAL = "4 muffins cost 4 * $3 = $12. 5 cookies cost 5 * $2 = $10. Together she spends $22."


def test_rationales_are_read_and_the_text_split_around_them() -> None:
    output = (
        "4 muffins cost 4 * $3 = $12. <BOT>Next, the cookies' cost.<EOT> 5 cookies cost 5 * $2 = $10. "
        "<BOT>The total adds  both\n costs.<EOT> Together she spends $22."
    )
    rewrite = read_rewrite(ORIGINAL, output)
    assert rewrite.stripped == ORIGINAL
    assert rewrite.similarity == 1.0 and rewrite.valid and rewrite.unclosed == 0
    assert split_records(rewrite) == [
        RationaleRecord(
            "4 muffins cost 4 * $3 = $12.",
            "Next, the cookies' cost.",
            " 5 cookies cost 5 * $2 = $10. Together she spends $22.",
        ),
        RationaleRecord(
            "4 muffins cost 4 * $3 = $12. 5 cookies cost 5 * $2 = $10.",
            "The total adds both costs.",  # whitespace inside a rationale is normalised
            " Together she spends $22.",
        ),
    ]
    for record in split_records(rewrite):
        assert record.preceding + record.following == ORIGINAL


def test_validity_follows_the_papers_rule() -> None:
    # 1 - edit distance / len(original): 10 characters, one changed -> 0.9, still valid.
    assert similarity("abcdefghij", "abcdefghiX") == pytest.approx(0.9)
    assert read_rewrite("abcdefghij", "abcde<BOT>r<EOT>fghiX").valid
    assert not read_rewrite("abcdefghij", "abcde<BOT>r<EOT>fghXY").valid  # 0.8
    changed = read_rewrite(ORIGINAL, "Muffins: $12. <BOT>Then cookies.<EOT> Cookies: $10. Total $22.")
    assert not changed.valid and changed.similarity < 0.9
    assert similarity("", "") == 1.0 and similarity("", "x") == 0.0


def test_odd_rewrites() -> None:
    # An unclosed marker drops the rest from the stripped text (so the check fails) and is counted.
    broken = read_rewrite(ORIGINAL, "4 muffins cost 4 * $3 = $12. <BOT>Next the cookies 5 cookies cost...")
    assert broken.unclosed == 1 and not broken.valid and broken.rationales == ()
    # Empty rationales are dropped; a rationale glued to the next word keeps the space before it.
    glued = read_rewrite("A b. C d.", "A b. <BOT> <EOT>C d.<BOT>end<EOT>")
    assert glued.stripped == "A b. C d." and [s.text for s in glued.rationales] == ["end"]
    assert glued.rationales[0].position == len("A b. C d.")
    # No rationale at all: valid, but no records.
    assert split_records(read_rewrite(ORIGINAL, ORIGINAL)) == []


def test_custom_markers() -> None:
    markers = Markers.parse("[[R]]...[[/R]]")
    rewrite = read_rewrite("One. Two.", "One. [[R]]why[[/R]] Two. <BOT>not a rationale<EOT>", markers)
    assert [s.text for s in rewrite.rationales] == ["why"]
    assert not rewrite.valid  # the default markers are ordinary text under other markers
    assert context_with_rationale("One.", "why", markers) == "One. [[R]]why[[/R]]"
    for bad in ("<BOT><EOT>", "...<EOT>", "<X>...<X>"):
        with pytest.raises(RationaleError, match="marker"):
            Markers.parse(bad)


def test_the_built_in_prompt_is_an_editable_fragment() -> None:
    template = FragmentLibrary.defaults().text("rationale_extraction", DEFAULT_PROMPT_KEY)
    assert template is not None
    prompt = render_prompt(template, "Text with [[BOT]] in it.", Markers("<r>", "</r>"))
    assert "Text with [[BOT]] in it." in prompt  # the document is inserted last, untouched
    assert "<r>" in prompt and "[[EOT]]" not in prompt.replace("Text with [[BOT]] in it.", "")
    with pytest.raises(RationaleError, match=r"\[\[TEXT\]\]"):
        render_prompt("no placeholder", "x")
