"""Catalogue entries (metadata, sources, checksums) of the math word problem datasets.

Sizes and SHA-256 digests are those of the files at the pinned commits (checked against
byte-identical copies); the URLs are the public raw-file addresses of those commits.
"""

from __future__ import annotations

from thoughtdesk.core.datasets.catalogue import DatasetInfo, github_file

_GSM8K_COMMIT = "3101c7d5072418e28b9008a6636bde82a006892c"
_SVAMP_COMMIT = "689d7ccac74b9983a2ac7cc3b264f441b99e7c53"
_ASDIV_COMMIT = "883f90a9a65bf00304ba8f37423910fe743abc47"
_ZEROSHOT_COMMIT = "5ef330fcdeec0cd26aee27943504f91f8ec1c33c"

GSM8K = DatasetInfo(
    name="gsm8k",
    title="GSM8K",
    description=(
        "Grade School Math 8K: 8.5K linguistically diverse grade school math word problems "
        "written by human problem writers, each with a step-by-step natural language solution."
    ),
    citation="""@article{cobbe2021gsm8k,
  title={Training Verifiers to Solve Math Word Problems},
  author={Cobbe, Karl and Kosaraju, Vineet and Bavarian, Mohammad and Chen, Mark and Jun, Heewoo and Kaiser, Lukasz and Plappert, Matthias and Tworek, Jerry and Hilton, Jacob and Nakano, Reiichiro and Hesse, Christopher and Schulman, John},
  journal={arXiv preprint arXiv:2110.14168},
  year={2021}
}""",
    licence="MIT",
    homepage="https://github.com/openai/grade-school-math",
    answer_type="number",
    file_format="JSON Lines with {question, answer}; answer = solution lines ending '#### <number>'",
    splits=("train", "test"),
    file_patterns=(
        ("train.jsonl", "train"),
        ("test.jsonl", "test"),
        ("train_socratic.jsonl", "train"),
        ("test_socratic.jsonl", "test"),
    ),
    sources=(
        github_file(
            "openai/grade-school-math",
            _GSM8K_COMMIT,
            "grade_school_math/data/train.jsonl",
            "train.jsonl",
            4166206,
            "17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465",
            "train",
        ),
        github_file(
            "openai/grade-school-math",
            _GSM8K_COMMIT,
            "grade_school_math/data/test.jsonl",
            "test.jsonl",
            749738,
            "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14",
            "test",
        ),
    ),
    reference_cot="solution lines without the <<calculator>> annotations",
    family="math",
)

SVAMP = DatasetInfo(
    name="svamp",
    title="SVAMP",
    description=(
        "Simple Variations on Arithmetic Math word Problems: a challenge set of 1,000 one-unknown "
        "arithmetic word problems (grade 4 or lower) built by varying problems from ASDiv-A."
    ),
    citation="""@inproceedings{patel-etal-2021-nlp,
  title={Are NLP Models really able to Solve Simple Math Word Problems?},
  author={Patel, Arkil and Bhattamishra, Satwik and Goyal, Navin},
  booktitle={Proceedings of the 2021 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  pages={2080--2094},
  year={2021},
  publisher={Association for Computational Linguistics},
  url={https://aclanthology.org/2021.naacl-main.168}
}""",
    licence="MIT",
    homepage="https://github.com/arkilpatel/SVAMP",
    answer_type="number",
    file_format="a JSON array of {ID, Body, Question, Equation, Answer, Type}",
    splits=("train",),
    file_patterns=(("SVAMP.json", "train"),),
    sources=(
        github_file(
            "arkilpatel/SVAMP",
            _SVAMP_COMMIT,
            "SVAMP.json",
            "SVAMP.json",
            339970,
            "5be77703a6d891ae476d7c082787ad361392aa02453b132516cdd5f4e7934e3e",
            "train",
        ),
    ),
    reference_cot="the equation as readable steps",
    family="math",
)

ASDIV = DatasetInfo(
    name="asdiv",
    title="ASDiv",
    description=(
        "Academia Sinica Diverse MWP Dataset: 2,305 English math word problems covering diverse "
        "language patterns and problem types taught in elementary school, annotated with "
        "problem type, grade level and a solution formula."
    ),
    citation="""@inproceedings{miao-etal-2020-diverse,
  title={A Diverse Corpus for Evaluating and Developing {E}nglish Math Word Problem Solvers},
  author={Miao, Shen-yun and Liang, Chao-Chun and Su, Keh-Yih},
  booktitle={Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  pages={975--984},
  year={2020},
  publisher={Association for Computational Linguistics},
  url={https://aclanthology.org/2020.acl-main.92}
}""",
    licence="CC BY-NC 4.0",
    homepage="https://github.com/chaochun/nlu-asdiv-dataset",
    answer_type="number",
    file_format="the ASDiv XML corpus (<Machine-Reading-Corpus-File><ProblemSet><Problem>)",
    splits=("train",),
    file_patterns=(("ASDiv.xml", "train"), ("*.xml", "train")),
    sources=(
        github_file(
            "chaochun/nlu-asdiv-dataset",
            _ASDIV_COMMIT,
            "dataset/ASDiv.xml",
            "ASDiv.xml",
            947401,
            "ef8904068482919ac48c8eeaaf6df344b8a308ba66d048c2d4d87eab82dc4929",
            "train",
        ),
    ),
    reference_cot="the solution formula as readable steps",
    family="math",
    notes="Answers keep their number only (units such as '(apples)' are dropped); "
    "non-numeric answers are typed 'text'.",
)

MAWPS = DatasetInfo(
    name="mawps",
    title="MAWPS",
    description=(
        "MAWPS: A Math Word Problem Repository, in the 5-fold cross-validation form used by the "
        "SVAMP authors (fold 0); numbers are masked in the text and restored on loading."
    ),
    citation="""@inproceedings{koncel-kedziorski-etal-2016-mawps,
  title={{MAWPS}: A Math Word Problem Repository},
  author={Koncel-Kedziorski, Rik and Roy, Subhro and Amini, Aida and Kushman, Nate and Hajishirzi, Hannaneh},
  booktitle={Proceedings of the 2016 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  pages={1152--1157},
  year={2016},
  publisher={Association for Computational Linguistics},
  url={https://aclanthology.org/N16-1136}
}""",
    licence="MIT",
    homepage="https://github.com/sroy9/mawps",
    answer_type="number",
    file_format="CSV with header Question, Numbers, Equation, Answer, group_nums, Body, "
    "Ques_Statement (numbers masked as number0..N, prefix-notation Equation)",
    splits=("train", "validation"),
    file_patterns=(
        ("fold0/train.csv", "train"),
        ("fold0/dev.csv", "validation"),
        ("train.csv", "train"),
        ("dev.csv", "validation"),
    ),
    sources=(
        github_file(
            "arkilpatel/SVAMP",
            _SVAMP_COMMIT,
            "data/cv_mawps/fold0/train.csv",
            "fold0/train.csv",
            595844,
            "0674253e6099813cefbb1d6eae3d2dc784ab6ebfdaf8755f6ebb4b99fc1f6ebe",
            "train",
        ),
        github_file(
            "arkilpatel/SVAMP",
            _SVAMP_COMMIT,
            "data/cv_mawps/fold0/dev.csv",
            "fold0/dev.csv",
            148020,
            "bad59cff796b01a87363ea970f1fa80c15f56ff5f4388143aadbdc3feaf5f990",
            "validation",
        ),
    ),
    reference_cot="the prefix equation as readable steps",
    family="math",
)

_ROY_ROTH = """@inproceedings{roy-roth-2015-solving,
  title={Solving General Arithmetic Word Problems},
  author={Roy, Subhro and Roth, Dan},
  booktitle={Proceedings of the 2015 Conference on Empirical Methods in Natural Language Processing},
  pages={1743--1752},
  year={2015},
  publisher={Association for Computational Linguistics},
  url={https://aclanthology.org/D15-1202}
}"""

MULTIARITH = DatasetInfo(
    name="multiarith",
    title="MultiArith",
    description="600 multi-step arithmetic word problems (Roy & Roth 2015), as used by "
    "Zero-shot-CoT (Kojima et al. 2022).",
    citation=_ROY_ROTH,
    licence="unstated (distributed through MAWPS)",
    homepage="https://github.com/kojima-takeshi188/zero_shot_cot",
    answer_type="number",
    file_format="a JSON array of {iIndex, lAlignments, lEquations, lSolutions, sQuestion}",
    splits=("test",),
    file_patterns=(("MultiArith.json", "test"),),
    sources=(
        github_file(
            "kojima-takeshi188/zero_shot_cot",
            _ZEROSHOT_COMMIT,
            "dataset/MultiArith/MultiArith.json",
            "MultiArith.json",
            254012,
            "dc9db1b6cc68b1ecc2dec830d15aaf8c9a0932aa31d5ffce88ef3628179d36f4",
            "test",
        ),
    ),
    reference_cot="the equation as readable steps",
    family="math",
)

ADDSUB = DatasetInfo(
    name="addsub",
    title="AddSub",
    description="395 addition and subtraction word problems (Hosseini et al. 2014), as used by Zero-shot-CoT.",
    citation="""@inproceedings{hosseini-etal-2014-learning,
  title={Learning to Solve Arithmetic Word Problems with Verb Categorization},
  author={Hosseini, Mohammad Javad and Hajishirzi, Hannaneh and Etzioni, Oren and Kushman, Nate},
  booktitle={Proceedings of the 2014 Conference on Empirical Methods in Natural Language Processing},
  pages={523--533},
  year={2014},
  url={https://aclanthology.org/D14-1058}
}""",
    licence="unstated (distributed through MAWPS)",
    homepage="https://github.com/kojima-takeshi188/zero_shot_cot",
    answer_type="number",
    file_format="a JSON array of {iIndex, lEquations, lSolutions, sQuestion}",
    splits=("test",),
    file_patterns=(("AddSub.json", "test"),),
    sources=(
        github_file(
            "kojima-takeshi188/zero_shot_cot",
            _ZEROSHOT_COMMIT,
            "dataset/AddSub/AddSub.json",
            "AddSub.json",
            131373,
            "21930fa90385c72b5a15f4b9a4dda27276b889ae9ff44285505cdd9fa0a20df8",
            "test",
        ),
    ),
    reference_cot="the equation as readable steps",
    family="math",
)

SINGLEEQ = DatasetInfo(
    name="singleeq",
    title="SingleEq",
    description="508 single-equation algebra word problems (Koncel-Kedziorski et al. 2015), as used by Zero-shot-CoT.",
    citation="""@article{koncel-kedziorski-etal-2015-parsing,
  title={Parsing Algebraic Word Problems into Equations},
  author={Koncel-Kedziorski, Rik and Hajishirzi, Hannaneh and Sabharwal, Ashish and Etzioni, Oren and Ang, Siena Dumas},
  journal={Transactions of the Association for Computational Linguistics},
  volume={3},
  pages={585--597},
  year={2015},
  url={https://aclanthology.org/Q15-1042}
}""",
    licence="unstated (distributed through MAWPS)",
    homepage="https://github.com/kojima-takeshi188/zero_shot_cot",
    answer_type="number",
    file_format="a JSON array of {iIndex, lEquations, lSolutions, sQuestion, templateNumber}",
    splits=("test",),
    file_patterns=(("questions.json", "test"),),
    sources=(
        github_file(
            "kojima-takeshi188/zero_shot_cot",
            _ZEROSHOT_COMMIT,
            "dataset/SingleEq/questions.json",
            "questions.json",
            137870,
            "051507bd2b489c257057b485774a83d2710c23a4bc0f4a58e1822ae2773ef05e",
            "test",
        ),
    ),
    reference_cot="the equation as readable steps",
    family="math",
)
