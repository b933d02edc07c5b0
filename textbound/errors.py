"""Typed errors that carry a message a user can act on."""

from __future__ import annotations

__all__ = ["TextboundError", "SetupError", "StoreUnavailableError", "EmbeddingMismatchError"]


class TextboundError(Exception):
    """Base class: the message says what went wrong and what to do."""


class SetupError(TextboundError):
    """Misconfiguration or a missing install step."""


class StoreUnavailableError(TextboundError):
    """The vector store cannot be reached or opened right now."""


class EmbeddingMismatchError(TextboundError):
    """A collection is queried with a different embedding model than the one that built it."""
