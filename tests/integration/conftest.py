"""Integration fixtures: a real PostgreSQL server for the checkpointer tests."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from ..pg_server import INSTALL_HINT, PostgresServer, PostgresUnavailable, running_postgres

REQUIRE = "TESTS_REQUIRE_POSTGRES"
"""Set (CI sets it once it has installed PostgreSQL) to fail, not skip, when none starts."""


def _unavailable(reason: str) -> None:
    message = f"{INSTALL_HINT} ({reason})"
    if os.environ.get(REQUIRE):
        pytest.fail(f"{REQUIRE} is set but {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL server for the whole session, with database `textbound`."""
    missing = [m for m in ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres")
               if _no_module(m)]
    if missing:
        _unavailable(f"not installed: {', '.join(missing)}")
    try:
        with running_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        _unavailable(str(exc))


def _no_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except ModuleNotFoundError:
        return True
