"""Routers read only the gates' verdicts: a failed one refuses with its reason, else onwards."""

import pytest

from graph import routers
from graph.state import RefusalReason, Verdict, verdict

R = RefusalReason


def _state(*verdicts: Verdict) -> dict:
    return {"verdicts": list(verdicts)}


def test_invalid_input_goes_to_refusal():
    """An invalid input verdict routes to refuse_invalid_question."""
    s = _state(verdict("check_question", reason=R.INVALID_QUESTION, detail="empty"))
    assert routers.route_after_check_question(s) == "refuse_invalid_question"


@pytest.mark.parametrize(("kind", "node"), [("greeting", "greet"),
                                            ("coverage", "describe_coverage"),
                                            ("selected", "select_passage"),
                                            ("question", "contextualize")])
def test_input_kinds_route_to_their_node(kind, node):
    """Each input kind has its own next node."""
    s = _state(verdict("check_question", detail=kind))
    assert routers.route_after_check_question(s) == node


def test_unknown_input_kind_raises():
    """An unknown kind is a bug, not a silent default."""
    with pytest.raises(ValueError, match="unknown input kind"):
        routers.route_after_check_question(_state(verdict("check_question", detail="poem")))


def test_a_failed_verdict_refuses_with_its_reason():
    """A store failure routes to refuse_store_unavailable; a pass goes on."""
    route = routers.then("score_gate")
    down = verdict("retrieve", reason=R.STORE_UNAVAILABLE, detail="down")
    assert route(_state(down)) == "refuse_store_unavailable"
    assert route(_state(verdict("retrieve"))) == "score_gate"


def test_an_excluded_topic_refuses_before_the_evidence_is_judged():
    """scope_classify routes its own refusal; an in-scope question goes on to score_gate."""
    route = routers.then("score_gate")
    scoped = verdict("scope_classify", reason=R.OUT_OF_SCOPE)
    assert route(_state(verdict("retrieve"), scoped)) == "refuse_out_of_scope"
    assert route(_state(verdict("retrieve"), verdict("scope_classify"))) == "score_gate"


@pytest.mark.parametrize("reason", [R.EMPTY_RETRIEVAL, R.INSUFFICIENT_CONTEXT])
def test_score_gate_refuses_with_its_own_reason(reason):
    """A failed score_gate verdict routes to its reason's terminal."""
    s = _state(verdict("scope_classify"), verdict("score_gate", reason=reason))
    assert routers.route_after_score_gate(s) == reason.node


def test_a_passed_score_gate_goes_to_the_reader():
    """Evidence that passes the gate goes to check_answerable."""
    s = _state(verdict("scope_classify"), verdict("score_gate"))
    assert routers.route_after_score_gate(s) == "check_answerable"


def test_score_gates_router_rejects_another_gates_failure():
    """Only score_gate's own failure can reach its router; anything else is a wiring bug."""
    s = _state(verdict("scope_classify", reason=R.OUT_OF_SCOPE))
    with pytest.raises(ValueError, match="scope_classify"):
        routers.route_after_score_gate(s)


def test_a_verdict_cannot_name_a_reason_its_gate_does_not_declare():
    """graph/reasons.py says which gate fires which reason; anything else is refused loudly."""
    with pytest.raises(ValueError, match="does not declare"):
        verdict("score_gate", reason=R.OUT_OF_SCOPE)
    forged: Verdict = {**verdict("retrieve"), "passed": False, "reason": R.PROMPT_LEAK}
    with pytest.raises(ValueError, match="undeclared reason"):
        routers.then("score_gate")(_state(forged))


@pytest.mark.parametrize("reason", [R.INSUFFICIENT_CONTEXT, R.SELECTED_TEXT_INSUFFICIENT])
def test_the_reader_refuses_with_the_reason_its_verdict_names(reason):
    """check_answerable names the reason for the input kind; the router only follows it."""
    route = routers.then("generate")
    assert route(_state(verdict("check_answerable", reason=reason))) == reason.node
    assert route(_state(verdict("check_answerable"))) == "generate"


@pytest.mark.parametrize("reason", [r for r in R if "validate_grounding" in r.spec.gates])
def test_grounding_failures_route_to_their_terminal(reason):
    """Every reason validate_grounding may fire has its own terminal."""
    route = routers.then("release_answer")
    assert route(_state(verdict("validate_grounding", reason=reason))) == reason.node
    assert route(_state(verdict("validate_grounding"))) == "release_answer"


def test_a_generator_failure_refuses():
    """generation_error routes to its terminal; a draft goes to validation."""
    route = routers.then("validate_grounding")
    s = _state(verdict("generate", reason=R.GENERATION_ERROR, detail="timeout"))
    assert route(s) == "refuse_generation_error"
    assert route(_state(verdict("generate"))) == "validate_grounding"


def test_selection_routes():
    """Selected-text mode reads the selection or refuses with selected_text_insufficient."""
    route = routers.then("check_answerable")
    assert route(_state(verdict("select_passage"))) == "check_answerable"
    s = _state(verdict("select_passage", reason=R.SELECTED_TEXT_INSUFFICIENT))
    assert route(s) == "refuse_selected_text_insufficient"
