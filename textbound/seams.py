"""Every outside dependency the graph talks to, as a protocol: what a node may call on each.

This module is the one place to look for a seam; each has a shipped fake in `textbound.fakes`
(no model loaded, no connection opened) that tests, and users' tests, run the graph with.

- vectors: `Embedder`. Real: `textbound.providers.embeddings.LocalMiniLMEmbeddings` or any LangChain
  `Embeddings`. Fake: `HashEmbedder`.
- chat: `ChatModel`. Real: any LangChain chat model (`textbound.providers.chat.build_chat_model`).
Fake:
  `ScriptedChatModel`.
- passages: `Store`. Real: Qdrant Edge, a Qdrant server, local mode (`textbound.documents.store`).
Fake:
  `MemoryStore`.
- reading: `AnswerReader`. Real: the shipped ONNX reader (`textbound.answer.answerability`). Fake:
  `FakeReader`.
- audit: `AuditSink`. Real: `textbound.records.audit.AuditLog` (JSON lines). Fake: `MemoryAudit`.
- course: `ProfileSource`. Real: `textbound.documents.profile.ProfileResolver` (the collection's
profile,
  re-read when it changes) or `textbound.documents.profile.FixedProfile` (one profile given at
  start-up);
  `textbound.fakes` re-exports the latter for tests.

`Reading`, the value an `AnswerReader` returns, is defined here beside it (the reader and its
fake import it from here). The values a `Store` speaks in (`RetrievedChunk`, `StoredChunk`,
`SentenceVectors`, `TermStats`, `Hidden`) are plain types in `textbound.documents.store._types`,
which imports nothing of ours; `textbound.documents.store` re-exports `Store` with them. Nodes
receive the
seams explicitly (graph.builder hands each node the ones it names); nothing looks them up at run
time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    # type-only: LangChain's types only annotate here, so the reader's training imports the reader
    # without LangChain (the GPU machine has none); textbound.documents.store imports Store from
    # here, so a runtime import of it would be a circle
    from langchain_core.embeddings import Embeddings
    from langchain_core.runnables import Runnable
    from langchain_core.vectorstores import VectorStore as LangChainVectorStore

    from textbound.course import Profile
    from textbound.documents.store._types import (
        Hidden,
        RetrievedChunk,
        SentenceVectors,
        StoredChunk,
        TermStats,
    )

__all__ = ["AnswerReader", "AuditSink", "ChatModel", "Embedder", "ProfileSource", "Reading",
           "Store"]


@dataclass(frozen=True)
class Reading:
    """The reader's verdict on one passage (the best of its windows)."""

    chunk_id: str
    score: float
    """Probability in [0, 1] that the passage answers the question."""
    span_start: int | None
    """Character offset of the best answer span in the passage text (None: no span found)."""
    span_end: int | None
    span_text: str
    window_start: int
    """Character offsets of the window (inside the passage) that gave the score."""
    window_end: int
    verdict: float | None = None
    """The fitted no-answer head's probability that the passage answers (its best window), when
    the reader has one (textbound/answer/reader_head.py); `score` then still chooses the span."""

    @property
    def answers(self) -> float:
        """The probability that the passage answers: the fitted head's verdict, else the score."""
        return self.score if self.verdict is None else self.verdict

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return asdict(self)


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
class Store(Protocol):
    """A textbound collection: what the graph, ingestion, the CLI and the server use.

    Scores are raw cosine in [-1, 1] whatever the implementation. Every method raises
    StoreUnavailableError (the store cannot be reached or opened now), SetupError
    (misconfiguration, e.g. a data folder that needs `textbound migrate-store`) or
    EmbeddingMismatchError (the collection was built by another embedding model).
    """

    collection: str
    """The collection's name."""
    location: str
    """Where it lives (a folder or a server URL), for messages and /healthz."""
    embeddings: Embeddings
    """The embeddings queries and ingestion use; checked against the collection's own."""

    def exists(self) -> bool:
        """Whether the collection exists."""
        ...

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection for these embeddings if missing, else check it matches."""
        ...

    def info(self) -> dict[str, Any]:
        """Return the collection's metadata, vector size (`dimension`) and `points`."""
        ...

    def check_compatible(self, dimension: int | None = None) -> None:
        """Raise EmbeddingMismatchError when the collection was built by another model."""
        ...

    def search(self, vector: list[float], k: int, *, text: str | None = None,
               candidates: int | None = None) -> list[RetrievedChunk]:
        """Return the k best chunks, best first, with raw cosine scores.

        Dense (nearest by cosine) with `vector` alone; hybrid with the query's `text` too: the
        `candidates` best by cosine and by BM25, fused by reciprocal rank fusion (`fused`).
        """
        ...

    def retrieve(self, chunk_ids: list[str]) -> list[StoredChunk]:
        """Return these chunks (those that exist), with their sentence vectors."""
        ...

    def vectors(self, chunk_ids: list[str]) -> dict[str, list[float]]:
        """Return the stored vectors of these chunks (those that exist)."""
        ...

    def sentence_vectors(self, chunk_ids: list[str]) -> dict[str, SentenceVectors]:
        """Return the stored sentence vectors of these chunks (those that have them)."""
        ...

    def scroll(self, fields: Iterable[str] = ("source",), *,
               every_version: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield (chunk id, selected metadata fields) for every chunk searches may see (all)."""
        ...

    def hide(self, hidden: Hidden) -> None:
        """Keep a half-replaced source's chunks out of searches and scrolls (one per source)."""
        ...

    def unhide(self, source: str) -> None:
        """Let searches see every chunk of a source again."""
        ...

    def count(self) -> int:
        """Return the number of chunks stored (0 when the collection does not exist)."""
        ...

    def table_of_contents(self) -> list[dict[str, Any]]:
        """Return the collection's documents and their section titles, in reading order."""
        ...

    def term_stats(self) -> TermStats:
        """Return document frequencies of content words over all chunks."""
        ...

    def upsert(self, ids: list[str], vectors: list[list[float]], texts: list[str],
               metadatas: list[dict[str, Any]],
               sentences: list[SentenceVectors | None] | None = None) -> None:
        """Write chunks (durably, before returning), with their sentence vectors when given."""
        ...

    def delete(self, ids: list[str]) -> None:
        """Delete chunks by id."""
        ...

    def delete_source(self, source: str) -> int:
        """Delete every chunk of one source; return how many were deleted."""
        ...

    def optimize(self) -> None:
        """Build search indexes after a batch of writes (a no-op where the engine does it)."""
        ...

    def as_langchain(self) -> LangChainVectorStore:
        """Return a LangChain VectorStore over the same collection."""
        ...

    def drop(self) -> None:
        """Delete the whole collection."""
        ...

    def close(self) -> None:
        """Release the store (and any lock on its folder)."""
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
