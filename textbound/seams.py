"""Every outside dependency the graph talks to, as a protocol: what a node may call on each.

This module is the one place to look for a seam; each has a shipped fake in `textbound.fakes`
(no model loaded, no connection opened) that tests, and users' tests, run the graph with.

- vectors: `Embedder`. Real: `textbound.embeddings.LocalMiniLMEmbeddings` or any LangChain
  `Embeddings`. Fake: `HashEmbedder`.
- chat: `ChatModel`. Real: any LangChain chat model (`textbound.chat.build_chat_model`). Fake:
  `ScriptedChatModel`.
- passages: `Store`. Real: Qdrant Edge, a Qdrant server, local mode (`textbound.store`). Fake:
  `MemoryStore`.
- reading: `AnswerReader`. Real: the shipped ONNX reader (`textbound.answerability`). Fake:
  `FakeReader`.
- audit: `AuditSink`. Real: `textbound.audit.AuditLog` (JSON lines). Fake: `MemoryAudit`.
- course: `ProfileSource`. Real: `textbound.profile.ProfileResolver`. Fake: `FixedProfile`.

`Store` is defined beside the data types it returns (`textbound/store/_types.py`) and re-exported
here. Nodes receive these explicitly (graph.builder hands each node the ones it names); nothing
looks them up at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_core.runnables import Runnable

from textbound.store._types import Store

if TYPE_CHECKING:
    from textbound.answerability import Reading
    from textbound.course import Profile

__all__ = ["AnswerReader", "AuditSink", "ChatModel", "Embedder", "ProfileSource", "Store"]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors; a LangChain `Embeddings` is one as it stands."""

    def embed_query(self, text: str) -> list[float]:
        """Return the vector of one query."""
        ...

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Return one vector per text, in order."""
        ...


@runtime_checkable
class ChatModel(Protocol):
    """What generate needs of a chat model: structured output. A LangChain chat model is one."""

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:
        """Return a runnable that answers messages with an instance of `schema`."""
        ...


@runtime_checkable
class AnswerReader(Protocol):
    """Reads a question against passages: does each answer it, and where?"""

    name: str

    def read(self, question: str, passages: Sequence[tuple[str, str]]) -> list[Reading]:
        """Return one Reading per (chunk_id, text) passage, in the order given."""
        ...


@runtime_checkable
class AuditSink(Protocol):
    """Takes one record per response (the audit line); never raises for a failed write."""

    def write(self, record: dict[str, Any]) -> bool:
        """Keep one record; return False when it could not be kept."""
        ...

    def check(self) -> dict[str, object]:
        """Report whether records can be kept now (for `/healthz`), keeping none."""
        ...


class ProfileSource(Protocol):
    """Gives the course profile in force now (a teacher may edit it while serving)."""

    def current(self) -> Profile:
        """Return the profile to use for this run."""
        ...
