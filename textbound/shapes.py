"""The plain shapes the answer logic and the graph's state share: passages, drafts, sources, turns.

They are the values a node hands to the answer logic in textbound/answer/ and gets back, so they
live below both; graph/state.py imports them into the state and re-exports them.
`typing_extensions.TypedDict` because LangServe on Python 3.11 rejects `typing.TypedDict`.
"""

from __future__ import annotations

from typing import Any, NotRequired

from typing_extensions import TypedDict

__all__ = ["AnswerabilityVerdict", "ChunkDict", "Draft", "DraftSentence", "SourceDict", "Turn",
           "TurnSource"]


class ChunkDict(TypedDict):
    """A retrieved (or selected) passage with its raw cosine score."""

    chunk_id: str
    text: str
    score: float
    metadata: dict[str, Any]
    lexical: NotRequired[float]
    rank_score: NotRequired[float]
    fused: NotRequired[float]
    """Its reciprocal-rank-fusion score when retrieval was hybrid (`score` stays raw cosine)."""
    glossary: NotRequired[bool]
    """It holds the book's glossary entry for a term the question asks to define."""


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
    """The PDF file's 1-based page (the reader opens the file at it)."""
    page_label: NotRequired[str | None]
    """The page as the book prints it ("18", "xiv"), else the file's page; what a citation shows."""
    highlights: NotRequired[list[list[int]]]
    answer_span: NotRequired[list[int]]
    """[start, end] source offsets of the answerability reader's answer span in this passage."""


class AnswerabilityVerdict(TypedDict):
    """check_answerable's verdict: does any of the best passages answer the question, and where?

    Offsets are characters into the winning chunk's text (for a selection, into the selection).
    """

    passed: bool
    skipped: bool
    """The check did not run (turned off, or no reader); the verdict then never refuses."""
    score: float | None
    """The probability that the best passages answer, in [0, 1]: the fitted head's best verdict
    when the reader has one, else the best passage's score."""
    span_score: NotRequired[float | None]
    """The score of the passage whose span leads (the shipped head's): what the lead's
    `ANCHOR_MIN_SCORE` reads."""
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
    """When the question asks for a kind of value (textbound/answer/answer_type.py):
    {"expected": its name, "found": whether the reader's span shows one}; None otherwise."""
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


class TurnSource(TypedDict):
    """A passage a turn cited."""

    chunk_id: str
    source: str
    section: str


class Turn(TypedDict):
    """One question and its outcome, as a conversation (thread) remembers it."""

    question: str
    """As asked (cleaned)."""
    standalone: str
    """The standalone question every gate used (the same as `question` unless rewritten)."""
    subject: str | None
    """What the turn was about, carried into the next turn's follow-up
    (textbound/conversation/rewrite.py)."""
    answer: str
    was_refusal: bool
    refusal_reason: str | None
    run_id: str
    sources: list[TurnSource]
