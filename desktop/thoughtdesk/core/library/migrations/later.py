"""The migrations from m010 on: guided trajectories, batches, the indexes of a million-sample
library, compact critiques, exactly-once request claims, reasoning traces, steps, judge verdicts
and pairwise preferences. A new migration is a function at the end of this module, named
``mNNN_what`` with the next number, and one line at the end of ``MIGRATIONS`` in the package's
``__init__.py``. Shipped migrations are never edited.
"""

from __future__ import annotations

import sqlite3

from thoughtdesk.core.library.migrations.runner import run_script


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


def m015_request_claim(conn: sqlite3.Connection) -> None:
    # Who sent a request (issue 23, point 3): a token written with the request's claim
    # ('pending' -> 'sent') and checked in the transaction that stores its result, so only the
    # holder of the current claim stores it. A process that was suspended (Ctrl+Z) while its
    # run was resumed elsewhere stored every request it had in flight a second time.
    run_script(conn, "ALTER TABLE request ADD COLUMN claim TEXT;")


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
