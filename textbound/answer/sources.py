"""What a response cites and how sure it sounds, and the nearest passage a refusal reports.

The reply (nodes/_common.py) builds the response contract and the audit line from these.
"""

from __future__ import annotations

from typing import Any

from textbound.documents.ingest import page_at, page_label_at
from textbound.shapes import ChunkDict, SourceDict

__all__ = ["cited_sources", "confidence_level", "nearest_passage"]


def confidence_level(top1: float | None) -> str:
    """Map a top-1 cosine to seed 003's levels.

    Seed 003 thresholds Chroma's squared-L2 distance (0.5 / 0.8 / 1.2); for unit vectors
    d = 2 - 2 cos, i.e. cosine 0.75 / 0.6 / 0.4.
    """
    if top1 is None:
        return "insufficient"
    if top1 >= 0.75:
        return "high"
    if top1 >= 0.6:
        return "medium"
    return "low"


def cited_sources(cited: list[ChunkDict], highlights: dict[str, list[list[int]]],
                  answer_spans: dict[str, list[int]] | None = None) -> list[SourceDict]:
    """Return the cited passages as the response lists them, numbered, with their highlights."""
    out: list[SourceDict] = []
    for n, c in enumerate(cited, start=1):
        m = c["metadata"]
        marks = highlights.get(c["chunk_id"], [])
        source: SourceDict = {
            "chunk_id": c["chunk_id"],
            "score": round(float(c["score"]), 4),
            "source": str(m.get("source", "")),
            "section": str(m.get("section", "")),
            "citation": n,
            "start": m.get("start"),
            "end": m.get("end"),
            # the page of the first quoted sentence: a chunk can run onto the next page
            "page": page_at(m, marks[0][0] if marks else None),
            "page_label": page_label_at(m, marks[0][0] if marks else None),
            "highlights": marks,
        }
        if answer_spans and c["chunk_id"] in answer_spans:
            source["answer_span"] = answer_spans[c["chunk_id"]]
        out.append(source)
    return out


def nearest_passage(chunks: list[ChunkDict]) -> dict[str, Any] | None:
    """Return where the best-scoring retrieved passage is, for the audit line (None: nothing).

    A refusal cites nothing, so without it the teacher's report could not tell a question the
    book's chapter raises and leaves unanswered from one far from every chapter.
    """
    if not chunks:
        return None
    best = max(chunks, key=lambda c: c["score"])
    m = best["metadata"]
    return {"chunk_id": best["chunk_id"], "score": round(float(best["score"]), 4),
            "source": str(m.get("source", "")), "section": str(m.get("section", ""))}
