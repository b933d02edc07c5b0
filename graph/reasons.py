"""Every refusal reason, declared once: its name, the gates that fire it, and how it is reported.

`REASONS` is the one table. The graph wires each gate's refusal edges from it (`fired_by`), the
refusal terminal reads its suggestions and diagnostics from it, analytics groups the audit log by
its `group`, evaluation and calibration skip the reasons that do not judge the evidence, the
reader page and the README table list it in this order, and prompts/refusals.yaml holds each
reason's words under its name. tests/unit/test_reason_table.py fails when a gate emits a reason
the table does not give it, or the table declares a reason no gate emits or the graph cannot
reach.

Adding a reason: one `Reason` entry here, its message and label in prompts/refusals.yaml, the
gate that returns a failing `Verdict` naming it, and the gate's tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

__all__ = [
    "GROUPS",
    "REASONS",
    "Reason",
    "RefusalReason",
    "declared_for",
    "fired_by",
    "judges_evidence",
    "retry_later",
    "THREADS_DOWN",
]


class RefusalReason(StrEnum):
    """The name of every refusal, as the response contract's `refusal_reason` carries it.

    A `str` enum, so a member equals (and serialises as) its value. The members are listed in
    `REASONS`' order; everything else about a reason is its `Reason` entry there.
    """

    INVALID_QUESTION = "invalid_question"
    UNCLEAR_FOLLOW_UP = "unclear_follow_up"
    EMPTY_RETRIEVAL = "empty_retrieval"
    INSUFFICIENT_CONTEXT = "insufficient_context"
    OUT_OF_SCOPE = "out_of_scope"
    SELECTED_TEXT_INSUFFICIENT = "selected_text_insufficient"
    STORE_UNAVAILABLE = "store_unavailable"
    GENERATION_ERROR = "generation_error"
    MISSING_CITATIONS = "missing_citations"
    INVALID_CITATIONS = "invalid_citations"
    PROHIBITED_PHRASING = "prohibited_phrasing"
    PROMPT_LEAK = "prompt_leak"
    HALLUCINATION_DETECTED = "hallucination_detected"
    UNGROUNDED_ANSWER = "ungrounded_answer"
    LOW_CONFIDENCE = "low_confidence"
    QUESTION_NOT_ANSWERED = "question_not_answered"

    @property
    def node(self) -> str:
        """Return the id of the terminal node that refuses with this reason."""
        return f"refuse_{self.value}"

    @property
    def spec(self) -> Reason:
        """Return this reason's entry in `REASONS`."""
        return REASONS[self]


Group = Literal["lack of context", "out of scope", "selection", "input", "operational",
                "generation quality"]
"""What a refusal says about the documents, for the audit-log analytics."""
GROUPS: tuple[Group, ...] = ("lack of context", "out of scope", "selection", "input",
                             "operational", "generation quality")


@dataclass(frozen=True)
class Reason:
    """One refusal reason: who fires it and how its refusal is reported."""

    gates: tuple[str, ...]
    """The graph nodes whose verdict may name it (a gate that fails routes to `reason.node`)."""
    group: Group
    """Its analytics group (textbound.quality.analytics counts refusals by it)."""
    suggests: bool = True
    """The refusal offers up to three ready-to-send questions about the nearest sections."""
    detail: str | None = None
    """The diagnostics key under which the failing verdict's `detail` is reported, if any."""
    judges_evidence: bool = True
    """False for a refusal decided before or beside the evidence (bad input, a course's excluded
    topics): evaluation and calibration leave it out of the gate's figures."""
    confidence: Literal["insufficient"] = "insufficient"
    """The response's confidence_level: a refusal never claims any."""
    retry_later: bool = False
    """The refusal is temporary: the HTTP server answers 503 with Retry-After instead of 200."""


_GROUNDING = ("validate_grounding",)
R = RefusalReason
REASONS: dict[RefusalReason, Reason] = {
    R.INVALID_QUESTION: Reason(("check_question",), "input", suggests=False, detail="problem",
                               judges_evidence=False),
    R.UNCLEAR_FOLLOW_UP: Reason(("check_question",), "input", suggests=False, detail="follow_up",
                                judges_evidence=False),
    R.EMPTY_RETRIEVAL: Reason(("score_gate",), "lack of context"),
    R.INSUFFICIENT_CONTEXT: Reason(("score_gate", "check_answerable"), "lack of context"),
    R.OUT_OF_SCOPE: Reason(("scope_classify",), "out of scope", detail="out_of_scope",
                           judges_evidence=False),
    R.SELECTED_TEXT_INSUFFICIENT: Reason(("select_passage", "check_answerable",
                                          "validate_grounding"), "selection"),
    R.STORE_UNAVAILABLE: Reason(("retrieve", "describe_coverage"), "operational", suggests=False,
                                detail="error", retry_later=True),
    R.GENERATION_ERROR: Reason(("generate",), "operational", detail="error"),
    R.MISSING_CITATIONS: Reason(_GROUNDING, "generation quality"),
    R.INVALID_CITATIONS: Reason(_GROUNDING, "generation quality"),
    R.PROHIBITED_PHRASING: Reason(_GROUNDING, "generation quality"),
    R.PROMPT_LEAK: Reason(_GROUNDING, "generation quality"),
    R.HALLUCINATION_DETECTED: Reason(_GROUNDING, "lack of context"),
    R.UNGROUNDED_ANSWER: Reason(_GROUNDING, "lack of context"),
    R.LOW_CONFIDENCE: Reason(_GROUNDING, "lack of context"),
    R.QUESTION_NOT_ANSWERED: Reason(_GROUNDING, "lack of context"),
}
"""Every reason, in the order the reader page and the README list them."""
del R

THREADS_DOWN = RefusalReason.STORE_UNAVAILABLE
"""The reason the HTTP server refuses a turn with when its conversation store (SQLite or
PostgreSQL) cannot be read or written: no node can run, so no gate fires it; it is temporary
(503, Retry-After) as the vector store's outage is (textbound/serving/server/_turns.py)."""


def fired_by(*gates: str) -> list[RefusalReason]:
    """Return the reasons the named gates may fire, in table order: their refusal edges."""
    return [r for r, spec in REASONS.items() if set(spec.gates) & set(gates)]


def declared_for(gate: str, reason: RefusalReason) -> bool:
    """Return whether the table lets `gate` fire `reason`."""
    return gate in REASONS[reason].gates


def retry_later(reason: str | None) -> bool:
    """Return whether a response refused with `reason` is temporary (the server answers 503)."""
    return any(reason == r and spec.retry_later for r, spec in REASONS.items())


def judges_evidence(path: str | None) -> bool:
    """Return False when a response's diagnostics path is a refusal that does not judge evidence.

    Evaluation and calibration use it to leave those responses out of the gate's figures.
    """
    return not any(path == r.node and not spec.judges_evidence for r, spec in REASONS.items())
