"""Catalogue entries of the medical QA datasets (metadata, sources, checksums)."""

from __future__ import annotations

from thoughtdesk.core.datasets.catalogue import DatasetInfo, github_file

_PUBMED_COMMIT = "1cbae8e92f72f20c8d3747cbb3bf5bc53554d997"
_BIORAG_COMMIT = "fdb2e334aa08ad6fc3e3fefd91e409961ebf3e0b"
_MEDPODGPT_COMMIT = "5b1efc45432652ae135703ff3dd85ed6cb7a1dde"

PUBMED_QA = DatasetInfo(
    name="pubmed_qa",
    title="PubMedQA",
    description=(
        "Biomedical research questions answered yes/no/maybe from PubMed abstracts. This is the "
        "1,000-item expert-annotated PQA-L set; the abstract (without its conclusion) is the "
        "context and the conclusion (long answer) is the reference CoT."
    ),
    citation="""@inproceedings{jin2019pubmedqa,
  title={PubMedQA: A Dataset for Biomedical Research Question Answering},
  author={Jin, Qiao and Dhingra, Bhuwan and Liu, Zhengping and Cohen, William and Lu, Xinghua},
  booktitle={Proceedings of the 2019 Conference on Empirical Methods in Natural Language Processing and the 9th International Joint Conference on Natural Language Processing (EMNLP-IJCNLP)},
  pages={2567--2577},
  year={2019}
}""",
    licence="MIT",
    homepage="https://pubmedqa.github.io/",
    answer_type="multiplechoice",
    file_format="ori_pqal.json: a JSON object PMID -> {QUESTION, CONTEXTS, LABELS, MESHES, "
    "final_decision, LONG_ANSWER, ...}",
    splits=("train", "test"),
    file_patterns=(("ori_pqal.json", "*"), ("*pqal*.json", "*")),
    sources=(
        github_file(
            "pubmedqa/pubmedqa",
            _PUBMED_COMMIT,
            "data/ori_pqal.json",
            "ori_pqal.json",
            2584787,
            "8b3276be8942ebbd77f3ddcda12c1749bf0e490045a736fd8438ee40cf37a41d",
        ),
        github_file(
            "pubmedqa/pubmedqa",
            _PUBMED_COMMIT,
            "data/test_ground_truth.json",
            "test_ground_truth.json",
            11414,
            "939fe566f09017d13b1ca64d2ddfee0bc2374b366048152997669cccedc44d51",
            "test",
        ),
    ),
    reference_cot="the long answer (the abstract's conclusion), split into sentences",
    family="medical",
    notes="With test_ground_truth.json beside ori_pqal.json the 500 official test PMIDs form "
    "the 'test' split and the other 500 'train'; without it all 1,000 are 'train'.",
)

MED_QA = DatasetInfo(
    name="med_qa",
    title="MedQA (USMLE)",
    description=(
        "Multiple-choice questions from the United States Medical Licensing Examination (USMLE), 4-option version."
    ),
    citation="""@article{jin2021disease,
  title={What Disease Does This Patient Have? A Large-Scale Open Domain Question Answering Dataset from Medical Exams},
  author={Jin, Di and Pan, Eileen and Oufattole, Nassim and Weng, Wei-Hung and Fang, Hanyi and Szolovits, Peter},
  journal={Applied Sciences},
  volume={11},
  number={14},
  pages={6421},
  year={2021},
  publisher={MDPI}
}""",
    licence="MIT",
    homepage="https://github.com/jind11/MedQA",
    answer_type="multiplechoice",
    file_format="JSON Lines with {question, answer, options:{A..D}, meta_info, answer_idx}",
    splits=("train", "validation", "test"),
    file_patterns=(("*train.jsonl", "train"), ("*dev.jsonl", "validation"), ("*test.jsonl", "test")),
    sources=(
        github_file(
            "Taewhoo/BioRAG",
            _BIORAG_COMMIT,
            "phrases_no_exclude_test.jsonl",
            "phrases_no_exclude_test.jsonl",
            2075680,
            "2e51d17d47099a72c4eea6b6a3307de71360333e0c99beb1d53d7a42834cacc4",
            "test",
        ),
    ),
    reference_cot="",
    family="medical",
    notes="Only the test split is public outside Google Drive; the 5-option US files load too.",
)

MEDMC_QA = DatasetInfo(
    name="medmc_qa",
    title="MedMCQA",
    description=(
        "Multiple-choice questions from Indian medical entrance exams (AIIMS, NEET PG) covering "
        "21 medical subjects, most with an explanation of the answer."
    ),
    citation="""@inproceedings{pal2022medmcqa,
  title={MedMCQA: A Large-scale Multi-Subject Multi-Choice Dataset for Medical domain Question Answering},
  author={Pal, Ankit and Umapathi, Logesh Kumar and Sankarasubbu, Malaikannan},
  booktitle={Proceedings of the Conference on Health, Inference, and Learning},
  series={Proceedings of Machine Learning Research},
  volume={174},
  pages={248--260},
  year={2022},
  publisher={PMLR}
}""",
    licence="MIT",
    homepage="https://medmcqa.github.io/",
    answer_type="multiplechoice",
    file_format="JSON Lines with {question, exp, cop (1-based), opa, opb, opc, opd, "
    "subject_name, topic_name, id, choice_type}",
    splits=("train", "validation", "test"),
    # MedMCQA_test.json (vkola-lab/medpodgpt) holds the official dev split, hence 'validation'.
    file_patterns=(
        ("train.json", "train"),
        ("dev.json", "validation"),
        ("MedMCQA_test.json", "validation"),
        ("test.json", "test"),
    ),
    sources=(
        github_file(
            "vkola-lab/medpodgpt",
            _MEDPODGPT_COMMIT,
            "benchmark/english_medmcqa/MedMCQA_test.json",
            "MedMCQA_test.json",
            2594517,
            "a2b5f53890f4e742b728378fb847bc5338088d48ea01218676379f587270af31",
            "validation",
        ),
    ),
    reference_cot="the explanation ('exp'), as one step, as ThoughtSource does",
    family="medical",
    notes="The official test split has no answers and loads without them.",
)

_MMLU_CITATION = """@inproceedings{hendrycks2021measuring,
  title={Measuring Massive Multitask Language Understanding},
  author={Hendrycks, Dan and Burns, Collin and Basart, Steven and Zou, Andy and Mazeika, Mantas and Song, Dawn and Steinhardt, Jacob},
  booktitle={International Conference on Learning Representations},
  year={2021}
}"""

_MMLU_FILES = {
    "anatomy": (29844, "966dfd5c4579885ebdb8c05d6754ae5834f672632586d8595be3c0f9360e6f4e"),
    "clinical_knowledge": (56562, "06a1ea973000d5ef5d2664c4ac1c68d0423f1cab6b3b682be7942633740811f1"),
    "college_biology": (45351, "e1204cb9d19887ea266145f038b5d4cc1fbc33d7efce186259c4ecca1cbe3119"),
    "college_medicine": (78334, "9c533cfff89edaa317b2e79bbabcdd5e2e522e019679cb4a6475e5f2a1861b1e"),
    "medical_genetics": (18520, "cc30c698e94f12c00e610a39c62d1a1d9587fa53c005359317346081f722c5e6"),
    "professional_medicine": (211585, "a034bf0dda10cb0848bdd3097eb1547d61ca2dac9e9b871563691621c38d51e9"),
}


def _mmlu(subject: str) -> DatasetInfo:
    size, sha256 = _MMLU_FILES[subject]
    title = subject.replace("_", " ")
    return DatasetInfo(
        name=f"mmlu_{subject}",
        title=f"MMLU {title}",
        description=f"The {title} subject of MMLU (Measuring Massive Multitask Language "
        "Understanding): four-option multiple-choice exam questions.",
        citation=_MMLU_CITATION,
        licence="MIT",
        homepage="https://github.com/hendrycks/test",
        answer_type="multiplechoice",
        file_format="headerless CSV with 6 columns: question, A, B, C, D, answer letter",
        splits=("train", "validation", "test"),
        file_patterns=(
            (f"{subject}_dev.csv", "train"),
            (f"{subject}_val.csv", "validation"),
            (f"{subject}_test.csv", "test"),
        ),
        sources=(
            github_file(
                "vkola-lab/medpodgpt",
                _MEDPODGPT_COMMIT,
                f"benchmark/english_mmlu/{subject}_test.csv",
                f"{subject}_test.csv",
                size,
                sha256,
                "test",
            ),
        ),
        family="medical",
        notes="The *_dev.csv few-shot examples load as 'train', as in ThoughtSource.",
    )


MMLU_SUBJECTS = tuple(_mmlu(subject) for subject in _MMLU_FILES)
