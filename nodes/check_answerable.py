"""check_answerable: ask the answerability reader whether the best evidence answers the question.

Retrieval scores say whether the question's *topic* is in the documents; a near-miss question
("When did the Normans invade Wales?" against a paragraph about Normandy) retrieves its paragraph
as well as an answerable one. The reader reads the question against the top
`answerability_passages` evidence chunks (in selected-text mode, the whole selection as one
passage, id "selection") and gives each the probability that it answers, with the best answer
span (and the best evidence chunk printing a literal of the question that none of those
prints: `read_passages`); with a second head (`head.json`) the question's probability is its
verdict, except on a selection. Below `answerable_threshold` the router refuses. When it weighs
the reader into the gate score (`weights["reader"]`), the calibration's verdict also completes
that sum (the retrieval score plus the weighted log-odds) and refuses below its threshold.

When the question plainly asks for a kind of value (a price, a speed, a year, a count, ...: see
textbound/answer/answer_type.py) and the reader's span holds none, the verdict fails too
(`answer_type`): a confident "67" for a price question is a number the passage has, not the answer.

The verdict carries the sentence holding the span of the chunk the shipped head reads best, for
the extractive generator to lead with. The same input always gives the same verdict.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import AnswerabilityVerdict, RefusalReason, State, verdict
from nodes._common import analysis_of, question_of, selection_of, timed
from textbound.answer import reading
from textbound.answer.answer_type import span_has_type
from textbound.answer.answerability import (
    ReaderSlot,
    best_reading,
    read_passages,
    sentence_holding,
    top_passages,
)
from textbound.answer.gate_calibration import reader_logit
from textbound.errors import SetupError

__all__ = ["check_answerable", "SELECTION_ID", "passages_to_read", "sentence_holding"]

SELECTION_ID = "selection"
"""The passage id of the whole selection in selected-text mode."""


def passages_to_read(state: State, n: int) -> list[tuple[str, str]]:
    """Return the (id, text) passages the reader reads: the top-n evidence, or the selection."""
    if state["input_verdict"]["kind"] == "selected":
        text = selection_of(state)
        return [(SELECTION_ID, text)] if text.strip() else []
    return top_passages(state.get("evidence") or [], n)


def _verdict(threshold: float, **values: Any) -> AnswerabilityVerdict:
    verdict: AnswerabilityVerdict = {
        "passed": False, "skipped": False, "score": None, "threshold": threshold,
        "chunk_id": None, "span": None, "span_text": "", "sentence": None, "scores": {},
        "reader": None, "gate_score": None, "gate_threshold": None, "answer_type": None,
    }
    verdict.update(values)  # type: ignore[typeddict-item]
    return verdict


def _reading(state: State, tun: RunContext, readers: ReaderSlot) -> AnswerabilityVerdict:
    """Read the best passages with the reader; return what it found."""
    threshold = tun.answerable_threshold
    if not tun.answerability:
        return _verdict(threshold, passed=True, skipped=True)
    try:
        reader = readers.get()
    except SetupError as exc:
        # the run asked for the check and it cannot run: fail closed, saying why
        return _verdict(threshold, error=str(exc))
    passages = passages_to_read(state, tun.answerability_passages)
    question = question_of(state)
    selected = state["input_verdict"]["kind"] == "selected"  # then the selection is all
    readings, passages = read_passages(reader, question, passages, [] if selected else (
        state.get("evidence") or []), analysis_of(state)["literals"])
    best = best_reading(readings)
    if best is None:
        return _verdict(threshold, reader=reader.name)
    # a second head's verdict (fitted on retrieved passages: not on a selection); span: shipped
    score = round(max(float(r.score if selected else r.answers) for r in readings), 6)
    passed = score >= threshold
    combined = combined_threshold = None
    gate = tun.gate
    if gate.reader_weight > 0:
        # the calibration weighs the reader's vote into the gate score: complete the sum
        combined_threshold = gate.selection_threshold if selected else gate.answer_threshold
        gate_verdict = state.get("gate")
        features = gate_verdict["features"] if gate_verdict else {}
        retrieval = float(features.get("gate_score", 0.0))
        combined = round(retrieval + gate.reader_weight * reader_logit(score), 4)
        passed = passed and combined >= combined_threshold
    span = sentence = None
    answer_type = None
    if best.span_start is not None and best.span_end is not None:
        span = [int(best.span_start), int(best.span_end)]
        text = dict(passages)[best.chunk_id]
        held = sentence_holding(text, span[0], span[1])
        sentence = list(held) if held is not None else None
        asked = reading.answer_type(analysis_of(state))
        if asked is not None:
            found = span_has_type(asked, text, span[0], span[1], question)
            answer_type = {"expected": asked.name, "found": found}
            passed = passed and found
    return _verdict(
        threshold,
        passed=passed,
        score=score,
        span_score=round(float(best.score), 6),
        chunk_id=best.chunk_id,
        span=span,
        span_text=best.span_text if span is not None else "",
        sentence=sentence,
        scores={r.chunk_id: round(float(r.score), 6) for r in readings},
        reader=reader.name,
        gate_score=combined,
        gate_threshold=combined_threshold,
        answer_type=answer_type,
    )


@timed
def check_answerable(state: State, runtime: Runtime[RunContext], *, readers: ReaderSlot
                     ) -> dict[str, Any]:
    """Read the best passages with the reader; write its reading and the verdict."""
    reading = _reading(state, runtime.context, readers)
    passed_checks: list[str] = []
    failed_checks: list[str] = []
    if not reading["skipped"]:
        (passed_checks if reading["passed"] else failed_checks).append("answerable")
        typed = reading["answer_type"]
        if typed:  # the question asked for a kind of value: was it in the reader's span?
            (passed_checks if typed.get("found") else failed_checks).append("answer_type")
    reason = None
    if not (reading["passed"] or reading["skipped"]):
        selected = state["input_verdict"]["kind"] == "selected"
        reason = (RefusalReason.SELECTED_TEXT_INSUFFICIENT if selected
                  else RefusalReason.INSUFFICIENT_CONTEXT)
    figures = {"score": reading["score"]} if reading["score"] is not None else {}
    if reading["gate_score"] is not None:
        figures["gate_score"] = reading["gate_score"]
    return {"answerability": reading, "verdicts": [verdict(
        "check_answerable", reason=reason, figures=figures, threshold=reading["threshold"],
        passed_checks=passed_checks, failed_checks=failed_checks, detail=reading.get("error"))]}
