"""What every node shares: timing, the run's cleaned input and tunables, and the reply."""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graph.context import Tunables
from graph.state import ChunkDict, SourceDict, State
from nodes.evidence import Weigher, uniform
from textbound.audit import AuditLog, utc_timestamp
from textbound.errors import TextboundError
from textbound.ingest import page_at
from textbound.store import Store, TermStats
from textbound.tracing import annotate_current_run
from textbound.tunables import TUNABLES

__all__ = ["Reply", "question_of", "selection_of", "term_stats", "timed", "tunables_of",
           "weigher"]


def timed(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Record the node's wall time (ms) under timings[<node name>]."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        out.setdefault("timings", {})[name] = round((time.perf_counter() - t0) * 1000, 3)
        return out

    wrapper.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return wrapper


def tunables_of(state: State) -> Tunables:
    """Return the run's tunables, which check_question resolved and validated once."""
    return Tunables.model_construct(**state["tunables"])


def question_of(state: State) -> str:
    """Return the question as check_question cleaned it (invisible characters dropped)."""
    return state["clean_question"]


def selection_of(state: State) -> str:
    """Return the selected passage as check_question cleaned it ("" without a selection)."""
    return state.get("clean_selected_text") or ""


def term_stats(store: Store, *, strict: bool = False) -> TermStats | None:
    """Return the collection's term statistics, or None when the store cannot give them now.

    With `strict`, a store failure is raised instead (retrieve wants the failure itself).
    """
    try:
        return store.term_stats()
    except TextboundError:
        if strict:
            raise
        return None


def weigher(store: Store, *, strict: bool = False) -> Weigher:
    """Return the IDF weigher of the store's collection (uniform without statistics)."""
    stats = term_stats(store, strict=strict)
    return stats.idf if stats is not None else uniform


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


def _sources(cited: list[ChunkDict], highlights: dict[str, list[list[int]]],
             answer_spans: dict[str, list[int]] | None = None) -> list[SourceDict]:
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
            "highlights": marks,
        }
        if answer_spans and c["chunk_id"] in answer_spans:
            source["answer_span"] = answer_spans[c["chunk_id"]]
        out.append(source)
    return out


def _answerability_diagnostics(verdict: dict[str, Any]) -> dict[str, Any] | None:
    """Return the reader's verdict for the diagnostics (None when the reader never ran)."""
    if not verdict:
        return None
    return {k: verdict.get(k) for k in (
        "passed", "skipped", "score", "threshold", "chunk_id", "span", "span_text", "sentence",
        "scores", "reader", "gate_score", "gate_threshold", "answer_type", "error")
        if k in verdict}


@dataclass(frozen=True)
class Reply:
    """Turns a node's outcome into the response contract and writes its audit line."""

    audit: AuditLog
    collection: str | None = None

    def __call__(
        self,
        state: State,
        *,
        node: str,
        answer: str,
        refusal_reason: str | None,
        cited: list[ChunkDict] | None = None,
        suggestions: list[str] | None = None,
        confidence: str | None = None,
        extra: dict[str, Any] | None = None,
        highlights: dict[str, list[list[int]]] | None = None,
        answer_spans: dict[str, list[int]] | None = None,
    ) -> dict[str, Any]:
        """Build the response contract, write the audit line, and return the state update."""
        chunks = state.get("chunks") or []
        max_score = max((c["score"] for c in chunks), default=None)
        gate: dict[str, Any] = dict(state.get("gate") or {})
        grounding: dict[str, Any] = dict(state.get("grounding") or {})
        readable: dict[str, Any] = dict(state.get("answerability") or {})
        passed = list(gate.get("passed_checks", [])) + list(grounding.get("passed_checks", []))
        failed = list(gate.get("failed_checks", [])) + list(grounding.get("failed_checks", []))
        if readable and not readable.get("skipped"):
            # the reader runs between the gate and generation: its check goes between theirs
            at = len(gate.get("passed_checks", [])) if readable.get("passed") else \
                len(gate.get("failed_checks", []))
            (passed if readable.get("passed") else failed).insert(at, "answerable")
            typed = readable.get("answer_type")
            if typed:  # the question asked for a kind of value: was it in the reader's span?
                where = passed if typed.get("found") else failed
                where.insert(where.index("answerable") + 1 if "answerable" in where else len(where),
                             "answer_type")
        if refusal_reason and refusal_reason not in failed:
            failed.append(refusal_reason)
        tun = state.get("tunables") or {}
        timings = dict(state.get("timings") or {})
        started = state.get("started_at")
        total_ms = round((time.time() - started) * 1000, 3) if started else None
        diagnostics: dict[str, Any] = {
            "path": node,
            "passed_checks": passed,
            "failed_checks": failed,
            "warnings": list(gate.get("warnings", [])),
            "chunks_retrieved": len(chunks),
            "max_score": round(float(max_score), 4) if max_score is not None else None,
            "score_scale": "raw cosine [-1, 1]",
            "gate": {k: gate.get(k) for k in ("policy", "features", "excluded") if k in gate},
            "grounding": {k: grounding.get(k) for k in (
                "grounding_score", "answer_coverage", "prepared", "sentences") if k in grounding},
            "thresholds": {t.name: tun.get(t.name) for t in TUNABLES if t.diagnostics},
            "generator": tun.get("generator"),
            "answerability": _answerability_diagnostics(readable),
            "timings_ms": timings,
            "latency_ms": total_ms,
        }
        if extra:
            diagnostics.update(extra)
        sources = _sources(cited or [], highlights or {}, answer_spans) if refusal_reason is None \
            else []
        level = confidence or ("insufficient" if refusal_reason else confidence_level(max_score))
        response = {
            "answer": answer,
            "was_refusal": refusal_reason is not None,
            "refusal_reason": refusal_reason,
            "sources": sources,
            "confidence_level": level,
            "suggestions": list(suggestions or []),
            "diagnostics": diagnostics,
        }
        self.audit.write({
            "event": "refusal" if refusal_reason else "answer",
            "timestamp": utc_timestamp(),
            "session_id": state.get("session_id"),
            "question": state.get("question"),
            "selected_text": bool(state.get("selected_text")),
            "refusal_reason": refusal_reason,
            "chunks_retrieved": len(chunks),
            "max_score": diagnostics["max_score"],
            "confidence_level": level,
            "sources": [{"chunk_id": s["chunk_id"], "score": s["score"]} for s in sources],
            "path": node,
            "failed_checks": failed,
            "answerable_score": readable.get("score"),
            "answerable_threshold": readable.get("threshold"),
            "policy": tun.get("policy"),
            "generator": tun.get("generator"),
            "latency_ms": total_ms,
        })
        annotate_current_run(response, state, collection=self.collection)
        return response
