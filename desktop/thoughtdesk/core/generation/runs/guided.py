"""Guided generation: a CoT written one step (sentence) at a time, each step chosen among
sampled candidates (RATIONALYST's inference loop and its baselines; docs/rationales.md).

Per step, with ``rationalyst``: the rationale model writes a rationale for the trajectory so far
(greedy); the agent samples N candidate next steps; *implicit* supervision scores each candidate
by its mean token log-prob (or decayed mean) under the scorer given trajectory + rationale and
keeps the best; *explicit* supervision puts the rationale in the agent's context and keeps the
first candidate. ``stepwise`` samples one candidate with no rationale (the plain step-by-step
baseline); ``process`` has a rater model rate each candidate 0-3 and keeps the best. Ties go to
the earlier candidate. A trajectory stops when its step states the answer ("The answer is" and
variants), when the agent writes nothing, or at the step limit.

The run engine (:mod:`.execute`) drives :class:`GuidedWriter` one step at a time and stores each
step as it is chosen (:mod:`.trajectories`), so a killed run resumes at the step it stopped at.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from thoughtdesk.core.generation.backends import (
    Backend,
    BadResponse,
    ChatMessage,
    PriceTable,
    Request,
    Response,
    estimate_request_tokens,
    estimate_tokens,
)
from thoughtdesk.core.generation.guide_prompts import answer_stated, fill, first_step, join_steps, parse_rating
from thoughtdesk.core.generation.runs.spec import GuideSpec, ModelSpec
from thoughtdesk.core.generation.runs.trajectories import Candidate, TrajectoryStep
from thoughtdesk.core.steps.judge import candidate_score, parse_first_error, processbench_prompt
from thoughtdesk.core.trace_marks import THINK_CLOSE, THINK_OPEN, after_thinking

#: Seeds of successive steps differ by this much, so a seeded run does not sample the same
#: candidates at every step (candidate i of a step uses seed + i).
STEP_SEED_STRIDE = 1000
#: Characters of an unparseable rater reply kept with the step (for inspection).
UNPARSED_REPLY_CHARS = 200


@dataclass
class _Usage:
    """Tokens, cost and time of one step's calls, over all the models it called."""

    prices: PriceTable
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0
    latency: float = 0.0
    by_role: dict[str, dict[str, float]] = field(default_factory=dict)  # tokens, calls, seconds by role

    def add(self, role: str, model: ModelSpec, prompt_tokens: int, completion_tokens: int, latency: float) -> None:
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.latency += latency
        part = self.by_role.setdefault(role, {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "seconds": 0.0})
        part["prompt_tokens"] += prompt_tokens
        part["completion_tokens"] += completion_tokens
        part["calls"] += 1
        part["seconds"] += latency
        cost = self.prices.cost(model.price_provider, model.model_name, prompt_tokens, completion_tokens)
        self.cost = None if cost is None or self.cost is None else self.cost + cost

    def add_response(self, role: str, model: ModelSpec, call: Request, response: Response) -> None:
        estimated_in, _ = estimate_request_tokens(call)
        prompt = response.prompt_tokens if response.prompt_tokens is not None else estimated_in
        completion = (
            response.completion_tokens
            if response.completion_tokens is not None
            else sum(max(1, len(t) // 4) for t in response.texts)
        )
        self.add(role, model, prompt, completion, response.latency)


@dataclass(frozen=True, slots=True)
class Helper:
    """A helper model of a guided run and the backend that calls it."""

    model: ModelSpec
    backend: Backend


class GuidedWriter:
    """Writes the steps of guided CoTs for one agent model.

    ``texts`` are the ``guide`` fragments by key (the run's stored copies); ``helpers`` the
    rationale, scorer and rater models by role, as the guide needs them.
    """

    def __init__(
        self,
        guide: GuideSpec,
        texts: Mapping[str, str],
        agent: Helper,
        helpers: Mapping[str, Helper],
        prices: PriceTable | None = None,
    ) -> None:
        self.guide, self.texts, self.agent, self.helpers = guide, dict(texts), agent, dict(helpers)
        self.prices = prices or PriceTable()

    # --- the calls --------------------------------------------------------------------

    @staticmethod
    def _request(
        model: ModelSpec, prompt: str, *, temperature: float, max_tokens: int, n: int = 1, seed: int | None = None
    ) -> Request:
        if model.chat:
            return Request(
                model=model.model_name,
                messages=(ChatMessage("user", prompt),),
                temperature=temperature,
                max_tokens=max_tokens,
                n=n,
                seed=seed,
                timeout=model.timeout,
            )
        # A local model's completion template is applied by its backend (as for any run's prompt).
        return Request(
            model=model.model_name,
            prompt=prompt,
            temperature=temperature,
            max_tokens=max_tokens,
            n=n,
            seed=seed,
            timeout=model.timeout,
        )

    async def rationale(self, trajectory: str, usage: _Usage) -> str:
        """The rationale model's rationale for the next step (greedy, first line)."""
        helper = self.helpers["rationale"]
        call = self._request(
            helper.model,
            fill(self.texts["rationale"], {"TRAJECTORY": trajectory}),
            temperature=0.0,
            max_tokens=self.guide.rationale_max_tokens,
        )
        response = await helper.backend.complete(call)
        usage.add_response("rationale", helper.model, call, response)
        text = after_thinking(response.texts[0]) if response.texts else ""  # a thinking model's reply
        return next((line.strip() for line in text.splitlines() if line.strip()), "")

    async def candidates(self, context: str, seed: int | None, usage: _Usage) -> list[str]:
        """N sampled next steps, each cut to its first sentence."""
        model = self.agent.model
        prompt = fill(self.texts["step_chat"], {"TRAJECTORY": context}) if model.chat else context
        call = self._request(
            model,
            prompt,
            temperature=self.guide.step_temperature,
            max_tokens=self.guide.step_max_tokens,
            n=self.guide.n_candidates,
            seed=seed,
        )
        response = await self.agent.backend.complete(call)
        usage.add_response("agent", model, call, response)
        if not response.texts:
            raise BadResponse(
                self.agent.backend.provider, "the model returned no candidate steps", raw_body=response.raw_body
            )
        steps = [first_step(text) for text in response.texts]
        if not any(steps) and any(THINK_OPEN in text and THINK_CLOSE not in text for text in response.texts):
            # A reasoning model that spent the step's tokens thinking wrote no step: say so rather
            # than end the trajectory on an empty step.
            raise BadResponse(
                self.agent.backend.provider,
                f"the model's reply was all thinking (<think> never closed within {self.guide.step_max_tokens} "
                "tokens): raise the step's max tokens or turn the model's thinking off",
                raw_body=response.raw_body,
            )
        return steps

    async def implicit_scores(
        self, trajectory: str, rationale: str, steps: Sequence[str], usage: _Usage
    ) -> list[float]:
        """Each candidate's mean (or decayed mean) token log-prob under the scorer, given the
        trajectory and the rationale; the prefix is scored once for all candidates."""
        helper = self.helpers["scorer"]
        prefix = fill(self.texts["scorer"], {"TRAJECTORY": trajectory, "RATIONALE": rationale})
        started = time.monotonic()
        scored = await helper.backend.score(prefix, [" " + step for step in steps])
        evaluated = sum(s.evaluated_tokens for s in scored) or estimate_tokens(prefix) + sum(
            estimate_tokens(step) for step in steps
        )
        usage.add("scorer", helper.model, evaluated, 0, time.monotonic() - started)
        decay = self.guide.decay
        return [s.decayed_mean(decay) if decay is not None else s.mean for s in scored]

    async def judged(
        self, prompt: str, chosen: Sequence[str], candidates: Sequence[str], usage: _Usage
    ) -> tuple[list[float | None], list[dict[str, object]]]:
        """``rater_style`` processbench: a step judge reads ProcessBench's prompt (the problem as
        prompted, the steps so far and one candidate, tagged) and names the first wrong
        paragraph; each candidate's score is :func:`candidate_score` of that verdict. Replies
        without a readable index are kept and counted as with ratings."""
        helper = self.helpers["rater"]
        calls = [
            self._request(
                helper.model,
                processbench_prompt(prompt, [*chosen, step]),
                temperature=0.0,
                max_tokens=helper.model.max_tokens,
            )
            for step in candidates
        ]
        responses = await asyncio.gather(*(helper.backend.complete(call) for call in calls))
        out: list[float | None] = []
        unparsed: list[dict[str, object]] = []
        for index, (call, response) in enumerate(zip(calls, responses, strict=True)):
            usage.add_response("rater", helper.model, call, response)
            reply = response.texts[0] if response.texts else ""
            score = candidate_score(parse_first_error(reply, len(chosen) + 1), len(chosen))
            out.append(score)
            if score is None:
                unparsed.append({"candidate": index, "reply": reply[:UNPARSED_REPLY_CHARS]})
        return out, unparsed

    async def ratings(
        self, trajectory: str, steps: Sequence[str], usage: _Usage
    ) -> tuple[list[float | None], list[dict[str, object]]]:
        """The rater's 0-3 rating of each candidate (None when its reply holds no standalone 0-3
        rating: :func:`parse_rating`), and the unparseable replies (candidate index and the
        reply's first ``UNPARSED_REPLY_CHARS`` characters), kept with the step and counted."""
        helper = self.helpers["rater"]
        calls = [
            self._request(
                helper.model,
                fill(self.texts["rater"], {"TRAJECTORY": trajectory, "CANDIDATE": step}),
                temperature=0.0,
                max_tokens=4,
            )
            for step in steps
        ]
        responses = await asyncio.gather(*(helper.backend.complete(call) for call in calls))
        out: list[float | None] = []
        unparsed: list[dict[str, object]] = []
        for index, (call, response) in enumerate(zip(calls, responses, strict=True)):
            usage.add_response("rater", helper.model, call, response)
            reply = response.texts[0] if response.texts else ""
            rating = parse_rating(after_thinking(reply))  # a rating, not a number the rater thought about
            out.append(None if rating is None else float(rating))
            if rating is None:
                unparsed.append({"candidate": index, "reply": reply[:UNPARSED_REPLY_CHARS]})
        return out, unparsed

    # --- one step ---------------------------------------------------------------------

    async def step(self, prompt: str, steps: Sequence[str], index: int, *, seed: int | None = None) -> TrajectoryStep:
        """Write step ``index`` after ``steps`` (the chosen steps so far) of the trajectory
        that starts with ``prompt``. ``seed`` is the agent's base seed (None: unseeded)."""
        usage = _Usage(self.prices)
        trajectory = join_steps(prompt, list(steps))
        guide = self.guide
        step_seed = None if seed is None else seed + STEP_SEED_STRIDE * index
        rationale: str | None = None
        if guide.method == "rationalyst":
            rationale = await self.rationale(trajectory, usage)
        context = trajectory
        if guide.method == "rationalyst" and guide.supervision == "explicit":
            context = fill(self.texts["explicit"], {"TRAJECTORY": trajectory, "RATIONALE": rationale or ""})
        texts = await self.candidates(context, step_seed, usage)
        scores: list[float | None] = [None] * len(texts)
        extra: dict[str, object] = {"usage": usage.by_role}
        if guide.scorer is not None:
            scored = await self.implicit_scores(trajectory, rationale or "", texts, usage)
            # An empty candidate has no tokens to score: it is never preferred.
            scores = [s if text and not math.isnan(s) else -math.inf for s, text in zip(scored, texts, strict=True)]
        elif guide.method == "process" and guide.rater_style == "processbench":
            scores, unparsed = await self.judged(prompt, steps, texts, usage)
            if unparsed:
                extra["unparsed_ratings"] = unparsed
        elif guide.method == "process":
            scores, unparsed = await self.ratings(trajectory, texts, usage)
            if unparsed:
                extra["unparsed_ratings"] = unparsed
        chosen = best(scores, texts)
        final = not texts[chosen] or answer_stated(texts[chosen]) or index + 1 >= guide.max_steps
        return TrajectoryStep(
            index=index,
            rationale=rationale,
            candidates=tuple(Candidate(t, s) for t, s in zip(texts, scores, strict=True)),
            chosen=chosen,
            final=final,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost=usage.cost,
            latency=usage.latency,
            extra=extra,
        )


def best(scores: Sequence[float | None], texts: Sequence[str]) -> int:
    """The index of the best-scored non-empty candidate (the first on ties; with no scores the
    first non-empty one; 0 when all are empty)."""
    order = [i for i, text in enumerate(texts) if text] or [0]

    def rank(i: int) -> tuple[float, int]:
        score = scores[i]
        return (-math.inf if score is None else score, -i)

    return max(order, key=rank)
