"""What a store returns and the `Store` protocol every implementation satisfies."""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore as LangChainVectorStore

__all__ = ["CONTENT_KEY", "METADATA_KEY", "SENTENCES_KEY", "VERSION_KEY", "Hidden",
           "RetrievedChunk", "SentenceVectors", "Store", "StoredChunk", "TermStats"]

CONTENT_KEY = "page_content"
METADATA_KEY = "metadata"
SENTENCES_KEY = "sentence_vectors"
"""Payload key (beside langchain-qdrant's two, which ignore it) holding a chunk's sentence
vectors: `{"spans": [[start, end], ...], "dim": d, "f32": base64 of the row-major float32s}`."""
VERSION_KEY = "version"
"""Metadata key of the document version a chunk belongs to (chunks stored before versions
existed have none). A replacement writes the new version's chunks, switches, then deletes the
old version's: `Hidden` keeps the half-done state out of searches meanwhile."""


@dataclass(frozen=True)
class Hidden:
    """Chunks of one source that searches must not see while its version is being replaced.

    `others` False: the chunks of `version` (written, not yet switched to); True: every chunk
    of the source *except* `version`'s (switched to, the old ones not yet deleted).
    """

    source: str
    version: str
    others: bool

    def hides(self, metadata: dict[str, Any]) -> bool:
        """Whether a chunk with this metadata is hidden."""
        if metadata.get("source") != self.source:
            return False
        return (metadata.get(VERSION_KEY) == self.version) != self.others


@dataclass(frozen=True)
class SentenceVectors:
    """The embeddings of a chunk's answer sentences, computed at ingestion."""

    spans: list[tuple[int, int]]
    vectors: np.ndarray  # (len(spans), dim) float32

    def row(self, start: int, end: int) -> np.ndarray | None:
        """Return the vector of the sentence at [start, end), or None if it was not stored."""
        try:
            return self.vectors[self.spans.index((start, end))]
        except ValueError:
            return None

    def encode(self) -> dict[str, Any]:
        """Return the payload form."""
        data = np.ascontiguousarray(self.vectors, dtype="<f4")
        return {"spans": [list(s) for s in self.spans], "dim": int(data.shape[1]) if data.size
                else 0, "f32": base64.b64encode(data.tobytes()).decode("ascii")}

    @classmethod
    def decode(cls, payload: dict[str, Any]) -> SentenceVectors | None:
        """Parse the payload form; None when it is malformed (the caller embeds instead)."""
        try:
            spans = [(int(a), int(b)) for a, b in payload["spans"]]
            raw = np.frombuffer(base64.b64decode(payload["f32"]), dtype="<f4")
            dim = int(payload["dim"])
            vectors = raw.reshape(len(spans), dim) if spans else raw.reshape(0, max(dim, 1))
        except (KeyError, TypeError, ValueError):
            return None
        return cls(spans, vectors.astype(np.float32))


@dataclass(frozen=True)
class RetrievedChunk:
    """One chunk returned by a search, with its raw cosine score."""

    chunk_id: str
    text: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)
    fused: float | None = None
    """Its reciprocal-rank-fusion score in a hybrid search (None in a dense one)."""

    @property
    def source(self) -> str:
        """The file or document the chunk came from."""
        return str(self.metadata.get("source", ""))

    @property
    def section(self) -> str:
        """The heading path of the chunk, joined with ' > '."""
        return str(self.metadata.get("section", ""))


@dataclass(frozen=True)
class StoredChunk:
    """One chunk read back by id: its text, metadata and stored sentence vectors."""

    chunk_id: str
    text: str
    metadata: dict[str, Any]
    sentences: SentenceVectors | None = None


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of a collection's content words, and the words it uses as written.

    The frequencies give IDF weights; the words tell a name the collection never mentions.
    """

    n_chunks: int
    df: dict[str, int]
    words: frozenset[str] = frozenset()
    """Every word of the collection, folded (accents, possessive 's) with its case kept."""
    words_lower: frozenset[str] = frozenset()
    counts: dict[str, int] = field(default_factory=dict)
    """Chunks using each folded lower-case word (textbound.spelling's dictionary)."""
    names: frozenset[str] = frozenset()
    """Adjacent capitalised words as the collection writes them, lower-cased ("isaac sim")."""

    def mentions(self, name: str) -> bool:
        """Whether the collection uses this capitalised word.

        As written, as its singular (Robots -> Robot), or in lower case: "Windows" in a book that
        only says "window" is not mentioned; "Soviets" beside "Soviet" is.
        """
        forms = {name, name[:-1] if name.endswith("s") else name,
                 name[:-2] if name.endswith("es") else name}
        return bool(forms & self.words) or name.lower() in self.words_lower

    def idf(self, term: str) -> float:
        """Return a smoothed IDF; a term the collection never uses gets the largest weight."""
        return math.log((self.n_chunks + 1) / (self.df.get(term, 0) + 0.5))


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
