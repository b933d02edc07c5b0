"""An in-memory Store for tests and notebooks: exact cosine over numpy, no files, no locks.

Hybrid search restates what Qdrant computes (`textbound.documents.store._sparse`): BM25 scores with
the IDF modifier over the points that have a sparse vector, then reciprocal rank fusion of the dense
and sparse candidate lists.

It ships with the package (as httpx ships MockTransport) and passes the same contract suite as
the real stores (tests/unit/test_store_contract.py), so a test that swaps it in exercises the
same payload layout, the same raw cosine scores and the same shared logic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np
from langchain_core.embeddings import Embeddings

from textbound.documents.store._base import BaseStore
from textbound.documents.store._engine import PAGE, Payload
from textbound.documents.store._sparse import Sparse, encode_payload, idf, rrf
from textbound.documents.store._types import METADATA_KEY, TermStats

__all__ = ["MemoryStore"]


@dataclass
class _Collection:
    metadata: dict[str, Any]
    dimension: int
    points: dict[str, tuple[np.ndarray, Payload]] = field(default_factory=dict)
    sparse: dict[str, dict[int, float]] | None = field(default_factory=dict)
    """Each point's BM25 vector (token id -> weight); None before `_add_sparse` (an old
    collection, as tests make one)."""


@dataclass
class _Memory:
    collection: _Collection | None = None


def _select(payload: Payload, include: list[str] | None, exclude: list[str] | None) -> Payload:
    """Apply a payload selector; `a.b` selects key b inside a, as Qdrant does."""
    if include is None:
        return {k: v for k, v in payload.items() if k not in (exclude or [])}
    out: Payload = {}
    for key in include:
        head, _, rest = key.partition(".")
        if head not in payload:
            continue
        if not rest:
            out[head] = payload[head]
        elif isinstance(payload[head], dict) and rest in payload[head]:
            out.setdefault(head, {})[rest] = payload[head][rest]
    return out


class MemoryStore(BaseStore[_Memory]):
    """A textbound collection held in this process's memory."""

    def __init__(self, embeddings: Embeddings, collection: str = "memory") -> None:
        super().__init__(_Memory(), collection, embeddings, location="memory")
        self.fixed_stats: TermStats | None = None
        """Term statistics to report instead of the collection's (a test's choice); e.g.
        `TermStats(0, {})`: every word weighs the same and no name counts as unmentioned."""

    @classmethod
    def holding(cls, embeddings: Embeddings,
                passages: Iterable[tuple[str, str, dict[str, Any]]], *,
                collection: str = "memory", stats: TermStats | None = None) -> MemoryStore:
        """Return a store whose collection holds these (chunk id, text, metadata) passages.

        The passages are embedded with `embeddings` and written as ingestion writes chunks
        (without sentence vectors: generation embeds the sentences itself). `stats`, when
        given, is the `fixed_stats` it reports.
        """
        rows = list(passages)
        texts = [text for _, text, _ in rows]
        vectors = embeddings.embed_documents(texts) if rows else []
        store = cls(embeddings, collection)
        store.ensure_collection(len(vectors[0]) if vectors else
                                len(embeddings.embed_query("dimension")))
        store.upsert([cid for cid, _, _ in rows], vectors, texts,
                     [dict(meta) for _, _, meta in rows])
        store.fixed_stats = stats
        return store

    def term_stats(self) -> TermStats:
        """Return `fixed_stats` when set, else the collection's own statistics."""
        return self.fixed_stats if self.fixed_stats is not None else super().term_stats()

    def fail(self, method: str, error: BaseException | None) -> None:
        """Make one public method raise `error` from now on, as a store gone away does.

        Tests inject store failures this way (`fail("search", StoreUnavailableError(...))`);
        `None` makes the method work again.
        """
        if method.startswith("_") or not callable(getattr(type(self), method, None)):
            raise AttributeError(f"{type(self).__name__} has no public method {method!r}")
        if error is None:
            self.__dict__.pop(method, None)
            return

        def raising(*args: Any, **kwargs: Any) -> NoReturn:
            raise error

        setattr(self, method, raising)

    def _coll(self, h: _Memory) -> _Collection:
        if h.collection is None:
            raise KeyError(f"collection {self.collection!r} does not exist")
        return h.collection

    def _exists(self, h: _Memory) -> bool:
        return h.collection is not None

    def _create(self, h: _Memory, dimension: int, metadata: dict[str, Any]) -> None:
        h.collection = _Collection(dict(metadata), dimension)

    def _describe(self, h: _Memory) -> tuple[dict[str, Any], int | None, int]:
        c = self._coll(h)
        return c.metadata, c.dimension, len(c.points)

    def _nearest(self, h: _Memory, vector: list[float], k: int) -> list[tuple[str, float]]:
        points = self._coll(h).points
        if not points:
            return []
        ids = list(points)
        if self.hidden():
            ids = [i for i in ids if self._shown(points[i][1].get(METADATA_KEY) or {})]
        if not ids:
            return []
        matrix = np.stack([points[i][0] for i in ids])
        q = np.asarray(vector, dtype=np.float32)
        scores = matrix @ (q / (np.linalg.norm(q) or 1.0))
        order = np.argsort(-scores, kind="stable")[:k]
        return [(ids[i], float(scores[i])) for i in order]

    def _bm25(self, c: _Collection, sparse: Sparse, n: int) -> list[str]:
        """Return the ids of the n best points by BM25 (IDF-weighted dot product), best first.

        As in Qdrant, only points sharing a token with the query are candidates.
        """
        vectors = c.sparse or {}
        df = {t: sum(1 for v in vectors.values() if t in v) for t in sparse[0]}
        weights = {t: w * idf(df[t], len(vectors)) for t, w in zip(*sparse, strict=True)}
        scored = []
        for pid, v in vectors.items():
            shared = [t for t in weights if t in v]
            if shared:
                scored.append((sum(weights[t] * v[t] for t in shared), pid))
        scored.sort(key=lambda s: -s[0])
        return [pid for _, pid in scored[:n]]

    def _fused(self, h: _Memory, vector: list[float], sparse: Sparse, k: int,
               candidates: int) -> list[tuple[str, float, float]]:
        c = self._coll(h)
        dense = self._nearest(h, vector, len(c.points))
        cos = dict(dense)
        # _nearest leaves out a half-replaced document's hidden version; so must BM25's list
        bm25 = [i for i in self._bm25(c, sparse, len(c.points)) if i in cos][:candidates]
        fused = rrf([[i for i, _ in dense[:candidates]], bm25])
        return [(pid, cos[pid], score) for pid, score in fused[:k]]

    def _add_sparse(self, h: _Memory) -> None:
        c = self._coll(h)
        if c.sparse is None:
            c.sparse = {}

    def _set_sparse(self, h: _Memory, ids: list[str], vectors: list[Sparse]) -> None:
        c = self._coll(h)
        for i, (idx, weights) in zip(ids, vectors, strict=True):
            if i in c.points and c.sparse is not None:
                c.sparse[i] = dict(zip(idx, weights, strict=True))

    def _set_metadata(self, h: _Memory, metadata: dict[str, Any]) -> None:
        self._coll(h).metadata.update(metadata)

    def _payloads(self, h: _Memory, ids: list[str], include: list[str] | None = None,
                  exclude: list[str] | None = None) -> list[tuple[str, Payload]]:
        points = self._coll(h).points
        return [(i, _select(points[i][1], include, exclude)) for i in ids if i in points]

    def _vectors(self, h: _Memory, ids: list[str]) -> dict[str, list[float]]:
        points = self._coll(h).points
        return {i: points[i][0].tolist() for i in ids if i in points}

    def _page(self, h: _Memory, include: list[str],
              offset: Any) -> tuple[list[tuple[str, Payload]], Any]:
        ids = sorted(self._coll(h).points)
        start = int(offset or 0)
        page = [(i, _select(self._coll(h).points[i][1], include, None))
                for i in ids[start:start + PAGE]]
        return page, (start + PAGE if start + PAGE < len(ids) else None)

    def _count(self, h: _Memory) -> int:
        return len(self._coll(h).points)

    def _write(self, h: _Memory, ids: list[str], vectors: list[list[float]],
               payloads: list[Payload]) -> None:
        c = self._coll(h)
        for i, v, p in zip(ids, vectors, payloads, strict=True):
            vec = np.asarray(v, dtype=np.float32)
            if vec.shape != (c.dimension,):
                raise ValueError(f"vector of {vec.shape} for a {c.dimension}-d collection")
            c.points[i] = (vec / (np.linalg.norm(vec) or 1.0), dict(p))
            if c.sparse is not None:
                idx, weights = encode_payload(p)
                c.sparse[i] = dict(zip(idx, weights, strict=True))

    def _remove(self, h: _Memory, ids: list[str]) -> None:
        for i in ids:
            self._coll(h).points.pop(i, None)
            (self._coll(h).sparse or {}).pop(i, None)

    def _drop(self, h: _Memory) -> None:
        h.collection = None

    def _release(self, h: _Memory) -> None:
        """Nothing to release; the data goes with the object."""
