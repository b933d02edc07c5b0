import pytest

from graph import routers


def test_invalid_input_goes_to_refusal():
    """An invalid verdict routes to refuse_invalid_question."""
    s = {"input_verdict": {"kind": "invalid", "problem": "empty"}}
    assert routers.route_after_check_question(s) == "refuse_invalid_question"


@pytest.mark.parametrize(("kind", "node"), [("greeting", "greet"),
                                            ("coverage", "describe_coverage"),
                                            ("selected", "select_passage"),
                                            ("question", "retrieve")])
def test_input_kinds_route_to_their_node(kind, node):
    """Each input kind has its own next node."""
    assert routers.route_after_check_question({"input_verdict": {"kind": kind}}) == node


def test_unknown_input_kind_raises():
    """An unknown verdict is a bug, not a silent default."""
    with pytest.raises(ValueError, match="unknown input kind"):
        routers.route_after_check_question({"input_verdict": {"kind": "poem"}})


def test_store_failure_refuses():
    """A retrieval error routes to refuse_store_unavailable."""
    assert routers.route_after_retrieve({"retrieval_error": "down"}) == "refuse_store_unavailable"


def test_successful_retrieval_goes_to_gate():
    """Without an error, retrieval goes to the score gate."""
    assert routers.route_after_retrieve({"retrieval_error": None}) == "score_gate"


def _scope(in_scope=True, passed=True, reason=None):
    return {"scope": {"in_scope": in_scope}, "gate": {"passed": passed, "reason": reason}}


def test_out_of_scope_wins_over_gate_failure():
    """Out-of-scope is reported even when the gate also failed (the more specific reason)."""
    s = _scope(in_scope=False, passed=False, reason="empty_retrieval")
    assert routers.route_after_scope_classify(s) == "refuse_out_of_scope"


def test_gate_empty_retrieval_refuses():
    """empty_retrieval routes to its terminal."""
    s = _scope(passed=False, reason="empty_retrieval")
    assert routers.route_after_scope_classify(s) == "refuse_empty_retrieval"


def test_gate_insufficient_context_refuses():
    """insufficient_context routes to its terminal."""
    s = _scope(passed=False, reason="insufficient_context")
    assert routers.route_after_scope_classify(s) == "refuse_insufficient_context"


def test_passed_gate_goes_to_the_reader():
    """A passed, in-scope question goes to the answerability check."""
    assert routers.route_after_scope_classify(_scope()) == "check_answerable"


def test_unknown_gate_reason_raises():
    """An unknown gate reason raises."""
    with pytest.raises(ValueError, match="unknown gate reason"):
        routers.route_after_scope_classify(_scope(passed=False, reason="vibes"))


def test_selection_routes():
    """Selected-text mode answers or refuses with selected_text_insufficient."""
    assert routers.route_after_select_passage({"gate": {"passed": True}}) == "check_answerable"
    assert (routers.route_after_select_passage({"gate": {"passed": False}})
            == "refuse_selected_text_insufficient")


def _read(kind="question", passed=True, skipped=False):
    return {"input_verdict": {"kind": kind},
            "answerability": {"passed": passed, "skipped": skipped}}


def test_answerable_question_generates():
    """A passed answerability verdict goes to generate."""
    assert routers.route_after_check_answerable(_read()) == "generate"


def test_skipped_answerability_generates():
    """A skipped check (turned off) never refuses."""
    assert routers.route_after_check_answerable(_read(passed=False, skipped=True)) == "generate"


def test_unanswerable_question_refuses_insufficient_context():
    """A question no read passage answers is refused as insufficient_context."""
    s = _read(passed=False)
    assert routers.route_after_check_answerable(s) == "refuse_insufficient_context"


def test_unanswerable_selection_refuses_selected_text_insufficient():
    """A selection the reader finds no answer in is refused as selected_text_insufficient."""
    s = _read(kind="selected", passed=False)
    assert routers.route_after_check_answerable(s) == "refuse_selected_text_insufficient"


def test_answerability_unknown_kind_raises():
    """A failed verdict for an input kind that never reaches the reader is a bug."""
    with pytest.raises(ValueError, match="unknown input kind"):
        routers.route_after_check_answerable(_read(kind="greeting", passed=False))


def test_generation_error_refuses():
    """A generator failure routes to refuse_generation_error."""
    assert (routers.route_after_generate({"generation_error": "timeout", "draft": None})
            == "refuse_generation_error")


def test_draft_goes_to_validation():
    """A draft always goes to validation."""
    s = {"generation_error": None, "draft": {"sentences": []}}
    assert routers.route_after_generate(s) == "validate_grounding"


def test_validated_draft_is_released():
    """A passed grounding verdict releases the answer."""
    s = {"grounding": {"passed": True, "reason": None}}
    assert routers.route_after_validate_grounding(s) == "release_answer"


@pytest.mark.parametrize("reason", routers.GROUNDING_REFUSALS)
def test_each_grounding_failure_has_its_terminal(reason):
    """Every grounding reason routes to refuse_<reason>."""
    s = {"grounding": {"passed": False, "reason": reason}}
    assert routers.route_after_validate_grounding(s) == f"refuse_{reason}"


def test_unknown_grounding_reason_raises():
    """An unknown grounding reason raises."""
    with pytest.raises(ValueError, match="unknown grounding reason"):
        routers.route_after_validate_grounding({"grounding": {"passed": False, "reason": "x"}})
