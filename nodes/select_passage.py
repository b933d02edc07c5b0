"""select_passage: in selected-text mode the selection is the only evidence (seeds 000, 001).

No vector search happens. The selection is split into sentences, each a citable piece of evidence;
the gate asks whether those sentences hold what the question asks for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import ChunkDict, GateEvidence, RefusalReason, State, verdict
from nodes._common import question_of, selection_of, timed
from textbound.answer import reading
from textbound.answer.evidence import best_sentence_coverage, coverage
from textbound.answer.term_weights import weigher
from textbound.documents.store import Store
from textbound.seams import Embedder
from textbound.text import content_words, sentence_spans

__all__ = ["select_passage", "MAX_SELECTION_SENTENCES"]

MAX_SELECTION_SENTENCES = 64


@timed
def select_passage(state: State, runtime: Runtime[RunContext], *, store: Store,
                   embeddings: Embedder) -> dict[str, Any]:
    """Turn the selection into evidence sentences and gate them."""
    tun = runtime.context
    gate = tun.gate
    question = question_of(state)
    text = selection_of(state)
    spans = [(s, e) for s, e in sentence_spans(text) if len(text[s:e].strip()) > 1]
    # the question read once: every later check reads this (analysis_of)
    analysis = reading.analyse(question)
    terms = reading.terms(analysis)
    weigh = weigher(store)
    if len(spans) > MAX_SELECTION_SENTENCES:
        # keep the sentences sharing most words with the question, in reading order
        ranked = sorted(range(len(spans)), key=lambda i: -len(
            terms & set(content_words(text[spans[i][0]:spans[i][1]]))))
        keep = sorted(ranked[:MAX_SELECTION_SENTENCES])
        spans = [spans[i] for i in keep]
    sentences = [text[s:e] for s, e in spans]
    passed: list[str] = []
    failed: list[str] = []
    found: GateEvidence = {"policy": gate.name, "features": {}, "evidence_ids": [],
                           "excluded": [], "warnings": []}
    if not sentences:
        failed.append("selection_nonempty")
        refused = verdict("select_passage", reason=RefusalReason.SELECTED_TEXT_INSUFFICIENT,
                          failed_checks=failed)
        return {"gate": found, "evidence": [], "chunks": [], "question_analysis": analysis,
                "verdicts": [refused]}
    vectors = np.asarray(embeddings.embed_documents([question] + sentences), np.float32)
    q, sv = vectors[0], vectors[1:]
    norms = np.linalg.norm(sv, axis=1) * (np.linalg.norm(q) or 1.0)
    sims = (sv @ q) / np.where(norms == 0, 1.0, norms)
    evidence: list[ChunkDict] = [
        {"chunk_id": f"selection#{i}", "text": s, "score": float(sims[i]),
         "metadata": {"source": "selection", "section": "selected text",
                      "heading_path": ["selected text"], "start": spans[i][0], "end": spans[i][1]}}
        for i, s in enumerate(sentences)
    ]
    features = {
        "top1": round(float(sims.max()), 4),
        "mean": round(float(sims.mean()), 4),
        "coverage": round(coverage(terms, text, weigh), 4),
        "best_sentence": round(best_sentence_coverage(terms, [text], weigh), 4),
    }
    features["gate_score"] = round(gate.gate_score(features), 4)
    found["features"] = features
    # as in score_gate: the reader's part of a weighted sum is checked by check_answerable
    bonus = gate.reader_bonus if tun.answerability else 0.0
    ok = features["gate_score"] + bonus >= gate.selection_threshold
    (passed if ok else failed).append("selection_relevance")
    if ok:
        found["evidence_ids"] = [e["chunk_id"] for e in evidence]
    judged = verdict("select_passage",
                     reason=None if ok else RefusalReason.SELECTED_TEXT_INSUFFICIENT,
                     figures=features, threshold=gate.selection_threshold,
                     passed_checks=passed, failed_checks=failed)
    # selection sentences are also this run's "chunks": the only material anything can cite
    return {"gate": found, "verdicts": [judged], "evidence": evidence if ok else [],
            "chunks": evidence, "question_analysis": analysis}
