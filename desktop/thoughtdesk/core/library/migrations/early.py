"""The first migrations, m001 to m009 (2026-11-24 and 25): the ThoughtSource schema, ThoughtDesk's
answer scoring, runs, the review workbench, the browse indexes, critiques, the run lease and
rationale mining. Shipped: never edit one; a change is a new migration (see the package's list).
"""

from __future__ import annotations

import sqlite3

from thoughtdesk.core.library.migrations.runner import run_script


def m001_initial(conn: sqlite3.Connection) -> None:
    # The ThoughtSource schema, relationally. Lists of scalars that are always read whole
    # (choices, reference CoT steps, gold answers) are JSON arrays in one column; records with
    # identity of their own (generated CoTs, answers, annotations) have tables.
    # ``extra`` holds keys ThoughtDesk does not know (JSON object) and ``missing`` the known keys
    # the source file did not have (JSON array), so exports reproduce the input exactly.
    run_script(
        conn,
        """
        CREATE TABLE collection (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE sample (
            id INTEGER PRIMARY KEY,
            collection_id INTEGER NOT NULL REFERENCES collection(id) ON DELETE CASCADE,
            dataset TEXT NOT NULL,
            split TEXT NOT NULL,
            position INTEGER NOT NULL,
            sample_id TEXT NOT NULL,
            ref_id TEXT,
            question TEXT,
            type TEXT,
            choices TEXT,
            context TEXT,
            cot TEXT,
            answer TEXT,
            feedback TEXT,
            extra TEXT,
            missing TEXT,
            n_cots INTEGER NOT NULL DEFAULT 0,
            n_answers INTEGER NOT NULL DEFAULT 0,
            n_correct INTEGER NOT NULL DEFAULT 0,
            n_incorrect INTEGER NOT NULL DEFAULT 0,
            n_annotations INTEGER NOT NULL DEFAULT 0
        );
        CREATE UNIQUE INDEX sample_identity ON sample(collection_id, dataset, split, sample_id);
        CREATE TABLE generated_cot (
            id INTEGER PRIMARY KEY,
            sample_pk INTEGER NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            cot_id TEXT,
            fragments_version TEXT,
            instruction TEXT,
            cot_trigger TEXT,
            cot_trigger_template TEXT,
            prompt_text TEXT,
            cot TEXT,
            author TEXT,
            date TEXT,
            api_service TEXT,
            model TEXT,
            model_name TEXT,
            comment TEXT,
            extra TEXT,
            missing TEXT
        );
        CREATE INDEX generated_cot_sample ON generated_cot(sample_pk);
        CREATE TABLE answer (
            id INTEGER PRIMARY KEY,
            cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            answer_id TEXT,
            answer_extraction TEXT,
            answer_extraction_template TEXT,
            answer_extraction_text TEXT,
            answer TEXT,
            correct_answer INTEGER,
            extra TEXT,
            missing TEXT
        );
        CREATE INDEX answer_cot ON answer(cot_pk);
        CREATE TABLE annotation (
            id INTEGER PRIMARY KEY,
            cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            author TEXT,
            date TEXT,
            key TEXT,
            value TEXT,
            value_is_json INTEGER NOT NULL DEFAULT 0,
            extra TEXT,
            missing TEXT
        );
        CREATE INDEX annotation_cot ON annotation(cot_pk);
        CREATE VIRTUAL TABLE sample_fts USING fts5(
            question, reference, generated, tokenize = 'unicode61 remove_diacritics 2'
        );
        """,
    )


def m002_answer_scoring(conn: sqlite3.Connection) -> None:
    # ThoughtDesk's own verdict on each answer, kept beside the one the file came with, so
    # re-scoring never overwrites imported correctness and an export can carry either.
    run_script(
        conn,
        """
        ALTER TABLE answer ADD COLUMN td_outcome TEXT;
        ALTER TABLE answer ADD COLUMN td_value TEXT;
        ALTER TABLE answer ADD COLUMN td_method TEXT;
        ALTER TABLE answer ADD COLUMN td_span_source TEXT;
        ALTER TABLE answer ADD COLUMN td_span_start INTEGER;
        ALTER TABLE answer ADD COLUMN td_span_end INTEGER;
        ALTER TABLE answer ADD COLUMN td_reason TEXT;
        ALTER TABLE sample ADD COLUMN n_unextractable INTEGER NOT NULL DEFAULT 0;
        """,
    )


def m003_runs(conn: sqlite3.Connection) -> None:
    # Generation runs (thoughtdesk.core.generation.runs). Every model call is a ``request`` row written
    # before anything is sent; its result is committed with the CoT/answer it produced, so a
    # crash loses at most the calls in flight and a resume sends exactly the unfinished ones.
    # ``spec`` is JSON without secrets. ``fingerprint`` identifies an identical call
    # (backend, model, parameters, prompt, seed, replicate) for answering repeats from the store.
    run_script(
        conn,
        """
        CREATE TABLE run (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            created TEXT NOT NULL,
            updated TEXT,
            status TEXT NOT NULL DEFAULT 'planned',
            collection TEXT NOT NULL,
            spec TEXT NOT NULL,
            last_error TEXT
        );
        CREATE TABLE request (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
            sample_pk INTEGER NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
            model_index INTEGER NOT NULL,
            model_label TEXT NOT NULL,
            variant_index INTEGER NOT NULL,
            replicate INTEGER NOT NULL DEFAULT 0,
            step TEXT NOT NULL,
            depends_on INTEGER REFERENCES request(id) ON DELETE CASCADE,
            fingerprint TEXT,
            prompt TEXT,
            params TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            error_kind TEXT,
            raw_response TEXT,
            created TEXT NOT NULL,
            sent_at TEXT,
            finished_at TEXT,
            latency REAL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            cost REAL,
            result_cot_pk INTEGER REFERENCES generated_cot(id) ON DELETE SET NULL,
            result_answer_pk INTEGER REFERENCES answer(id) ON DELETE SET NULL,
            cached_from INTEGER
        );
        CREATE INDEX request_run_status ON request(run_id, status);
        CREATE INDEX request_fingerprint ON request(fingerprint);
        CREATE INDEX request_depends_on ON request(depends_on);
        """,
    )


def m004_review(conn: sqlite3.Connection) -> None:
    # The review workbench. Annotations themselves stay in ThoughtSource's ``annotation`` table
    # (span offsets in its ``extra`` JSON) so every export carries them; these tables hold what
    # ThoughtSource has no place for: label sets and review queues.
    run_script(
        conn,
        """
        CREATE TABLE label_set (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            builtin INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE label_set_label (
            set_id INTEGER NOT NULL REFERENCES label_set(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            key TEXT NOT NULL,
            name TEXT NOT NULL,
            colour TEXT NOT NULL,
            shortcut INTEGER,
            PRIMARY KEY (set_id, ordinal)
        );
        CREATE TABLE review_queue (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            collection_id INTEGER NOT NULL REFERENCES collection(id) ON DELETE CASCADE,
            spec TEXT NOT NULL,
            seed INTEGER NOT NULL,
            reviewer TEXT NOT NULL,
            blind INTEGER NOT NULL DEFAULT 0,
            created TEXT NOT NULL,
            position INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE review_queue_item (
            queue_id INTEGER NOT NULL REFERENCES review_queue(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            sample_pk INTEGER NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
            done INTEGER NOT NULL DEFAULT 0,
            done_at TEXT,
            PRIMARY KEY (queue_id, ordinal)
        );
        CREATE INDEX annotation_author ON annotation(author, cot_pk);
        """,
    )
    # The built-in label sets as they shipped with this migration. Written out here, not read
    # from ``core.review.labels.BUILTIN_SETS``: a shipped migration must seed the same rows
    # forever, or libraries created before and after an edit of that constant would differ
    # (tests/core/library/test_migrations.py fails when the two part ways).
    for name, labels in _M004_LABEL_SETS:
        cur = conn.execute("INSERT INTO label_set (name, builtin) VALUES (?, 1)", (name,))
        conn.executemany(
            "INSERT INTO label_set_label (set_id, ordinal, key, name, colour, shortcut) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (cur.lastrowid, ordinal, key, key, colour, shortcut)
                for ordinal, (key, colour, shortcut) in enumerate(labels)
            ],
        )


#: (set name, ((label key = label name, colour, shortcut digit), ...)) seeded by ``m004_review``.
_M004_LABEL_SETS: tuple[tuple[str, tuple[tuple[str, str, int], ...]], ...] = (
    (
        "ThoughtSource",
        (
            ("Incorrect reasoning", "#d9534f", 1),
            ("Insufficient knowledge", "#f0ad4e", 2),
            ("Incorrect reading comprehension", "#5bc0de", 3),
            ("Too verbose", "#9b59b6", 4),
        ),
    ),
    (
        "Clinical",
        (
            ("Unsafe recommendation", "#d9534f", 1),
            ("Hallucinated fact", "#e67e22", 2),
            ("Outdated guideline", "#f1c40f", 3),
            ("Missed contraindication", "#16a085", 4),
            ("Wrong dosage", "#2980b9", 5),
            ("Incorrect reasoning", "#8e44ad", 6),
        ),
    ),
)


def m005_answer_original_scoring(conn: sqlite3.Connection) -> None:
    # Re-scoring writes ThoughtDesk's verdict into correct_answer (and answer_from_choices in
    # extra) so exports carry it; the values the file came with are kept here first (JSON
    # object, NULL until the first re-score), so nothing imported is ever lost.
    conn.execute("ALTER TABLE answer ADD COLUMN original_scoring TEXT")


def m006_browse_indexes(conn: sqlite3.Connection) -> None:
    # The tree's per-split counts and the table's default order read only these columns; covering
    # indexes keep both off the wide sample rows (1.3 s -> about 0.1 s at 200,000 samples).
    run_script(
        conn,
        """
        CREATE INDEX sample_split_counts
            ON sample(collection_id, dataset, split, n_cots, n_answers, n_annotations);
        CREATE INDEX sample_collection ON sample(collection_id);
        """,
    )


def m007_critiques(conn: sqlite3.Connection) -> None:
    # Critiques (thoughtdesk.core.critiques): a model's structured judgement of one generated CoT,
    # in the Digital Socrates layout. The raw text is always kept; each element's parse outcome
    # (parsed / missing / unparseable, with why and the raw value) is a JSON object in
    # ``outcomes``. ``elements`` keeps the critique_elements object exactly as a DSCB file had it
    # (NULL for critiques ThoughtDesk ran), ``extra`` the critique record's unknown keys.
    # Human ratings are per author: explanation ratings (score 0-5 and flaw dimensions) on a CoT,
    # critique ratings (0-3) on a critique. A critique run is an ordinary run whose requests have
    # step 'critique', the CoT they judge in ``target_cot_pk`` and their result in
    # ``result_critique_pk``.
    run_script(
        conn,
        """
        CREATE TABLE critique (
            id INTEGER PRIMARY KEY,
            cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            critique_model TEXT NOT NULL,
            llm_options TEXT,
            fragment_key TEXT,
            prompt_text TEXT,
            raw_text TEXT NOT NULL,
            main_flaw TEXT,
            dimension TEXT,
            general_feedback TEXT,
            specific_feedback TEXT,
            explanation_score REAL,
            outcomes TEXT NOT NULL DEFAULT '{}',
            elements TEXT,
            source TEXT NOT NULL DEFAULT 'run',
            run_id INTEGER REFERENCES run(id) ON DELETE SET NULL,
            request_id INTEGER REFERENCES request(id) ON DELETE SET NULL,
            created TEXT NOT NULL,
            extra TEXT
        );
        CREATE INDEX critique_cot ON critique(cot_pk);
        CREATE INDEX critique_model ON critique(critique_model);
        CREATE TABLE explanation_rating (
            id INTEGER PRIMARY KEY,
            cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            author TEXT NOT NULL,
            score INTEGER,
            dimensions TEXT NOT NULL DEFAULT '[]',
            created TEXT NOT NULL,
            extra TEXT
        );
        CREATE INDEX explanation_rating_cot ON explanation_rating(cot_pk);
        CREATE TABLE critique_rating (
            id INTEGER PRIMARY KEY,
            critique_pk INTEGER NOT NULL REFERENCES critique(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            author TEXT NOT NULL,
            score INTEGER,
            created TEXT NOT NULL,
            extra TEXT
        );
        CREATE INDEX critique_rating_critique ON critique_rating(critique_pk);
        ALTER TABLE request ADD COLUMN target_cot_pk INTEGER REFERENCES generated_cot(id) ON DELETE CASCADE;
        ALTER TABLE request ADD COLUMN result_critique_pk INTEGER REFERENCES critique(id) ON DELETE SET NULL;
        """,
    )


def m008_run_lease(conn: sqlite3.Connection) -> None:
    # Who executes a run (thoughtdesk.core.generation.runs.lease): the holder process
    # (host:pid:token) and when its lease runs out (Unix seconds). Two processes never execute
    # one run; a run whose holder is gone shows as interrupted.
    run_script(
        conn,
        """
        ALTER TABLE run ADD COLUMN holder TEXT;
        ALTER TABLE run ADD COLUMN lease_expires REAL;
        """,
    )


def m009_rationales(conn: sqlite3.Connection) -> None:
    # Mined rationales (thoughtdesk.core.rationales, RATIONALYST). ``rationale_doc`` is one
    # model's rewrite of one document of a collection (a sample's reference CoT, a generated
    # CoT, or a record of a file), with the raw output and the validity check; ``doc_key``
    # names the document so an interrupted extraction resumes where it stopped. ``rationale``
    # holds the records split from a valid rewrite; ``rationale_score`` their filtering
    # results per scorer and decay (the loss of the following text without and with the
    # rationale). Kept or dropped is decided at reading time by the threshold tau.
    run_script(
        conn,
        """
        CREATE TABLE rationale_doc (
            id INTEGER PRIMARY KEY,
            collection_id INTEGER NOT NULL REFERENCES collection(id) ON DELETE CASCADE,
            doc_key TEXT NOT NULL,
            source TEXT NOT NULL,
            sample_pk INTEGER REFERENCES sample(id) ON DELETE CASCADE,
            cot_pk INTEGER REFERENCES generated_cot(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            markers TEXT NOT NULL,
            fragment_key TEXT,
            prompt_text TEXT NOT NULL,
            original TEXT NOT NULL,
            output TEXT NOT NULL,
            similarity REAL NOT NULL,
            valid INTEGER NOT NULL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            created TEXT NOT NULL
        );
        CREATE UNIQUE INDEX rationale_doc_identity ON rationale_doc(collection_id, doc_key, model);
        CREATE TABLE rationale (
            id INTEGER PRIMARY KEY,
            doc_id INTEGER NOT NULL REFERENCES rationale_doc(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            preceding TEXT NOT NULL,
            rationale TEXT NOT NULL,
            following TEXT NOT NULL
        );
        CREATE INDEX rationale_doc_position ON rationale(doc_id, position);
        CREATE TABLE rationale_score (
            id INTEGER PRIMARY KEY,
            rationale_id INTEGER NOT NULL REFERENCES rationale(id) ON DELETE CASCADE,
            scorer TEXT NOT NULL,
            decay REAL NOT NULL,
            loss_without REAL NOT NULL,
            loss_with REAL NOT NULL,
            reduction REAL NOT NULL,
            tokens_without INTEGER NOT NULL,
            tokens_with INTEGER NOT NULL,
            created TEXT NOT NULL
        );
        CREATE UNIQUE INDEX rationale_score_identity ON rationale_score(rationale_id, scorer, decay);
        """,
    )
