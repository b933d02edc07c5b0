"""The store over qdrant-client: a Qdrant server or cluster, or qdrant-client's local mode.

Points are stored in langchain-qdrant's layout (`page_content` + `metadata` payload), so
`as_langchain()` gives a `QdrantVectorStore` over the same collection. Searches call
`query_points` directly: for a cosine collection its scores are **raw cosine** in [-1, 1], the
same numbers as LangChain's `similarity_search_with_score` (not
`similarity_search_with_relevance_scores`, which is (s + 1) / 2).

Local mode (`TEXTBOUND_STORE=local`) is qdrant-client's pure-Python stand-in for Qdrant: it
scans every vector on every query and is kept for one release beside the Edge store.
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore as LangChainVectorStore
from qdrant_client import QdrantClient, models

from textbound.documents.store._base import BaseStore
from textbound.documents.store._engine import PAGE, Payload, cosine, dense_of
from textbound.documents.store._sparse import SPARSE, Sparse, encode_payload
from textbound.documents.store._types import CONTENT_KEY, METADATA_KEY, VERSION_KEY, Hidden
from textbound.errors import SetupError, StoreUnavailableError
from textbound.settings import Settings

__all__ = ["QdrantStore", "open_client"]


def open_client(settings: Settings) -> QdrantClient:
    """Open a Qdrant client for the settings: a server when qdrant_url is set, else local mode."""
    try:
        if settings.qdrant_url:
            key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
            return QdrantClient(
                url=settings.qdrant_url, api_key=key, timeout=int(settings.qdrant_timeout_s),
                # the version probe runs in a background thread whose failure nobody sees
                check_compatibility=False,
            )
        settings.qdrant_folder.mkdir(parents=True, exist_ok=True)
        return QdrantClient(path=str(settings.qdrant_folder))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise StoreUnavailableError(
                f"The embedded Qdrant store at {settings.qdrant_path} is in use by another "
                "textbound process (qdrant-client's local mode allows one per folder). Stop that "
                "process, or run a Qdrant server and set TEXTBOUND_QDRANT_URL so several "
                "processes can share it."
            ) from exc
        raise StoreUnavailableError(f"Could not open the Qdrant store: {exc}") from exc
    except OSError as exc:
        raise StoreUnavailableError(
            f"Could not open the embedded Qdrant store at {settings.qdrant_path}: {exc}. "
            "Check the folder exists and is writable, or set TEXTBOUND_DATA_DIR."
        ) from exc


_SPARSE_PARAMS = models.SparseVectorParams(modifier=models.Modifier.IDF)


def _selector(include: list[str] | None, exclude: list[str] | None) -> Any:
    if include is not None:
        return models.PayloadSelectorInclude(include=include)
    if exclude is not None:
        return models.PayloadSelectorExclude(exclude=exclude)
    return True


def _version_filter(hidden: list[Hidden]) -> models.Filter | None:
    """The current-version filter (`Hidden`) as a Qdrant filter; None when nothing is hidden."""
    if not hidden:
        return None
    out: list[Any] = []
    for h in hidden:
        source = models.FieldCondition(key=f"{METADATA_KEY}.source",
                                       match=models.MatchValue(value=h.source))
        version = models.FieldCondition(key=f"{METADATA_KEY}.{VERSION_KEY}",
                                        match=models.MatchValue(value=h.version))
        out.append(models.Filter(must=[source], must_not=[version]) if h.others
                   else models.Filter(must=[source, version]))
    return models.Filter(must_not=out)


class QdrantStore(BaseStore[QdrantClient]):
    """A textbound collection in Qdrant through qdrant-client (server, cluster or local mode)."""

    def __init__(self, client: QdrantClient | None, collection: str, embeddings: Embeddings, *,
                 location: str = "embedded", opener: Any = None) -> None:
        super().__init__(client, collection, embeddings, location=location, opener=opener)

    @classmethod
    def from_settings(cls, settings: Settings, embeddings: Embeddings, *,
                      lazy: bool = False) -> QdrantStore:
        """Open the server (qdrant_url) or the local-mode folder the settings name."""
        location = settings.qdrant_url or str(settings.qdrant_path)
        if not lazy:
            return cls(open_client(settings), settings.collection, embeddings, location=location)
        return cls(None, settings.collection, embeddings, location=location,
                   opener=lambda: open_client(settings))

    @property
    def client(self) -> QdrantClient:
        """The qdrant-client handle (opened on first use for a lazy store)."""
        return self.handle

    @property
    def is_server(self) -> bool:
        """Whether this is a Qdrant server or cluster (not local mode)."""
        return self.location.startswith(("http://", "https://"))

    def _exists(self, h: QdrantClient) -> bool:
        return bool(h.collection_exists(self.collection))

    def _create(self, h: QdrantClient, dimension: int, metadata: dict[str, Any]) -> None:
        h.create_collection(
            self.collection,
            vectors_config=models.VectorParams(size=dimension, distance=models.Distance.COSINE),
            sparse_vectors_config={SPARSE: _SPARSE_PARAMS},
            metadata=metadata,
        )
        if self.is_server:  # local mode ignores payload indexes; a server uses it for scrolls
            h.create_payload_index(self.collection, f"{METADATA_KEY}.source",
                                   models.PayloadSchemaType.KEYWORD)

    def _describe(self, h: QdrantClient) -> tuple[dict[str, Any], int | None, int]:
        c = h.get_collection(self.collection)
        vectors = c.config.params.vectors
        size = vectors.size if isinstance(vectors, models.VectorParams) else None
        return dict(c.config.metadata or {}), size, c.points_count or 0

    def _nearest(self, h: QdrantClient, vector: list[float], k: int) -> list[tuple[str, float]]:
        hits = h.query_points(self.collection, query=vector, limit=k, with_payload=False,
                              query_filter=_version_filter(self.hidden())).points
        return [(str(p.id), float(p.score)) for p in hits]

    def _fused(self, h: QdrantClient, vector: list[float], sparse: Sparse, k: int,
               candidates: int) -> list[tuple[str, float, float]]:
        hidden = _version_filter(self.hidden())  # both lists see only current versions
        hits = h.query_points(
            self.collection,
            prefetch=[models.Prefetch(query=vector, limit=candidates, filter=hidden),
                      models.Prefetch(query=models.SparseVector(indices=sparse[0],
                                                                values=sparse[1]),
                                      using=SPARSE, limit=candidates, filter=hidden)],
            # Qdrant's default RRF constant (2), the one textbound.documents.store._sparse.RRF_K
            # restates
            query=models.FusionQuery(fusion=models.Fusion.RRF), limit=k, with_payload=False,
            with_vectors=[""], query_filter=hidden).points
        return [(str(p.id), cosine(vector, p.vector), float(p.score)) for p in hits]

    def _add_sparse(self, h: QdrantClient) -> None:
        have = h.get_collection(self.collection).config.params.sparse_vectors or {}
        if SPARSE in have:
            return
        try:
            h.create_vector_name(self.collection, SPARSE,
                                 models.SparseVectorNameConfig(sparse=models.SparseVectorConfig(
                                     modifier=models.Modifier.IDF)))
        except Exception as exc:  # a server too old to add a vector to a collection
            raise SetupError(
                f"Collection {self.collection!r} predates hybrid retrieval and this Qdrant "
                f"server could not add its BM25 vector ({type(exc).__name__}: {exc}). "
                "Upgrade the server, or re-ingest into a new collection: `textbound ingest "
                "--collection NEW_NAME` and set TEXTBOUND_COLLECTION=NEW_NAME."
            ) from exc

    def _set_sparse(self, h: QdrantClient, ids: list[str], vectors: list[Sparse]) -> None:
        h.update_vectors(self.collection, points=[
            models.PointVectors(id=i, vector={SPARSE: models.SparseVector(indices=v[0],
                                                                          values=v[1])})
            for i, v in zip(ids, vectors, strict=True)], wait=True)

    def _set_metadata(self, h: QdrantClient, metadata: dict[str, Any]) -> None:
        h.update_collection(self.collection, metadata=metadata)

    def _payloads(self, h: QdrantClient, ids: list[str], include: list[str] | None = None,
                  exclude: list[str] | None = None) -> list[tuple[str, Payload]]:
        points = h.retrieve(self.collection, ids=ids, with_payload=_selector(include, exclude),
                            with_vectors=False)
        return [(str(p.id), dict(p.payload or {})) for p in points]

    def _vectors(self, h: QdrantClient, ids: list[str]) -> dict[str, list[float]]:
        points = h.retrieve(self.collection, ids=ids, with_payload=False, with_vectors=True)
        found = {str(p.id): dense_of(p.vector) for p in points}
        return {i: v for i, v in found.items() if v is not None}

    def _page(self, h: QdrantClient, include: list[str],
              offset: Any) -> tuple[list[tuple[str, Payload]], Any]:
        points, nxt = h.scroll(self.collection, limit=PAGE, offset=offset,
                               with_payload=_selector(include, None), with_vectors=False)
        return [(str(p.id), dict(p.payload or {})) for p in points], nxt

    def _count(self, h: QdrantClient) -> int:
        return int(h.count(self.collection, exact=True).count)

    def _write(self, h: QdrantClient, ids: list[str], vectors: list[list[float]],
               payloads: list[Payload]) -> None:
        points = []
        for i, v, p in zip(ids, vectors, payloads, strict=True):
            idx, weights = encode_payload(p)
            points.append(models.PointStruct(id=i, vector={
                "": v, SPARSE: models.SparseVector(indices=idx, values=weights)}, payload=p))
        h.upsert(self.collection, points=points, wait=True)

    def _remove(self, h: QdrantClient, ids: list[str]) -> None:
        h.delete(self.collection, points_selector=models.PointIdsList(points=list(ids)),
                 wait=True)

    def _drop(self, h: QdrantClient) -> None:
        if h.collection_exists(self.collection):
            h.delete_collection(self.collection)

    def _release(self, h: QdrantClient) -> None:
        h.close()

    def as_langchain(self) -> LangChainVectorStore:
        """Return a langchain-qdrant `QdrantVectorStore` over this collection."""
        from langchain_qdrant import QdrantVectorStore

        return QdrantVectorStore(
            client=self.client, collection_name=self.collection, embedding=self.embeddings,
            content_payload_key=CONTENT_KEY, metadata_payload_key=METADATA_KEY,
            validate_collection_config=False,
        )
