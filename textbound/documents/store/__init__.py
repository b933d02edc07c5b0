"""The vector store seam: the implementations of `textbound.seams.Store`, chosen by configuration.

- **Qdrant Edge** (`TEXTBOUND_STORE=edge`, the default without a URL): Qdrant's Rust engine
  in-process, one shard per collection under `<qdrant_path>/edge/`
  (`textbound.documents.store._edge`).
- **A Qdrant server or cluster** (`TEXTBOUND_QDRANT_URL` set) through qdrant-client.
- **qdrant-client's local mode** (`TEXTBOUND_STORE=local`), the previous embedded store, kept
  for one release; `textbound migrate-store` converts its collections to Edge.
- **`MemoryStore`** (`textbound.documents.store.memory`), in memory, for tests and notebooks.

Every implementation stores points in langchain-qdrant's layout (`page_content` + `metadata`,
plus `sentence_vectors`), returns **raw cosine** scores in [-1, 1], records the embedding model
that built a collection (querying with another raises EmbeddingMismatchError), and offers
`as_langchain()` for plain LangChain chains.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.embeddings import Embeddings

from textbound.documents.store._base import BaseStore
from textbound.documents.store._edge import EdgeStore
from textbound.documents.store._langchain import StoreVectorStore
from textbound.documents.store._qdrant import QdrantStore, open_client
from textbound.documents.store._types import (
    RetrievedChunk,
    SentenceVectors,
    StoredChunk,
    TermStats,
)
from textbound.documents.store.memory import MemoryStore
from textbound.errors import SetupError, StoreUnavailableError
from textbound.seams import Store
from textbound.settings import Settings

__all__ = ["BaseStore", "EdgeStore", "QdrantStore", "RetrievedChunk", "SentenceVectors", "Store",
           "StoredChunk", "TermStats", "VectorStore", "open_client", "open_store", "opened_store",
           "require_collection"]

StoreVectorStore.new_store = MemoryStore  # LangChain's from_texts without store=: in memory


def open_store(settings: Settings, embeddings: Embeddings, *, lazy: bool = False) -> Store:
    """Open the store the settings describe (does not create the collection).

    A Qdrant URL means a server through qdrant-client; otherwise `settings.store` picks the
    embedded engine ("edge", the default, or "local"). With `lazy`, a store that cannot be
    opened yet (a collection another process holds) does not raise here: every use raises
    StoreUnavailableError saying why, and it opens on the first use after it became available.
    """
    store: BaseStore[Any]
    if settings.qdrant_url or settings.store == "local":
        store = QdrantStore.from_settings(settings, embeddings, lazy=lazy)
    else:
        store = EdgeStore.from_settings(settings, embeddings, lazy=lazy)
    if lazy:
        try:
            store.handle  # noqa: B018 - open now when possible
        except StoreUnavailableError:
            pass  # reported by every use until it opens
    return store


@contextmanager
def opened_store(settings: Settings, embeddings: Embeddings, *,
                 lazy: bool = False) -> Iterator[Store]:
    """Open the store for the length of a `with` block and close it however the block ends.

    An embedded store holds a lock on its folder while open, so every command that opens one
    (ingest, eval, calibrate, benchmarks) must close it, also when it fails half-way.
    """
    store = open_store(settings, embeddings, lazy=lazy)
    try:
        yield store
    finally:
        store.close()


class VectorStore:
    """The factory's former name: `VectorStore.from_settings` is `open_store`."""

    from_settings = staticmethod(open_store)


def require_collection(store: Store) -> None:
    """Raise a SetupError naming the fix when the collection does not exist yet."""
    if not store.exists():
        raise SetupError(
            f"Collection {store.collection!r} does not exist in {store.location}. "
            "Ingest documents first: `textbound ingest` (the bundled textbook) or "
            "`textbound ingest PATH`."
        )
