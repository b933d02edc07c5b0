"""check_question: clean the input and decide what kind of request this is."""

from __future__ import annotations

import re
import time
from typing import Any, cast

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import TURN_KEYS, RefusalReason, State, verdict
from nodes._common import timed
from textbound.conversation.rewrite import follow_up_cue, rewrite
from textbound.seams import ProfileSource
from textbound.text import clean_text

__all__ = ["check_question"]

def _problem(text: Any, what: str, limit: int) -> str | None:
    if not isinstance(text, str):
        return f"the {what} must be text, not {type(text).__name__}"
    if "\x00" in text:
        return f"the {what} contains binary data (NUL bytes)"
    if len(text) > limit:
        return f"the {what} is {len(text):,} characters long; the limit is {limit:,}"
    cleaned = clean_text(text)
    if not cleaned.strip():
        return f"the {what} is empty"
    controls = len(text) - len(cleaned)
    if controls > max(8, len(text) // 10):
        return f"the {what} is mostly control characters"
    if "\ufffd" in cleaned and cleaned.count("\ufffd") > max(3, len(cleaned) // 20):
        return f"the {what} looks like binary data decoded as text"
    if not re.search(r"\w", cleaned):
        return f"the {what} has no words"
    return None


@timed
def check_question(
    state: State, runtime: Runtime[RunContext], *, profiles: ProfileSource,
) -> dict[str, Any]:
    """Clean the run's input once, for every node after it.

    Refuses empty, oversized or binary input, a run whose own settings were rejected at the
    graph's entry (`RunContext.problem`), and a follow-up ("why?", "tell me more") with no
    earlier turn to follow; routes greetings and coverage questions.
    """
    started_at = time.time()
    tun = runtime.context
    problem = tun.problem
    question = state.get("question")
    selected = state.get("selected_text")
    if problem is None:
        problem = _problem(question, "question", tun.max_question_chars)
    if problem is None and selected is not None and not (isinstance(selected, str)
                                                         and not selected.strip()):
        problem = _problem(selected, "selected text", tun.max_selected_text_chars)
    # a thread's state outlives a run: this run starts from none of the last one's findings
    update: dict[str, Any] = {"started_at": started_at, **dict.fromkeys(TURN_KEYS)}
    figures = {"question_chars": float(len(question))} if isinstance(question, str) else {}
    if isinstance(question, str):  # the audit line records it cleaned, even when refused
        update["clean_question"] = clean_text(question).strip()
    if problem is not None:
        update["input_verdict"] = {"kind": "invalid", "problem": problem}
        update["verdicts"] = [verdict(
            "check_question", reason=RefusalReason.INVALID_QUESTION, figures=figures,
            threshold=float(tun.max_question_chars), detail=problem)]
        return update
    q = update["clean_question"]
    update["clean_selected_text"] = clean_text(selected) if isinstance(selected, str) else ""
    scope = profiles.current()
    if isinstance(selected, str) and selected.strip():
        kind = "selected"
    elif any(p.search(q) for p in scope.greetings):
        kind = "greeting"
    elif any(p.search(q) for p in scope.coverage_questions):
        kind = "coverage"
    else:
        kind = "question"
    update["input_verdict"] = {"kind": kind, "problem": None}
    # "why?", "tell me more" with no earlier turn to follow: retrieval would answer it from
    # whatever passage the bare words match, so ask what it is about instead
    cue = follow_up_cue(q) if kind == "question" else None
    history = list(state.get("history") or []) if tun.thread_id else []
    if cue is not None and not rewrite(q, cast(list[dict[str, Any]], history)).rewritten:
        update["verdicts"] = [verdict(
            "check_question", reason=RefusalReason.UNCLEAR_FOLLOW_UP, figures=figures,
            threshold=float(tun.max_question_chars), detail=cue)]
        return update
    update["verdicts"] = [verdict("check_question", figures=figures,
                                  threshold=float(tun.max_question_chars), detail=kind)]
    return update
