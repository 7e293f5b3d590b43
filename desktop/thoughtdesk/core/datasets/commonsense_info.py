"""Catalogue entries of commonsense_qa (+ ECQA), strategy_qa and qed."""

from __future__ import annotations

from thoughtdesk.core.datasets.catalogue import DatasetInfo, github_file

_ZEROSHOT_COMMIT = "5ef330fcdeec0cd26aee27943504f91f8ec1c33c"
_ECQA_CSV_COMMIT = "ab3897b4574895aa11062fd28304b689422c459b"
_STRATEGY_COMMIT = "1ba1e97452e189569357876f2854b01357ffbe37"
_QED_COMMIT = "2492920337122918bbfc7d12c1268b9af796c6cf"

COMMONSENSE_QA = DatasetInfo(
    name="commonsense_qa",
    title="CommonsenseQA",
    description=(
        "Five-option multiple-choice questions that need commonsense knowledge, built from "
        "ConceptNet relations. Reference CoTs are the ECQA (Explanations for CommonsenseQA) "
        "free-flow explanations where an ECQA file with the same question id is available."
    ),
    citation="""@inproceedings{talmor-etal-2019-commonsenseqa,
  title={{C}ommonsense{QA}: A Question Answering Challenge Targeting Commonsense Knowledge},
  author={Talmor, Alon and Herzig, Jonathan and Lourie, Nicholas and Berant, Jonathan},
  booktitle={Proceedings of the 2019 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  pages={4149--4158},
  year={2019},
  url={https://aclanthology.org/N19-1421}
}
@inproceedings{aggarwal-etal-2021-explanations,
  title={Explanations for {C}ommonsense{QA}: New Dataset and Models},
  author={Aggarwal, Shourya and Mandowara, Divyanshu and Agrawal, Vishwajeet and Khandelwal, Dinesh and Singla, Parag and Garg, Dinesh},
  booktitle={Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th International Joint Conference on Natural Language Processing},
  pages={3050--3065},
  year={2021},
  url={https://aclanthology.org/2021.acl-long.238}
}""",
    licence="MIT (CommonsenseQA); CDLA-Sharing-1.0 (ECQA explanations)",
    homepage="https://www.tau-nlp.sites.tau.ac.il/commonsenseqa",
    answer_type="multiplechoice",
    file_format="JSON Lines with {answerKey, id, question:{question_concept, choices:[{label, text}], stem}}",
    splits=("train", "validation", "test"),
    file_patterns=(
        ("train_rand_split.jsonl", "train"),
        ("dev_rand_split.jsonl", "validation"),
        ("test_rand_split_no_answers.jsonl", "test"),
    ),
    sources=(
        github_file(
            "kojima-takeshi188/zero_shot_cot",
            _ZEROSHOT_COMMIT,
            "dataset/CommonsenseQA/train_rand_split.jsonl",
            "train_rand_split.jsonl",
            3785890,
            "58ffa3c8472410e24b8c43f423d89c8a003d8284698a6ed7874355dedd09a2fb",
            "train",
        ),
        github_file(
            "kojima-takeshi188/zero_shot_cot",
            _ZEROSHOT_COMMIT,
            "dataset/CommonsenseQA/dev_rand_split.jsonl",
            "dev_rand_split.jsonl",
            471653,
            "3210497fdaae614ac085d9eb873dd7f4d49b6f965a93adadc803e1229fd8a02a",
            "validation",
        ),
        github_file(
            "kojima-takeshi188/zero_shot_cot",
            _ZEROSHOT_COMMIT,
            "dataset/CommonsenseQA/test_rand_split_no_answers.jsonl",
            "test_rand_split_no_answers.jsonl",
            423148,
            "b426896d71a9cd064cf01cfaf6e920817c51701ef66028883ac1af2e73ad5f29",
            "test",
        ),
        github_file(
            "dixrow/Autonomous-learning-agents",
            _ECQA_CSV_COMMIT,
            "data/cqa_data_test.csv",
            "ecqa/cqa_data_test.csv",
            1791198,
            "da73defebf31fc39110bc62545bf20f1e5d4f229962f0c66507525e20354999f",
        ),
        github_file(
            "dixrow/Autonomous-learning-agents",
            _ECQA_CSV_COMMIT,
            "data/cqa_data_val.csv",
            "ecqa/cqa_data_val.csv",
            896537,
            "9ae7526e42dbf00dcfd988f4cf33795570b5c2aeb6bf6d87b987b07b7653af0d",
        ),
    ),
    reference_cot="ECQA free-flow explanation (taskB), one sentence per step, matched by id",
    family="commonsense",
    notes="ECQA explanations are read from the ecqa= option or an 'ecqa' folder inside or "
    "beside the dataset folder (cqa_data_*.csv from the ECQA authors' script, or a "
    "JSONL of {id, explanation}). The test file has no answers.",
    options={"ecqa": "ECQA CSV/JSONL file or folder with the explanations"},
)

STRATEGY_QA = DatasetInfo(
    name="strategy_qa",
    title="StrategyQA",
    description=(
        "Yes/no questions whose reasoning steps are implicit and must be inferred with a "
        "strategy; each has a decomposition into sub-questions, evidence paragraphs and the "
        "facts needed to answer it."
    ),
    citation="""@article{geva-etal-2021-aristotle,
  title={Did Aristotle Use a Laptop? A Question Answering Benchmark with Implicit Reasoning Strategies},
  author={Geva, Mor and Khashabi, Daniel and Segal, Elad and Khot, Tushar and Roth, Dan and Berant, Jonathan},
  journal={Transactions of the Association for Computational Linguistics},
  volume={9},
  pages={346--361},
  year={2021},
  url={https://aclanthology.org/2021.tacl-1.21}
}""",
    licence="MIT",
    homepage="https://allenai.org/data/strategyqa",
    answer_type="bool",
    file_format="a JSON array of {qid, term, description, question, answer (true/false), "
    "facts, decomposition, evidence}",
    splits=("train", "validation", "test"),
    file_patterns=(
        ("strategyqa_train.json", "train"),
        ("strategyqa_test.json", "test"),
        ("train.json", "train"),
        ("dev.json", "validation"),
    ),
    sources=(
        github_file(
            "eladsegal/strategyqa",
            _STRATEGY_COMMIT,
            "data/strategyqa/train.json",
            "train.json",
            3857762,
            "0f72560b8a6fad3db847d2f1a7524fb087297843bb45a8d3245ffd68cbe0de12",
            "train",
        ),
        github_file(
            "eladsegal/strategyqa",
            _STRATEGY_COMMIT,
            "data/strategyqa/dev.json",
            "dev.json",
            424195,
            "0d94842ffb022db8fd5ecd2168b785d5cf67f6faf64f665476bad544a3eb9dde",
            "validation",
        ),
    ),
    reference_cot="the facts; the decomposition is kept in the sample's extra 'decomposition'",
    family="commonsense",
    notes="train.json/dev.json are the authors' 90/10 split of the official train set.",
)

QED = DatasetInfo(
    name="qed",
    title="QED",
    description=(
        "Explanations for Natural Questions answers: the sentence that entails the answer, the "
        "referential equalities between question and sentence phrases, and the answer span."
    ),
    citation="""@article{lamm-etal-2021-qed,
  title={{QED}: A Framework and Dataset for Explanations in Question Answering},
  author={Lamm, Matthew and Palomaki, Jennimaria and Alberti, Chris and Andor, Daniel and Choi, Eunsol and Soares, Livio Baldini and Collins, Michael},
  journal={Transactions of the Association for Computational Linguistics},
  volume={9},
  pages={790--806},
  year={2021},
  url={https://aclanthology.org/2021.tacl-1.48}
}""",
    licence="CC BY-SA 3.0",
    homepage="https://github.com/google-research-datasets/QED",
    answer_type="collection",
    file_format="JSON Lines with {example_id, title_text, url, question_text, paragraph_text, "
    "sentence_starts, original_nq_answers, annotation}",
    splits=("train", "validation"),
    file_patterns=(("qed-train.jsonlines", "train"), ("qed-dev.jsonlines", "validation")),
    sources=(
        github_file(
            "google-research-datasets/QED",
            _QED_COMMIT,
            "qed-dev.jsonlines",
            "qed-dev.jsonlines",
            2244232,
            "2ea322b71a333023380c3954083b81af2d5670c8ac47ddec58c843233895c429",
            "validation",
        ),
    ),
    reference_cot="the entailing sentence plus the referential equalities as sentences",
    family="commonsense",
    notes="All items load; only 'single_sentence' items have a reference CoT (ThoughtSource drops the others).",
)
