"""Refusal terminals: one node per reason, a fixed message from prompts/, and no model call.

What a refusal offers and reports comes from its reason's entry in graph/reasons.py and from the
failed verdict that sent the run here; nothing here names a reason. This module imports no chat
model and calls none; tests run every refusal with a chat model that raises if it is touched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

import prompts
from graph.context import RunContext
from graph.state import RefusalReason, State, Verdict, failure
from nodes._common import Reply, timed
from textbound.answer.suggestions import (
    detected_topic,
    section_suggestions,
    suggestion_question,
)
from textbound.seams import ProfileSource

__all__ = ["make_refusal_node", "refusal", "suggestion_question", "suggestions_for",
           "detected_topic"]
# the topic and the suggested questions come from textbound/answer/suggestions.py; their names
# stay importable here


def suggestions_for(state: State, limit: int = 3) -> list[str]:
    """Return up to `limit` questions about the sections nearest the question."""
    return section_suggestions(state.get("chunks") or [], limit)


def _message(reason: RefusalReason, state: State, tun: RunContext, profiles: ProfileSource,
             collection: str | None, found: Verdict | None) -> str:
    if found is not None and found["message"]:
        # the gate chose the message: the usual advice would not help (nothing ingested, no
        # chat model), so it says what would, in every refusal style
        template = prompts.refusal_variant(found["message"])
        names = f"the collection {collection!r}" if collection else "this collection"
        return template.format(**{k: {"collection": names}[k]
                                  for k in prompts.placeholders(template)})
    if tun.refusal_style == "standard":
        return prompts.standard_refusal()
    scope = profiles.current()
    gate = state.get("gate")
    unknown = gate.get("unknown_names") if gate else None
    topic = state.get("scope")
    problem = state.get("input_verdict")
    values = {
        **scope.values(),
        # a name the collection never mentions is the topic it does not cover
        "detected_topic": " and ".join(unknown or [])
        or detected_topic(str(state.get("question") or "")),
        "out_of_scope_topic": (topic["topic"] if topic else None) or "this topic",
        "problem": (problem["problem"] if problem else None) or "it is not a question",
    }
    template = prompts.refusal_template(reason.value)
    return template.format(**{k: values[k] for k in prompts.placeholders(template)})


def refusal(reason: RefusalReason, state: State, tun: RunContext, profiles: ProfileSource,
            reply: Reply, *, node: str | None = None) -> dict[str, Any]:
    """Build the refusal response for `reason`: its fixed message, suggestions and diagnostics.

    The terminal nodes are this with `node` left as `reason.node`; a node that must refuse in
    place of its own reply (describe_coverage with the store down) passes its own name.
    """
    spec = reason.spec
    found = failure(state)
    if found is not None and found["reason"] is not reason:
        found = None  # not sent here by a failed verdict: report no gate's detail
    suggestions = suggestions_for(state) if spec.suggests else []
    answer = _message(reason, state, tun, profiles, reply.collection, found)
    if suggestions:
        answer += "\n\n" + prompts.suggestions_template().format(
            suggestions="\n".join(f"- {q}" for q in suggestions))
    extra: dict[str, Any] = {}
    if spec.detail is not None:
        extra[spec.detail] = found["detail"] if found is not None else None
    if found is not None and found["message"]:
        extra["error_kind"] = found["message"]
    return reply(state, tun, node=node or reason.node, answer=answer,
                 refusal_reason=reason.value, suggestions=suggestions,
                 confidence=spec.confidence, extra=extra)


def make_refusal_node(reason: RefusalReason) -> Callable[..., dict[str, Any]]:
    """Return the terminal node `reason.node` (`refuse_<reason>`)."""

    def refuse(state: State, runtime: Runtime[RunContext], *, profiles: ProfileSource,
               reply: Reply) -> dict[str, Any]:
        return refusal(reason, state, runtime.context, profiles, reply)

    refuse.__name__ = refuse.__qualname__ = reason.node
    refuse.__doc__ = f"Refuse with reason {reason.value!r} and its message from prompts/."
    return timed(refuse)
