"""A LangChain `VectorStore` over any textbound `Store`, for plain LangChain chains.

`similarity_search_with_score` returns raw cosine, as langchain-qdrant's does, and
`similarity_search_with_relevance_scores` its (s + 1) / 2 rescaling, so a chain written for
`QdrantVectorStore` reads the same numbers whichever engine is underneath. Texts added here are
stored in textbound's payload layout with uuid4 ids (ingestion uses content-derived ids).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from textbound.seams import Store

__all__ = ["StoreVectorStore"]


class StoreVectorStore(VectorStore):
    """LangChain's VectorStore interface over a textbound Store (search, add, get, delete)."""

    new_store: ClassVar[Callable[[Embeddings], Store] | None] = None
    """Makes the store `from_texts` fills when given none: `textbound.documents.store` sets the
    in-memory `MemoryStore` (this module knows no engine, so the engines can use it without a
    circle)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def embeddings(self) -> Embeddings:
        """The store's embeddings."""
        return self.store.embeddings

    def add_texts(self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None, *,
                  ids: list[str] | None = None, **kwargs: Any) -> list[str]:
        """Embed and store texts; return their ids."""
        texts = list(texts)
        ids = list(ids) if ids is not None else [str(uuid.uuid4()) for _ in texts]
        metadatas = metadatas or [{} for _ in texts]
        vectors = self.store.embeddings.embed_documents(texts)
        if vectors:
            self.store.ensure_collection(len(vectors[0]))
        self.store.upsert(ids, vectors, texts, [dict(m) for m in metadatas])
        return ids

    def similarity_search_with_score_by_vector(self, embedding: list[float], k: int = 4,
                                               **kwargs: Any) -> list[tuple[Document, float]]:
        """Return the k nearest documents with raw cosine scores."""
        return [(Document(page_content=h.text, metadata=h.metadata, id=h.chunk_id), h.score)
                for h in self.store.search(list(embedding), k)]

    def similarity_search_with_score(self, query: str, k: int = 4,
                                     **kwargs: Any) -> list[tuple[Document, float]]:
        """Return the k nearest documents to the query with raw cosine scores."""
        return self.similarity_search_with_score_by_vector(
            self.store.embeddings.embed_query(query), k)

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4,
                                    **kwargs: Any) -> list[Document]:
        """Return the k nearest documents to a vector."""
        return [d for d, _ in self.similarity_search_with_score_by_vector(embedding, k)]

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """Return the k nearest documents to the query."""
        return [d for d, _ in self.similarity_search_with_score(query, k)]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return lambda s: (s + 1.0) / 2.0

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Return the documents with these ids (those that exist)."""
        return [Document(page_content=c.text, metadata=c.metadata, id=c.chunk_id)
                for c in self.store.retrieve(list(ids))]

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete documents by id."""
        if ids is None:
            raise ValueError("Pass the ids to delete (dropping a collection is Store.drop()).")
        self.store.delete(list(ids))
        return True

    @classmethod
    def from_texts(cls, texts: list[str], embedding: Embeddings,
                   metadatas: list[dict[str, Any]] | None = None, *,
                   ids: list[str] | None = None, **kwargs: Any) -> StoreVectorStore:
        """Store texts in a new in-memory store (pass `store=` to use an existing one)."""
        store: Store | None = kwargs.pop("store", None)
        if store is None:
            if cls.new_store is None:
                raise ValueError("Pass store= (no in-memory store is registered).")
            store = cls.new_store(embedding)
        vs = cls(store)
        vs.add_texts(texts, metadatas, ids=ids)
        return vs
