"""Refusal terminals: one node per reason, a fixed message from prompts/, and no model call.

What a refusal offers and reports comes from its reason's entry in graph/reasons.py and from the
failed verdict that sent the run here; nothing here names a reason. This module imports no chat
model and calls none; tests run every refusal with a chat model that raises if it is touched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

import prompts
from graph.context import RunContext
from graph.state import RefusalReason, State, Verdict, failure
from nodes._common import Reply, timed
from textbound.seams import ProfileSource

__all__ = ["make_refusal_node", "refusal", "suggestion_question", "suggestions_for",
           "detected_topic"]

_GENERIC_SECTIONS = {"summary", "key terms", "introduction", "overview", "exercises",
                     "further reading", "selected text"}
SUGGESTION_FLOOR = 0.2
"""Raw cosine a chunk needs before its section is offered as a suggestion."""

_LEAD = re.compile(
    r"^\s*(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:tell me|explain|describe|"
    r"what(?:'s| is| are| was| were)?|how (?:do|does|did|can|could|should|to)(?: i| you| we)?|"
    r"why (?:is|are|do|does|did)|who (?:is|was|are)|when (?:is|was|did)|where (?:is|are|do|can)|"
    r"is|are|do|does|can|could|should|which)\s+(?:about\s+)?",
    re.I,
)


def detected_topic(question: str) -> str:
    """Return the question's subject for seed 000's "information on {detected_topic}"."""
    topic = _LEAD.sub("", question.strip()).strip().rstrip("?.! ")
    topic = re.sub(r"\s+", " ", topic)
    if len(topic) > 80:
        topic = topic[:77].rsplit(" ", 1)[0] + "..."
    return topic or "this topic"


_NUMBERING = re.compile(
    r"^\s*(?:(?:chapter|part|section|unit|lesson|module)\s+[\w.]+\s*[:.\-\u2013\u2014]?\s*"
    r"|\d+(?:\.\d+)*\.?\s+)", re.I)
_ASKS = re.compile(r"^(?:what|why|how|when|where|who|which|is|are|can|do|does|should)\b", re.I)


def suggestion_question(title: str) -> str:
    """Turn a section title into a question a reader can send as it is.

    "What Is ROS 2?" stays a question (not "Tell me about What Is ROS 2?"), numbering such as
    "Chapter 1:" is dropped, and a sentence-case title loses its capital inside the sentence.
    """
    topic = _NUMBERING.sub("", title).strip() or title.strip()
    if topic.endswith("?"):
        return topic
    if _ASKS.match(topic):
        return topic.rstrip(".!:") + "?"
    words = topic.split()
    sentence_case = len(words) > 1 and all(w.islower() for w in words[1:] if w.isalpha())
    if sentence_case and words[0][:1].isupper() and words[0][1:].islower():
        topic = topic[0].lower() + topic[1:]
    return f"Tell me about {topic.rstrip('.!:')}."


def suggestions_for(state: State, limit: int = 3) -> list[str]:
    """Return up to `limit` questions about the sections nearest the question.

    Seed 004's planned enhancement: each is a ready-to-send question built from a section title.
    """
    out: list[str] = []
    for c in sorted(state.get("chunks") or [], key=lambda c: -c["score"]):
        if c["score"] < SUGGESTION_FLOOR:
            break
        path = c["metadata"].get("heading_path") or []
        title = str(path[-1]) if path else ""
        if not title or title.lower() in _GENERIC_SECTIONS:
            continue
        question = suggestion_question(title)
        if question in out:
            continue
        out.append(question)
        if len(out) == limit:
            break
    return out


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
