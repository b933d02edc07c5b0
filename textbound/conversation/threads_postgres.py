"""Conversations in PostgreSQL: LangGraph's Postgres saver on a connection pool, sync and async.

`TEXTBOUND_CHECKPOINTER=postgres` with `TEXTBOUND_CHECKPOINT_URL` (a libpq connection string)
keeps every thread in one database that several server processes share
(`textbound.conversation.threads.open_checkpointer` calls `open_postgres`). Needs the postgres
extra: `pip install -e '.[postgres]'`.

The saver is LangGraph's sync `PostgresSaver` on a psycopg `ConnectionPool` (thread-safe, and it
replaces a connection the server dropped); its async methods run the sync ones in a worker
thread (`textbound.conversation.threaded_saver`), so the CLI (sync) and the HTTP server (async, any
event loop) share one saver. Errors name TEXTBOUND_CHECKPOINT_URL and never show its password.
"""

from __future__ import annotations

import re
import time
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from textbound.conversation.threaded_saver import ThreadedAsync
from textbound.errors import ConfigError

__all__ = ["ThreadPostgresSaver", "open_postgres"]

SETTING = "TEXTBOUND_CHECKPOINT_URL"
CONNECT_TIMEOUT_S = 10
"""How long opening waits for the server, unless the connection string sets connect_timeout."""
SETUP_WAIT_S = 120
"""How long opening waits while another process creates the tables."""
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
        # second replaces a broken one without waiting. `check` tests a connection before
        # lending it, so a restarted server costs a reconnect, not a failed request.
        pool: ConnectionPool[Any] = ConnectionPool(
            url, min_size=1, max_size=2, open=False, check=ConnectionPool.check_connection,
            name="textbound-threads",
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row,
                    "connect_timeout": wait_s})
        try:
            pool.open(wait=True, timeout=float(wait_s))
        except psycopg.Error as exc:
            pool.close()
            raise ConfigError(f"{SETTING}: cannot connect to PostgreSQL at {where}: "
                              f"{_scrub(exc, password)}") from None
        return cls(pool, serde=serde)



def open_postgres(url: str, *, serde: SerializerProtocol | None = None) -> ThreadPostgresSaver:
    """Return the saver for TEXTBOUND_CHECKPOINT_URL `url` (see `ThreadPostgresSaver.open`)."""
    return ThreadPostgresSaver.open(url, serde=serde)


def _setup_once(conn: psycopg.Connection[Any]) -> None:
    """Create or migrate the tables, one process at a time (servers may start together)."""
    deadline = time.monotonic() + SETUP_WAIT_S
    # try-lock and sleep rather than wait inside pg_advisory_lock: a session blocked there
    # holds a snapshot that the migrations' CREATE INDEX CONCURRENTLY waits for (a deadlock)
    while not _try_lock(conn):
        if time.monotonic() > deadline:
            raise psycopg.OperationalError(
                f"another process held the set-up lock for over {SETUP_WAIT_S} s")
        time.sleep(0.2)
    try:
        PostgresSaver(conn).setup()
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))


def _try_lock(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT pg_try_advisory_lock(%s) AS got", (_SETUP_LOCK,)).fetchone()
    return bool(row and row["got"])


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
