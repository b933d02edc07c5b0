"""Access keys: a teacher key and student keys per course, and which key opened which thread.

A key is a random 32-byte token shown once, when it is made (`textbound keys create`); only its
sha256 is stored. Every request's key is hashed and compared, in constant time, with the stored
digests of the keys not revoked, read afresh each time, so a key made or revoked while the
server runs counts on the next request. `TEXTBOUND_API_KEY`, where set, is the default course's
teacher key (id `env`).

The keys live where threads live: `<data_dir>/keys.sqlite` beside `threads.sqlite`, or, with
`TEXTBOUND_CHECKPOINTER=postgres`, in two small tables of that database
(`textbound.records.keys_postgres`), so several server processes share them. The same store records
the key that opened each thread (`claim`), which makes a conversation private to it.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textbound.errors import ConfigError
from textbound.records.keystore import (
    ROLES,
    KeyRecord,
    KeyStore,
    KeyStoreError,
    Role,
    SqliteKeyStore,
    digest,
)

if TYPE_CHECKING:
    from textbound.settings import Settings

__all__ = ["CALLER", "ENV_KEY_ID", "ROLES", "Caller", "KeyRecord", "KeyStore", "KeyStoreError",
           "Role", "caller_of", "digest", "identify", "open_keys"]

ENV_KEY_ID = "env"
"""The id `TEXTBOUND_API_KEY` goes by (it is the default course's teacher key)."""
CALLER = "textbound.caller"
"""The ASGI scope key under which the server's key check leaves the request's `Caller`."""


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the key's id, role and course (`key_id` None: the server has no keys)."""

    key_id: str | None
    role: Role
    course: str

    @property
    def teacher(self) -> bool:
        """Whether the caller holds the course's teacher key."""
        return self.role == "teacher"


def open_keys(settings: Settings) -> KeyStore:
    """Open the key store beside the settings' threads (PostgreSQL or `<data_dir>/keys.sqlite`).

    Raises ConfigError (one line) when it cannot be opened.
    """
    if settings.checkpointer == "postgres" and settings.checkpoint_url is not None:
        from textbound.records.keys_postgres import PostgresKeyStore

        return PostgresKeyStore.open(settings.checkpoint_url.get_secret_value())
    path = Path(settings.data_dir) / "keys.sqlite"
    try:
        return SqliteKeyStore(path)
    except (OSError, KeyStoreError) as exc:
        raise ConfigError(f"cannot open the key store {path} (TEXTBOUND_DATA_DIR): "
                          f"{exc}") from exc


def identify(given: bytes, records: Sequence[KeyRecord], *, env_key: str | None,
             course: str) -> Caller | None:
    """Return the caller a request's `X-API-Key` names, or None for no key or a wrong one.

    Every stored digest is compared (in constant time), so the time taken says nothing of which
    one matched; a key of another course is no key here.
    """
    if not given:
        return None
    found: Caller | None = None
    if env_key and hmac.compare_digest(given, env_key.encode()):
        found = Caller(ENV_KEY_ID, "teacher", course)
    hashed = digest(given).encode()
    for record in records:
        if hmac.compare_digest(hashed, record.digest.encode()) and record.revoked is None \
                and record.course == course:
            found = Caller(record.id, record.role, record.course)
    return found


def caller_of(request: Any) -> Caller | None:
    """Return who sent an HTTP request (None: no valid key, on a route open to anyone)."""
    found = request.scope.get(CALLER)
    return found if isinstance(found, Caller) else None
