"""The reader reads the answer itself when it was unsure of the passages (validate_grounding)."""

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from graph.builder import build_graph
from textbound.answer.answerability import FakeReader, Reading, answer_read

from ..conftest import make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
QUESTION = "What is a topic?"


class ByPassage(FakeReader):
    """Scores every retrieved passage `passages`, and the answer read on its own `answer`."""

    def __init__(self, passages: float, answer: float) -> None:
        super().__init__(score=lambda q, t: passages)
        self.answer = answer

    def read(self, question: str, passages: Sequence[tuple[str, str]]) -> list[Reading]:
        out = super().read(question, passages)
        return [dataclasses.replace(r, score=self.answer) if r.chunk_id == "answer" else r
                for r in out]


@pytest.fixture
def ask(tmp_path, embeddings, fake_store, exploding_chat):
    """Ask QUESTION of the four-chunk book with a reader that is sure or unsure of it."""
    data = {**json.loads(CALIBRATION.read_text()), "answerable_threshold": 0.1}
    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps(data))

    def _ask(passages: float, answer: float, **context):
        reader = ByPassage(passages, answer)
        settings = make_settings(tmp_path, answerability=True, calibration_file=calibration,
                                 audit_log=tmp_path / "audit.jsonl")
        graph = build_graph(settings=settings, embeddings=embeddings, store=fake_store,
                            chat_model=exploding_chat, reader=reader)
        out = graph.invoke({"question": QUESTION, "selected_text": None}, context=context)
        return out, [ids for _, ids in reader.calls]

    return _ask


def test_an_answer_that_reads_as_no_answer_is_refused_when_the_reader_was_unsure(ask):
    out, calls = ask(passages=0.3, answer=0.001)
    assert out["refusal_reason"] == "question_not_answered"
    diag = out["diagnostics"]
    assert "answer_read" in diag["failed_checks"] and "answerable" in diag["passed_checks"]
    assert diag["grounding"]["answer_read"] == 0.001
    assert calls[-1] == ["answer"]


def test_an_answer_that_reads_as_an_answer_is_released(ask):
    out, calls = ask(passages=0.3, answer=0.4)
    assert not out["was_refusal"]
    assert "answer_read" in out["diagnostics"]["passed_checks"]
    assert out["diagnostics"]["grounding"]["answer_read"] == 0.4
    assert calls[-1] == ["answer"]


def test_a_sure_reader_does_not_read_the_answer_again(ask):
    out, calls = ask(passages=0.9, answer=0.001)
    assert not out["was_refusal"]
    assert ["answer"] not in calls
    assert "answer_read" not in out["diagnostics"]["passed_checks"]


def test_threshold_zero_turns_the_check_off(ask):
    out, calls = ask(passages=0.3, answer=0.001, answer_read_threshold=0.0)
    assert out["refusal_reason"] is None and not out["was_refusal"]
    assert ["answer"] not in calls


def test_an_empty_answer_reads_as_no_answer_without_calling_the_reader():
    reader = FakeReader(score=lambda q, t: 1.0)
    assert answer_read(reader, QUESTION, "  ") == 0.0 and reader.calls == []
    assert answer_read(reader, QUESTION, "A topic is a named bus.") == 1.0
