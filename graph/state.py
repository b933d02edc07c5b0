"""The graph's state: a narrow input, verdicts written by gates, and the response contract.

`typing_extensions.TypedDict` because LangServe on Python 3.11 rejects `typing.TypedDict`.
Only `timings` has a reducer: each node adds its own entry.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, NotRequired

from typing_extensions import TypedDict

__all__ = [
    "AnswerabilityVerdict",
    "ChunkDict",
    "Draft",
    "GateVerdict",
    "GroundingVerdict",
    "InputState",
    "InputVerdict",
    "OutputState",
    "RefusalReason",
    "ScopeVerdict",
    "SourceDict",
    "State",
]

ConfidenceLevel = Literal["high", "medium", "low", "insufficient"]


class RefusalReason(StrEnum):
    """Every reason textbound refuses: the one list the graph, prompts, analytics and page read.

    A `str` enum, so a member equals (and serialises as) its value: the response contract's
    `refusal_reason` is the plain value, and comparisons with strings keep working. Each reason
    has a terminal node (`node`), a message and a short label in prompts/refusals.yaml, and an
    analytics category; tests/unit/test_reason_lists.py fails when any of them is missing.
    """

    INVALID_QUESTION = "invalid_question"
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


def merge_timings(left: dict[str, float] | None,
                  right: dict[str, float] | None) -> dict[str, float]:
    """Merge per-node timings (milliseconds)."""
    return {**(left or {}), **(right or {})}


class InputState(TypedDict):
    """What a caller sends."""

    question: str
    selected_text: NotRequired[str | None]
    session_id: NotRequired[str | None]


class ChunkDict(TypedDict):
    """A retrieved (or selected) passage with its raw cosine score."""

    chunk_id: str
    text: str
    score: float
    metadata: dict[str, Any]
    lexical: NotRequired[float]
    rank_score: NotRequired[float]


class SourceDict(TypedDict):
    """A cited passage in the response."""

    chunk_id: str
    score: float
    source: str
    section: str
    citation: int
    start: int | None
    end: int | None
    page: int | None
    highlights: NotRequired[list[list[int]]]
    answer_span: NotRequired[list[int]]
    """[start, end] source offsets of the answerability reader's answer span in this passage."""


class InputVerdict(TypedDict):
    """check_question's verdict."""

    kind: Literal["question", "selected", "greeting", "coverage", "invalid"]
    problem: str | None


class GateVerdict(TypedDict):
    """score_gate's (or select_passage's) verdict on the evidence."""

    passed: bool
    reason: str | None
    """A `RefusalReason` value when the gate failed (empty_retrieval, insufficient_context or
    selected_text_insufficient)."""
    policy: str
    features: dict[str, float]
    evidence_ids: list[str]
    excluded: list[dict[str, Any]]
    warnings: list[str]
    passed_checks: list[str]
    failed_checks: list[str]
    unknown_names: NotRequired[list[str]]
    """The question's names the collection never uses, when they refused it."""


class ScopeVerdict(TypedDict):
    """scope_classify's verdict."""

    in_scope: bool
    topic: str | None
    matched: str | None


class AnswerabilityVerdict(TypedDict):
    """check_answerable's verdict: does any of the best passages answer the question, and where?

    Offsets are characters into the winning chunk's text (for a selection, into the selection).
    """

    passed: bool
    skipped: bool
    """The check did not run (turned off, or no reader); the verdict then never refuses."""
    score: float | None
    """The best passage's probability of answering, in [0, 1]."""
    threshold: float
    chunk_id: str | None
    span: list[int] | None
    """[start, end] of the reader's answer span."""
    span_text: str
    sentence: list[int] | None
    """[start, end] of the sentence in the winning chunk that holds the span."""
    scores: dict[str, float]
    """Each read passage's score, by chunk id."""
    reader: str | None
    gate_score: float | None
    """The gate score with the reader's weighted log-odds added, when the calibration weighs the
    reader (`weights["reader"]`); None otherwise."""
    gate_threshold: float | None
    """The threshold gate_score had to reach (answer_threshold, or selection_threshold for a
    selection); None when the calibration does not weigh the reader."""
    answer_type: dict[str, Any] | None
    """When the question asks for a kind of value (textbound/answer_type.py): {"expected": its
    name, "found": whether the reader's span shows one}; None otherwise."""
    error: NotRequired[str]
    """Why a run that asked for the check could not run it (it then refuses)."""


class DraftSentence(TypedDict):
    """One sentence of a draft with the ids of the chunks it relies on."""

    text: str
    citations: list[str]
    spans: NotRequired[list[list[Any]]]
    """[chunk_id, start, end] of the sentence inside the chunk, when it is verbatim."""


class Draft(TypedDict):
    """generate's output, not shown to anyone until validate_grounding passes it."""

    sentences: list[DraftSentence]
    confidence: float | None
    generator: str
    answer_span: NotRequired[list[Any] | None]
    """[chunk_id, start, end] of the answerability reader's span the first sentence holds."""


class GroundingVerdict(TypedDict):
    """validate_grounding's verdict."""

    passed: bool
    reason: RefusalReason | None
    grounding_score: float
    sentences: list[dict[str, Any]]
    passed_checks: list[str]
    failed_checks: list[str]


class OutputState(TypedDict):
    """The response contract: the same object from the graph, `ask --json` and HTTP."""

    answer: str
    was_refusal: bool
    refusal_reason: str | None
    """A `RefusalReason` value, sent as the plain string."""
    sources: list[SourceDict]
    confidence_level: ConfidenceLevel
    suggestions: list[str]
    diagnostics: dict[str, Any]


class State(InputState, OutputState, total=False):
    """Everything the nodes read and write."""

    started_at: float
    clean_question: str
    """The question with invisible characters dropped and trimmed (check_question)."""
    clean_selected_text: str
    """The selected passage, cleaned the same way; "" without a selection."""
    input_verdict: InputVerdict
    query_vector: list[float]
    chunks: list[ChunkDict]
    retrieval_error: str | None
    gate: GateVerdict
    scope: ScopeVerdict
    answerability: AnswerabilityVerdict
    evidence: list[ChunkDict]
    draft: Draft | None
    generation_error: str | None
    grounding: GroundingVerdict
    timings: Annotated[dict[str, float], merge_timings]
