"""Fixed replies that need no retrieval and no model: greetings and "what do you cover?"."""

from __future__ import annotations

from typing import Any, cast

from langgraph.runtime import Runtime

import prompts
from graph.context import RunContext
from graph.state import RefusalReason, State, verdict
from nodes._common import Reply, timed
from nodes.refuse import refusal
from textbound.documents.store import Store
from textbound.errors import NotIngestedError, SetupError, StoreUnavailableError
from textbound.seams import ProfileSource

__all__ = ["greet", "describe_coverage"]


@timed
def greet(state: State, runtime: Runtime[RunContext], *, profiles: ProfileSource, reply: Reply
          ) -> dict[str, Any]:
    """Answer a greeting or thanks with the course profile's greeting (seed 003's edge case)."""
    return reply(state, runtime.context, node="greet", answer=profiles.current().greeting_text(),
                 refusal_reason=None, confidence="high", extra={"reply": "greeting"})


@timed
def describe_coverage(state: State, runtime: Runtime[RunContext], *, store: Store,
                      profiles: ProfileSource, reply: Reply) -> dict[str, Any]:
    """Answer "what do you cover?" from the collection's own chapter and section titles.

    A collection with no documents yet gets the fixed "nothing ingested" reply; a store that
    cannot be read now is a store_unavailable refusal, as it is for a question, never a claim
    that nothing was ingested.
    """
    try:
        toc = store.table_of_contents() if store.exists() else []
    except NotIngestedError:
        toc = []
    except (StoreUnavailableError, SetupError) as exc:
        judged = verdict("describe_coverage", reason=RefusalReason.STORE_UNAVAILABLE,
                         detail=str(exc),
                         message="not_ingested" if NotIngestedError.describes(str(exc)) else None)
        failed = cast(State, {**state, "verdicts": [*state.get("verdicts", []), judged]})
        return {**refusal(RefusalReason.STORE_UNAVAILABLE, failed, runtime.context, profiles,
                          reply, node="describe_coverage"), "retrieval_error": str(exc),
                "verdicts": [judged]}
    if not toc:
        return reply(state, runtime.context, node="describe_coverage",
                     answer=prompts.reply_template("coverage_empty"), refusal_reason=None,
                     confidence="high", extra={"reply": "coverage"})
    lines = []
    shown = toc[:50]
    for doc in shown:
        lines.append(f"- {doc['title']}")
        lines.extend(f"  - {s}" for s in doc["sections"][:20])
    if len(toc) > len(shown):
        lines.append(f"- ... and {len(toc) - len(shown)} more documents")
    text = prompts.reply_template("coverage").format(
        course_name=profiles.current().name, n_documents=len(toc),
        table_of_contents="\n".join(lines))
    return reply(state, runtime.context, node="describe_coverage", answer=text, refusal_reason=None,
                 confidence="high", extra={"reply": "coverage", "documents": len(toc)})
