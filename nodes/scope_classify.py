"""scope_classify: refuse questions about topics the course deliberately leaves out (seed 000).

The topics come from the collection's course profile (textbound.documents.profile): the bundled
course keeps seed 000's list; a collection without a profile has none.
"""

from __future__ import annotations

from typing import Any

from graph.state import RefusalReason, ScopeVerdict, State, verdict
from nodes._common import question_of, timed
from textbound.seams import ProfileSource

__all__ = ["scope_classify"]


@timed
def scope_classify(state: State, *, profiles: ProfileSource) -> dict[str, Any]:
    """Match the question against the out-of-scope patterns of the course profile in force."""
    hit = profiles.current().detect_out_of_scope(question_of(state))
    if hit is None:
        return {"scope": {"in_scope": True, "topic": None, "matched": None},
                "verdicts": [verdict("scope_classify")]}
    topic, matched = hit
    scope: ScopeVerdict = {"in_scope": False, "topic": topic, "matched": matched}
    return {"scope": scope, "verdicts": [verdict(
        "scope_classify", reason=RefusalReason.OUT_OF_SCOPE, detail=scope)]}
