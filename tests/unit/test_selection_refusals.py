"""Selected-text mode: a draft the selection does not back is refused as the selection's
insufficiency (seed 000), whichever grounding check found it; generation faults keep theirs."""

from pathlib import Path

import pytest
from langgraph.runtime import Runtime

from graph.context import resolve_tunables
from graph.reasons import RefusalReason
from nodes.validate_grounding import validate_grounding
from textbound.answer import reading

from ..conftest import FAKE_CHUNKS, make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
QUESTION = "What is a topic?"
SENTENCE = FAKE_CHUNKS[0][2].split(". ")[0] + "."


def _state(kind: str, draft: dict, asked_attribute: list[str] | None = None) -> dict:
    evidence = [{"chunk_id": cid, "text": text, "score": 0.6,
                 "metadata": {"source": "book.md", "heading_path": ["Book", section]}}
                for cid, section, text in FAKE_CHUNKS[:2]]
    analysis = reading.analyse(QUESTION)
    if asked_attribute is not None:
        analysis = {**analysis, "asked_attribute": asked_attribute}
    return {"question": QUESTION, "clean_question": QUESTION, "chunks": evidence,
            "evidence": evidence, "input_verdict": {"kind": kind, "problem": None},
            "question_analysis": analysis, "draft": draft}


def _validate(state: dict, fake_store, embeddings) -> dict:
    runtime = Runtime(context=resolve_tunables(
        make_settings(Path("/nonexistent"), calibration_file=CALIBRATION)))
    return validate_grounding(state, runtime, store=fake_store, embeddings=embeddings)


def _draft(citations: list[str]) -> dict:
    return {"sentences": [{"text": SENTENCE, "citations": citations}], "confidence": None,
            "generator": "extractive"}


@pytest.mark.parametrize(("kind", "reason"), [
    ("selected", RefusalReason.SELECTED_TEXT_INSUFFICIENT),
    ("question", RefusalReason.QUESTION_NOT_ANSWERED),
])
def test_a_draft_that_does_not_answer_names_the_selection_in_selected_text_mode(
        kind, reason, fake_store, embeddings) -> None:
    """The asked attribute ("where ... born") is missing: not answered, or not in the selection."""
    out = _validate(_state(kind, _draft(["c-topic"]), ["where:born"]), fake_store, embeddings)
    (judged,) = out["verdicts"]
    assert judged["gate"] == "validate_grounding" and not judged["passed"]
    assert judged["reason"] == reason
    # the check that failed, and its own reason, stay in the diagnostics
    assert "asked_attribute" in out["grounding"]["failed_checks"]
    assert out["grounding"]["reason"] == RefusalReason.QUESTION_NOT_ANSWERED


def test_a_generation_fault_keeps_its_reason_in_selected_text_mode(fake_store,
                                                                    embeddings) -> None:
    """A sentence citing nothing is the generator's fault, not the selection's."""
    out = _validate(_state("selected", _draft([])), fake_store, embeddings)
    assert out["verdicts"][0]["reason"] == RefusalReason.MISSING_CITATIONS


def test_a_backed_draft_passes_in_selected_text_mode(fake_store, embeddings) -> None:
    out = _validate(_state("selected", _draft(["c-topic"])), fake_store, embeddings)
    assert out["verdicts"][0]["passed"] and out["verdicts"][0]["reason"] is None
