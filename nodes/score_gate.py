"""score_gate: decide from the retrieval scores alone whether there is evidence to answer from.

Seeds 000/001 (floor and answer threshold, the band between them logged and excluded), 002 (top-1
threshold; keyword coverage as a warning), 003 (minimum chunk count) and 004 (mean score, minimum
context length) are all expressed as one `Calibration`; the default is the calibrated one.
Evidence is every chunk within the margin of the best, the book's glossary entry and the best
chunk's neighbour in its section (what its first lines continue or its last lines introduce).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import ChunkDict, GateEvidence, RefusalReason, State, Verdict, verdict
from nodes._common import analysis_of, question_of, timed
from textbound.answer import reading
from textbound.answer.evidence import (
    Weigher,
    adjoins,
    coverage,
    known_share,
    retrieval_features,
    uniform,
    unknown_terms,
)
from textbound.answer.term_weights import term_stats, weigher
from textbound.documents.store import Store

__all__ = ["score_gate", "gate_chunks"]


def gate_chunks(question: str, chunks: list[ChunkDict], tun: RunContext,
                weigh: Weigher | None = None, unknown: list[str] | None = None,
                known: float = 1.0, analysis: reading.QuestionAnalysis | None = None
                ) -> tuple[Verdict, GateEvidence]:
    """Return the gate's verdict on retrieved chunks and what it found (pure; unit-tested).

    `unknown`: the question's names and commands the collection never says (evidence);
    with `refuse_unknown_names` any of them refuses as empty_retrieval, whatever the scores.
    `known` is the IDF-weighted share of the question's words the collection uses at all
    (evidence.known_share), a feature the calibration may weigh. `analysis` is the question's
    reading (textbound/answer/reading.py); without it the question is read here.
    """
    gate = tun.gate
    passed: list[str] = []
    failed: list[str] = []
    warnings: list[str] = []
    terms = reading.terms(analysis or reading.analyse(question))
    weigh = weigh or uniform
    found: GateEvidence = {"policy": gate.name, "features": {}, "evidence_ids": [],
                           "excluded": [], "warnings": warnings}
    reason: RefusalReason | None = None
    threshold: float | None = None

    def done() -> tuple[Verdict, GateEvidence]:
        return verdict("score_gate", reason=reason, figures=found["features"],
                       threshold=threshold, passed_checks=passed, failed_checks=failed), found

    if not chunks:
        failed.append("retrieval_nonempty")
        reason = RefusalReason.EMPTY_RETRIEVAL
        return done()
    if unknown:
        warnings.append("unknown_names: the collection never mentions " + ", ".join(unknown))
        if tun.refuse_unknown_names:
            failed.append("known_names")
            reason = RefusalReason.EMPTY_RETRIEVAL
            found["unknown_names"] = list(unknown)
    scores = [c["score"] for c in chunks]
    top1 = max(scores)
    features = retrieval_features(terms, scores, [c["text"] for c in chunks[:3]], weigh, known)
    features["gate_score"] = round(gate.gate_score(features), 4)
    found["features"] = features

    def check(name: str, ok: bool, bar: float, why: RefusalReason) -> bool:
        nonlocal reason, threshold
        (passed if ok else failed).append(name)
        if not ok and reason is None:
            reason, threshold = why, bar
        return ok

    threshold = gate.floor
    # a short question on a rare term ("Who published saycan?") can sit under the floor on
    # cosine while a retrieved passage states every one of its words: the words decide then
    rescued = (top1 < gate.floor and gate.floor_words is not None
               and min(features["coverage"], features["best_sentence"]) >= gate.floor_words)
    if rescued:
        warnings.append("floor: below it on cosine, passed on the question's words")
    if not check("floor", top1 >= gate.floor or rescued, gate.floor,
                 RefusalReason.EMPTY_RETRIEVAL) or reason:
        return done()
    thin = RefusalReason.INSUFFICIENT_CONTEXT
    if gate.mean_threshold is not None and not check(
        "mean_score", features["mean"] >= gate.mean_threshold, gate.mean_threshold, thin
    ):
        return done()
    # a calibration that weighs the reader leaves the rest of the sum to check_answerable: here
    # only questions that fail even with the reader's best possible vote are refused
    bonus = gate.reader_bonus if tun.answerability else 0.0
    threshold = gate.answer_threshold
    if not check("answer_threshold", features["gate_score"] + bonus >= gate.answer_threshold,
                 gate.answer_threshold, thin):
        return done()
    cut = gate.chunk_threshold if gate.chunk_threshold is not None else top1 - gate.chunk_margin
    cut = cut if rescued else max(cut, gate.floor)
    # the book's glossary entry for a definition question's term (retrieve marks it
    # `glossary`) is evidence, and so is the best passage's neighbour in its section
    best = max(chunks, key=lambda c: c["score"])
    evidence = [c for c in chunks if c["score"] >= cut
                or (c["score"] >= gate.floor and (c.get("glossary") or adjoins(c, best)))]
    kept = {c["chunk_id"] for c in evidence}
    found["excluded"] = [{"chunk_id": c["chunk_id"], "score": round(c["score"], 4)}
                         for c in chunks if gate.floor <= c["score"] and c["chunk_id"] not in kept]
    found["evidence_ids"] = [c["chunk_id"] for c in evidence]
    if not check("min_chunks", len(evidence) >= tun.min_chunks, tun.min_chunks, thin):
        return done()
    chars = sum(len(c["text"]) for c in evidence)
    if not check("min_context_chars", chars >= tun.min_context_chars, tun.min_context_chars,
                 thin):
        return done()
    union = coverage(terms, "\n".join(c["text"] for c in evidence))
    if union < tun.keyword_coverage_warn:
        warnings.append(
            f"keyword_coverage: only {union:.0%} of the question's keywords appear in the evidence"
        )
    return done()


@timed
def score_gate(state: State, runtime: Runtime[RunContext], *, store: Store) -> dict[str, Any]:
    """Gate the retrieved chunks; the verdict names the refusal reason when it fails."""
    tun = runtime.context
    chunks = state.get("chunks") or []
    weigh = weigher(store)
    question = question_of(state)
    analysis = analysis_of(state)
    stats = term_stats(store)
    unknown = (unknown_terms(question, stats, [c["text"] for c in chunks], analysis["names"])
               if chunks else [])
    known = known_share(reading.terms(analysis), stats) if chunks else 1.0
    judged, found = gate_chunks(question, chunks, tun, weigh, unknown, known, analysis)
    keep = set(found["evidence_ids"])
    return {"gate": found, "verdicts": [judged],
            "evidence": [c for c in chunks if c["chunk_id"] in keep]}
