"""Conversations in PostgreSQL: LangGraph's Postgres saver on a connection pool, sync and async.

`TEXTBOUND_CHECKPOINTER=postgres` with `TEXTBOUND_CHECKPOINT_URL` (a libpq connection string)
keeps every thread in one database that several server processes share
(`textbound.conversation.threads.open_checkpointer` calls `open_postgres`). Needs the postgres
extra: `pip install -e '.[postgres]'`.

The saver is LangGraph's sync `PostgresSaver` on a psycopg `ConnectionPool` (thread-safe, and it
replaces a connection the server dropped); its async methods run the sync ones in a worker
thread (`textbound.conversation.threaded_saver`), so the CLI (sync) and the HTTP server (async, any
event loop) share one saver. Errors name TEXTBOUND_CHECKPOINT_URL and never show its password.

What several processes on one database need, beside the shared tables:

- a turn waits at most `WAIT_S` for a connection, so a server that is down fails a question
  within 2 s (`textbound.conversation.threads_only.ThreadsOnly` turns the error into a
  `store_unavailable` refusal), and a pool that gave up reconnecting tries again on the next
  request, so the first question after the server returns is answered;
- `turn_lock(thread_id)` holds a PostgreSQL advisory lock on the thread while one turn runs, so
  turns sent at once to one thread through different processes are kept one after another;
- a thread keeps only its latest checkpoint (LangGraph's `prune(..., "keep_latest")` after each
  save, with the blobs and writes only older ones used), so its rows do not grow with its turns.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import psycopg
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row, tuple_row
from psycopg_pool import ConnectionPool

from textbound.conversation.threaded_saver import ThreadedAsync
from textbound.errors import ConfigError

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["AdvisoryTurnLocks", "ThreadPostgresSaver", "one_setup_at_a_time", "open_pool",
           "open_postgres"]

log = logging.getLogger(__name__)


class _OneLine(logging.Filter):
    """Write a pool's warning ("error connecting ...", libpq's two lines) on one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "\n" in text:
            record.msg = "; ".join(part.strip() for part in text.splitlines() if part.strip())
            record.args = None
        return True


_POOL_LOG = logging.getLogger("psycopg.pool")
if not any(isinstance(f, _OneLine) for f in _POOL_LOG.filters):
    _POOL_LOG.addFilter(_OneLine())

SETTING = "TEXTBOUND_CHECKPOINT_URL"
CONNECT_TIMEOUT_S = 10
"""How long opening waits for the server, unless the connection string sets connect_timeout."""
SETUP_WAIT_S = 120
"""How long opening waits while another process creates the tables."""
WAIT_S = 1.5
"""Longest a request waits for a pooled connection before it fails (as
`textbound.conversation.threads.STORE_WAIT_S` for SQLite): a server that is down fails a question
within 2 s."""
RECONNECT_S = 1.0
"""How long a pool keeps retrying a lost connection before it gives up until the next request
(psycopg_pool's `reconnect_timeout`, default 5 minutes, backs off up to minutes apart: a server
that came back would wait that long to be used again)."""
LOCK_POLL_S = 0.05
"""How often a turn waiting for its thread's advisory lock asks again."""
_SETUP_LOCK = 7_201_027  # pg_advisory_lock key: one process at a time creates the tables
_FORMS = ("postgresql://user:password@host:5432/database, or "
          "'host=... port=... dbname=... user=... password=...'")
_URL_PASSWORD = re.compile(r"(\w+://[^:/@\s]*:)[^@\s]*@")
_KEY_PASSWORD = re.compile(r"(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)")


class ThreadPostgresSaver(ThreadedAsync, PostgresSaver):
    """LangGraph's Postgres saver on a connection pool, callable from sync and async code."""

    @classmethod
    def open(cls, url: str, *, serde: SerializerProtocol | None = None) -> ThreadPostgresSaver:
        """Connect to the database `url` names, create the tables once, and return a saver.

        `serde` reads and writes the checkpoints (`textbound.conversation.threads.serializer()`,
        which reads back only the state's own types).

        Raises ConfigError (one line naming TEXTBOUND_CHECKPOINT_URL, password hidden) when
        the string is malformed, the server cannot be reached or the tables cannot be created.
        """
        try:
            params = conninfo_to_dict(url)
        except psycopg.Error:
            # libpq's message may quote the malformed string, password and all
            raise ConfigError(f"{SETTING} is not a PostgreSQL connection string: use "
                              f"{_FORMS}") from None
        password = str(params.get("password") or "")
        where = _describe(params)
        try:
            wait_s = int(params.get("connect_timeout") or CONNECT_TIMEOUT_S)
        except ValueError:
            raise ConfigError(f"{SETTING}: connect_timeout must be a whole number of "
                              "seconds") from None
        try:
            # one plain connection first: libpq says why it cannot connect (a pool only times
            # out)
            conn = psycopg.connect(url, autocommit=True, row_factory=dict_row,
                                   connect_timeout=wait_s)
        except psycopg.Error as exc:
            raise ConfigError(f"{SETTING}: cannot connect to PostgreSQL at {where}: "
                              f"{_scrub(exc, password)}") from None
        try:
            with conn:
                _setup_once(conn)
        except psycopg.Error as exc:
            raise ConfigError(f"{SETTING}: cannot create the conversation tables in {where}: "
                              f"{_scrub(exc, password)}") from None
        # the saver holds a lock around each statement, so one connection serves it; the
        # second replaces a broken one without waiting
        pool = open_pool(url, name="textbound-threads", max_size=2, wait_s=wait_s,
                         kwargs={"prepare_threshold": 0, "row_factory": dict_row})
        saver = cls(pool, serde=serde)
        saver.turn_locks = AdvisoryTurnLocks(url, connect_timeout=min(wait_s, 2))
        return saver

    turn_locks: AdvisoryTurnLocks | None = None

    @contextmanager
    def turn_lock(self, thread_id: str) -> Iterator[None]:
        """Hold thread `thread_id`'s advisory lock while the block runs (one turn at a time).

        Raises psycopg.Error when the database cannot be reached (ThreadsOnly makes it a
        ThreadStoreError, which the server answers with a `store_unavailable` refusal).
        """
        if self.turn_locks is None:
            yield
            return
        with self.turn_locks.hold(thread_id):
            yield

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Save the checkpoint, then drop the thread's older ones and what only they used."""
        saved = super().put(config, checkpoint, metadata, new_versions)
        thread_id = str(saved["configurable"]["thread_id"])
        try:
            self.prune([thread_id], strategy="keep_latest")
        except (psycopg.Error, NotImplementedError) as exc:
            # the turn is saved; the next one prunes what this one could not
            log.warning("could not prune thread %s's older checkpoints: %s", thread_id,
                        type(exc).__name__)
        return saved

    def close(self) -> None:
        """Close the connection pool and the advisory locks' connection."""
        super().close()
        if self.turn_locks is not None:
            self.turn_locks.close()


class AdvisoryTurnLocks:
    """One advisory lock per thread, held on one connection (session) of this process.

    A thread id maps to a 64-bit lock key (its sha256); taking a lock is a
    `pg_try_advisory_lock`, asked again every `LOCK_POLL_S` while another session holds it, so
    a waiting turn never blocks the connection the other turns use. PostgreSQL releases a
    session's locks when it ends, so a process that dies mid-turn holds up no one. A lock is
    re-entrant within one session, so the locks this process holds are also kept here: a second
    turn of the same thread in this process waits as one in another process does. If the
    connection is lost mid-turn, its locks go with it (the turn goes on unguarded).
    """

    def __init__(self, url: str, *, connect_timeout: int) -> None:
        self.url = url
        self.connect_timeout = connect_timeout
        self._mutex = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._held: set[int] = set()

    @staticmethod
    def key(thread_id: str) -> int:
        """Return the advisory lock key of thread `thread_id` (a signed 64-bit integer)."""
        raw = hashlib.sha256(b"textbound-turn:" + thread_id.encode()).digest()
        return int.from_bytes(raw[:8], "big", signed=True)

    @contextmanager
    def hold(self, thread_id: str) -> Iterator[None]:
        """Run the block while this process holds thread `thread_id`'s lock."""
        key = self.key(thread_id)
        while not self._try(key):
            time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            self._release(key)

    def _try(self, key: int) -> bool:
        with self._mutex:
            if key in self._held:
                return False
            row = self._ask("SELECT pg_try_advisory_lock(%s)", (key,))
            if row and row[0]:
                self._held.add(key)
                return True
            return False

    def _release(self, key: int) -> None:
        with self._mutex:
            self._held.discard(key)
            conn = self._conn
            if conn is None or conn.closed or conn.broken:
                return  # the session ended, and its locks with it
            try:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except psycopg.Error:
                self._drop()  # ending the session releases the lock too

    def _ask(self, sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
        """Run one statement, on a new connection once if the one kept was lost."""
        fresh = self._conn is None or self._conn.closed or self._conn.broken
        while True:
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._drop()
                self._conn = psycopg.connect(self.url, autocommit=True,
                                             connect_timeout=self.connect_timeout)
            try:
                return self._conn.execute(sql, params).fetchone()
            except psycopg.OperationalError:
                self._drop()
                if fresh:
                    raise
                fresh = True  # a server that restarted: one more try, on a new session

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
        self._conn = None

    def close(self) -> None:
        """Close the connection (releasing any lock still held)."""
        with self._mutex:
            self._drop()
            self._held.clear()


def open_pool(url: str, *, name: str, max_size: int, wait_s: float,
              kwargs: dict[str, Any] | None = None) -> ConnectionPool[Any]:
    """Open a connection pool for a request path: bounded waits, prompt reconnection.

    A request waits at most `WAIT_S` for a connection; `check` tests one before lending it, so
    a restarted server costs a reconnect, not a failed request; a lost connection is retried
    for `RECONNECT_S`, then again on the next request that needs one.

    Raises ConfigError (one line, password hidden) when no connection opens within `wait_s`.
    """
    pool: ConnectionPool[Any] = ConnectionPool(
        url, min_size=1, max_size=max_size, open=False, timeout=WAIT_S,
        reconnect_timeout=RECONNECT_S, check=ConnectionPool.check_connection, name=name,
        kwargs={"autocommit": True, "connect_timeout": int(wait_s), **(kwargs or {})})
    try:
        pool.open(wait=True, timeout=float(wait_s))
    except psycopg.Error as exc:
        pool.close()
        params = conninfo_to_dict(url)
        raise ConfigError(f"{SETTING}: cannot connect to PostgreSQL at {_describe(params)}: "
                          f"{_scrub(exc, str(params.get('password') or ''))}") from None
    return pool



def open_postgres(url: str, *, serde: SerializerProtocol | None = None) -> ThreadPostgresSaver:
    """Return the saver for TEXTBOUND_CHECKPOINT_URL `url` (see `ThreadPostgresSaver.open`)."""
    return ThreadPostgresSaver.open(url, serde=serde)


def _setup_once(conn: psycopg.Connection[Any]) -> None:
    """Create or migrate LangGraph's tables, one process at a time."""
    one_setup_at_a_time(conn, PostgresSaver(conn).setup)


def one_setup_at_a_time(conn: psycopg.Connection[Any], setup: Callable[[], object]) -> None:
    """Run `setup` (creating tables) while no other process runs one: servers may start together.

    Concurrent `CREATE TABLE IF NOT EXISTS` of one table can fail in the second process
    (UniqueViolation), so the conversation tables and the key tables are made under one
    advisory lock. `conn` is in autocommit mode.
    """
    deadline = time.monotonic() + SETUP_WAIT_S
    # try-lock and sleep rather than wait inside pg_advisory_lock: a session blocked there
    # holds a snapshot that the migrations' CREATE INDEX CONCURRENTLY waits for (a deadlock)
    while not _try_lock(conn):
        if time.monotonic() > deadline:
            raise psycopg.OperationalError(
                f"another process held the set-up lock for over {SETUP_WAIT_S} s")
        time.sleep(0.2)
    try:
        setup()
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))


def _try_lock(conn: psycopg.Connection[Any]) -> bool:
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute("SELECT pg_try_advisory_lock(%s)", (_SETUP_LOCK,)).fetchone()
    return bool(row and row[0])


def _describe(params: dict[str, Any]) -> str:
    """Say which server and database a connection string names, without its password."""
    host = params.get("host") or params.get("hostaddr") or "localhost"
    port = params.get("port") or "5432"
    user = params.get("user")
    database = params.get("dbname") or user or "(default database)"
    return f"{f'{user}@' if user else ''}{host}:{port}/{database}"


def _scrub(exc: BaseException, password: str) -> str:
    """Return `exc`'s message on one line with any password hidden."""
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    text = text or type(exc).__name__
    if password:
        text = text.replace(password, "***")
    text = _URL_PASSWORD.sub(r"\1***@", text)
    return _KEY_PASSWORD.sub(r"\1***", text)
