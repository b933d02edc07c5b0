"""retrieve: the top-k chunks for the question, with raw cosine scores and metadata.

Misspelt question words are corrected first against the collection's own words
(textbound/answer/spelling.py; the corrected question is what every later check reads). Qdrant then
returns the candidates: with `retrieval=hybrid` (the default) the n nearest by cosine and the n
best by BM25, fused by reciprocal rank fusion in the engine (the whole union, so no dense
candidate is lost); with `dense` the n nearest. They are re-ranked by cosine plus
`lexical_weight` times the IDF-weighted share of the question's words each chunk contains, so a
passage about the question's rare word beats one about its common words. `score` stays the raw
cosine (what the gate is calibrated on); the rank score and the fusion score are beside it.
A definition question ("What is X?", "What does X do?") also reads the section titled X, when
the ranking left it out (marked `titled`), and the book's glossary entry for X ("- **X**: ...",
marked `glossary`; "difference between X and Y" asks for both): the gate keeps them as evidence
above its floor.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import ChunkDict, RefusalReason, State, verdict
from nodes._common import question_of, timed
from textbound.answer import reading
from textbound.answer.evidence import coverage, glossary_defines, is_listing
from textbound.answer.spelling import correct_question
from textbound.answer.term_weights import term_stats, weigher
from textbound.documents.store import Store
from textbound.errors import (
    EmbeddingMismatchError,
    NotIngestedError,
    SetupError,
    StoreUnavailableError,
)
from textbound.seams import Embedder

__all__ = ["retrieve", "CANDIDATE_FACTOR", "FUSED_POOL", "MIN_CANDIDATES"]

CANDIDATE_FACTOR = 5
MIN_CANDIDATES = 25
FUSED_POOL = 2
"""Hybrid: the re-ranking reads up to this many times the n candidates each prefetch gives, i.e.
the whole fused union; 1 would keep only the fused top n (docs/evaluation.md measures both)."""


@timed
def retrieve(state: State, runtime: Runtime[RunContext], *, store: Store,
             embeddings: Embedder) -> dict[str, Any]:
    """Embed the question and search the collection; a store failure is recorded, not raised."""
    tun = runtime.context
    question = question_of(state)
    # written every run, so a value from an earlier turn can never stand in for this question
    update: dict[str, Any] = {"corrected_question": None, "spelling": []}
    try:
        if not store.exists():
            raise NotIngestedError(str(store.collection))
        if tun.spelling:
            fix = correct_question(question, term_stats(store, strict=True))
            if fix is not None:  # later nodes read it too (question_of)
                question = fix.question
                update = {"corrected_question": question,
                          "spelling": [list(pair) for pair in fix.changes]}
        vector = embeddings.embed_query(question)
        n = max(tun.top_k * CANDIDATE_FACTOR, MIN_CANDIDATES)
        if tun.retrieval == "hybrid":
            # every candidate of both lists, in fused order: none of the n nearest is lost
            hits = store.search(vector, FUSED_POOL * n, text=question, candidates=n)
        else:
            hits = store.search(vector, n)
        weigh = weigher(store, strict=True)
    except (StoreUnavailableError, EmbeddingMismatchError, SetupError) as exc:
        # nothing ingested yet: waiting will not help, ingesting will, and the refusal says so
        message = "not_ingested" if NotIngestedError.describes(str(exc)) else None
        return {"chunks": [], "retrieval_error": str(exc), **update, "verdicts": [verdict(
            "retrieve", reason=RefusalReason.STORE_UNAVAILABLE, detail=str(exc),
            message=message)]}
    # the question read once, as corrected: every later check reads this (analysis_of)
    analysis = reading.analyse(question)
    terms = reading.terms(analysis)
    ranked = []
    for h in hits:
        if is_listing(h.metadata.get("heading_path") or []):
            continue  # a contents or index page names topics; it is never evidence
        lexical = coverage(terms, h.text, weigh)
        ranked.append((float(h.score) + tun.lexical_weight * lexical, lexical, h))
    ranked.sort(key=lambda r: -r[0])
    top = ranked[:tun.top_k]
    # "Can you explain the law of the excluded middle?": the book's own glossary entry, for
    # each side of "the difference between X and Y"
    glossed: set[int] = set()
    for asked in analysis["asked_terms"]:
        held = [r for r in top if glossary_defines(r[2].text, [asked])]
        if not held and len(top) == tun.top_k:
            found = next((r for r in ranked[tun.top_k:]
                          if r not in top and glossary_defines(r[2].text, [asked])), None)
            free = [n for n in range(len(top) - 1, -1, -1) if id(top[n][2]) not in glossed]
            if found is not None and free:
                top[free[0]] = found
                held = [found]
        glossed |= {id(r[2]) for r in held}
    chunks: list[ChunkDict] = []
    for rank, lexical, h in top:
        chunk: ChunkDict = {"chunk_id": h.chunk_id, "text": h.text, "score": float(h.score),
                            "metadata": h.metadata, "lexical": round(lexical, 4),
                            "rank_score": round(rank, 4)}
        if h.fused is not None:
            chunk["fused"] = round(h.fused, 6)
        if id(h) in glossed:
            chunk["glossary"] = True  # evidence under its margin cut: score_gate keeps it
        chunks.append(chunk)
    # generate reuses the vector: the question is embedded once per request
    return {"chunks": chunks, "retrieval_error": None, "query_vector": vector, **update,
            "question_analysis": analysis,
            "verdicts": [verdict("retrieve", figures={"chunks": float(len(chunks))})]}
