"""Access keys in PostgreSQL, beside the conversations (`TEXTBOUND_CHECKPOINTER=postgres`).

Several server processes then share one set of keys and thread owners (`textbound.records.keys`;
the statements are `textbound.records.keystore`'s).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from textbound.errors import ConfigError
from textbound.records.keystore import SCHEMA, KeyStore

__all__ = ["PostgresKeyStore"]

OPEN_WAIT_S = 10
"""How long opening waits for the server. A request then waits at most
`textbound.conversation.threads_postgres.WAIT_S` for a connection, so a database that is down
fails it within 2 s (the server answers 503)."""


class PostgresKeyStore(KeyStore):
    """Keys and thread owners in two tables of the conversations' database."""

    placeholder = "%s"

    def __init__(self, pool: ConnectionPool[Any]) -> None:
        self.pool = pool

    @classmethod
    def open(cls, url: str) -> PostgresKeyStore:
        """Connect, create the tables if missing, and return the store."""
        from textbound.conversation.threads_postgres import (
            SETTING,
            _scrub,
            one_setup_at_a_time,
            open_pool,
        )

        # bounded waits and prompt reconnection, as the conversations' pool
        pool = open_pool(url, name="textbound-keys", max_size=4, wait_s=OPEN_WAIT_S)
        try:
            store = cls(pool)
            with pool.connection() as conn:
                one_setup_at_a_time(conn, lambda: [conn.execute(sql) for sql in SCHEMA])
        except Exception as exc:  # noqa: BLE001 - any failure to open is one line
            pool.close()
            password = str(psycopg.conninfo.conninfo_to_dict(url).get("password") or "")
            raise ConfigError(f"{SETTING}: cannot open the key tables: "
                              f"{_scrub(exc, password)}") from None
        return store

    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: bool = False
             ) -> list[tuple[Any, ...]]:
        with self.pool.connection() as conn:
            cur = conn.execute(sql, tuple(params))  # type: ignore[arg-type]
            return [tuple(row) for row in cur.fetchall()] if fetch else []

    def close(self) -> None:
        """Close the connection pool."""
        self.pool.close()
