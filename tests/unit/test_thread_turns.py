"""Turns on one thread: sent at once, all kept; storage bounded; a dead store refuses fast."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path

from fastapi.testclient import TestClient

from tests.unit._keyed_app import client, make_keys, services
from textbound.serving.server import create_app


def _size(db: Path) -> int:
    """The database's bytes on disk, its write-ahead log included."""
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def ask(c: TestClient, thread: str, n: int = 0, headers: dict[str, str] | None = None) -> object:
    return c.post("/chat/invoke", headers=headers or {}, json={
        "input": {"question": f"What is a topic? ({n})"},
        "config": {"configurable": {"thread_id": thread}}})


def test_sixteen_turns_sent_at_once_keep_sixteen(tmp_path: Path) -> None:
    """Concurrent turns on one thread are serialised, so none overwrites another."""
    app = create_app(services(tmp_path / "data", history_turns=40, history_chars=200_000))
    with TestClient(app) as c, ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(lambda n: ask(c, "t-burst", n).status_code, range(16)))
        assert codes == [200] * 16
        turns = c.get("/threads/t-burst").json()["turns"]
    assert sorted(t["question"] for t in turns) == sorted(
        f"What is a topic? ({n})" for n in range(16))


def test_a_long_thread_keeps_one_checkpoint_and_deleting_it_frees_the_file(tmp_path: Path
                                                                           ) -> None:
    """Storage does not grow with turns; after a delete the file is smaller than before."""
    db = tmp_path / "data" / "threads.sqlite"
    with TestClient(create_app(services(tmp_path / "data"))) as c:
        for n in range(60):  # about 3 MB of log if every turn were kept
            assert ask(c, "t-long", n).status_code == 200
        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = 't-long'"
                            ).fetchone()[0]
        conn.close()
        assert rows == 1
        size = _size(db)
        assert size < 1_500_000
        assert c.delete("/threads/t-long").status_code == 204
        assert _size(db) < size


def test_an_unreachable_thread_store_refuses_within_two_seconds_and_recovers(
        tmp_path: Path, monkeypatch) -> None:
    """A store that fails as a locked or dead database does is a declared refusal, then heals."""
    from textbound.conversation.threads import STORE_WAIT_S, ThreadSqliteSaver

    def busy(self, config):
        time.sleep(STORE_WAIT_S)  # what SQLite's busy timeout waits before it gives up
        raise sqlite3.OperationalError("database is locked")

    with TestClient(create_app(services(tmp_path / "data"))) as c:
        assert ask(c, "t-down").status_code == 200
        with monkeypatch.context() as m:
            m.setattr(ThreadSqliteSaver, "get_tuple", busy)
            start = time.monotonic()
            r = ask(c, "t-down", 1)
            took = time.monotonic() - start
        assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
        assert r.json()["output"]["refusal_reason"] == "store_unavailable"
        assert r.json()["output"]["diagnostics"]["store"] == "conversations"
        assert took < 2.0
        assert ask(c, "t-down", 2).status_code == 200
        assert len(c.get("/threads/t-down").json()["turns"]) == 2


def test_asking_and_rating_over_the_limit_is_429_with_retry_after(tmp_path: Path) -> None:
    """Each key's questions and ratings a minute are bounded by the settings."""
    keys = make_keys(tmp_path / "data")
    with client(tmp_path / "data", ask_per_minute=2, rate_per_minute=1) as c:
        runs = [ask(c, "t-lim", n, keys.student) for n in range(3)]
        assert [r.status_code for r in runs] == [200, 200, 429]
        assert int(runs[2].headers["retry-after"]) >= 1
        assert ask(c, "t-other", 0, keys.other_student).status_code == 200  # its own count
        body = {"run_id": runs[0].json()["output"]["run_id"], "rating": "up"}
        assert c.post("/feedback", headers=keys.student, json=body).status_code == 201
        again = c.post("/feedback", headers=keys.student, json=body)
        assert again.status_code == 429 and int(again.headers["retry-after"]) >= 1


def test_a_turn_cancelled_while_waiting_for_its_thread_gives_the_lock_back() -> None:
    """A client that hangs up while its turn waits for another process's turn leaves no lock."""
    from textbound.serving.server._turns import TurnLocks

    other_turn = threading.Lock()
    other_turn.acquire()  # another process's turn of the thread is running
    given_back = threading.Event()

    class Held:
        """A lock object, not a generator (which garbage collection would close for us)."""

        def __enter__(self) -> None:
            other_turn.acquire()

        def __exit__(self, *exc: object) -> None:
            other_turn.release()
            given_back.set()

    class Shared:
        def turn_lock(self, thread_id: str) -> Held:
            return Held()

    locks = TurnLocks(Shared())

    async def hang_up() -> None:
        async def turn() -> None:
            async with locks.hold("t-wait"):
                await asyncio.sleep(30)

        task = asyncio.create_task(turn())
        await asyncio.sleep(0.2)
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
        other_turn.release()  # the other turn ends; the abandoned wait then gets the lock
        for _ in range(50):
            if given_back.is_set():
                return
            await asyncio.sleep(0.05)

    asyncio.run(hang_up())
    assert given_back.is_set()
    assert other_turn.acquire(timeout=1.0)  # free for the next turn


def test_a_question_whose_keys_cannot_be_read_is_refused_as_store_unavailable(
        tmp_path: Path, monkeypatch) -> None:
    """The key check fails closed: a question gets the refusal contract, other routes a 503."""
    from textbound.records.keystore import KeyStore, KeyStoreError

    def down(self, *, active_only: bool = False):
        raise KeyStoreError("the key store cannot be read: PoolTimeout")

    with client(tmp_path / "data") as c:
        monkeypatch.setattr(KeyStore, "records", down)
        r = ask(c, "t-keys")
        assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
        assert r.json()["output"]["refusal_reason"] == "store_unavailable"
        assert r.json()["output"]["diagnostics"]["store"] == "conversations"
        other = c.get("/threads/t-keys")
        assert other.status_code == 503 and "output" not in other.json()
