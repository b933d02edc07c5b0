"""The BM25 sparse vector stored beside each chunk's dense vector, and reciprocal rank fusion.

Every engine indexes the same sparse vectors: the tokens of a chunk's section path and text as
Qdrant's own BM25 model (`qdrant_edge.Bm25`, the tokenizer, stop words and stemmer a Qdrant
server's built-in BM25 uses) weighs them, under the vector name `bm25`, with Qdrant's IDF
modifier applied at query time. Encoding happens here, on the client, for every engine (Edge, a
Qdrant server, qdrant-client's local mode, the in-memory fake): a server then needs no inference
support, and all four score the same token ids.

Qdrant fuses the dense and the sparse candidates itself (Query API: two prefetches and
reciprocal rank fusion). `idf` and `rrf` restate its formulas for the in-memory fake, which has
no engine; tests/unit/test_store_contract.py checks that the fake and the engines agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import qdrant_edge as qe

__all__ = ["RRF_K", "SPARSE", "SPARSE_VERSION", "Sparse", "document_text", "encode_document",
           "encode_payload", "encode_query", "idf", "rrf"]

SPARSE = "bm25"
"""The sparse vector's name in every engine; the dense vector keeps the unnamed slot."""
SPARSE_VERSION = "bm25-v1:k1.2:b0.75:avg100:english"
"""Recorded in the collection's metadata once every point has its sparse vector. A collection
without it (made before hybrid retrieval, or by a migration that was stopped part-way) is
migrated by `textbound ingest`; change it whenever `_MODEL`'s configuration changes."""
RRF_K = 2
"""Qdrant's reciprocal-rank-fusion constant: a point at 0-based position p adds 1 / (p + k)."""

_MODEL = qe.Bm25(qe.Bm25Config(k=1.2, b=0.75, avg_len=100.0, language="english"))
"""avg_len 100: a chunk holds about 150 words, about 100 once stop words are dropped."""

Sparse = tuple[list[int], list[float]]
"""A sparse vector as (token ids, weights)."""


def document_text(text: str, metadata: Mapping[str, Any] | None) -> str:
    """Return what a chunk's sparse vector indexes: its section path, then its text."""
    section = str((metadata or {}).get("section") or "")
    return f"{section}\n{text}" if section else text


def encode_document(text: str, metadata: Mapping[str, Any] | None = None) -> Sparse:
    """Return a chunk's BM25 document vector (term-frequency weights, length-normalised)."""
    v = _MODEL.embed_document(document_text(text, metadata))
    return list(v.indices), list(v.values)


def encode_payload(payload: Mapping[str, Any]) -> Sparse:
    """Return the BM25 document vector of a stored point's payload (langchain-qdrant layout)."""
    meta = payload.get("metadata")
    return encode_document(str(payload.get("page_content") or ""),
                           meta if isinstance(meta, Mapping) else None)


def encode_query(text: str) -> Sparse:
    """Return a question's BM25 query vector (each distinct token weighs 1)."""
    v = _MODEL.embed_query(text)
    return list(v.indices), list(v.values)


def idf(df: int, n: int) -> float:
    """Qdrant's IDF modifier for a token in df of n indexed points."""
    return math.log((n - df + 0.5) / (df + 0.5) + 1.0)


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Fuse ranked id lists as Qdrant does; return (id, fused score), best first.

    Ties keep the order in which the ids were first seen (the first ranking's first).
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        for pos, pid in enumerate(ranking):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (pos + k)
    return sorted(scores.items(), key=lambda kv: -kv[1])
