"""retrieve: the top-k chunks for the question, with raw cosine scores and metadata.

Qdrant returns the nearest candidates by cosine; they are re-ranked by cosine plus
`lexical_weight` times the IDF-weighted share of the question's words each chunk contains, so a
passage about the question's rare word beats one about its common words. `score` stays the raw
cosine; the rank score is reported beside it.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import ChunkDict, RefusalReason, State, verdict
from nodes._common import question_of, timed, weigher
from nodes.evidence import coverage, question_terms
from textbound.errors import (
    EmbeddingMismatchError,
    NotIngestedError,
    SetupError,
    StoreUnavailableError,
)
from textbound.seams import Embedder
from textbound.store import Store

__all__ = ["retrieve", "CANDIDATE_FACTOR", "MIN_CANDIDATES"]

CANDIDATE_FACTOR = 5
MIN_CANDIDATES = 25


@timed
def retrieve(state: State, runtime: Runtime[RunContext], *, store: Store,
             embeddings: Embedder) -> dict[str, Any]:
    """Embed the question and search the collection; a store failure is recorded, not raised."""
    tun = runtime.context
    question = question_of(state)
    try:
        if not store.exists():
            raise NotIngestedError(str(store.collection))
        vector = embeddings.embed_query(question)
        hits = store.search(vector, max(tun.top_k * CANDIDATE_FACTOR, MIN_CANDIDATES))
        weigh = weigher(store, strict=True)
    except (StoreUnavailableError, EmbeddingMismatchError, SetupError) as exc:
        # nothing ingested yet: waiting will not help, ingesting will, and the refusal says so
        message = "not_ingested" if NotIngestedError.describes(str(exc)) else None
        return {"chunks": [], "retrieval_error": str(exc), "verdicts": [verdict(
            "retrieve", reason=RefusalReason.STORE_UNAVAILABLE, detail=str(exc),
            message=message)]}
    terms = question_terms(question)
    ranked = []
    for h in hits:
        lexical = coverage(terms, h.text, weigh)
        ranked.append((float(h.score) + tun.lexical_weight * lexical, lexical, h))
    ranked.sort(key=lambda r: -r[0])
    chunks: list[ChunkDict] = [
        {"chunk_id": h.chunk_id, "text": h.text, "score": float(h.score), "metadata": h.metadata,
         "lexical": round(lexical, 4), "rank_score": round(rank, 4)}
        for rank, lexical, h in ranked[:tun.top_k]
    ]
    # generate reuses the vector: the question is embedded once per request
    return {"chunks": chunks, "retrieval_error": None, "query_vector": vector,
            "verdicts": [verdict("retrieve", figures={"chunks": float(len(chunks))})]}
