"""The graph's state: a narrow input, the gates' verdicts, what they found, and the contract.

`typing_extensions.TypedDict` because LangServe on Python 3.11 rejects `typing.TypedDict`.
The plain shapes the answer logic shares (passages, drafts, sources, turns) are declared in
textbound/shapes.py and re-exported here. Two keys have reducers: `timings` (each node adds its
own entry) and `verdicts` (each gate appends its `Verdict`). In a conversation (a checkpointed
thread) the state outlives a run: check_question, the first node of every run, starts the turn
afresh (both reducers restart on its entry, and it clears every other per-turn key), and only
`history` carries over.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from langgraph.channels import UntrackedValue
from typing_extensions import TypedDict

from graph.context import RunContext
from graph.reasons import RefusalReason, declared_for
from textbound.answer.reading import QuestionAnalysis
from textbound.shapes import (
    AnswerabilityVerdict,
    ChunkDict,
    Draft,
    DraftSentence,
    SourceDict,
    Turn,
    TurnSource,
)

__all__ = [
    "AnswerabilityVerdict",
    "ChunkDict",
    "Conversation",
    "Draft",
    "DraftSentence",
    "GateEvidence",
    "GroundingVerdict",
    "InputState",
    "InputVerdict",
    "OutputState",
    "QuestionAnalysis",
    "RefusalReason",
    "ScopeVerdict",
    "SourceDict",
    "State",
    "TURN_KEYS",
    "Turn",
    "TurnSource",
    "Verdict",
    "failure",
    "verdict",
]

ConfidenceLevel = Literal["high", "medium", "low", "insufficient"]


class Verdict(TypedDict):
    """What every gate decides, in one shape: routers and the reply read only these.

    Each gate appends exactly one to `State.verdicts`. A failed verdict names its reason, which
    `graph.reasons.REASONS` must declare for that gate (`verdict()` checks it).
    """

    gate: str
    """The node that judged."""
    passed: bool
    reason: RefusalReason | None
    """Why it failed (None when it passed): the refusal the router sends the run to."""
    figures: dict[str, float]
    """The figures it decided on (scores, counts)."""
    threshold: float | None
    """The bar the deciding figure had to reach, when there is one."""
    passed_checks: list[str]
    failed_checks: list[str]
    """The named checks it ran, as the response's diagnostics list them."""
    detail: Any
    """What the refusal reports (under its table entry's `detail` key): the problem, the error,
    the out-of-scope match; for check_question, the kind of request."""
    message: str | None
    """A prompts/refusals.yaml message replacing the reason's own, when the usual advice would
    not help (not_ingested, no_chat_model)."""


def verdict(gate: str, *, reason: RefusalReason | None = None, figures: dict[str, float] | None
            = None, threshold: float | None = None, passed_checks: list[str] | None = None,
            failed_checks: list[str] | None = None, detail: Any = None,
            message: str | None = None) -> Verdict:
    """Return `gate`'s verdict: passed without a reason, failed with one the table declares.

    Raises ValueError for a reason `graph.reasons.REASONS` does not let this gate fire.
    """
    if reason is not None and not declared_for(gate, reason):
        raise ValueError(f"{gate} fires {reason.value!r}, which graph/reasons.py does not "
                         f"declare for it")
    return {"gate": gate, "passed": reason is None, "reason": reason, "figures": figures or {},
            "threshold": threshold, "passed_checks": passed_checks or [],
            "failed_checks": failed_checks or [], "detail": detail, "message": message}


def failure(state: State) -> Verdict | None:
    """Return the verdict the run refuses for, or None when every gate so far passed.

    The graph stops at the first failing step, so there is at most one; should there be more,
    the last wins.
    """
    verdicts: list[Verdict] = state.get("verdicts") or []
    failed = [v for v in verdicts if not v["passed"]]
    if not failed:
        return None
    last = failed[-1]
    reason = last["reason"]
    if not isinstance(reason, RefusalReason) or not declared_for(last["gate"], reason):
        raise ValueError(f"{last['gate']} failed with an undeclared reason {reason!r}")
    return last


FIRST_NODE = "check_question"
"""The node every run starts with: its verdict and timing start a new turn."""


def add_verdicts(left: list[Verdict] | None, right: list[Verdict] | None) -> list[Verdict]:
    """Append a gate's verdicts to the run's; the first node's verdict starts a new run's list."""
    if right and right[0]["gate"] == FIRST_NODE:
        return list(right)
    return [*(left or []), *(right or [])]


def merge_timings(left: dict[str, float] | None,
                  right: dict[str, float] | None) -> dict[str, float]:
    """Merge per-node timings (milliseconds); the first node's timing starts a new run's."""
    if right and FIRST_NODE in right:
        return dict(right)
    return {**(left or {}), **(right or {})}


class InputState(TypedDict):
    """What a caller sends."""

    question: str
    selected_text: NotRequired[str | None]
    session_id: NotRequired[str | None]


class InputVerdict(TypedDict):
    """check_question's verdict."""

    kind: Literal["question", "selected", "greeting", "coverage", "invalid"]
    problem: str | None


class GateEvidence(TypedDict):
    """What score_gate (or select_passage) found in the evidence, beside its `Verdict`."""

    policy: str
    features: dict[str, float]
    evidence_ids: list[str]
    excluded: list[dict[str, Any]]
    warnings: list[str]
    unknown_names: NotRequired[list[str]]
    """The question's names the collection never uses, when they refused it."""


class ScopeVerdict(TypedDict):
    """scope_classify's verdict."""

    in_scope: bool
    topic: str | None
    matched: str | None


class GroundingVerdict(TypedDict):
    """validate_grounding's findings on a draft (its `Verdict` carries passed and reason)."""

    passed: bool
    reason: RefusalReason | None
    grounding_score: float
    sentences: list[dict[str, Any]]
    passed_checks: list[str]
    failed_checks: list[str]


class Conversation(TypedDict):
    """contextualize's reading of the question against the thread's earlier turns."""

    thread_id: str | None
    turn: int
    """This turn's number in the thread (1 for the first, or without a thread)."""
    asked: str
    standalone: str
    rewritten: bool
    rule: str | None
    """The rule that rewrote it (pronoun, why, example, more, and_x, model), None when not."""
    subject: str | None


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
    run_id: str
    """This run's id (a UUID): LangSmith traces use it, feedback names it."""


class State(InputState, OutputState, total=False):
    """Everything the nodes read and write."""

    started_at: float
    clean_question: str
    """The question with invisible characters dropped and trimmed (check_question)."""
    clean_selected_text: str
    """The selected passage, cleaned the same way; "" without a selection."""
    verdicts: Annotated[list[Verdict], add_verdicts]
    """Every gate's verdict, in the order they ran."""
    input_verdict: InputVerdict
    corrected_question: str | None
    """The question with misspelt words corrected (retrieve, textbound/answer/spelling.py); None
    when nothing was corrected. Retrieval and every later check read it."""
    spelling: list[list[str]]
    """[as asked, as corrected] for each corrected word."""
    question_analysis: QuestionAnalysis | None
    """What the question asks for, read once (textbound/answer/reading.py) by retrieve after
    its corrections, or by select_passage; every later check reads it (`analysis_of`)."""
    query_vector: list[float]
    chunks: list[ChunkDict]
    retrieval_error: str | None
    gate: GateEvidence
    scope: ScopeVerdict
    answerability: AnswerabilityVerdict
    evidence: list[ChunkDict]
    draft: Draft | None
    generation_error: str | None
    grounding: GroundingVerdict
    timings: Annotated[dict[str, float], merge_timings]
    conversation: Conversation | None
    """How contextualize read the question (None until it runs, and on paths without it)."""
    history: list[Turn]
    """The thread's earlier turns, oldest first, bounded (the reply appends each run's)."""
    run: Annotated[RunContext, UntrackedValue(RunContext)]
    """This run's context, resolved by the graph's entry (`graph.context.enter_run`) and handed
    to every node as `runtime.context`; an untracked channel, so no checkpoint keeps it."""


_RUN_WIDE = {"history", "started_at", "clean_question", "input_verdict", "verdicts", "timings",
             "run", *InputState.__annotations__, *OutputState.__annotations__}
TURN_KEYS = tuple(k for k in State.__annotations__ if k not in _RUN_WIDE)
"""The keys a run's steps set for themselves: check_question clears them, so a thread's next run
never reads the previous run's (`verdicts` and `timings` restart through their reducers; the
response is written whole by every run, and the reply clears the input's optional keys, so a
thread's next question never inherits this one's selection; `history` carries over)."""
