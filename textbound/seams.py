"""The outside dependencies the graph talks to, as protocols: what a node may call on each.

- vectors: `Embedder` (here). Real: `textbound.embeddings.LocalMiniLMEmbeddings` or any
  LangChain `Embeddings`. Fake: `textbound.fakes.HashEmbedder`.
- chat: `ChatModel` (here). Real: any LangChain chat model (`textbound.chat.build_chat_model`).
  Fake: `textbound.fakes.ScriptedChatModel`.
- passages: `textbound.store.Store`. Real: Qdrant Edge, a Qdrant server, local mode. Fake:
  `textbound.store.memory.MemoryStore`.
- reading: `textbound.answerability.Reader`. Real: the shipped ONNX reader. Fake:
  `textbound.answerability.FakeReader`.

Nodes receive these explicitly (graph.builder hands each node the ones it names); nothing
looks them up at run time.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from langchain_core.runnables import Runnable

__all__ = ["ChatModel", "Embedder"]


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
