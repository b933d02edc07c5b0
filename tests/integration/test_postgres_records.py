"""A course's audit lines and ratings in PostgreSQL, shared by processes (records_postgres.py).

On the real server tests/pg_server.py starts (skipped, saying what to install, without one). Two
record stores on two pools are two sessions, as two server processes are.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_settings
from tests.pg_server import PostgresServer
from textbound.quality.analytics.marked import marked_wrong
from textbound.quality.analytics.scan import scan_log
from textbound.records.feedback import UnknownRunError, forget_thread_records, rate_run
from textbound.records.records_postgres import PostgresRecords
from textbound.records.shared import FileRecords, records_of

pytestmark = pytest.mark.integration


def _line(course_run: str, thread: str | None, event: str = "refusal",
          question: str = "What is a ROS 2 topic?") -> dict[str, Any]:
    return {"event": event, "timestamp": "2026-01-05T10:00:00.000Z", "run_id": course_run,
            "thread_id": thread, "question": question, "asked_question": question,
            "refusal_reason": "insufficient_evidence" if event == "refusal" else None,
            "answer": "I cannot answer that from the book.", "sources": [],
            "nearest": None, "selected_text": False}


@pytest.fixture
def two_processes(postgres_server: PostgresServer) -> Iterator[tuple[str, Any, Any]]:
    """The records of course `book` as two processes see them (two pools on one database)."""
    from textbound.conversation.threads_postgres import open_pool

    url = postgres_server.create_database(f"records_{uuid.uuid4().hex[:8]}")
    PostgresRecords.open(url, "book")  # creates the tables (the process-wide pool)
    pools = [open_pool(url, name=f"test-{n}", max_size=2, wait_s=10) for n in range(2)]
    try:
        yield url, PostgresRecords(pools[0], "book"), PostgresRecords(pools[1], "book")
    finally:
        for pool in pools:
            pool.close()


def run_id() -> str:
    return str(uuid.uuid4())


def test_a_run_written_by_one_process_is_rated_and_counted_by_the_other(
        two_processes: tuple[str, Any, Any]) -> None:
    url, a, b = two_processes
    on_a, on_b = run_id(), run_id()
    assert a.audit.write(_line(on_a, "t-1"))
    assert b.audit.write(_line(on_b, "t-2", "answer", "What is a service?"))
    assert b.find_run(on_a)["thread_id"] == "t-1" and a.find_run(on_b)["event"] == "answer"

    rated = rate_run(b, on_a, "DOWN", "it is in chapter 3")
    assert rated["question"] == "What is a ROS 2 topic?" and not rated["replaces_earlier"]
    assert rate_run(a, on_a, "up")["replaces_earlier"]  # the latest wins, on either process
    rate_run(a, on_b, "down")
    with pytest.raises(UnknownRunError):
        rate_run(a, run_id(), "up")

    summary = scan_log(a)
    assert (summary.answers, summary.refusals, summary.lines) == (1, 1, 2)
    assert "PostgreSQL" in summary.shown(None) and url not in summary.shown(None)
    wrong = marked_wrong(b)
    assert (wrong.rated, wrong.up, wrong.down) == (2, 1, 1)
    assert [r["run_id"] for ch in wrong.chapters for r in ch.runs] == [on_b]


def test_deleting_a_thread_removes_its_rows_of_its_course_only(
        two_processes: tuple[str, Any, Any]) -> None:
    url, a, b = two_processes
    other = PostgresRecords(a.pool, "other")  # another course, the same thread id
    kept, gone, theirs = run_id(), run_id(), run_id()
    a.audit.write(_line(gone, "t-1"))
    a.audit.write(_line(kept, "t-2"))
    a.audit.write(_line(run_id(), None))
    other.audit.write(_line(theirs, "t-1"))
    rate_run(b, gone, "down")
    rate_run(b, kept, "down")

    assert forget_thread_records(b, "t-1") == 2  # its audit line and its rating
    assert a.find_run(gone) is None and a.find_run(kept) is not None
    assert other.find_run(theirs) is not None
    assert [r["run_id"] for r in a.feedback.records()] == [kept]
    assert scan_log(a).lines == 2


def test_records_of_picks_the_tables_on_postgres_only(postgres_server: PostgresServer,
                                                       tmp_path: Path) -> None:
    url = postgres_server.create_database(f"records_{uuid.uuid4().hex[:8]}")
    on_pg = make_settings(tmp_path, checkpointer="postgres", checkpoint_url=url)
    found = records_of(on_pg)
    assert isinstance(found, PostgresRecords) and records_of(on_pg) is found
    assert found.course == on_pg.collection
    assert isinstance(records_of(make_settings(tmp_path)), FileRecords)
    off = records_of(make_settings(tmp_path, checkpointer="postgres", checkpoint_url=url,
                                   audit_log=""))
    assert isinstance(off, FileRecords) and not off.enabled


def test_a_dead_database_loses_the_line_fast_and_never_raises(
        two_processes: tuple[str, Any, Any], postgres_server: PostgresServer) -> None:
    _, a, _ = two_processes
    postgres_server.stop()
    try:
        start = time.monotonic()
        assert a.audit.write(_line(run_id(), None)) is False
        assert time.monotonic() - start < 2.0
        health = a.audit.check()
        assert not health["ok"] and health["failures"] == 1 and "error" in health
    finally:
        postgres_server.start()
    assert a.audit.write(_line(run_id(), None)) and a.audit.check()["ok"]
