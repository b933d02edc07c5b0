"""The vector store: Qdrant, embedded on disk by default or a server/cluster when a URL is set.

Points are stored in langchain-qdrant's layout (`page_content` + `metadata` payload), so
`VectorStore.as_langchain()` gives a `QdrantVectorStore` over the same collection for plain
LangChain chains. Searches here call qdrant-client's `query_points` directly: for a cosine
collection its scores are **raw cosine** in [-1, 1], the same numbers as LangChain's
`similarity_search_with_score` (not `similarity_search_with_relevance_scores`, which is
(s + 1) / 2).

Each collection records the embedding model and dimension that built it in Qdrant's collection
metadata; opening it with other embeddings raises `EmbeddingMismatchError` instead of returning
meaningless scores.
"""

from __future__ import annotations

import base64
import math
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from qdrant_client import QdrantClient, models

from textbound.embeddings import embedding_identity
from textbound.errors import EmbeddingMismatchError, SetupError, StoreUnavailableError
from textbound.text import content_words, surface_words

__all__ = ["RetrievedChunk", "SentenceVectors", "TermStats", "VectorStore", "open_client"]

CONTENT_KEY = "page_content"
METADATA_KEY = "metadata"
PAYLOAD_CACHE = 8192
"""Chunk payloads (text and metadata) kept in memory by id; they never change for an id."""
SENTENCES_KEY = "sentence_vectors"
"""Payload key (beside langchain-qdrant's two, which ignore it) holding a chunk's sentence
vectors: `{"spans": [[start, end], ...], "dim": d, "f32": base64 of the row-major float32s}`."""


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

    @property
    def source(self) -> str:
        """The file or document the chunk came from."""
        return str(self.metadata.get("source", ""))

    @property
    def section(self) -> str:
        """The heading path of the chunk, joined with ' > '."""
        return str(self.metadata.get("section", ""))


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


def open_client(settings: Any) -> QdrantClient:
    """Open a Qdrant client for the settings: a server when qdrant_url is set, else embedded."""
    try:
        if settings.qdrant_url:
            key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
            return QdrantClient(
                url=settings.qdrant_url, api_key=key, timeout=int(settings.qdrant_timeout_s),
                # the version probe runs in a background thread whose failure nobody sees
                check_compatibility=False,
            )
        settings.qdrant_path.mkdir(parents=True, exist_ok=True)
        return QdrantClient(path=str(settings.qdrant_path))
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise StoreUnavailableError(
                f"The embedded Qdrant store at {settings.qdrant_path} is in use by another "
                "textbound process (embedded mode allows one). Stop that process, or run a "
                "Qdrant server and set TEXTBOUND_QDRANT_URL so several processes can share it."
            ) from exc
        raise StoreUnavailableError(f"Could not open the Qdrant store: {exc}") from exc
    except OSError as exc:
        raise StoreUnavailableError(
            f"Could not open the embedded Qdrant store at {settings.qdrant_path}: {exc}. "
            "Check the folder exists and is writable, or set TEXTBOUND_DATA_DIR."
        ) from exc


def _unavailable(exc: Exception, what: str) -> StoreUnavailableError:
    if isinstance(exc, StoreUnavailableError):  # already says what is wrong (e.g. a lazy open)
        return exc
    return StoreUnavailableError(
        f"The vector store is unavailable ({what}: {type(exc).__name__}). "
        "Check that Qdrant is running and TEXTBOUND_QDRANT_URL is right; textbound retries on "
        "the next request."
    )


class VectorStore:
    """A textbound collection in Qdrant: search, upsert, delete and bookkeeping."""

    def __init__(
        self,
        client: QdrantClient | None,
        collection: str,
        embeddings: Embeddings,
        *,
        location: str = "embedded",
        opener: Callable[[], QdrantClient] | None = None,
    ) -> None:
        self._client = client
        self._opener = opener
        self._open_error: StoreUnavailableError | None = None
        self._open_tried = 0.0
        self.collection = collection
        self.embeddings = embeddings
        self.location = location
        self._lock = threading.RLock()  # the embedded client is not thread-safe
        self._toc: list[dict[str, Any]] | None = None
        self._terms: TermStats | None = None
        self._checked = False
        self._payloads: OrderedDict[str, tuple[str, dict[str, Any]]] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Any, embeddings: Embeddings, *,
                      lazy: bool = False) -> VectorStore:
        """Open the store the settings describe (does not create the collection).

        With `lazy`, a store that cannot be opened yet (an embedded folder another process
        holds) does not raise here: every use raises StoreUnavailableError saying why, and the
        store opens on the first use after it became available (a server recovers unrestarted).
        """
        location = settings.qdrant_url or str(settings.qdrant_path)
        if not lazy:
            return cls(open_client(settings), settings.collection, embeddings, location=location)
        store = cls(None, settings.collection, embeddings, location=location,
                    opener=lambda: open_client(settings))
        try:
            store.client  # noqa: B018 - open now when possible
        except StoreUnavailableError:
            pass  # reported by every use until it opens
        return store

    REOPEN_INTERVAL_S = 1.0
    """A lazy store that failed to open retries at most this often (opening is not free)."""

    @property
    def client(self) -> QdrantClient:
        """The Qdrant client, opened on first use for a lazy store."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._open()
        return self._client

    @client.setter
    def client(self, value: QdrantClient) -> None:
        self._client = value

    def _open(self) -> QdrantClient:
        if self._opener is None:
            raise StoreUnavailableError("The vector store is closed.")
        now = time.monotonic()
        if self._open_error is not None and now - self._open_tried < self.REOPEN_INTERVAL_S:
            raise StoreUnavailableError(str(self._open_error))
        self._open_tried = now
        try:
            client = self._opener()
        except StoreUnavailableError as exc:
            self._open_error = exc
            raise
        self._open_error = None
        return client

    # --- collection ------------------------------------------------------------------------
    def exists(self) -> bool:
        """Whether the collection exists."""
        try:
            with self._lock:
                return bool(self.client.collection_exists(self.collection))
        except Exception as exc:  # noqa: BLE001 - any transport failure means "unavailable"
            raise _unavailable(exc, "collection_exists") from exc

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection for these embeddings if missing, else check it matches."""
        model, _ = embedding_identity(self.embeddings)
        if not self.exists():
            try:
                with self._lock:
                    self.client.create_collection(
                        self.collection,
                        vectors_config=models.VectorParams(
                            size=dimension, distance=models.Distance.COSINE
                        ),
                        metadata={"embedding_model": model, "dimension": dimension,
                                  "created_by": "textbound"},
                    )
                    if self.location.startswith(("http://", "https://")):
                        # embedded Qdrant ignores payload indexes; a server uses it for scrolls
                        self.client.create_payload_index(
                            self.collection, f"{METADATA_KEY}.source",
                            models.PayloadSchemaType.KEYWORD,
                        )
            except Exception as exc:  # noqa: BLE001
                raise _unavailable(exc, "create_collection") from exc
        self.check_compatible(dimension)

    def info(self) -> dict[str, Any]:
        """Return the collection's metadata, vector size and point count."""
        try:
            with self._lock:
                c = self.client.get_collection(self.collection)
        except Exception as exc:  # noqa: BLE001
            raise _unavailable(exc, "get_collection") from exc
        vectors = c.config.params.vectors
        size = vectors.size if isinstance(vectors, models.VectorParams) else None
        return {
            "metadata": dict(c.config.metadata or {}),
            "dimension": size,
            "points": c.points_count or 0,
        }

    def check_compatible(self, dimension: int | None = None) -> None:
        """Raise EmbeddingMismatchError when the collection was built by another model."""
        info = self.info()
        model, dim = embedding_identity(self.embeddings)
        dim = dimension or dim
        built_by = info["metadata"].get("embedding_model")
        if built_by is None:
            raise EmbeddingMismatchError(
                f"Collection {self.collection!r} was not created by textbound (it records no "
                "embedding model). Use another TEXTBOUND_COLLECTION, or delete it and re-ingest."
            )
        if built_by != model or (dim is not None and info["dimension"] != dim):
            raise EmbeddingMismatchError(
                f"Collection {self.collection!r} was built with {built_by} "
                f"({info['dimension']} dims) but is being queried with {model} ({dim} dims). "
                "Scores across models are meaningless: switch back to that embedding model, or "
                "re-ingest into a new collection (`textbound ingest --collection NAME`)."
            )
        self._checked = True

    # --- reads ---------------------------------------------------------------------------------
    def search(self, vector: list[float], k: int) -> list[RetrievedChunk]:
        """Return the k nearest chunks to vector, best first, with raw cosine scores."""
        if not self._checked:
            if not self.exists():
                return []
            self.check_compatible(len(vector))
        try:
            with self._lock:
                # ids and scores only: a chunk id is derived from its source and content, so its
                # payload never changes and is read once (embedded Qdrant deep-copies every
                # payload it returns; a server sends it over the network)
                hits = self.client.query_points(
                    self.collection, query=vector, limit=k, with_payload=False,
                ).points
                missing = [str(h.id) for h in hits if str(h.id) not in self._payloads]
                if missing:
                    points = self.client.retrieve(
                        self.collection, ids=missing,
                        with_payload=models.PayloadSelectorExclude(exclude=[SENTENCES_KEY]),
                        with_vectors=False,
                    )
                    for p in points:
                        payload = p.payload or {}
                        self._remember(str(p.id), str(payload.get(CONTENT_KEY, "")),
                                       dict(payload.get(METADATA_KEY) or {}))
                found = [(h, self._payloads.get(str(h.id))) for h in hits]
        except Exception as exc:  # noqa: BLE001
            raise _unavailable(exc, "search") from exc
        return [
            RetrievedChunk(chunk_id=str(hit.id), text=cached[0], score=float(hit.score),
                           metadata=dict(cached[1]))
            for hit, cached in found if cached is not None  # None: deleted in between
        ]

    def _remember(self, chunk_id: str, text: str, metadata: dict[str, Any]) -> None:
        self._payloads[chunk_id] = (text, metadata)
        self._payloads.move_to_end(chunk_id)
        while len(self._payloads) > PAYLOAD_CACHE:
            self._payloads.popitem(last=False)

    def sentence_vectors(self, chunk_ids: list[str]) -> dict[str, SentenceVectors]:
        """Return the stored sentence vectors of these chunks (those that have them)."""
        if not chunk_ids:
            return {}
        try:
            with self._lock:
                points = self.client.retrieve(
                    self.collection, ids=list(chunk_ids),
                    with_payload=models.PayloadSelectorInclude(include=[SENTENCES_KEY]),
                    with_vectors=False,
                )
        except Exception as exc:  # noqa: BLE001
            raise _unavailable(exc, "retrieve") from exc
        out = {}
        for p in points:
            raw = (p.payload or {}).get(SENTENCES_KEY)
            found = SentenceVectors.decode(raw) if isinstance(raw, dict) else None
            if found is not None:
                out[str(p.id)] = found
        return out

    def scroll(self, fields: Iterable[str] = ("source",)) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield (chunk id, selected metadata fields) for every point in the collection."""
        include = [f"{METADATA_KEY}.{f}" for f in fields]
        offset = None
        while True:
            try:
                with self._lock:
                    points, offset = self.client.scroll(
                        self.collection, limit=1024, offset=offset,
                        with_payload=models.PayloadSelectorInclude(include=include),
                        with_vectors=False,
                    )
            except Exception as exc:  # noqa: BLE001
                raise _unavailable(exc, "scroll") from exc
            for p in points:
                yield str(p.id), dict((p.payload or {}).get(METADATA_KEY) or {})
            if offset is None:
                return

    def count(self) -> int:
        """Return the number of chunks stored."""
        if not self.exists():
            return 0
        try:
            with self._lock:
                return int(self.client.count(self.collection, exact=True).count)
        except Exception as exc:  # noqa: BLE001
            raise _unavailable(exc, "count") from exc

    def table_of_contents(self) -> list[dict[str, Any]]:
        """Return the collection's documents and their section titles, in reading order."""
        if self._toc is None:
            docs: dict[str, dict[str, Any]] = {}
            for _, meta in self.scroll(("source", "title", "heading_path", "start", "page")):
                src = str(meta.get("source", ""))
                d = docs.setdefault(src, {"source": src, "title": meta.get("title") or src,
                                          "sections": {}})
                path = meta.get("heading_path") or []
                if len(path) > 1:
                    key = path[1]
                    pos = (meta.get("page") or 0, meta.get("start") or 0)
                    d["sections"][key] = min(d["sections"].get(key, pos), pos)
            self._toc = [
                {"source": d["source"], "title": d["title"],
                 "sections": [s for s, _ in sorted(d["sections"].items(), key=lambda kv: kv[1])]}
                for d in sorted(docs.values(), key=lambda d: d["source"])
            ]
        return self._toc

    def term_stats(self) -> TermStats:
        """Return document frequencies of content words over all chunks (cached until a write).

        Computed by one scroll over the payloads: about a second per 10k chunks.
        """
        if self._terms is None:
            df: Counter[str] = Counter()
            seen: set[str] = set()
            n = 0
            offset = None
            while self.exists():
                try:
                    with self._lock:
                        points, offset = self.client.scroll(
                            self.collection, limit=1024, offset=offset,
                            with_payload=models.PayloadSelectorInclude(
                                include=[CONTENT_KEY, f"{METADATA_KEY}.heading_path"]),
                            with_vectors=False,
                        )
                except Exception as exc:  # noqa: BLE001
                    raise _unavailable(exc, "scroll") from exc
                for p in points:
                    n += 1
                    text = str((p.payload or {}).get(CONTENT_KEY, ""))
                    df.update(set(content_words(text)))
                    seen.update(surface_words(text, lower=False))
                    path = ((p.payload or {}).get(METADATA_KEY) or {}).get("heading_path") or []
                    seen.update(surface_words(" ".join(map(str, path)), lower=False))
                if offset is None:
                    break
            self._terms = TermStats(n, dict(df), frozenset(seen),
                                    frozenset(w.lower() for w in seen))
        return self._terms

    # --- writes --------------------------------------------------------------------------------
    def upsert(self, ids: list[str], vectors: list[list[float]], texts: list[str],
               metadatas: list[dict[str, Any]],
               sentences: list[SentenceVectors | None] | None = None) -> None:
        """Write chunks, with their sentence vectors when given (waits until applied)."""
        extra = sentences or [None] * len(ids)
        points = []
        for i, v, t, m, sv in zip(ids, vectors, texts, metadatas, extra, strict=True):
            payload: dict[str, Any] = {CONTENT_KEY: t, METADATA_KEY: m}
            if sv is not None:
                payload[SENTENCES_KEY] = sv.encode()
            points.append(models.PointStruct(id=i, vector=v, payload=payload))
        try:
            with self._lock:
                self.client.upsert(self.collection, points=points, wait=True)
        except Exception as exc:  # noqa: BLE001
            raise _unavailable(exc, "upsert") from exc
        with self._lock:
            for i in ids:
                self._payloads.pop(i, None)
        self._toc = None
        self._terms = None

    def delete(self, ids: list[str]) -> None:
        """Delete chunks by id."""
        if not ids:
            return
        try:
            with self._lock:
                for start in range(0, len(ids), 1000):
                    self.client.delete(
                        self.collection,
                        points_selector=models.PointIdsList(points=list(ids[start:start + 1000])),
                        wait=True,
                    )
        except Exception as exc:  # noqa: BLE001
            raise _unavailable(exc, "delete") from exc
        with self._lock:
            for i in ids:
                self._payloads.pop(i, None)
        self._toc = None
        self._terms = None

    def as_langchain(self) -> Any:
        """Return a langchain-qdrant `QdrantVectorStore` over this collection."""
        from langchain_qdrant import QdrantVectorStore

        return QdrantVectorStore(
            client=self.client, collection_name=self.collection, embedding=self.embeddings,
            content_payload_key=CONTENT_KEY, metadata_payload_key=METADATA_KEY,
            validate_collection_config=False,
        )

    def drop(self) -> None:
        """Delete the whole collection."""
        with self._lock:
            if self.client.collection_exists(self.collection):
                self.client.delete_collection(self.collection)
            self._payloads.clear()
        self._toc = None
        self._checked = False

    def close(self) -> None:
        """Release the client (and the embedded store's lock)."""
        if self._client is None:
            return
        try:
            self._client.close()
        except Exception:  # noqa: BLE001, S110 - closing twice is harmless
            pass


def require_collection(store: VectorStore) -> None:
    """Raise a SetupError naming the fix when the collection does not exist yet."""
    if not store.exists():
        raise SetupError(
            f"Collection {store.collection!r} does not exist in {store.location}. "
            "Ingest documents first: `textbound ingest` (the bundled textbook) or "
            "`textbound ingest PATH`."
        )
