"""The logic every store shares, written once over a handful of engine primitives.

An implementation supplies the primitives (`_exists`, `_create`, `_describe`, `_nearest`,
`_payloads`, `_page`, `_count`, `_write`, `_remove`, `_drop`, `_release`) for one engine, and
`textbound.documents.store._engine.Engine` holds its handle (lazy opening with retry, one lock, any
engine failure turned into StoreUnavailableError, closing). This class adds everything the rest of
textbound relies on: the embedding-model check, the payload cache behind `search`, the
sentence-vector payload form, scrolling, the table of contents, term statistics and the LangChain
view.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore as LangChainVectorStore

from textbound.documents.store._engine import Engine, H, Payload
from textbound.documents.store._langchain import StoreVectorStore
from textbound.documents.store._sparse import SPARSE_VERSION, encode_payload, encode_query
from textbound.documents.store._terms import count_terms
from textbound.documents.store._types import (
    CONTENT_KEY,
    METADATA_KEY,
    SENTENCES_KEY,
    VERSION_KEY,
    Hidden,
    RetrievedChunk,
    SentenceVectors,
    StoredChunk,
    TermStats,
)
from textbound.errors import EmbeddingMismatchError, SetupError
from textbound.providers.embeddings import embedding_identity

__all__ = ["BaseStore"]

PAYLOAD_CACHE = 8192
"""Chunk payloads (text and metadata) kept in memory by id; they never change for an id."""


class BaseStore(Engine[H]):
    """A textbound collection over an engine handle `H`, opened now or on first use."""

    def __init__(self, handle: H | None, collection: str, embeddings: Embeddings, *,
                 location: str, opener: Callable[[], H] | None = None) -> None:
        super().__init__(handle, opener)
        self.collection = collection
        self.embeddings = embeddings
        self.location = location
        self._toc: list[dict[str, Any]] | None = None
        self._terms: TermStats | None = None
        self._checked = False
        self._hybrid = False
        self._cache: OrderedDict[str, tuple[str, dict[str, Any]]] = OrderedDict()
        self._hidden: dict[str, Hidden] = {}

    def _forget(self, ids: Iterable[str] = ()) -> None:
        with self._lock:
            for i in ids:
                self._cache.pop(i, None)
        self._toc = None
        self._terms = None

    # --- collection ---------------------------------------------------------------------------
    def exists(self) -> bool:
        """Whether the collection exists."""
        with self._using("collection_exists") as h:
            return bool(self._exists(h))

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection for these embeddings if missing, else check it matches."""
        model, _ = embedding_identity(self.embeddings)
        if not self.exists():
            with self._using("create_collection") as h:
                self._create(h, dimension, {"embedding_model": model, "dimension": dimension,
                                            "created_by": "textbound", "sparse": SPARSE_VERSION})
        self.check_compatible(dimension)
        if not self._hybrid:
            self.add_sparse_vectors()

    def add_sparse_vectors(self) -> int:
        """Give every point its BM25 sparse vector (a collection made before hybrid retrieval).

        The dense vectors and payloads stay; the sparse vectors are computed from the stored
        text, so nothing is embedded again. The metadata records the sparse version last: a
        run stopped part-way is finished by the next one. Returns the points updated.
        """
        with self._using("add_sparse") as h:
            self._add_sparse(h)
        done = 0
        batch: list[tuple[str, Payload]] = []
        for point in self._scan([CONTENT_KEY, f"{METADATA_KEY}.section"]):
            batch.append(point)
            if len(batch) >= 256:
                done += self._write_sparse(batch)
                batch = []
        done += self._write_sparse(batch)
        with self._using("set_metadata") as h:
            self._set_metadata(h, {"sparse": SPARSE_VERSION})
        self._hybrid = True
        return done

    def _write_sparse(self, points: list[tuple[str, Payload]]) -> int:
        if points:
            with self._using("update_vectors") as h:
                self._set_sparse(h, [i for i, _ in points], [encode_payload(p) for _, p in points])
        return len(points)

    def info(self) -> dict[str, Any]:
        """Return the collection's metadata, vector size and point count."""
        with self._using("get_collection") as h:
            metadata, dimension, points = self._describe(h)
        return {"metadata": dict(metadata), "dimension": dimension, "points": points}

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
        self._hybrid = info["metadata"].get("sparse") == SPARSE_VERSION
        self._checked = True

    # --- versions -----------------------------------------------------------------------------
    def hide(self, hidden: Hidden) -> None:
        """Keep a half-replaced source's chunks out of searches and scrolls (one per source)."""
        with self._lock:
            self._hidden = {**self._hidden, hidden.source: hidden}  # one assignment: atomic
        self._toc = None
        self._terms = None

    def unhide(self, source: str) -> None:
        """Let searches see every chunk of a source again."""
        with self._lock:
            self._hidden = {k: v for k, v in self._hidden.items() if k != source}
        self._toc = None
        self._terms = None

    def hidden(self) -> list[Hidden]:
        """The current-version filter every engine's `_nearest` applies (empty: no filter)."""
        return list(self._hidden.values())

    def _shown(self, metadata: dict[str, Any]) -> bool:
        return not any(h.hides(metadata) for h in self._hidden.values())

    # --- reads --------------------------------------------------------------------------------
    def search(self, vector: list[float], k: int, *, text: str | None = None,
               candidates: int | None = None) -> list[RetrievedChunk]:
        """Return the k best chunks for a query, best first, with raw cosine scores.

        With only `vector`, the k nearest by cosine. With the query's `text` too, hybrid: the
        `candidates` (default k) nearest by cosine and the `candidates` best by BM25, fused by
        reciprocal rank fusion in the engine; each chunk's `score` is still its raw cosine
        and `fused` its fusion score. A collection made before hybrid retrieval raises
        SetupError naming `textbound ingest`, which adds the BM25 vectors in place.
        """
        if not self._checked:
            if not self.exists():
                return []
            self.check_compatible(len(vector))
        sparse = encode_query(text) if text else None
        if sparse is not None and not sparse[0]:
            sparse = None  # only stop words: BM25 has nothing to match
        if sparse is not None and not self._hybrid:
            self.check_compatible(len(vector))  # another process may have migrated it since
            if not self._hybrid:
                raise SetupError(
                    f"Collection {self.collection!r} has no BM25 vectors yet (it was ingested "
                    "before hybrid retrieval). Run `textbound ingest` once (add "
                    f"`--collection {self.collection}` if it is not the default): it adds them to "
                    "the stored chunks without embedding anything again."
                )
        with self._using("search") as h:
            # ids and scores only: a chunk id is derived from its source and content, so its
            # payload never changes and is read once (and the sentence vectors never are)
            hits: list[tuple[str, float, float | None]]
            if sparse is None:
                hits = [(cid, score, None) for cid, score in self._nearest(h, vector, k)]
            else:
                hits = [(cid, score, fused) for cid, score, fused in
                        self._fused(h, vector, sparse, k, max(candidates or k, k))]
            missing = [i for i, _, _ in hits if i not in self._cache]
            if missing:
                for cid, payload in self._payloads(h, missing, exclude=[SENTENCES_KEY]):
                    self._remember(cid, str(payload.get(CONTENT_KEY, "")),
                                   dict(payload.get(METADATA_KEY) or {}))
            found = [(cid, score, fused, self._cache.get(cid)) for cid, score, fused in hits]
        return [RetrievedChunk(chunk_id=cid, text=cached[0], score=float(score),
                               metadata=dict(cached[1]), fused=fused)
                for cid, score, fused, cached in found if cached is not None]  # None: deleted

    def _remember(self, chunk_id: str, text: str, metadata: dict[str, Any]) -> None:
        self._cache[chunk_id] = (text, metadata)
        self._cache.move_to_end(chunk_id)
        while len(self._cache) > PAYLOAD_CACHE:
            self._cache.popitem(last=False)

    def retrieve(self, chunk_ids: list[str]) -> list[StoredChunk]:
        """Return these chunks (those that exist), with their sentence vectors."""
        if not chunk_ids:
            return []
        with self._using("retrieve") as h:
            points = self._payloads(h, list(chunk_ids))
        out = []
        for cid, payload in points:
            raw = payload.get(SENTENCES_KEY)
            out.append(StoredChunk(cid, str(payload.get(CONTENT_KEY, "")),
                                   dict(payload.get(METADATA_KEY) or {}),
                                   SentenceVectors.decode(raw) if isinstance(raw, dict) else None))
        return out

    def vectors(self, chunk_ids: list[str]) -> dict[str, list[float]]:
        """Return the stored vectors of these chunks (those that exist)."""
        if not chunk_ids:
            return {}
        with self._using("retrieve") as h:
            return self._vectors(h, list(chunk_ids))

    def sentence_vectors(self, chunk_ids: list[str]) -> dict[str, SentenceVectors]:
        """Return the stored sentence vectors of these chunks (those that have them)."""
        if not chunk_ids:
            return {}
        with self._using("retrieve") as h:
            points = self._payloads(h, list(chunk_ids), include=[SENTENCES_KEY])
        out = {}
        for cid, payload in points:
            raw = payload.get(SENTENCES_KEY)
            found = SentenceVectors.decode(raw) if isinstance(raw, dict) else None
            if found is not None:
                out[cid] = found
        return out

    def _scan(self, include: list[str]) -> Iterator[tuple[str, Payload]]:
        """Yield (id, selected payload) for every point, one page per lock hold."""
        offset = None
        while True:
            with self._using("scroll") as h:
                points, offset = self._page(h, include, offset)
            yield from points
            if offset is None:
                return

    def scroll(self, fields: Iterable[str] = ("source",), *,
               every_version: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield (chunk id, selected metadata fields) for every point searches may see.

        With `every_version`, also the chunks of a half-replaced document that searches do not
        see (ingestion needs them all); otherwise `source` and `version` are read as well while
        a replacement is under way.
        """
        if not self.exists():
            return
        fields = list(fields)
        filtering = bool(self._hidden) and not every_version
        if filtering:
            fields = list(dict.fromkeys([*fields, "source", VERSION_KEY]))
        for cid, payload in self._scan([f"{METADATA_KEY}.{f}" for f in fields]):
            meta = dict(payload.get(METADATA_KEY) or {})
            if not filtering or self._shown(meta):
                yield cid, meta

    def count(self) -> int:
        """Return the number of chunks stored."""
        if not self.exists():
            return 0
        with self._using("count") as h:
            return int(self._count(h))

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

        Computed by one scroll over the payloads (`_terms.count_terms`): about a second per 10k
        chunks.
        """
        if self._terms is None:
            keys = [f"{METADATA_KEY}.source", f"{METADATA_KEY}.{VERSION_KEY}"]

            def shown(fields: list[str]) -> Iterator[Payload]:
                if not self.exists():
                    return
                for _, payload in self._scan([CONTENT_KEY, *fields, *keys]):
                    if not self._hidden or self._shown(payload.get(METADATA_KEY) or {}):
                        yield payload  # what searches see (not a half-replaced document)

            self._terms = count_terms(
                ((str(p.get(CONTENT_KEY, "")), (p.get(METADATA_KEY) or {}).get("heading_path")
                  or []) for p in shown([f"{METADATA_KEY}.heading_path"])),
                lambda: (str(p.get(CONTENT_KEY, "")) for p in shown([])))
        return self._terms

    # --- writes -------------------------------------------------------------------------------
    def upsert(self, ids: list[str], vectors: list[list[float]], texts: list[str],
               metadatas: list[dict[str, Any]],
               sentences: list[SentenceVectors | None] | None = None) -> None:
        """Write chunks, with their sentence vectors when given (applied before returning)."""
        extra = sentences or [None] * len(ids)
        payloads = []
        for t, m, sv in zip(texts, metadatas, extra, strict=True):
            payload: Payload = {CONTENT_KEY: t, METADATA_KEY: m}
            if sv is not None:
                payload[SENTENCES_KEY] = sv.encode()
            payloads.append(payload)
        if not (len(ids) == len(vectors) == len(payloads)):
            raise ValueError("upsert needs one vector, text and metadata per id")
        with self._using("upsert") as h:
            self._write(h, list(ids), vectors, payloads)
        self._forget(ids)

    def delete(self, ids: list[str]) -> None:
        """Delete chunks by id."""
        if not ids:
            return
        with self._using("delete") as h:
            for start in range(0, len(ids), 1000):
                self._remove(h, list(ids[start:start + 1000]))
        self._forget(ids)

    def delete_source(self, source: str) -> int:
        """Delete every chunk of one source; return how many were deleted."""
        ids = [cid for cid, meta in self.scroll(("source",)) if meta.get("source") == source]
        self.delete(ids)
        return len(ids)

    def optimize(self) -> None:
        """Build search indexes after a batch of writes (a no-op where the engine does it)."""
        if self.exists():
            with self._using("optimize") as h:
                self._optimize(h)

    def as_langchain(self) -> LangChainVectorStore:
        """Return a LangChain VectorStore over this collection (raw cosine scores)."""
        return StoreVectorStore(self)

    def drop(self) -> None:
        """Delete the whole collection."""
        with self._using("delete_collection") as h:
            self._drop(h)
            self._cache.clear()
        self._forget()
        self._checked = False
