"""generate: write a draft answer from the evidence, with a citation for every sentence.

Two generators behind one seam, chosen by the `generator` tunable:

* extractive (default): picks the evidence sentences that best answer the question; every
  sentence is verbatim from a chunk, so nothing can be invented. No model, no key
  (textbound/answer/compose.py).
* chat: a LangChain chat model with structured output (sentences with chunk ids, and a
  confidence), seed 001's system prompt, temperature 0, LangChain's `with_retry`, one deadline for
  all attempts and a bounded number of calls in flight (textbound/answer/chat_draft.py). Any
  failure becomes `generation_error`; the user never sees an exception.

The draft goes to validate_grounding; nothing of it reaches a caller before that passes it.
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import RefusalReason, State
from graph.state import verdict as make_verdict
from nodes._common import analysis_of, question_of, timed
from textbound.answer.candidates import frames
from textbound.answer.chat_draft import CitedSentence, GroundedAnswer, chat_draft
from textbound.answer.chat_units import chat_units
from textbound.answer.compose import answer_anchor, extractive_draft
from textbound.answer.term_weights import term_stats, weigher
from textbound.documents.store import SentenceVectors, Store
from textbound.errors import NO_CHAT_MODEL
from textbound.providers.chat import ChatClient
from textbound.seams import Embedder, ProfileSource

__all__ = ["generate", "extractive_draft", "answer_anchor", "GroundedAnswer", "CitedSentence"]
# the composition and the chat call live in textbound/answer/; their names stay importable here

log = logging.getLogger("textbound.generate")


@timed
def generate(state: State, runtime: Runtime[RunContext], *, store: Store, embeddings: Embedder,
             chat: ChatClient | None, profiles: ProfileSource) -> dict[str, Any]:
    """Write the draft with the configured generator; a failure is recorded, not raised."""
    tun = runtime.context
    question = question_of(state)
    evidence = state.get("evidence") or []
    if tun.generator == "chat":
        # a reading list or a references section is quoted to nobody: the model never sees it
        # ("The Analects came from the Self-published, IUScholarWorks collection.")
        teaching = [c for c in evidence if not frames(c)] or evidence
        if tun.chat_evidence == "units":
            try:
                teaching = chat_units(question, teaching, embeddings, weigh=weigher(store),
                                      query_vector=state.get("query_vector"),
                                      analysis=analysis_of(state)) or teaching
            except Exception as exc:  # noqa: BLE001 - the passages whole are handed instead
                log.warning("answer units unavailable (%s)", type(exc).__name__)
        draft, error, attempts = chat_draft(question, teaching, chat,
                                             profiles.current().course_title)
        if draft is None:
            failure = f"{error} after {attempts} attempt(s)"
            # no chat model at all: trying again would not help, and the refusal says what would
            message = "no_chat_model" if str(error).startswith(NO_CHAT_MODEL) else None
            return {"draft": None, "generation_error": failure, "verdicts": [make_verdict(
                "generate", reason=RefusalReason.GENERATION_ERROR, detail=failure,
                message=message)]}
        return {"draft": draft, "generation_error": None, "verdicts": [make_verdict("generate")]}
    weigh = weigher(store)
    stored: dict[str, SentenceVectors] = {}
    verdict = state.get("input_verdict")
    selected = verdict is not None and verdict["kind"] == "selected"
    if not selected:  # a selection's sentences are not in the store
        top = sorted(evidence, key=lambda c: -c["score"])
        try:
            stored = store.sentence_vectors([c["chunk_id"] for c in top])
        except Exception as exc:  # noqa: BLE001 - the sentences are embedded here instead
            log.warning("stored sentence vectors unavailable (%s)", type(exc).__name__)
    reader = state.get("answerability")
    stats = term_stats(store)  # the book's command heads: a how-to lead may name a command
    draft = extractive_draft(question, evidence, embeddings, weigh=weigh,
                             query_vector=state.get("query_vector"), stored=stored,
                             anchor=answer_anchor(reader, evidence),
                             analysis=analysis_of(state),
                             heads=frozenset(getattr(stats, "commands", None) or ()))
    return {"draft": draft, "generation_error": None, "verdicts": [make_verdict("generate")]}
