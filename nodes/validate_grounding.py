"""validate_grounding: release a draft only if every sentence is cited and backed by its citations.

The checks are textbound/answer/grounding.py's (citations, prohibited phrasing and prompt leaks,
hallucination markers, support, answer coverage, the asked attribute and answer type, generation
confidence); this node names the refusal reason of the first check that failed, and with
partial_answers drops the unsupported sentences when enough remain. No chat model is called.

Last, when the answerability reader was unsure of the passages (under 0.5), it reads the answer
that passed as a passage of its own (`answer_read`): a draft whose own text reads as no answer
(under `answer_read_threshold`) is refused as question_not_answered. In selected-text mode the
selection is all the evidence: a draft it does not back (a "lack of context" check failed) is
refused as `selected_text_insufficient` (seed 000); the failed check stays in the diagnostics.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import ChunkDict, GroundingVerdict, RefusalReason, State, Verdict
from graph.state import verdict as make_verdict
from nodes._common import analysis_of, question_of, timed
from textbound.answer.answerability import UNSURE, ReaderSlot, answer_read
from textbound.answer.chat_claims import (
    echoes_question,
    entity_mismatches,
    is_abstention,
    prepare_chat_draft,
)
from textbound.answer.evidence import Weigher, uniform
from textbound.answer.grounding import draft_findings
from textbound.answer.reading import QuestionAnalysis
from textbound.answer.term_weights import weigher
from textbound.documents.store import Store
from textbound.seams import Embedder

__all__ = ["validate_grounding", "check_draft", "is_abstention", "entity_mismatches",
           "prepare_chat_draft", "echoes_question"]  # the checks live in textbound/answer/

R = RefusalReason
REASON_OF_CHECK: dict[str, RefusalReason] = {
    "model_abstained": R.QUESTION_NOT_ANSWERED,  # the model said only that the context is silent
    "non_empty": R.UNGROUNDED_ANSWER,
    "citations_present": R.MISSING_CITATIONS,
    "citations_valid": R.INVALID_CITATIONS,
    "prohibited_phrasing": R.PROHIBITED_PHRASING,
    "no_prompt_leak": R.PROMPT_LEAK,
    "hallucination_markers": R.HALLUCINATION_DETECTED,
    "no_question_echo": R.UNGROUNDED_ANSWER,
    "grounding_score": R.UNGROUNDED_ANSWER,
    "answer_coverage": R.QUESTION_NOT_ANSWERED,
    "answer_type": R.QUESTION_NOT_ANSWERED,
    "asked_attribute": R.QUESTION_NOT_ANSWERED,
    "answer_read": R.QUESTION_NOT_ANSWERED,
    "generation_confidence": R.LOW_CONFIDENCE,
}
"""The refusal each grounding check fails with; the first failed check's reason is the verdict's."""
del R


def check_draft(draft: dict[str, Any], evidence: list[ChunkDict], tun: RunContext,
                embeddings: Embedder, question: str | None = None,
                weigh: Weigher = uniform, analysis: QuestionAnalysis | None = None
                ) -> GroundingVerdict:
    """Return draft_findings' verdict, the first failed check's reason ("draft": as checked)."""
    found = draft_findings(draft, evidence, tun, embeddings, question, weigh, analysis)
    reason = REASON_OF_CHECK[found["failed_checks"][0]] if found["failed_checks"] else None
    return {"passed": found["passed"], "reason": reason, **found}  # type: ignore[typeddict-item]


@timed
def validate_grounding(state: State, runtime: Runtime[RunContext], *, store: Store,
                       embeddings: Embedder, readers: ReaderSlot | None = None
                       ) -> dict[str, Any]:
    """Check the draft; with partial_answers, drop unsupported sentences when enough remain."""
    out = _grounded(state, runtime.context, store, embeddings)
    if out["grounding"]["passed"] and readers is not None:
        _read_answer(out, state, runtime.context, readers)
    judged, reason = out["verdicts"][0], out["verdicts"][0]["reason"]
    if state["input_verdict"]["kind"] == "selected" and reason is not None \
            and reason.spec.group == "lack of context":
        out["verdicts"] = [{**judged, "reason": RefusalReason.SELECTED_TEXT_INSUFFICIENT}]
    return out


def _read_answer(out: dict[str, Any], state: State, tun: RunContext, readers: ReaderSlot
                 ) -> None:
    """Refuse, in `out`, a passed draft whose own text the unsure reader reads as no answer."""
    reading: dict[str, Any] = dict(state.get("answerability") or {})
    score = reading.get("score")
    if not tun.answerability or tun.answer_read_threshold <= 0 or reading.get("skipped") \
            or score is None or score >= UNSURE:
        return
    draft: dict[str, Any] = dict(out.get("draft") or state.get("draft") or {})
    text = " ".join(str(s.get("text", "")) for s in draft.get("sentences") or [])
    read = round(answer_read(readers.get(), question_of(state), text), 6)
    found = out["grounding"]
    found["answer_read"] = read
    if read >= tun.answer_read_threshold:
        found["passed_checks"].append("answer_read")
    else:
        found["failed_checks"].append("answer_read")
        found.update(passed=False, reason=RefusalReason.QUESTION_NOT_ANSWERED)
    out["verdicts"] = [_judged(found, tun)]


def _grounded(state: State, tun: RunContext, store: Store, embeddings: Embedder
              ) -> dict[str, Any]:
    """The grounding checks' verdict on the draft (trimmed with partial_answers)."""
    draft = state.get("draft") or {"sentences": [], "confidence": None, "generator": "none"}
    evidence = state.get("evidence") or []
    question = question_of(state)
    analysis = analysis_of(state)
    weigh = weigher(store)
    verdict: dict[str, Any] = dict(
        check_draft(dict(draft), evidence, tun, embeddings, question, weigh, analysis))
    checked = verdict.pop("draft", None) or draft  # split and re-cited, as validated
    if (not verdict["passed"] and tun.partial_answers
            and verdict["reason"] == RefusalReason.UNGROUNDED_ANSWER):
        keep = [s for s, r in zip(checked["sentences"], verdict["sentences"], strict=True)
                if r["supported"]]
        if keep and len(keep) / len(checked["sentences"]) >= 0.5:
            trimmed = {**checked, "sentences": keep}
            again: dict[str, Any] = dict(
                check_draft(trimmed, evidence, tun, embeddings, question, weigh, analysis))
            trimmed = again.pop("draft", None) or trimmed
            if again["passed"]:
                again["passed_checks"].append("partial_answer")
                return {"grounding": again, "draft": trimmed,
                        "verdicts": [_judged(again, tun)]}
    if checked.get("sentences") != draft.get("sentences"):  # split or re-cited
        return {"grounding": verdict, "draft": checked, "verdicts": [_judged(verdict, tun)]}
    return {"grounding": verdict, "verdicts": [_judged(verdict, tun)]}


def _judged(found: dict[str, Any], tun: RunContext) -> Verdict:
    """Return the grounding's findings as the gate's `Verdict`."""
    figures = {"grounding_score": found["grounding_score"]}
    for name in ("answer_coverage", "answer_read"):
        if name in found:
            figures[name] = found[name]
    return make_verdict("validate_grounding", reason=None if found["passed"] else found["reason"],
                        figures=figures, threshold=tun.grounding_threshold,
                        passed_checks=found["passed_checks"],
                        failed_checks=found["failed_checks"])
