"""Pure routers: read the gates' verdicts from state, name the next node.

A router never calls a model or the store, and reads nothing but `State.verdicts`. A failed
verdict sends the run to its reason's terminal (`RefusalReason.node`); a passed one to the next
step. Malformed verdicts raise ValueError.
"""

from __future__ import annotations

from collections.abc import Callable

from graph.state import State, failure

__all__ = ["failure", "route_after_check_question", "route_after_score_gate", "then"]

NEXT_BY_KIND = {"greeting": "greet", "coverage": "describe_coverage",
                "selected": "select_passage", "question": "contextualize"}
"""Where check_question sends each kind of request it let through."""


def then(next_node: str) -> Callable[[State], str]:
    """Return the router that refuses on a failed verdict and otherwise goes to `next_node`."""

    def route(state: State) -> str:
        failed = failure(state)
        return failed["reason"].node if failed is not None and failed["reason"] else next_node

    route.__name__ = f"then_{next_node}"
    route.__doc__ = f"Refuse with the failed verdict's reason, else go to {next_node}."
    return route


def route_after_check_question(state: State) -> str:
    """Refuse invalid input; send the rest down the path its kind needs."""
    failed = failure(state)
    if failed is not None and failed["reason"] is not None:
        return failed["reason"].node
    verdicts = state.get("verdicts") or []
    kind = verdicts[-1]["detail"] if verdicts else None
    if kind not in NEXT_BY_KIND:
        raise ValueError(f"unknown input kind {kind!r}")
    return NEXT_BY_KIND[kind]


def route_after_score_gate(state: State) -> str:
    """Refuse when the retrieved evidence fails the gate (its reason's terminal), else read it.

    scope_classify has run before: a question about an excluded topic never gets here.
    """
    failed = failure(state)
    if failed is None:
        return "check_answerable"
    reason = failed["reason"]
    if failed["gate"] != "score_gate" or reason is None:
        raise ValueError(f"score_gate's router found {failed['gate']}'s failed verdict")
    return reason.node
