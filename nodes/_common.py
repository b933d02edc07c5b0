"""What every node shares: timing, the run's cleaned input, and the reply.

The reply turns the run's verdicts into the response contract and its audit line; what it cites
and how sure it sounds come from textbound/answer/sources.py, the thread's bounded history from
textbound/conversation/history.py.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graph.context import RunContext
from graph.state import (
    AnswerabilityVerdict,
    ChunkDict,
    Conversation,
    InputState,
    QuestionAnalysis,
    State,
    Turn,
    Verdict,
)
from textbound.answer import reading
from textbound.answer.sources import cited_sources, confidence_level, nearest_passage
from textbound.conversation.history import TURN_TEXT_CHARS, next_history
from textbound.records.audit import utc_timestamp
from textbound.records.tracing import annotate_current_run
from textbound.seams import AuditSink
from textbound.tunables import TUNABLES

__all__ = ["Reply", "analysis_of", "conversation_of", "question_of", "selection_of", "timed"]


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


def question_of(state: State) -> str:
    """Return the question as the checks read it.

    That is the question check_question cleaned (invisible characters dropped), with the
    misspelt words that retrieve corrected (textbound/answer/spelling.py).
    """
    return state.get("corrected_question") or state["clean_question"]


def analysis_of(state: State) -> QuestionAnalysis:
    """Return what the question asks for: the analysis in state, read once a turn.

    retrieve (or select_passage) writes it for the question as the checks read it; a state
    without one for that question (a checkpoint written before the analysis was kept, or by a
    version that kept fewer fields) is read afresh here.
    """
    found = state.get("question_analysis")
    question = question_of(state)
    if found and found.get("question") == question and reading.FIELDS <= found.keys():
        return found
    return reading.analyse(question)


def selection_of(state: State) -> str:
    """Return the selected passage as check_question cleaned it ("" without a selection)."""
    return state.get("clean_selected_text") or ""


def _answerability_diagnostics(reading: AnswerabilityVerdict | None) -> dict[str, Any] | None:
    """Return the reader's reading for the diagnostics (None when the reader never ran)."""
    if not reading:
        return None
    return {k: reading.get(k) for k in (
        "passed", "skipped", "score", "threshold", "chunk_id", "span", "span_text", "sentence",
        "scores", "reader", "gate_score", "gate_threshold", "answer_type", "error")
        if k in reading}


def _checks(verdicts: list[Verdict], refusal_reason: str | None) -> tuple[list[str], list[str]]:
    """Return the passed and failed checks of every verdict, in the order the gates ran."""
    passed = [c for v in verdicts for c in v["passed_checks"]]
    failed = [c for v in verdicts for c in v["failed_checks"]]
    if refusal_reason and refusal_reason not in failed:
        failed.append(refusal_reason)
    return passed, failed


def _diagnostics(state: State, tun: RunContext, node: str, passed: list[str],
                 failed: list[str]) -> dict[str, Any]:
    chunks = state.get("chunks") or []
    max_score = max((c["score"] for c in chunks), default=None)
    gate = state.get("gate")
    grounding: dict[str, Any] = dict(state.get("grounding") or {})
    started = state.get("started_at")
    return {
        "path": node,
        "passed_checks": passed,
        "failed_checks": failed,
        "warnings": list(gate["warnings"]) if gate else [],
        "chunks_retrieved": len(chunks),
        "max_score": round(float(max_score), 4) if max_score is not None else None,
        "score_scale": "raw cosine [-1, 1]",
        "gate": {k: gate[k] for k in ("policy", "features", "excluded")} if gate else {},
        "grounding": {k: grounding[k] for k in (
            "grounding_score", "answer_coverage", "answer_read", "attribute", "prepared",
            "sentences")
            if k in grounding},
        "thresholds": {t.name: getattr(tun, t.name) for t in TUNABLES if t.diagnostics},
        "generator": tun.generator,
        "answerability": _answerability_diagnostics(state.get("answerability")),
        "timings_ms": dict(state.get("timings") or {}),
        "latency_ms": round((time.time() - started) * 1000, 3) if started else None,
        **({"corrected_question": state["corrected_question"],
            "spelling": list(state.get("spelling") or [])}
           if state.get("corrected_question") else {}),
    }


def conversation_of(state: State, tun: RunContext) -> Conversation:
    """Return how this run read its question in its thread (contextualize's, or as asked)."""
    found = state.get("conversation")
    if found:
        return found
    asked = state["clean_question"] if "clean_question" in state else str(state.get("question"))
    history = state.get("history") or [] if tun.thread_id else []
    return {"thread_id": tun.thread_id, "turn": len(history) + 1, "asked": asked,
            "standalone": asked, "rewritten": False, "rule": None,
            # a greeting or an invalid question keeps the conversation on its last subject
            "subject": history[-1]["subject"] if history else None}


@dataclass(frozen=True)
class Reply:
    """Turns a node's outcome and the run's verdicts into the response and its audit line."""

    audit: AuditSink
    collection: str | None = None

    def __call__(
        self,
        state: State,
        tun: RunContext,
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
        """Build the response contract, write the audit line, and return the state update.

        The update also clears the input's optional keys (the selection, the session id): in a
        thread the state outlives the run, and a question sent without them has none.
        """
        passed, failed = _checks(state.get("verdicts") or [], refusal_reason)
        diagnostics = {**_diagnostics(state, tun, node, passed, failed), **(extra or {})}
        sources = cited_sources(cited or [], highlights or {}, answer_spans) \
            if refusal_reason is None else []
        level = confidence or ("insufficient" if refusal_reason else confidence_level(
            diagnostics["max_score"]))
        conversation = conversation_of(state, tun)
        diagnostics["conversation"] = {k: conversation[k] for k in (
            "thread_id", "turn", "asked", "standalone", "rewritten", "rule")}
        response: dict[str, Any] = {
            "answer": answer, "was_refusal": refusal_reason is not None,
            "refusal_reason": refusal_reason, "sources": sources, "confidence_level": level,
            "suggestions": list(suggestions or []), "diagnostics": diagnostics,
            "run_id": tun.run_id,
        }
        if tun.thread_id is not None:
            turn: Turn = {
                "question": conversation["asked"], "standalone": conversation["standalone"],
                "subject": conversation["subject"], "answer": answer,
                "was_refusal": refusal_reason is not None, "refusal_reason": refusal_reason,
                "run_id": tun.run_id,
                "sources": [{"chunk_id": s["chunk_id"], "source": s["source"],
                             "section": s["section"]} for s in sources],
            }
            response["history"] = next_history(list(state.get("history") or []), turn,
                                               turns=tun.history_turns, chars=tun.history_chars)
        reading = state.get("answerability")
        self.audit.write({
            "event": "refusal" if refusal_reason else "answer",
            "timestamp": utc_timestamp(),
            "session_id": state.get("session_id"),
            "run_id": tun.run_id,
            "thread_id": tun.thread_id,
            # the question every gate read (invisible characters dropped; a follow-up made
            # standalone), not the raw input; and the question as asked
            "question": conversation["standalone"],
            "asked_question": conversation["asked"],
            "selected_text": bool(state.get("selected_text")),
            "refusal_reason": refusal_reason,
            "chunks_retrieved": diagnostics["chunks_retrieved"],
            "max_score": diagnostics["max_score"],
            "confidence_level": level,
            # what a teacher reading a student's rating needs (textbound/records/feedback.py)
            "answer": answer[:TURN_TEXT_CHARS],
            "sources": [{"chunk_id": s["chunk_id"], "score": s["score"], "source": s["source"],
                         "section": s["section"], "page": s["page"]} for s in sources],
            "path": node,
            "failed_checks": failed,
            # the best retrieved passage's place, answer or refusal: the report's gaps by chapter
            "nearest": None if state.get("selected_text")
            else nearest_passage(state.get("chunks") or []),
            "answerable_score": reading["score"] if reading else None,
            "answerable_threshold": reading["threshold"] if reading else None,
            "policy": tun.policy,
            "generator": tun.generator,
            "latency_ms": diagnostics["latency_ms"],
        })
        annotate_current_run(response, state, collection=self.collection, tunables={
            "policy": tun.policy, "generator": tun.generator, "floor": tun.floor,
            "answer_threshold": tun.answer_threshold, "calibration": tun.gate.rule_dict()})
        # the turn ends here: a thread's next question must not inherit this one's selection
        return {**response, **{k: None for k in InputState.__annotations__ if k != "question"}}
