"""What the Review tab shows of a sample, as plain data built from what was read: the compare
view's CoTs in display order (blind mode's order and labels), the question box's text, and for
each CoT its span marks, its one-line note and its critiques' scores.

Kept apart from :class:`~thoughtdesk.ui.review.view.ReviewView` (which holds the state and the
widgets) so that the similarity prefetch builds the same views for the next sample.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from thoughtdesk.core.critiques import Critique, ExplanationRating
from thoughtdesk.core.critiques.quotes import QuoteSpan
from thoughtdesk.core.library.reader import StoredSample
from thoughtdesk.core.library.records import model_name
from thoughtdesk.core.review import CotReview, LabelSet, blind_labels, blind_order
from thoughtdesk.core.review.preferences import PairPreference
from thoughtdesk.core.steps.split import cot_step_count, reasoning_step_count
from thoughtdesk.core.visible_text import STYLED_ESCAPES, fitting_prefix, shorten
from thoughtdesk.ui.critiques.text import FLAW_COLOURS
from thoughtdesk.ui.review.compare.cot_panel import REVIEW_CHARS, CotView, SpanMark, capped_steps
from thoughtdesk.ui.review.edits import review_summary
from thoughtdesk.ui.review.label_colours import mark_colours

#: Shown characters of the question in the Review tab's question box (the Samples tab has all).
QUESTION_CHARS = 20_000
#: Shown characters of each choice and each gold answer in the question box.
CHOICE_CHARS = 500
#: Choices and gold answers listed in the question box, at most.
CHOICES_LISTED = 30
#: Shown characters of the whole question box (its parts are capped; this bounds the sum).
QUESTION_BOX_CHARS = QUESTION_CHARS + 2 * CHOICES_LISTED * (CHOICE_CHARS + 40) + 1_000


def cot_views(
    stored: StoredSample,
    *,
    blind: bool,
    author: str,
    critiques: Mapping[int, Sequence[Critique]],
    guided: Collection[int] = (),
    thinking: bool = False,
) -> tuple[list[CotView], list[int | None]]:
    """What the compare view shows of a sample, in display order, and the CoT keys (None for
    the reference). Blind: no model or prompt, the reviewer's own order and labels. ``guided``:
    the keys of CoTs written by a guided run, marked so (not in blind mode: it names the method).
    ``thinking``: each CoT's text is its thinking (cut as the visible text would be), so
    similarity and the word diff compare the thinking ("" where a CoT has none)."""
    sample = stored.sample
    pairs = list(zip(stored.cot_pks, sample.generated_cot, strict=False))
    names: dict[int, str] = {}
    if blind:
        order = blind_order([pk for pk, _ in pairs], author, stored.pk)
        by_pk = dict(pairs)
        pairs = [(pk, by_pk[pk]) for pk in order]
        names = blind_labels(order)
    views: list[CotView] = []
    cot_pks: list[int | None] = []
    if sample.cot:
        steps = [str(step) for step in sample.cot]
        shown_steps = capped_steps(steps, REVIEW_CHARS)
        views.append(
            CotView(
                id="reference",
                text=shown_steps,
                is_reference=True,
                full_text="\n".join(steps) if shown_steps is not steps else "",
                steps=len(steps),
            )
        )
        cot_pks.append(None)
    for cot_pk, cot in pairs:
        answer = cot.answers[0] if cot.answers else None
        # Cut where the shown text passes REVIEW_CHARS: an escape counts its 8 characters.
        text = (cot.reasoning or "") if thinking else (cot.cot or "")
        shown = fitting_prefix(text, REVIEW_CHARS, STYLED_ESCAPES)
        views.append(
            CotView(
                id=str(cot_pk),
                text=shown,
                full_text=text if len(shown) < len(text) else "",
                key=cot_pk,
                model="" if blind else model_name(cot.model),
                prompt_keys=() if blind else tuple(k for k in (cot.instruction, cot.cot_trigger) if k),
                answer=(answer.answer or "") if answer else "",
                correct=answer.correct_answer if answer else None,
                title=names.get(cot_pk, ""),
                critiques=critiques_text(critiques.get(cot_pk, [])),
                guided=not blind and cot_pk in guided,
                reasoning=cot.reasoning or "",
                reasoning_tokens=cot.reasoning_tokens,
                finish_reason=cot.finish_reason,
                shows_thinking=thinking,
                # the step list the Steps tab labels (the whole text's, not the shown cut's)
                steps=reasoning_step_count(cot.reasoning) if thinking else cot_step_count(cot.cot, cot.extra),
            )
        )
        cot_pks.append(cot_pk)
    return views, cot_pks


def question_text(stored: StoredSample) -> str:
    """The question box: where the sample is from, the question, choices, gold answer, each
    capped (a 10 MB choice or gold answer cost 250 ms a show); not revealed (the box does it)."""
    sample = stored.sample
    question = shorten(sample.question or "", QUESTION_CHARS)
    if len(question) != len(sample.question or ""):
        question += " (the Samples tab shows all)"
    # A compact header: where it is from and the gold answer on the first line, the choices on
    # the second, then the question: a long question never pushes them below the box's fold.
    gold = "Gold answer: " + (listed(sample.answer or [], "; ") or "(none)")
    lines = [f"{stored.dataset} / {stored.split} / {shorten(sample.id, CHOICE_CHARS)} · {gold}"]
    if sample.choices:
        lines.append("Choices: " + listed(sample.choices, " · "))
    lines.append(question)
    return "\n".join(lines)


def listed(values: Sequence[object], separator: str) -> str:
    """Up to :data:`CHOICES_LISTED` values, each cut to :data:`CHOICE_CHARS` shown characters."""
    text = separator.join(shorten(str(value), CHOICE_CHARS) for value in values[:CHOICES_LISTED])
    more = len(values) - CHOICES_LISTED
    return text + (f"{separator}… {more:,} more" if more > 0 else "")


def flaw_marks(
    critiques: Mapping[int, Sequence[Critique]],
    quotes: Mapping[int, Sequence[tuple[int, QuoteSpan]]],
    theme: str,
    *,
    blind: bool,
) -> dict[int, list[SpanMark]]:
    """By CoT key, the marks of the text its critiques' main flaws quote (``quotes``: critique
    number and span, :func:`~thoughtdesk.core.critiques.quotes.quotes_by_cot`); blind mode
    leaves the critique model out of the tooltip."""
    foreground, underline = FLAW_COLOURS[theme]  # (the painter uses the theme's own)
    marks: dict[int, list[SpanMark]] = {}
    for cot_pk, found in quotes.items():
        of_cot = critiques[cot_pk]
        for number, span in found:
            who = "" if blind else f" ({of_cot[number].critique_model})"
            tip = f"Quoted by the main flaw of critique {number + 1}{who}"
            marks.setdefault(cot_pk, []).append(SpanMark(span.start, span.end, underline, foreground, tip, flaw=True))
    return marks


def span_marks(
    review: CotReview, labels: LabelSet | None, theme: str, names: Mapping[str, str], flaws: Sequence[SpanMark]
) -> list[SpanMark]:
    """A CoT's span-label marks in their labels' colours for ``theme``, then its ``flaws``."""
    colours = {label.key: label.colour for label in labels.labels} if labels else {}
    marks = []
    for key, span in review.spans:
        background, foreground = mark_colours(colours.get(key, "#999999"), theme)
        marks.append(SpanMark(span.start, span.end, background, foreground, names.get(key, key)))
    marks.extend(flaws)
    return marks


def critiques_text(critiques: Sequence[Critique]) -> str:
    """``"critiques 2/5 4/5 ?"``: the scores of a CoT's critiques, for its statistics line
    (that line is always shown: a note shown on every panel would cost a layout pass)."""
    if not critiques:
        return ""
    scores = " ".join(
        f"{c.parsed.explanation_score:g}/5" if c.parsed.explanation_score is not None else "?" for c in critiques[:5]
    )
    return f"critiques {scores}" + (f" +{len(critiques) - 5}" if len(critiques) > 5 else "")


def cot_note(review: CotReview, names: dict[str, str], mine: ExplanationRating | None, pairwise: str = "") -> str:
    """A CoT's one-line note: the review, this reviewer's rating ``mine`` and ``pairwise``
    verdicts (empty: hidden)."""
    parts = [review_summary(review, names)]
    if mine is not None:
        score = "—" if mine.score is None else f"{mine.score}/5"
        flaws = f" ({', '.join(mine.dimensions)})" if mine.dimensions else ""
        parts.append(f"my rating {score}{flaws}")
    parts.append(pairwise)
    return " · ".join(p for p in parts if p)


def pairwise_summary(cot_pk: int, preferences: Mapping[tuple[int, int], PairPreference]) -> str:
    """This reviewer's pairwise verdicts involving ``cot_pk``: ``pairwise: preferred 2×, other
    preferred 1×, tie 1×`` (empty without any)."""
    won = lost = tied = 0
    for pair, preference in preferences.items():
        if cot_pk not in pair:
            continue
        if preference.preferred_cot_pk is None:
            tied += 1
        elif preference.preferred_cot_pk == cot_pk:
            won += 1
        else:
            lost += 1
    if not (won or lost or tied):
        return ""
    parts = [f"{what} {n}×" for what, n in (("preferred", won), ("other preferred", lost), ("tie", tied)) if n]
    return "pairwise: " + ", ".join(parts)
