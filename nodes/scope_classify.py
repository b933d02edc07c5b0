"""scope_classify: refuse questions about topics the course deliberately leaves out (seed 000).

The topics come from the collection's course profile (textbound.profile): the bundled course
keeps seed 000's list; a collection without a profile has none.
"""

from __future__ import annotations

from typing import Any

from graph.state import State
from nodes._common import Services, timed
from nodes.check_question import clean_text

__all__ = ["scope_classify"]


@timed
def scope_classify(state: State, *, services: Services) -> dict[str, Any]:
    """Match the question against the out-of-scope patterns of the course profile in force."""
    hit = services.scope.detect_out_of_scope(clean_text(state["question"]))
    if hit is None:
        return {"scope": {"in_scope": True, "topic": None, "matched": None}}
    topic, matched = hit
    return {"scope": {"in_scope": False, "topic": topic, "matched": matched}}
