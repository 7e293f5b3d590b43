"""Catalogue entries of aqua, open_book_qa, entailment_bank and worldtree."""

from __future__ import annotations

from thoughtdesk.core.datasets.catalogue import DatasetInfo, SourceFile, github_file

_AQUA_COMMIT = "26b64ed1f22208c6742f47df547dfd65088ec30d"
_OBQA_COMMIT = "eac0c145529af1a4e7924c979bbbba0b10354de3"
_EB_COMMIT = "daac2fdb7ab52ec3ef8f2953f59288c1edd7c2f0"
_OBQA_DIR = "OpenBookQA-V1-Sep2018/Data"
_EB_DIR = "data/public_dataset/entailment_trees_emnlp2021_data_v2"

AQUA = DatasetInfo(
    name="aqua",
    title="AQuA-RAT",
    description=(
        "Algebra Question Answering with Rationales: algebraic word problems with five options "
        "and a natural-language rationale explaining the solution."
    ),
    citation="""@inproceedings{ling-etal-2017-program,
  title={Program Induction by Rationale Generation: Learning to Solve and Explain Algebraic Word Problems},
  author={Ling, Wang and Yogatama, Dani and Dyer, Chris and Blunsom, Phil},
  booktitle={Proceedings of the 55th Annual Meeting of the Association for Computational Linguistics},
  pages={158--167},
  year={2017},
  url={https://aclanthology.org/P17-1015}
}""",
    licence="Apache-2.0",
    homepage="https://github.com/deepmind/AQuA",
    answer_type="multiplechoice",
    file_format="JSON Lines (despite .json) with {question, options ['A)..'..'E)..'], rationale, correct}",
    splits=("train", "validation", "test"),
    file_patterns=(("train.json", "train"), ("dev.json", "validation"), ("test.json", "test")),
    sources=(
        github_file(
            "deepmind/AQuA",
            _AQUA_COMMIT,
            "dev.json",
            "dev.json",
            132008,
            "4a52301d8a49ae0b286f8e697f9c5da1b109b247b825b47b4c6de34312dceec5",
            "validation",
        ),
        github_file(
            "deepmind/AQuA",
            _AQUA_COMMIT,
            "test.json",
            "test.json",
            130192,
            "de41581881ef95c5588c44ddc701c77fd480839241dd422a0d181262af24520c",
            "test",
        ),
    ),
    reference_cot="the rationale, one line per step",
    family="science",
)

OPEN_BOOK_QA = DatasetInfo(
    name="open_book_qa",
    title="OpenBookQA",
    description=(
        "Four-option elementary science questions that need a core science fact from a small "
        "'open book' plus broad common knowledge."
    ),
    citation="""@inproceedings{mihaylov-etal-2018-suit,
  title={Can a Suit of Armor Conduct Electricity? A New Dataset for Open Book Question Answering},
  author={Mihaylov, Todor and Clark, Peter and Khot, Tushar and Sabharwal, Ashish},
  booktitle={Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing},
  pages={2381--2391},
  year={2018},
  url={https://aclanthology.org/D18-1260}
}""",
    licence="Apache-2.0",
    homepage="https://allenai.org/data/open-book-qa",
    answer_type="multiplechoice",
    file_format="JSON Lines with {id, question:{stem, choices:[{text, label}]}, answerKey} "
    "(Additional/*_complete.jsonl adds fact1)",
    splits=("train", "validation", "test"),
    file_patterns=(
        ("train_complete.jsonl", "train"),
        ("dev_complete.jsonl", "validation"),
        ("test_complete.jsonl", "test"),
        ("Main/train.jsonl", "train"),
        ("Main/dev.jsonl", "validation"),
        ("Main/test.jsonl", "test"),
    ),
    sources=tuple(
        github_file(
            "katulevskiy/NLP-OpenBookQA", _OBQA_COMMIT, f"{_OBQA_DIR}/{path}", f"Data/{path}", size, sha256, split
        )
        for path, size, sha256, split in (
            (
                "Additional/train_complete.jsonl",
                2205622,
                "804c5117c096a047e3e826627efd472902e6717e51f5deb1ab831a6465f6098f",
                "train",
            ),
            (
                "Additional/dev_complete.jsonl",
                228416,
                "aa697e2c1ea4cd4ce7bbf1c64dc3385940a1399448a00a9d62a78b85109f627d",
                "validation",
            ),
            (
                "Additional/test_complete.jsonl",
                223201,
                "2a5566ba69bb7196e3b24aa26fcfeea717272dfad6527aebd5e3a6fc0a121ace",
                "test",
            ),
        )
    ),
    reference_cot="the core science fact (fact1) from the *_complete.jsonl files",
    family="science",
    notes="Main/*.jsonl load too; fact1 is then taken from ../Additional/<split>_complete.jsonl when present.",
)

ENTAILMENT_BANK = DatasetInfo(
    name="entailment_bank",
    title="EntailmentBank",
    description=(
        "Multistep entailment trees explaining answers to ARC science questions: from known "
        "facts through intermediate conclusions to the hypothesis (question + answer)."
    ),
    citation="""@inproceedings{dalvi-etal-2021-explaining,
  title={Explaining Answers with Entailment Trees},
  author={Dalvi, Bhavana and Jansen, Peter and Tafjord, Oyvind and Xie, Zhengnan and Smith, Hannah and Pipatanangkura, Leighanna and Clark, Peter},
  booktitle={Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing},
  pages={7358--7370},
  year={2021},
  url={https://aclanthology.org/2021.emnlp-main.585}
}""",
    licence="CC BY-SA 4.0 (as listed by ThoughtSource; the repository is Apache-2.0)",
    homepage="https://allenai.org/data/entailmentbank",
    answer_type="text",
    file_format="JSON Lines with {id, context, question, answer, hypothesis, proof "
    "('sent1 & sent2 -> int1: ..; ...'), meta{triples, intermediate_conclusions}}",
    splits=("train", "validation", "test"),
    file_patterns=(
        ("task_1/train.jsonl", "train"),
        ("task_1/dev.jsonl", "validation"),
        ("task_1/test.jsonl", "test"),
        ("train.jsonl", "train"),
        ("dev.jsonl", "validation"),
        ("test.jsonl", "test"),
    ),
    sources=tuple(
        github_file(
            "allenai/entailment_bank",
            _EB_COMMIT,
            f"{_EB_DIR}/dataset/task_1/{name}",
            f"dataset/task_1/{name}",
            size,
            sha256,
            split,
        )
        for name, size, sha256, split in (
            ("dev.jsonl", 970998, "a9779787851fcdf2cdd5841520deda73474ebc4915e562225744807b5d8d1f5d", "validation"),
            ("test.jsonl", 1827479, "ae02515bf620f2cc865a4c6ed60adba595aba575e3ab471ecd27d65e6ff9c52f", "test"),
        )
    ),
    reference_cot="the proof steps as sentences, intermediate conclusions resolved to text",
    family="science",
    notes="A folder loads task_1 (gold facts only), as ThoughtSource does; give a task_2 or "
    "task_3 file to load that task.",
)

WORLDTREE = DatasetInfo(
    name="worldtree",
    title="WorldTree V2.1",
    description=(
        "Elementary science exam questions (ARC) with detailed explanation graphs: each "
        "question is explained by 1-16 facts from a semi-structured tablestore."
    ),
    citation="""@inproceedings{xie-etal-2020-worldtree,
  title={{W}orld{T}ree V2: A Corpus of Science-Domain Structured Explanations and Inference Patterns supporting Multi-Hop Inference},
  author={Xie, Zhengnan and Thiem, Sebastian and Martin, Jaycie and Wainwright, Elizabeth and Marmorstein, Steven and Jansen, Peter},
  booktitle={Proceedings of the 12th Language Resources and Evaluation Conference},
  pages={5456--5473},
  year={2020},
  url={https://aclanthology.org/2020.lrec-1.671}
}""",
    licence="AI2 Mercury Dataset licence (no redistribution)",
    homepage="http://cognitiveai.org/explanationbank/",
    answer_type="multiplechoice",
    file_format="TSV (no quoting) with header QuestionID, originalQuestionID, totalPossiblePoint, "
    "AnswerKey, ..., explanation ('UID|ROLE ...'), question (choices inline as "
    "'(A) .. (B) ..'), flags, arcset",
    splits=("train", "validation", "test"),
    file_patterns=(
        ("questions.train.tsv", "train"),
        ("questions.dev.tsv", "validation"),
        ("questions.test.tsv", "test"),
    ),
    sources=(
        SourceFile(
            "http://www.cognitiveai.org/dist/WorldtreeExplanationCorpusV2.1_Feb2020.zip",
            "WorldtreeExplanationCorpusV2.1_Feb2020.zip",
        ),
    ),
    reference_cot="the explanation's facts, resolved from the tablestore",
    family="science",
    notes="Facts are resolved from the tablestore (tablestore/v2.1/tables/*.tsv) or "
    "EntailmentBank's worldtree_corpus_sentences_extended.json found beside the "
    "questions, or from the facts= option. The download is a zip that ThoughtDesk "
    "unpacks (checking every member's CRC-32, as no checksum is published); a zip "
    "fetched by hand can be loaded as it is or unpacked.",
    options={"facts": "tablestore tables folder or JSON UID -> fact sentence"},
)
