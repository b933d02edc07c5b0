"""Pure routers: read a verdict from state, name the next node. Unknown values raise ValueError."""

from __future__ import annotations

from typing import Literal

from graph.state import RefusalReason, State

__all__ = [
    "route_after_check_question",
    "route_after_retrieve",
    "route_after_scope_classify",
    "route_after_select_passage",
    "route_after_check_answerable",
    "route_after_generate",
    "route_after_validate_grounding",
    "GATE_REFUSALS",
    "GROUNDING_REFUSALS",
]

GATE_REFUSALS = (RefusalReason.EMPTY_RETRIEVAL, RefusalReason.INSUFFICIENT_CONTEXT)
"""The reasons score_gate's verdict may name."""
GROUNDING_REFUSALS = (
    RefusalReason.MISSING_CITATIONS, RefusalReason.INVALID_CITATIONS,
    RefusalReason.PROHIBITED_PHRASING, RefusalReason.PROMPT_LEAK,
    RefusalReason.HALLUCINATION_DETECTED, RefusalReason.UNGROUNDED_ANSWER,
    RefusalReason.LOW_CONFIDENCE, RefusalReason.QUESTION_NOT_ANSWERED,
)
"""The reasons validate_grounding's verdict may name."""


def route_after_check_question(state: State) -> Literal[
    "refuse_invalid_question", "greet", "describe_coverage", "select_passage", "retrieve"
]:
    """Send the request down the path its kind needs."""
    kind = state["input_verdict"]["kind"]
    if kind == "invalid":
        return "refuse_invalid_question"
    if kind == "greeting":
        return "greet"
    if kind == "coverage":
        return "describe_coverage"
    if kind == "selected":
        return "select_passage"
    if kind == "question":
        return "retrieve"
    raise ValueError(f"unknown input kind {kind!r}")


def route_after_retrieve(state: State) -> Literal["refuse_store_unavailable", "score_gate"]:
    """Fail closed when the store could not be searched."""
    return "refuse_store_unavailable" if state.get("retrieval_error") else "score_gate"


def route_after_scope_classify(state: State) -> Literal[
    "refuse_out_of_scope", "refuse_empty_retrieval", "refuse_insufficient_context",
    "check_answerable"
]:
    """Refuse out-of-scope topics first (the most specific reason), then gate failures."""
    if not state["scope"]["in_scope"]:
        return "refuse_out_of_scope"
    gate = state["gate"]
    if gate["passed"]:
        return "check_answerable"
    reason = gate["reason"]
    if reason == RefusalReason.EMPTY_RETRIEVAL:
        return "refuse_empty_retrieval"
    if reason == RefusalReason.INSUFFICIENT_CONTEXT:
        return "refuse_insufficient_context"
    raise ValueError(f"unknown gate reason {reason!r}")


def route_after_select_passage(state: State) -> Literal[
    "refuse_selected_text_insufficient", "check_answerable"
]:
    """Read the selection only when it holds what the question asks."""
    return "check_answerable" if state["gate"]["passed"] else "refuse_selected_text_insufficient"


def route_after_check_answerable(state: State) -> Literal[
    "generate", "refuse_insufficient_context", "refuse_selected_text_insufficient"
]:
    """Generate when the reader found an answer (or did not run); else refuse by input kind."""
    verdict = state["answerability"]
    if verdict["passed"] or verdict["skipped"]:
        return "generate"
    kind = state["input_verdict"]["kind"]
    if kind == "selected":
        return "refuse_selected_text_insufficient"
    if kind == "question":
        return "refuse_insufficient_context"
    raise ValueError(f"unknown input kind {kind!r}")


def route_after_generate(state: State) -> Literal["refuse_generation_error", "validate_grounding"]:
    """A generator failure is a refusal; a draft always goes to validation."""
    if state.get("generation_error") or state.get("draft") is None:
        return "refuse_generation_error"
    return "validate_grounding"


def route_after_validate_grounding(state: State) -> str:
    """Release a passed draft; otherwise refuse with the first failed check's reason."""
    verdict = state["grounding"]
    if verdict["passed"]:
        return "release_answer"
    reason = verdict["reason"]
    if reason is None or reason not in GROUNDING_REFUSALS:
        raise ValueError(f"unknown grounding reason {reason!r}")
    return RefusalReason(reason).node
