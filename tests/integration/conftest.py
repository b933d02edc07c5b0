"""Integration fixtures: a real PostgreSQL server for the checkpointer tests."""

from ..pg_server import postgres_server

__all__ = ["postgres_server"]
