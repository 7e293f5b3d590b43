"""Examples in every sub-command's ``--help``, kept in one table so they are easy to review and
a test can check that no command is without them."""

from __future__ import annotations

import argparse

#: Examples per sub-command (space-separated path for nested ones), as a user types them.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "gui": ("thoughtdesk gui --library ~/ward-study.thoughtdesk",),
    "import": (
        "thoughtdesk import medqa_collection.json --collection 'MedQA sample'",
        "thoughtdesk import ~/Downloads/pubmedqa --dataset pubmed_qa --limit 200 --seed 1",
        "thoughtdesk import quiz.csv --map question=problem,answer=label --save-mapping quiz",
        "thoughtdesk import exam.csv --no-header --map 'question=1,choices=2|3|4|5,answer=6,type=multiplechoice'",
        "cat collection.json | thoughtdesk import - --collection piped",
    ),
    "datasets": ("thoughtdesk datasets", "thoughtdesk datasets med_qa --json", "thoughtdesk datasets gsm8k --download"),
    "export": (
        "thoughtdesk export 'MedQA sample' medqa.json",
        "thoughtdesk export 'MedQA sample' - > medqa.json",
        "thoughtdesk export critiqued dscb.jsonl --format dscb",
        "thoughtdesk export 'MedQA sample' answers.csv --format answers-csv",
        "thoughtdesk export 'MedQA sample' train.jsonl --format chat-jsonl --correct-only --preferred-only",
        "thoughtdesk export 'MedQA sample' medqa.parquet --format parquet",
        "thoughtdesk export 'MedQA sample' prefs.jsonl --format dpo --source judge --judge gpt-4o",
        "thoughtdesk export 'MedQA sample' rm.jsonl --format reward --source human",
    ),
    "collections": ("thoughtdesk collections", "thoughtdesk collections --json --library other.thoughtdesk"),
    "stats": ("thoughtdesk stats 'MedQA sample'", "thoughtdesk stats 'MedQA sample' --json"),
    "autolabel": (
        "thoughtdesk autolabel gsm8k --model openai:qwen --base-url http://127.0.0.1:8080/v1 --k 8 --plan-only",
        "thoughtdesk autolabel gsm8k --model openai:qwen --base-url http://127.0.0.1:8080/v1 --k 8",
        "thoughtdesk resume RUN   # a stopped labelling: the steps not yet labelled",
        "thoughtdesk agreement gsm8k --steps --models   # the rollout labels beside those of the reviewers",
    ),
    "generate": (
        "thoughtdesk generate 'MedQA sample' --model openai:gpt-4o-mini --limit 20 --plan-only",
        "thoughtdesk generate 'MedQA sample' --model llamacpp:~/models/gemma-3-270m.gguf --limit 5",
        "thoughtdesk generate 'MedQA sample' --plan-only   # the model and fragments the run planner starts with",
        "thoughtdesk generate quiz --model openai:qwen --base-url http://127.0.0.1:8080/v1 "
        "--instruction qa-01 --trigger kojima-01 --n 3",
        "thoughtdesk generate 'MedQA sample' --model openai:gpt-4o-mini --batch",
    ),
    "critique": (
        "thoughtdesk critique 'MedQA sample' --model openai:gpt-4o --only incorrect --limit 20",
        "thoughtdesk critique quiz --model llamacpp:ds-7b.gguf --preset ds --plan-only",
        "thoughtdesk critique r1-runs --model openai:gpt-4o --judge thinking --limit 20",
    ),
    "cots": ("thoughtdesk cots split-thinking 'R1 distill' --dry-run",),
    "cots split-thinking": (
        "thoughtdesk cots split-thinking 'R1 distill'",
        "thoughtdesk cots split-thinking imported --tags '<|begin_of_thought|>,<|end_of_thought|>' --json",
        "thoughtdesk cots split-thinking 'R1 distill' --undo",
    ),
    "judge": (
        "thoughtdesk judge 'MedQA sample' --pairwise --model openai:gpt-4o --plan-only",
        "thoughtdesk judge quiz --pairwise --model openai:qwen --base-url http://127.0.0.1:8080/v1 "
        "--conditions 'gpt-4o-mini,llama-3-8b' --concurrency 16",
    ),
    "judgements": (
        "thoughtdesk judgements 'MedQA sample'",
        "thoughtdesk judgements 'MedQA sample' --json --judge gpt-4o",
    ),
    "revise": (
        "thoughtdesk revise quiz --model openai:gpt-4o-mini --critique-model gpt-4o --only incorrect",
        "thoughtdesk revise quiz --model llamacpp:qwen.gguf --plan-only",
    ),
    "revisions": ("thoughtdesk revisions quiz", "thoughtdesk revisions quiz --json"),
    "fragments": ("thoughtdesk fragments", "thoughtdesk fragments --json"),
    "fragments import": (
        "thoughtdesk fragments import my_fragments.json",
        "thoughtdesk fragments import DSCB-prompts.json",
    ),
    "fragments list": ("thoughtdesk fragments list --kind cot_trigger",),
    "runs": (
        "thoughtdesk runs",
        "thoughtdesk runs --rename 3 baseline",
        "thoughtdesk runs --delete 4 --json",
        "thoughtdesk runs --cancel 5",
    ),
    "resume": (
        "thoughtdesk resume 3",
        "thoughtdesk resume baseline --concurrency 2",
        "thoughtdesk resume 5 --wait 600",
    ),
    "evaluate": (
        "thoughtdesk evaluate 'MedQA sample'",
        "thoughtdesk evaluate 'MedQA sample' --rescore --markdown > results.md",
        "thoughtdesk evaluate r1-runs --json --truncated-as-wrong",
    ),
    "critiques": ("thoughtdesk critiques quiz", "thoughtdesk critiques quiz --csv > critiques.csv"),
    "report": (
        "thoughtdesk report 'MedQA sample' --html medqa-review.html",
        "thoughtdesk report 'MedQA sample' --queue 'ward round' --author alice --pdf ward-round.pdf",
    ),
    "annotations": ("thoughtdesk annotations export mine.json --author alice",),
    "annotations export": ("thoughtdesk annotations export mine.json --author alice --collection quiz",),
    "annotations import": ("thoughtdesk annotations import theirs.json --dry-run",),
    "agreement": ("thoughtdesk agreement quiz", "thoughtdesk agreement quiz --label correct --json"),
    "library": (
        "thoughtdesk library path",
        "thoughtdesk library metadata --output td-metadata.json",
        'datasette "$(thoughtdesk library path)" --metadata td-metadata.json',
    ),
    "library path": ('datasette "$(thoughtdesk library path)"',),
    "library metadata": (
        "thoughtdesk library metadata --output td-metadata.json",
        'datasette "$(thoughtdesk library path)" --metadata td-metadata.json',
    ),
    "backup": ("thoughtdesk backup", "thoughtdesk backup ~/backups/before-review.thoughtdesk --json"),
    "keys": ("thoughtdesk keys list", "thoughtdesk keys set openai", "thoughtdesk keys delete anthropic"),
    "keys set": (
        "thoughtdesk keys set openai",
        'printf %s "$KEY" | thoughtdesk keys set openai --base-url http://127.0.0.1:8080/v1',
    ),
    "keys list": ("thoughtdesk keys list --json",),
    "keys delete": ("thoughtdesk keys delete openai",),
    "logprobs": (
        "thoughtdesk logprobs --model llamacpp:~/models/gemma.gguf --prompt 'The capital of France is' "
        "--continuation ' Paris'",
        "thoughtdesk logprobs --model openai:qwen --base-url http://127.0.0.1:8080/v1 --prompt 'Q: 2+2?' "
        "--continuation ' 4' --json",
    ),
    "rationales": (
        "thoughtdesk rationales extract gsm8k --model llamacpp:~/models/qwen.gguf",
        "thoughtdesk rationales filter gsm8k --scorer llamacpp:~/models/qwen.gguf --preset math",
        "thoughtdesk rationales export gsm8k rationales.jsonl --preset math",
    ),
    "rationales extract": (
        "thoughtdesk rationales extract gsm8k --model llamacpp:~/models/qwen.gguf",
        "thoughtdesk rationales extract notes --source notes.txt --model openai:gpt-4o-mini --json",
    ),
    "rationales filter": (
        "thoughtdesk rationales filter gsm8k --scorer llamacpp:~/models/qwen.gguf --preset math",
        "thoughtdesk rationales filter gsm8k --scorer llamacpp:~/models/qwen.gguf --limit 100 --json",
    ),
    "rationales export": (
        "thoughtdesk rationales export gsm8k rationales.jsonl --preset math",
        "thoughtdesk rationales export gsm8k all.jsonl --unfiltered --json",
    ),
    "trajectories": ("thoughtdesk trajectories 'MedQA sample'", "thoughtdesk trajectories 'MedQA sample' --json"),
}


class ExamplesFormatter(argparse.HelpFormatter):
    """The default layout, except that an ``examples:`` epilog keeps its lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def add_examples(parser: argparse.ArgumentParser, path: str = "") -> None:
    """Give every sub-command of ``parser`` its examples as the ``--help`` epilog."""
    for action in parser._actions:  # private: argparse has no public walk of sub-parsers
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, child in action.choices.items():
            full = f"{path} {name}".strip()
            examples = EXAMPLES.get(full)
            if examples and not child.epilog:
                child.epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
            child.formatter_class = ExamplesFormatter
            add_examples(child, full)
