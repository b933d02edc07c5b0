"""Typed errors that carry a message a user can act on."""

from __future__ import annotations

__all__ = [
    "NO_CHAT_MODEL",
    "ConfigError",
    "EmbeddingMismatchError",
    "NotIngestedError",
    "ProfileError",
    "SetupError",
    "StoreInUseError",
    "StoreUnavailableError",
    "TextboundError",
]


NO_CHAT_MODEL = (
    "no chat model is configured: set TEXTBOUND_CHAT_MODEL (e.g. openai:gpt-4o-mini with "
    "OPENAI_API_KEY, or a model name plus TEXTBOUND_CHAT_BASE_URL for an OpenAI-compatible "
    "server such as Ollama or vLLM), or use TEXTBOUND_GENERATOR=extractive, which needs no model"
)
"""What to do when the chat generator is asked for and no model is set (one source for it)."""


class TextboundError(Exception):
    """Base class: the message says what went wrong and what to do."""


class SetupError(TextboundError):
    """Misconfiguration or a missing install step."""


class ConfigError(SetupError):
    """A setting has a value it cannot take; the message names the variable and what it allows."""


class ProfileError(ConfigError):
    """A course profile file is missing, not valid YAML or not a valid profile (file named)."""


class NotIngestedError(SetupError):
    """The collection holds no documents yet; the message names the command that adds them."""

    LEAD = "Nothing has been ingested into collection"

    def __init__(self, collection: str) -> None:
        self.collection = collection
        super().__init__(
            f"{self.LEAD} {collection!r} yet: run `textbound ingest PATH` with your documents "
            "(or `textbound ingest` for the bundled textbook)."
        )

    @classmethod
    def describes(cls, message: object) -> bool:
        """Whether a recorded error message (state holds it as text) is this error's."""
        return isinstance(message, str) and message.startswith(cls.LEAD)


class StoreUnavailableError(TextboundError):
    """The vector store cannot be reached or opened right now."""


class StoreInUseError(StoreUnavailableError):
    """Another process (a `textbound serve`, say) holds the embedded collection."""


class EmbeddingMismatchError(TextboundError):
    """A collection is queried with a different embedding model than the one that built it."""
