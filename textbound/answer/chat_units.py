"""The chat generator's evidence as answer units: a code block whole, a table row with its header.

With `chat_evidence = "units"` (the default) the chat model is not handed the retrieved passages
whole: it is handed the answer units the extractive generator chooses from
(textbound/answer/compose.py `rank_units`), the most relevant first: a sentence, a list with its
lead-in, a table row read with its header cells, a lead-in with the code block it introduces,
verbatim. Each unit keeps its passage's id, so what the model cites is checked against the whole
passage as before (validate_grounding). Fewer, shorter passages make a shorter prompt, most of a
local model's time, and put the answering unit in front of a small model instead of the
passage's opening (Qwen 1.5B, 30-question samples: Git manual 8 right and no leak against 6
right and 3 leaks with passages; our book 16 against 15; docs/evaluation.md).
"""

from __future__ import annotations

from typing import Any

from textbound.answer.compose import rank_units
from textbound.answer.evidence import Weigher, uniform
from textbound.answer.followers import block_after
from textbound.answer.reading import QuestionAnalysis
from textbound.documents.store import SentenceVectors
from textbound.shapes import ChunkDict

__all__ = ["CHAT_UNITS", "chat_units"]

CHAT_UNITS = 6
"""Units handed to the chat model (the most relevant; fewer when the evidence has fewer)."""


def chat_units(question: str, evidence: list[ChunkDict], embeddings: Any, *,
               weigh: Weigher = uniform, query_vector: list[float] | None = None,
               stored: dict[str, SentenceVectors] | None = None,
               analysis: QuestionAnalysis | None = None,
               limit: int = CHAT_UNITS) -> list[ChunkDict]:
    """Return the evidence as its most relevant answer units, each under its passage's id.

    A prose lead-in is handed with the code block it leads to. The units come in the order the
    book has them (passage by retrieval rank, then position). Empty when the evidence has no
    candidate unit (the caller then hands the passages).
    """
    r = rank_units(question, evidence, embeddings, weigh=weigh, query_vector=query_vector,
                   stored=stored, analysis=analysis)
    if r is None:
        return []
    best = sorted(range(len(r.cands)), key=lambda i: -r.scores[i])[:limit]
    rank = {c["chunk_id"]: n for n, c in enumerate(sorted(evidence, key=lambda c: -c["score"]))}
    best.sort(key=lambda i: (rank[r.cands[i].chunk["chunk_id"]], r.cands[i].unit.start))
    out: list[ChunkDict] = []
    for i in best:
        cand = r.cands[i]
        text = cand.unit.text
        block = block_after(cand) if r.procedure else None
        if block is not None:
            text = f"{text}\n{block.text}"
        unit: ChunkDict = {**cand.chunk, "text": text}
        out.append(unit)
    return out
