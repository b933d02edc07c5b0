"""A course's audit lines and ratings in PostgreSQL, beside its conversations and keys.

With `TEXTBOUND_CHECKPOINTER=postgres`, every server process writes its turns' audit lines and
its students' ratings to two tables of the database of `TEXTBOUND_CHECKPOINT_URL`
(`textbound_audit`, `textbound_feedback`; a row per line: the course, the thread, the run and
the line itself as the file would hold it), so a rating reaching one process finds the run
another process answered, deleting a thread removes its lines whichever process wrote them,
and `textbound report` reads every process's questions. The first process to start creates the
tables, one process at a time (`one_setup_at_a_time`, as the key tables). A request waits at
most `WAIT_S` (1.5 s) for a connection: an audit line that cannot be written then is reported
and counted for `/healthz` (`AuditSink`), never a failed answer; a rating is refused (503).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import psycopg
from psycopg.rows import tuple_row
from psycopg_pool import ConnectionPool

from textbound.errors import ConfigError
from textbound.records.audit import bounded_record
from textbound.records.feedback import FeedbackError, FeedbackLog, rating_record
from textbound.text import valid_unicode

__all__ = ["PostgresAudit", "PostgresFeedback", "PostgresRecords", "SCHEMA"]

log = logging.getLogger("textbound.records.records_postgres")

OPEN_WAIT_S = 10
"""How long opening waits for the server (as the key store's)."""
READ_BATCH = 2000
"""Rows fetched at a time when the report reads the audit lines."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS textbound_audit (id BIGSERIAL PRIMARY KEY, course TEXT NOT "
    "NULL, thread_id TEXT, run_id TEXT, line TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS textbound_audit_run ON textbound_audit (course, run_id)",
    "CREATE INDEX IF NOT EXISTS textbound_audit_thread ON textbound_audit (course, thread_id)",
    "CREATE TABLE IF NOT EXISTS textbound_feedback (id BIGSERIAL PRIMARY KEY, course TEXT NOT "
    "NULL, thread_id TEXT, run_id TEXT NOT NULL, line TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS textbound_feedback_run ON textbound_feedback (course, run_id)",
    "CREATE INDEX IF NOT EXISTS textbound_feedback_thread ON textbound_feedback "
    "(course, thread_id)",
)


def _line(record: Mapping[str, Any]) -> str:
    """Return a record as the file would hold it: one JSON object, valid Unicode, no NUL."""
    return valid_unicode(json.dumps(dict(record), ensure_ascii=False, default=str))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


class PostgresAudit:
    """The audit sink: one row per response in `textbound_audit` (never raises)."""

    def __init__(self, pool: ConnectionPool[Any], course: str) -> None:
        self.pool, self.course = pool, course
        self.failures = 0
        self.last_error: str | None = None

    def write(self, record: dict[str, Any]) -> bool:
        """Insert one line; return False (after reporting it once) when it cannot be."""
        rec = bounded_record(record)
        try:
            with self.pool.connection() as conn:
                conn.execute("INSERT INTO textbound_audit (course, thread_id, run_id, line) "
                             "VALUES (%s, %s, %s, %s)",
                             (self.course, _text(rec.get("thread_id")),
                              _text(rec.get("run_id")), _line(rec)))
        except Exception as exc:  # noqa: BLE001 - a lost line never fails the answer
            self.failures += 1
            self.last_error = f"the audit table cannot be written: {type(exc).__name__}"
            log.error("AUDIT LINE NOT WRITTEN (PostgreSQL table textbound_audit, course %s): "
                      "%s", self.course, type(exc).__name__)
            return False
        self.last_error = None
        return True

    def check(self) -> dict[str, object]:
        """Report whether the table can be reached now (for `/healthz`), writing nothing."""
        problem = self.last_error
        if problem is None:
            try:
                with self.pool.connection() as conn:
                    conn.execute("SELECT 1 FROM textbound_audit LIMIT 1")
            except Exception as exc:  # noqa: BLE001 - health says why in one line
                problem = f"the audit table cannot be read: {type(exc).__name__}"
        report: dict[str, object] = {"ok": problem is None, "enabled": True,
                                     "failures": self.failures, "kept_in": "postgres"}
        if problem:
            report["error"] = problem
        return report


class PostgresFeedback(FeedbackLog):
    """The ratings: one row per rating in `textbound_feedback`; the latest per run counts."""

    def __init__(self, pool: ConnectionPool[Any], course: str) -> None:
        super().__init__(None)
        self.pool, self.course = pool, course

    def append(self, record: Mapping[str, Any]) -> None:
        """Insert one rating; raise FeedbackError if it cannot be kept."""
        try:
            with self.pool.connection() as conn:
                conn.execute("INSERT INTO textbound_feedback (course, thread_id, run_id, line) "
                             "VALUES (%s, %s, %s, %s)",
                             (self.course, _text(record.get("thread_id")),
                              str(record["run_id"]), _line(record)))
        except Exception as exc:  # noqa: BLE001 - any driver error: not kept, said in one line
            log.error("rating not written (PostgreSQL table textbound_feedback): %s",
                      type(exc).__name__)
            raise FeedbackError("the rating could not be stored: the database cannot be "
                                f"reached now ({type(exc).__name__}); try again") from exc

    def records(self) -> Iterator[dict[str, Any]]:
        """Yield the course's ratings in the order kept."""
        for raw in _lines(self.pool, "textbound_feedback", self.course):
            rec = rating_record(raw)
            if rec is not None:
                yield rec

    def rated_before(self, run_id: str) -> bool:
        """Whether the course holds a rating of this run."""
        with self.pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            row = cur.execute("SELECT 1 FROM textbound_feedback WHERE course = %s AND "
                              "run_id = %s LIMIT 1", (self.course, run_id)).fetchone()
        return row is not None


def _lines(pool: ConnectionPool[Any], table: str, course: str) -> Iterator[bytes]:
    """Yield a course's lines of `table` in the order written, a batch of rows at a time."""
    last = 0
    while True:
        with pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            rows = cur.execute(f"SELECT id, line FROM {table} WHERE course = %s AND id > %s "
                               "ORDER BY id LIMIT %s", (course, last, READ_BATCH)).fetchall()
        for row_id, line in rows:
            last = row_id
            yield line.encode("utf-8") + b"\n"
        if len(rows) < READ_BATCH:
            return


class PostgresRecords:
    """A course's records in the two tables (`textbound.records.record_store.RecordStore`)."""

    def __init__(self, pool: ConnectionPool[Any], course: str) -> None:
        self.pool, self.course = pool, course
        self.enabled = True
        self.where = f"PostgreSQL tables textbound_audit and textbound_feedback (course {course})"
        self.audit = PostgresAudit(pool, course)
        self.feedback = PostgresFeedback(pool, course)

    @classmethod
    def open(cls, url: str, course: str) -> PostgresRecords:
        """Connect (one pool per process and database), create the tables if missing."""
        from textbound.conversation.threads_postgres import SETTING, _scrub, one_setup_at_a_time

        pool = _pool(url)
        try:
            with pool.connection() as conn:
                one_setup_at_a_time(conn, lambda: [conn.execute(sql) for sql in SCHEMA])
        except Exception as exc:  # noqa: BLE001 - any failure to open is one line
            password = str(psycopg.conninfo.conninfo_to_dict(url).get("password") or "")
            raise ConfigError(f"{SETTING}: cannot open the audit and feedback tables: "
                              f"{_scrub(exc, password)}") from None
        return cls(pool, course)

    def exists(self) -> bool:
        """The tables are always there to read (perhaps empty)."""
        return True

    def audit_lines(self) -> Iterator[bytes]:
        """Yield the course's audit lines in the order written."""
        return _lines(self.pool, "textbound_audit", self.course)

    def find_run(self, run_id: str) -> dict[str, Any] | None:
        """Return the course's audit line of this run (the latest, if repeated), or None."""
        with self.pool.connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            rows = cur.execute("SELECT line FROM textbound_audit WHERE course = %s AND "
                               "run_id = %s ORDER BY id DESC", (self.course, run_id)).fetchall()
        for (line,) in rows:
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict) and rec.get("event") in ("answer", "refusal"):
                return rec
        return None

    def forget(self, thread_id: str) -> int:
        """Delete the course's audit lines and ratings of conversation `thread_id`."""
        dropped = 0
        with self.pool.connection() as conn:
            for table in ("textbound_audit", "textbound_feedback"):
                cur = conn.execute(f"DELETE FROM {table} WHERE course = %s AND thread_id = %s",
                                   (self.course, thread_id))
                dropped += max(cur.rowcount, 0)
        return dropped


_pools: dict[str, ConnectionPool[Any]] = {}
_pools_lock = threading.Lock()


def _pool(url: str) -> ConnectionPool[Any]:
    """Return the process's pool for the records of database `url` (every course shares it)."""
    from textbound.conversation.threads_postgres import open_pool

    with _pools_lock:
        pool = _pools.get(url)
        if pool is None:
            pool = _pools[url] = open_pool(url, name="textbound-records", max_size=4,
                                           wait_s=OPEN_WAIT_S)
        return pool
