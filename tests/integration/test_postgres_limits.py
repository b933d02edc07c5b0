"""PostgreSQL under a class's load: a dead server refuses fast, turns wait, a thread stays small.

All on the real server tests/pg_server.py starts (skipped, saying what to install, without one).
Two savers opened on one database are two sessions, as two server processes are.
"""

from __future__ import annotations

import logging
import operator
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import pytest
from fastapi.testclient import TestClient
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from tests.pg_server import PostgresServer

pytestmark = pytest.mark.integration

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def _database(server: PostgresServer) -> str:
    return server.create_database(f"limits_{uuid.uuid4().hex[:8]}")


@pytest.fixture
def saver_pair(postgres_server: PostgresServer) -> Iterator[tuple[Any, Any]]:
    """Two savers (two sessions, as two processes) on one fresh database, wrapped as the graph's."""
    from textbound.conversation.threads import serializer
    from textbound.conversation.threads_only import ThreadsOnly
    from textbound.conversation.threads_postgres import open_postgres

    url = _database(postgres_server)
    a, b = open_postgres(url, serde=serializer()), open_postgres(url, serde=serializer())
    try:
        yield ThreadsOnly(a), ThreadsOnly(b)
    finally:
        a.close()
        b.close()


class Talk(TypedDict, total=False):
    question: str
    turns: Annotated[list[str], operator.add]


def slow_talk_graph(saver: Any) -> Any:
    """A graph that appends each question to `turns`, taking a while, as a model answering does."""
    def hear(state: Talk) -> Talk:
        time.sleep(0.03)  # the window in which an unguarded second turn reads the same state
        return {"turns": [state["question"]]}

    g = StateGraph(Talk)
    g.add_node("hear", hear)
    g.add_edge(START, "hear")
    g.add_edge("hear", END)
    return g.compile(checkpointer=saver)


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _rows(url: str, thread_id: str) -> dict[str, tuple[int, int]]:
    """Each table's (rows, bytes) of one thread."""
    import psycopg

    with psycopg.connect(url) as conn:
        return {table: tuple(conn.execute(  # type: ignore[misc]
            f"SELECT count(*), coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t "
            "WHERE thread_id = %s", (thread_id,)).fetchone())
            for table in TABLES}


# --- turns sent at once through two processes ------------------------------------------------

def test_sixteen_turns_at_once_through_two_sessions_keep_sixteen(
        saver_pair: tuple[Any, Any]) -> None:
    """Turns of one thread split across two sessions wait for each other's advisory lock."""
    from textbound.conversation.threads import turn_guard

    graphs = [slow_talk_graph(s) for s in saver_pair]
    thread = "t-burst"

    def turn(n: int) -> None:
        graph = graphs[n % 2]
        with turn_guard(graph, thread):
            graph.invoke({"question": f"q{n}"}, cfg(thread))

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(turn, range(16)))
    kept = graphs[0].get_state(cfg(thread)).values["turns"]
    assert sorted(kept) == sorted(f"q{n}" for n in range(16))


def test_other_threads_do_not_wait_for_a_held_one(saver_pair: tuple[Any, Any]) -> None:
    """While one session holds thread A's lock, another takes thread B's at once."""
    a, b = saver_pair
    with a.turn_lock("t-held"):
        start = time.monotonic()
        with b.turn_lock("t-free"):
            took = time.monotonic() - start
    assert took < 0.5


def test_a_lock_held_by_a_session_that_ends_is_released(saver_pair: tuple[Any, Any]) -> None:
    """A process that dies mid-turn (its session ends) holds up no later turn of the thread."""
    a, b = saver_pair
    got = threading.Event()

    def wait_for_it() -> None:
        with b.turn_lock("t-dies"):
            got.set()

    lock = a.turn_lock("t-dies")
    lock.__enter__()  # never left: the session's end must free it
    waiter = threading.Thread(target=wait_for_it, daemon=True)
    waiter.start()
    assert not got.wait(0.5)  # held by the other session: the turn waits
    a.saver.turn_locks.close()  # the session ends, as when its process is killed
    assert got.wait(5.0)
    waiter.join(5.0)


# --- a dead server --------------------------------------------------------------------------

def test_a_turn_on_a_dead_postgres_fails_as_unreachable_within_two_seconds(
        postgres_server: PostgresServer, saver_pair: tuple[Any, Any]) -> None:
    """Reading the thread and taking its lock each fail closed within 2 s, then work again."""
    from textbound.conversation.threads import ThreadStoreError

    saver = saver_pair[0]
    graph = slow_talk_graph(saver)
    graph.invoke({"question": "before"}, cfg("t-dead"))
    postgres_server.stop()
    try:
        for attempt in (lambda: graph.invoke({"question": "down"}, cfg("t-dead")),
                        lambda: saver.turn_lock("t-dead").__enter__()):
            start = time.monotonic()
            with pytest.raises(ThreadStoreError):
                attempt()
            assert time.monotonic() - start < 2.0
    finally:
        postgres_server.start()
    with saver.turn_lock("t-dead"):
        out = graph.invoke({"question": "after"}, cfg("t-dead"))
    assert out["turns"] == ["before", "after"]


def test_a_dead_postgres_refuses_a_question_within_two_seconds_and_recovers(
        postgres_server: PostgresServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
        ) -> None:
    """The server answers 503 store_unavailable within 2 s, logs no traceback, then answers."""
    from tests.unit._keyed_app import ENV_KEY, services
    from textbound.serving.server import create_app

    url = _database(postgres_server)
    key = {"X-API-Key": ENV_KEY}
    app = create_app(services(tmp_path / "data", checkpointer="postgres", checkpoint_url=url,
                              api_key=ENV_KEY))

    def ask(c: TestClient, n: int) -> Any:
        return c.post("/chat/invoke", headers=key, json={
            "input": {"question": f"What is a topic? ({n})"},
            "config": {"configurable": {"thread_id": "t-down"}}})

    with TestClient(app) as c:
        assert ask(c, 0).status_code == 200
        caplog.clear()
        postgres_server.stop()
        try:
            with caplog.at_level(logging.WARNING):
                for n in (1, 2):  # the pool's broken connection, then none at all
                    start = time.monotonic()
                    r = ask(c, n)
                    took = time.monotonic() - start
                    assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
                    out = r.json()["output"]
                    assert out["refusal_reason"] == "store_unavailable"
                    assert out["diagnostics"]["store"] == "conversations"
                    assert took < 2.0
        finally:
            postgres_server.start()
        assert not [rec for rec in caplog.records if rec.exc_info
                    or "Traceback" in rec.getMessage()]
        assert ask(c, 3).status_code == 200  # nothing to restart
        turns = c.get("/threads/t-down", headers=key).json()["turns"]
    assert [t["question"] for t in turns] == ["What is a topic? (0)", "What is a topic? (3)"]


# --- bounded storage ------------------------------------------------------------------------

@pytest.mark.slow
def test_a_500_turn_postgres_thread_stays_small_and_deleting_it_frees_its_rows(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    """Only the latest checkpoint and the blobs it uses are kept; a delete leaves no row."""
    from tests.unit._keyed_app import ENV_KEY, services
    from textbound.serving.server import create_app

    url = _database(postgres_server)
    key = {"X-API-Key": ENV_KEY}
    app = create_app(services(tmp_path / "data", checkpointer="postgres", checkpoint_url=url,
                              api_key=ENV_KEY, ask_per_minute=0))
    with TestClient(app) as c:
        for n in range(500):
            r = c.post("/chat/invoke", headers=key, json={
                "input": {"question": f"What is a topic? ({n})"},
                "config": {"configurable": {"thread_id": "t-long"}}})
            assert r.status_code == 200, r.text[:300]
        rows = _rows(url, "t-long")
        assert rows["checkpoints"][0] == 1
        assert rows["checkpoint_writes"][0] <= 20
        # pruned: about 7 KB; a checkpoint kept a turn would be about 3.3 MB (6.6 KB a turn here)
        assert sum(size for _, size in rows.values()) < 200_000
        assert c.delete("/threads/t-long", headers=key).status_code == 204
    assert _rows(url, "t-long") == {table: (0, 0) for table in TABLES}


def test_key_tables_are_made_once_when_servers_start_together(
        postgres_server: PostgresServer) -> None:
    """Processes opening the key store on a fresh database at once all open it."""
    from textbound.records.keys_postgres import PostgresKeyStore

    failures: list[str] = []
    for _ in range(6):
        url = _database(postgres_server)
        barrier = threading.Barrier(6)

        def open_one(url: str = url, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                PostgresKeyStore.open(url).close()
            except Exception as exc:  # noqa: BLE001 - each failure is the finding
                failures.append(str(exc))

        openers = [threading.Thread(target=open_one) for _ in range(6)]
        for t in openers:
            t.start()
        for t in openers:
            t.join(60)
    assert failures == []
