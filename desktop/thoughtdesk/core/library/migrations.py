"""Forward-only schema migrations of the library file.

Each migration is a small named function, applied once, in order, and recorded in the
``_migrations`` table (the way Simon Willison's ``llm`` does it). ``PRAGMA user_version`` mirrors
the number applied so that a newer file can be recognised and refused before anything is written.
Never edit a migration that has shipped: add a new one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from thoughtdesk.core.library.timestamps import now_iso

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    # Registered in file order, which is the order they are applied in; the names number them
    # in the same order (``m001_...``, ``m002_...``), which tests/core/library/test_migrations.py
    # checks, so the file reads as the schema's history.
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
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


@migration
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


@migration
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


@migration
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


@migration
def m005_answer_original_scoring(conn: sqlite3.Connection) -> None:
    # Re-scoring writes ThoughtDesk's verdict into correct_answer (and answer_from_choices in
    # extra) so exports carry it; the values the file came with are kept here first (JSON
    # object, NULL until the first re-score), so nothing imported is ever lost.
    conn.execute("ALTER TABLE answer ADD COLUMN original_scoring TEXT")


@migration
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


@migration
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


@migration
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


@migration
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


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute several statements inside the caller's transaction.

    ``Connection.executescript`` would COMMIT the open transaction first, which would make a
    failed migration leave half a schema behind.
    """
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        conn.execute(statement)


def current_version() -> int:
    """The schema version this build of ThoughtDesk writes."""
    return len(MIGRATIONS)


def pending_migrations(conn: sqlite3.Connection) -> list[str]:
    """The names of the migrations a library lacks (read only: nothing is written)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")} if "_migrations" in tables else set()
    return [name for name, _ in MIGRATIONS if name not in done]


def apply_migrations(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations the file lacks, each in its own transaction; return their names."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM _migrations")}
    applied: list[str] = []
    for index, (name, fn) in enumerate(MIGRATIONS, start=1):
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            fn(conn)
            conn.execute("INSERT INTO _migrations (name, applied) VALUES (?, ?)", (name, now_iso()))
            # The number of migrations the file now has, not this one's place: numbers are given
            # out to branches ahead of time (m019 merged before m017 and m018), so a library can
            # get an earlier migration after a later one, and must still read as complete.
            conn.execute(f"PRAGMA user_version = {max(index, len(done) + len(applied) + 1)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


@migration
def m010_trajectories(conn: sqlite3.Connection) -> None:
    # Guided generation (thoughtdesk.core.generation.runs.guided): a guided CoT is written one step
    # (sentence) at a time; each step is stored the moment it is chosen, with the rationale
    # written for it, every candidate with its score (JSON list of {text, score}) and the index of
    # the chosen one, plus the step's tokens and cost over all the models it called. The
    # ``request`` is the run's 'guided' request; ``cot_pk`` is set when the finished CoT is
    # stored. UNIQUE(request_id, step_index): a resumed trajectory can never store a step twice.
    run_script(
        conn,
        """
        CREATE TABLE trajectory_step (
            id INTEGER PRIMARY KEY,
            request_id INTEGER REFERENCES request(id) ON DELETE SET NULL,
            cot_pk INTEGER REFERENCES generated_cot(id) ON DELETE CASCADE,
            step_index INTEGER NOT NULL,
            rationale TEXT,
            candidates TEXT NOT NULL,
            chosen INTEGER NOT NULL,
            final INTEGER NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            cost REAL,
            latency REAL NOT NULL DEFAULT 0,
            created TEXT NOT NULL,
            extra TEXT,
            UNIQUE (request_id, step_index)
        );
        CREATE INDEX trajectory_step_cot ON trajectory_step(cot_pk);
        """,
    )


@migration
def m011_batches(conn: sqlite3.Connection) -> None:
    # Provider batch APIs (thoughtdesk.core.generation.runs.batch): one row per batch job sent
    # to OpenAI's Batch API or Anthropic's Message Batches, with the provider's id (NULL while
    # it is being submitted: a kill then leaves a row whose requests go back to 'pending'), the
    # provider's last status and when its results were stored (``fetched``). A request in a
    # batch has status 'batched' and ``batch_pk`` set until its result is committed.
    run_script(
        conn,
        """
        CREATE TABLE batch (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
            model_index INTEGER NOT NULL,
            provider TEXT NOT NULL,
            remote_id TEXT,
            input_file_id TEXT,
            status TEXT NOT NULL,
            requests INTEGER NOT NULL,
            counts TEXT,
            submitted TEXT NOT NULL,
            deadline TEXT NOT NULL,
            checked TEXT,
            fetched TEXT,
            error TEXT
        );
        CREATE INDEX batch_run ON batch(run_id);
        ALTER TABLE request ADD COLUMN batch_pk INTEGER REFERENCES batch(id) ON DELETE SET NULL;
        CREATE INDEX request_batch ON request(batch_pk);
        """,
    )


@migration
def m012_sort_indexes(conn: sqlite3.Connection) -> None:
    # One index per sortable column of the sample table (queries.SORT_KEYS), led by the
    # collection: the first page in any order is then read from an index and stops after a
    # page, instead of reading and sorting a million rows (1.5 s at 1,000,000 samples). Each
    # index ends with the rowid, the sort's tie-break, so descending is the same index read
    # backwards. Question and gold answer are indexed by their first 100 characters (the
    # order the table sorts by: queries.SORT_PREFIX_CHARS), which keeps the indexes small (a
    # whole 10 MB question is never copied into an index). At 200,000 samples building all
    # seven takes about 2.5 s and adds 5% to the file.
    run_script(
        conn,
        """
        CREATE INDEX sample_sort_id ON sample(collection_id, sample_id);
        CREATE INDEX sample_sort_question
            ON sample(collection_id, substr(question, 1, 100) COLLATE NOCASE);
        CREATE INDEX sample_sort_type ON sample(collection_id, type);
        CREATE INDEX sample_sort_gold ON sample(collection_id, substr(answer, 1, 100) COLLATE NOCASE);
        CREATE INDEX sample_sort_cots ON sample(collection_id, n_cots);
        CREATE INDEX sample_sort_correct ON sample(
            collection_id, (CASE WHEN n_answers = 0 THEN -1.0 ELSE 1.0 * n_correct / n_answers END)
        );
        CREATE INDEX sample_sort_annotated ON sample(collection_id, n_annotations);
        """,
    )


@migration
def m013_foreign_key_indexes(conn: sqlite3.Connection) -> None:
    # Every column that references another table gets an index: deleting a row makes SQLite
    # find the rows that reference it (ON DELETE CASCADE / SET NULL), and without an index it
    # reads the whole referencing table once per deleted row. Deleting a 5,000-sample
    # collection took 17 s with 40,000 requests in the library (a merge's replaced samples,
    # a deleted collection or run); with these, well under a second.
    run_script(
        conn,
        """
        CREATE INDEX IF NOT EXISTS request_sample ON request(sample_pk);
        CREATE INDEX IF NOT EXISTS request_target_cot ON request(target_cot_pk);
        CREATE INDEX IF NOT EXISTS request_result_cot ON request(result_cot_pk);
        CREATE INDEX IF NOT EXISTS request_result_answer ON request(result_answer_pk);
        CREATE INDEX IF NOT EXISTS request_result_critique ON request(result_critique_pk);
        CREATE INDEX IF NOT EXISTS review_queue_collection ON review_queue(collection_id);
        CREATE INDEX IF NOT EXISTS review_queue_item_sample ON review_queue_item(sample_pk);
        CREATE INDEX IF NOT EXISTS critique_request ON critique(request_id);
        CREATE INDEX IF NOT EXISTS critique_run ON critique(run_id);
        CREATE INDEX IF NOT EXISTS rationale_doc_cot ON rationale_doc(cot_pk);
        CREATE INDEX IF NOT EXISTS rationale_doc_sample ON rationale_doc(sample_pk);
        """,
    )


@migration
def m014_compact_critiques(conn: sqlite3.Connection) -> None:
    # Two things. (1) The library may now hold critiques whose text is rebuilt from their
    # elements (marker "columns+ds0"/"columns+ds1" in the elements column), student raw outputs
    # rebuilt from the CoT and answer, and outcomes as five letters: a build before this
    # migration would read them as empty texts or fail on them; with this migration recorded it
    # refuses the library instead (schema changes it does not know). (2) Imported critiques
    # have no run and no request: their indexes on those columns (for deleting a run or a
    # request, m013) now leave the NULLs out, so a DSCB import of 20,000 critiques does not
    # write 40,000 index entries for nothing. SQLite uses a partial index "x IS NOT NULL" for
    # the x = ? lookups of ON DELETE, as it did the full one.
    run_script(
        conn,
        """
        DROP INDEX IF EXISTS critique_run;
        DROP INDEX IF EXISTS critique_request;
        CREATE INDEX critique_run ON critique(run_id) WHERE run_id IS NOT NULL;
        CREATE INDEX critique_request ON critique(request_id) WHERE request_id IS NOT NULL;
        """,
    )


@migration
def m015_request_claim(conn: sqlite3.Connection) -> None:
    # Who sent a request (issue 23, point 3): a token written with the request's claim
    # ('pending' -> 'sent') and checked in the transaction that stores its result, so only the
    # holder of the current claim stores it. A process that was suspended (Ctrl+Z) while its
    # run was resumed elsewhere stored every request it had in flight a second time.
    run_script(conn, "ALTER TABLE request ADD COLUMN claim TEXT;")


@migration
def m016_reasoning(conn: sqlite3.Connection) -> None:
    # Reasoning traces apart from the answer (issue 24): the thinking of a reasoning model
    # (``reasoning_content``/``reasoning`` fields, ``<think>`` blocks, Anthropic thinking
    # blocks), why generation stopped (``finish_reason``: "stop", "length", ...; "length" means
    # the trace or the answer was cut) and the reasoning tokens the provider counted (or that
    # were counted locally). NULL: not known (every CoT stored before this migration, and
    # CoTs imported without these facts). ``cot`` stays the visible text.
    run_script(
        conn,
        """
        ALTER TABLE generated_cot ADD COLUMN reasoning TEXT;
        ALTER TABLE generated_cot ADD COLUMN finish_reason TEXT;
        ALTER TABLE generated_cot ADD COLUMN reasoning_tokens INTEGER;
        """,
    )


@migration
def m017_steps(conn: sqlite3.Connection) -> None:
    # Step labels (issue 25; docs/steps.md). One row per author and step list: a generated
    # CoT's text (``trace`` 'cot') or reasoning trace ('reasoning'), keyed by ``cot_pk``, or a
    # sample's reference CoT ('reference'), keyed by ``sample_pk`` (exactly one of the two is
    # set). ``kind`` tells people ('human') from models ('model': a step judge, automatic
    # Math-Shepherd labels). ``steps`` is a JSON array with one entry per step (null: not
    # labelled): the step's stable id when labelled, its ``rating`` (PRM800K's -1/0/+1),
    # ``flagged`` (unsure), ``corrected`` (the step as the author would write it) and ``extra``
    # (what a source file says beyond these, such as PRM800K's alternative completions). The
    # rest is about the whole list: the first wrong step (-1: none; NULL: not said), the finish
    # reason (found_error, solution, bad_problem, give_up), the time spent in milliseconds,
    # whether the model was hidden. One row, not one per step: PRM800K's ~1M step ratings
    # are ~100k rows, which an import writes ten times faster (tests/benchmarks/bench_step_import.py).
    run_script(
        conn,
        """
        CREATE TABLE step_label (
            id INTEGER PRIMARY KEY,
            sample_pk INTEGER REFERENCES sample(id) ON DELETE CASCADE,
            cot_pk INTEGER REFERENCES generated_cot(id) ON DELETE CASCADE,
            trace TEXT NOT NULL CHECK (trace IN ('cot', 'reasoning', 'reference')),
            author TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'human' CHECK (kind IN ('human', 'model')),
            steps TEXT NOT NULL DEFAULT '[]',
            first_error INTEGER CHECK (first_error >= -1),
            finish_reason TEXT,
            time_ms INTEGER CHECK (time_ms >= 0),
            blind INTEGER,
            extra TEXT,
            date TEXT NOT NULL,
            CHECK ((trace = 'reference') = (cot_pk IS NULL)),
            CHECK ((sample_pk IS NULL) = (cot_pk IS NOT NULL))
        );
        CREATE UNIQUE INDEX step_label_cot ON step_label(cot_pk, trace, author) WHERE cot_pk IS NOT NULL;
        CREATE UNIQUE INDEX step_label_reference ON step_label(sample_pk, author) WHERE sample_pk IS NOT NULL;
        """,
    )


@migration
def m018_judge_verdicts(conn: sqlite3.Connection) -> None:
    # Pairwise judge verdicts (issue 26, points 1 and 2): a judge model shown two CoTs of one
    # sample (``first_cot_pk`` as "A", ``second_cot_pk`` as "B"; every pair is judged in both
    # orders, so both orders are rows) answers A, B, tie or something unparseable (``reason``
    # says why; the raw text is always kept). A judge is its model plus its template (key and
    # ``template_version``, a hash of the template's texts: an edited template is a new judge).
    # ``preferred_cot_pk`` is the CoT the verdict chose (NULL for a tie or unparseable), so a
    # verdict compares with a human pairwise_preference (m019) by CoT keys. A pairwise request
    # names the CoT shown first in ``target_cot_pk``, the second in its params, and its verdict
    # in ``result_verdict_pk``.
    run_script(
        conn,
        """
        CREATE TABLE judge_verdict (
            id INTEGER PRIMARY KEY,
            sample_pk INTEGER NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
            first_cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            second_cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            judge_model TEXT NOT NULL,
            template TEXT NOT NULL,
            template_version TEXT NOT NULL,
            verdict TEXT NOT NULL CHECK (verdict IN ('A', 'B', 'tie', 'unparseable')),
            preferred_cot_pk INTEGER REFERENCES generated_cot(id) ON DELETE CASCADE,
            reason TEXT,
            raw_text TEXT NOT NULL,
            run_id INTEGER REFERENCES run(id) ON DELETE SET NULL,
            request_id INTEGER REFERENCES request(id) ON DELETE SET NULL,
            created TEXT NOT NULL,
            extra TEXT,
            CHECK (first_cot_pk != second_cot_pk)
        );
        CREATE INDEX judge_verdict_judge ON judge_verdict(judge_model, template_version);
        CREATE INDEX judge_verdict_sample ON judge_verdict(sample_pk);
        CREATE INDEX judge_verdict_first ON judge_verdict(first_cot_pk);
        CREATE INDEX judge_verdict_second ON judge_verdict(second_cot_pk);
        CREATE INDEX judge_verdict_preferred ON judge_verdict(preferred_cot_pk);
        CREATE INDEX judge_verdict_run ON judge_verdict(run_id);
        CREATE INDEX judge_verdict_request ON judge_verdict(request_id);
        ALTER TABLE request ADD COLUMN result_verdict_pk INTEGER REFERENCES judge_verdict(id) ON DELETE SET NULL;
        CREATE INDEX request_result_verdict ON request(result_verdict_pk);
        """,
    )


@migration
def m019_preferences(conn: sqlite3.Connection) -> None:
    # Pairwise preferences of human reviewers (issue 26, point 3): two CoTs of one sample shown
    # side by side (``first`` on the left), the one preferred (NULL: a tie), by whom and when,
    # and whether the models were hidden. One row per reviewer and pair (the pair stored with
    # the smaller CoT key first; a new verdict replaces the old). And revisions (point 5): a
    # generated CoT that revises another from a critique's feedback names both.
    run_script(
        conn,
        """
        CREATE TABLE pairwise_preference (
            id INTEGER PRIMARY KEY,
            sample_pk INTEGER NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
            first_cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            second_cot_pk INTEGER NOT NULL REFERENCES generated_cot(id) ON DELETE CASCADE,
            preferred_cot_pk INTEGER REFERENCES generated_cot(id) ON DELETE CASCADE,
            author TEXT NOT NULL,
            date TEXT NOT NULL,
            blind INTEGER NOT NULL DEFAULT 1,
            CHECK (first_cot_pk < second_cot_pk),
            CHECK (preferred_cot_pk IS NULL OR preferred_cot_pk IN (first_cot_pk, second_cot_pk))
        );
        CREATE UNIQUE INDEX pairwise_preference_pair ON pairwise_preference(author, first_cot_pk, second_cot_pk);
        CREATE INDEX pairwise_preference_sample ON pairwise_preference(sample_pk);
        CREATE INDEX pairwise_preference_first ON pairwise_preference(first_cot_pk);
        CREATE INDEX pairwise_preference_second ON pairwise_preference(second_cot_pk);
        CREATE INDEX pairwise_preference_preferred ON pairwise_preference(preferred_cot_pk)
            WHERE preferred_cot_pk IS NOT NULL;
        ALTER TABLE generated_cot ADD COLUMN revision_of INTEGER REFERENCES generated_cot(id) ON DELETE SET NULL;
        ALTER TABLE generated_cot ADD COLUMN revision_critique INTEGER REFERENCES critique(id) ON DELETE SET NULL;
        CREATE INDEX generated_cot_revision_of ON generated_cot(revision_of) WHERE revision_of IS NOT NULL;
        CREATE INDEX generated_cot_revision_critique ON generated_cot(revision_critique)
            WHERE revision_critique IS NOT NULL;
        """,
    )


@migration
def m020_rationale_runs(conn: sqlite3.Connection) -> None:
    # Rationale mining as runs of the one engine (issue 28, point 11): a RATIONALYST extraction
    # request rewrites one document, a filter request scores one rewrite's rationales. A document
    # of a file belongs to no sample, so ``request.sample_pk`` may now be NULL (a rationale
    # request names its sample when it has one: deleting the sample still deletes the request).
    # Dropping a NOT NULL changes no stored byte, so the table's definition is edited in place
    # (SQLite's documented procedure for removing a NOT NULL constraint: the schema text rewritten,
    # the schema version bumped), not rebuilt: a rebuild would copy every request and, with
    # foreign keys on, dropping the old table would null the critiques', verdicts' and steps'
    # links to it. ``target_doc_pk`` is the rewrite a filter request scores; ``result_doc_pk``
    # the rewrite an extraction request stored.
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'request'").fetchone()
    old = "sample_pk INTEGER NOT NULL REFERENCES sample(id)"
    if old not in sql:
        raise sqlite3.DatabaseError(f"m020: the request table's sample_pk is not as m003 made it: {sql!r}")
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'request'",
            (sql.replace(old, "sample_pk INTEGER REFERENCES sample(id)"),),
        )
        conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    run_script(
        conn,
        """
        ALTER TABLE request ADD COLUMN target_doc_pk INTEGER REFERENCES rationale_doc(id) ON DELETE CASCADE;
        ALTER TABLE request ADD COLUMN result_doc_pk INTEGER REFERENCES rationale_doc(id) ON DELETE SET NULL;
        CREATE INDEX request_target_doc ON request(target_doc_pk) WHERE target_doc_pk IS NOT NULL;
        CREATE INDEX request_result_doc ON request(result_doc_pk) WHERE result_doc_pk IS NOT NULL;
        """,
    )
