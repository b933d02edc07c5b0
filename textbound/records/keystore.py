"""Where access keys and thread owners are kept: a small SQL store (SQLite here).

`textbound.records.keys` says what a key is and who a request's key names; this module only stores
them (`textbound.records.keys_postgres` does so in PostgreSQL).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from textbound.errors import ConfigError, TextboundError

__all__ = ["KEY_PREFIX", "ROLES", "SCHEMA", "KeyRecord", "KeyStore", "KeyStoreError", "Role",
           "SqliteKeyStore", "digest"]

Role = Literal["teacher", "student"]
ROLES: tuple[Role, ...] = get_args(Role)
KEY_PREFIX = "tbk_"


def digest(secret: str | bytes) -> str:
    """Return a key's stored form: its sha256, in hex."""
    raw = secret.encode() if isinstance(secret, str) else secret
    return hashlib.sha256(raw).hexdigest()


SCHEMA = (
    "CREATE TABLE IF NOT EXISTS textbound_keys (id TEXT PRIMARY KEY, role TEXT NOT NULL, "
    "course TEXT NOT NULL, digest TEXT NOT NULL UNIQUE, created TEXT NOT NULL, revoked TEXT)",
    "CREATE TABLE IF NOT EXISTS textbound_thread_owners (thread_id TEXT PRIMARY KEY, "
    "key_id TEXT NOT NULL, created TEXT NOT NULL)",
)


class KeyStoreError(TextboundError):
    """The key store cannot be read or written (the server answers 503, failing closed)."""


@dataclass(frozen=True)
class KeyRecord:
    """One key as stored: never the key itself, only its digest."""

    id: str
    role: Role
    course: str
    created: str
    revoked: str | None = None
    digest: str = ""

    def public(self) -> dict[str, Any]:
        """Return what may be shown (`textbound keys list`): everything but the digest."""
        return {"id": self.id, "role": self.role, "course": self.course,
                "created": self.created, "revoked": self.revoked}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class KeyStore:
    """The keys and thread owners in a SQL database; subclasses say how to run a statement."""

    placeholder = "?"

    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: bool = False
             ) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        return sql.replace("?", self.placeholder)

    def _do(self, sql: str, params: Sequence[Any] = (), *, fetch: bool = False
            ) -> list[tuple[Any, ...]]:
        try:
            return self._run(self._sql(sql), params, fetch=fetch)
        except TextboundError:
            raise
        except Exception as exc:  # noqa: BLE001 - any driver error: the store cannot be used
            raise KeyStoreError(f"the key store cannot be read: {type(exc).__name__}") from exc

    def close(self) -> None:
        """Release the store's connections."""

    # --- keys --------------------------------------------------------------------------------
    def create(self, role: str, course: str) -> tuple[KeyRecord, str]:
        """Make a key for `role` in `course`; return its record and the key (shown once)."""
        if role not in ROLES:
            raise ConfigError(f"a key's role is one of {', '.join(ROLES)}, not {role!r}")
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        record = KeyRecord(id=secrets.token_hex(4), role=role, course=course,  # type: ignore[arg-type]
                           created=_now(), digest=digest(secret))
        self._do("INSERT INTO textbound_keys (id, role, course, digest, created) "
                 "VALUES (?, ?, ?, ?, ?)",
                 (record.id, record.role, record.course, record.digest, record.created))
        return record, secret

    def records(self, *, active_only: bool = False) -> list[KeyRecord]:
        """Return every key (oldest first), or only those not revoked."""
        where = " WHERE revoked IS NULL" if active_only else ""
        rows = self._do("SELECT id, role, course, created, revoked, digest FROM textbound_keys"
                        + where + " ORDER BY created, id", fetch=True)
        return [KeyRecord(*row) for row in rows]

    def revoke(self, key_id: str) -> bool:
        """Revoke a key at once; return False when no key not yet revoked has this id."""
        found = self._do("SELECT id FROM textbound_keys WHERE id = ? AND revoked IS NULL",
                         (key_id,), fetch=True)
        if not found:
            return False
        self._do("UPDATE textbound_keys SET revoked = ? WHERE id = ?", (_now(), key_id))
        return True

    # --- thread owners -----------------------------------------------------------------------
    def owner(self, thread_id: str) -> str | None:
        """Return the id of the key that opened `thread_id`, or None for a thread never opened."""
        rows = self._do("SELECT key_id FROM textbound_thread_owners WHERE thread_id = ?",
                        (thread_id,), fetch=True)
        return str(rows[0][0]) if rows else None

    def claim(self, thread_id: str, key_id: str) -> str:
        """Make `key_id` the owner of `thread_id` unless it has one; return the owner."""
        self._do("INSERT INTO textbound_thread_owners (thread_id, key_id, created) "
                 "VALUES (?, ?, ?) ON CONFLICT (thread_id) DO NOTHING",
                 (thread_id, key_id, _now()))
        return self.owner(thread_id) or key_id

    def forget(self, thread_id: str) -> None:
        """Drop a deleted thread's owner, so its id may start a new conversation."""
        self._do("DELETE FROM textbound_thread_owners WHERE thread_id = ?", (thread_id,))


class SqliteKeyStore(KeyStore):
    """Keys in `<data_dir>/keys.sqlite`; one short connection per call, safe from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        for statement in SCHEMA:
            self._do(statement)

    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: bool = False
             ) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(str(self.path), timeout=1.5)
        try:
            with conn:
                rows = conn.execute(sql, tuple(params)).fetchall()
            return rows if fetch else []
        finally:
            conn.close()
