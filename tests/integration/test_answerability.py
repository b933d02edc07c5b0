"""The shipped answerability reader (models/answerability) on the textbook, end to end.

These run only once the model file exists; until then the rest of the suite uses FakeReader or
has the check off (tests/conftest.py).
"""

import dataclasses
import json

import pytest

from graph.builder import build_graph, build_services
from graph.services import ReaderSlot
from textbound.answer.answerability import DEFAULT_MODEL_DIR, load_reader
from textbound.answer.compose import ANCHOR_MIN_SCORE

from ..conftest import CORPUS, make_settings

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not (DEFAULT_MODEL_DIR / "model.onnx").is_file(),
                       reason="the answerability model is not in models/answerability yet"),
]

QUESTIONS = [json.loads(line) for line in (CORPUS / "questions.jsonl").read_text().splitlines()]
TOPIC = ("A topic is a named bus over which nodes exchange messages. Topics implement the "
         "publish-subscribe pattern: publishers and subscribers never know each other.")


@pytest.fixture(scope="module")
def reader():
    return load_reader()


@pytest.fixture(scope="module")
def graph(textbook, reader):
    settings = textbook.settings.model_copy(update={"answerability": True})
    return build_graph(services=dataclasses.replace(textbook, readers=ReaderSlot(reader),
                                                         settings=settings))


def test_shipped_model_loads_at_build_services(tmp_path, embeddings, fake_store):
    """With the setting on (the default) build_services loads the shipped model."""
    s = make_settings(tmp_path, answerability=True)
    services = build_services(settings=s, embeddings=embeddings, store=fake_store)
    assert services.reader is load_reader() and services.reader.name == "onnx"


def test_real_reader_is_deterministic(reader):
    """The same question and passages give the same readings, span and score."""
    passages = [("p1", TOPIC), ("p2", "Gazebo simulates rigid-body physics and sensors.")]
    first = reader.read("What is a topic?", passages)
    assert first == reader.read("What is a topic?", passages)
    assert [r.chunk_id for r in first] == ["p1", "p2"]


def test_real_reader_finds_the_answer_span(reader):
    """An answerable question scores above an unrelated passage; the span lies in the passage."""
    topic, other = reader.read("What pattern do topics implement?", [
        ("p1", TOPIC), ("p2", "Gazebo simulates rigid-body physics and sensors.")])
    assert topic.score > other.score
    assert topic.span_start is not None and TOPIC[topic.span_start:topic.span_end] == \
        topic.span_text
    assert "publish-subscribe" in TOPIC[topic.window_start:topic.window_end]


def test_textbook_answers_keep_a_reader_verdict(graph):
    """Most answerable textbook questions pass the reader, with a span in a cited chunk."""
    answerable = [q for q in QUESTIONS if q["kind"] == "answerable"]
    passed = anchored = shown = 0
    for q in answerable:
        out = graph.invoke({"question": q["question"]})
        verdict = out["diagnostics"]["answerability"]
        if verdict is None:  # refused before the reader (by the score gate)
            assert out["was_refusal"]
            continue
        assert not verdict["skipped"] and verdict["reader"] == "onnx"
        if not out["was_refusal"]:
            passed += 1
            # a sure reader's span leads the answer (a definition or a comparison's two sides
            # may lead instead, and its chunk is then not always cited)
            if verdict["sentence"] is not None and verdict["score"] >= ANCHOR_MIN_SCORE:
                anchored += 1
                span = out["diagnostics"].get("answer_span")
                if span is not None:
                    shown += 1
                    assert span["text"] == verdict["span_text"]
    assert passed / len(answerable) >= 0.8, f"{passed}/{len(answerable)}"
    assert shown >= 0.8 * anchored, f"{shown}/{anchored}"


def test_same_question_gives_the_same_verdict(graph):
    """The whole graph with the real reader is deterministic."""
    q = "What is a ROS 2 topic?"
    first, second = graph.invoke({"question": q}), graph.invoke({"question": q})
    assert first["diagnostics"]["answerability"] == second["diagnostics"]["answerability"]
    assert first["answer"] == second["answer"]


def test_textbook_answerable_pair_passes(graph):
    """A question the book answers passes the reader and leads with the sentence of the span."""
    out = graph.invoke({"question": "What sensors are combined in a 6-axis IMU?"})
    verdict = out["diagnostics"]["answerability"]
    assert not out["was_refusal"], out["answer"]
    assert verdict["passed"] and verdict["score"] >= verdict["threshold"]
    assert "answerable" in out["diagnostics"]["passed_checks"]
    assert "gyroscope" in out["answer"]


def test_textbook_near_miss_pair_is_refused_by_the_reader(graph):
    """Covered topic, missing fact: the gates pass it, the reader refuses it."""
    out = graph.invoke({"question": "What is the price of a 6-axis IMU?"})
    verdict = out["diagnostics"]["answerability"]
    assert out["was_refusal"] and out["refusal_reason"] == "insufficient_context"
    assert "answerable" in out["diagnostics"]["failed_checks"]
    # the reader's score is under its threshold, or its span holds no price (answer_type.py)
    typed = verdict["answer_type"]
    assert verdict["score"] < verdict["threshold"] or (
        typed == {"expected": "money", "found": False}), verdict
    assert out["sources"] == []


def test_selection_that_does_not_answer_is_refused(graph):
    """Selected-text mode: a selection on the topic that does not say it is refused."""
    out = graph.invoke({"question": "Who invented the publish-subscribe pattern for topics?",
                        "selected_text": TOPIC})
    assert out["was_refusal"] and out["refusal_reason"] == "selected_text_insufficient"
    assert "answerable" in out["diagnostics"]["failed_checks"]
    answered = graph.invoke({"question": "What pattern do topics implement?",
                             "selected_text": TOPIC})
    assert not answered["was_refusal"] and "publish-subscribe" in answered["answer"]
