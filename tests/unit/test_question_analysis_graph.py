"""The question is read once a turn, kept in state, and every gate after retrieval reads it."""

from pathlib import Path

import pytest
from langgraph.runtime import Runtime

import nodes.generate
from graph.builder import build_graph
from graph.context import resolve_tunables
from graph.services import ReaderSlot
from nodes.check_answerable import check_answerable
from nodes.generate import generate
from nodes.score_gate import score_gate
from nodes.validate_grounding import validate_grounding
from textbound.answer import reading
from textbound.answer.answerability import FakeReader
from textbound.conversation.threads import memory_saver

from ..conftest import FAKE_CHUNKS, make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
TOPIC = FAKE_CHUNKS[0][2]
GATES = ("retrieve", "score_gate", "check_answerable", "generate", "validate_grounding")


@pytest.fixture
def reads(monkeypatch):
    """Every question `reading.analyse` reads, in order."""
    seen: list[str] = []
    real = reading.analyse

    def spy(question):
        seen.append(question)
        return real(question)

    monkeypatch.setattr(reading, "analyse", spy)
    return seen


@pytest.fixture
def graph(tmp_path, embeddings, fake_store, exploding_chat):
    settings = make_settings(tmp_path, answerability=True, calibration_file=CALIBRATION,
                             audit_log=tmp_path / "audit.jsonl")
    return build_graph(settings=settings, embeddings=embeddings, store=fake_store,
                       chat_model=exploding_chat, reader=FakeReader(score=lambda q, t: 0.9),
                       checkpointer=memory_saver())


def _ask(graph, question, thread="t", **inputs):
    config = {"configurable": {"thread_id": thread}}
    out = graph.invoke({"question": question, **inputs}, config,
                       context={"generator": "extractive"})
    return out, graph.get_state(config).values


def test_a_turn_reads_its_question_once(graph, reads):
    """Through every gate to the answer, one reading, the one the state keeps."""
    out, state = _ask(graph, "What is a topic?")
    assert not out["was_refusal"] and out["answer"].startswith("A topic is a named bus")
    assert set(GATES) <= set(out["diagnostics"]["timings_ms"])
    assert reads == ["What is a topic?"]
    assert state["question_analysis"] == reading.analyse("What is a topic?")


def test_each_turn_of_a_thread_reads_its_own_question(graph, reads):
    """A follow-up is read once, as contextualize made it standalone, not as asked."""
    _ask(graph, "What is a service?")
    out, state = _ask(graph, "is that synchronous?")
    standalone = out["diagnostics"]["conversation"]["standalone"]
    assert standalone != "is that synchronous?"
    assert reads == ["What is a service?", standalone]
    assert state["question_analysis"]["question"] == standalone


def test_a_selection_is_read_once(graph, reads):
    """The selected-text path reads its question once too (select_passage)."""
    out, state = _ask(graph, "What is a topic?", selected_text=TOPIC)
    assert not out["was_refusal"] and "select_passage" in out["diagnostics"]["timings_ms"]
    assert reads == ["What is a topic?"]
    assert state["question_analysis"]["defined_term"] == ["topic"]


def test_a_thread_kept_without_the_analysis_answers(graph, reads):
    """A thread whose last checkpoint holds no analysis (an older version's) answers its next
    question, read once."""
    config = {"configurable": {"thread_id": "old"}}
    _ask(graph, "What is a service?", thread="old")
    graph.update_state(config, {"question_analysis": None})
    assert graph.get_state(config).values["question_analysis"] is None
    out, state = _ask(graph, "What is a topic?", thread="old")
    assert not out["was_refusal"] and out["answer"].startswith("A topic is a named bus")
    assert reads == ["What is a service?", "What is a topic?"]
    assert state["question_analysis"]["question"] == "What is a topic?"


# --- each node reads the analysis in state (a doctored one changes what it finds) ----------

def _state(question, analysis=None, **more):
    evidence = [{"chunk_id": cid, "text": text, "score": 0.6,
                 "metadata": {"source": "book.md", "heading_path": ["Book", section]}}
                for cid, section, text in FAKE_CHUNKS[:2]]
    state = {"question": question, "clean_question": question, "chunks": evidence,
             "evidence": evidence, "input_verdict": {"kind": "question", "problem": None},
             **more}
    if analysis is not None:
        state["question_analysis"] = analysis
    return state


def _runtime(**over):
    settings = make_settings(Path("/nonexistent"), calibration_file=CALIBRATION)
    return Runtime(context=resolve_tunables(settings, configurable=over))


def test_score_gate_reads_the_questions_terms_from_state(fake_store):
    """Coverage is of the analysis's terms; without one, of the question's own."""
    q = "What is a topic?"
    own = score_gate(_state(q), _runtime(), store=fake_store)["gate"]["features"]
    assert own["coverage"] == 1.0
    doctored = {**reading.analyse(q), "terms": ["zeppelin"]}
    read = score_gate(_state(q, doctored), _runtime(), store=fake_store)["gate"]["features"]
    assert read["coverage"] == 0.0


def test_check_answerable_reads_the_answer_type_from_state():
    """The kind of value asked is the analysis's; without one, the question's (none here)."""
    q = "What is a topic?"
    readers = ReaderSlot(FakeReader(score=lambda q, t: 0.9))
    own = check_answerable(_state(q), _runtime(answerability=True), readers=readers)
    assert own["answerability"]["answer_type"] is None
    doctored = {**reading.analyse(q), "answer_type": "year"}
    read = check_answerable(_state(q, doctored), _runtime(answerability=True), readers=readers)
    assert read["answerability"]["answer_type"] == {"expected": "year", "found": False}


def test_validate_grounding_reads_the_asked_attribute_from_state(fake_store, embeddings):
    """The attribute demanded is the analysis's; without one, the question's (none here)."""
    q = "What is a topic?"
    draft = {"sentences": [{"text": TOPIC.split(". ")[0] + ".", "citations": ["c-topic"]}],
             "confidence": None, "generator": "extractive"}
    own = validate_grounding(_state(q, draft=draft), _runtime(), store=fake_store,
                             embeddings=embeddings)
    assert own["grounding"]["passed"]
    doctored = {**reading.analyse(q), "asked_attribute": ["where:born"]}
    read = validate_grounding(_state(q, doctored, draft=draft), _runtime(), store=fake_store,
                              embeddings=embeddings)
    assert "asked_attribute" in read["grounding"]["failed_checks"]


def test_generate_hands_the_state_s_analysis_to_the_composer(monkeypatch, fake_store,
                                                             embeddings):
    """The extractive composer is given the analysis in state, not a reading of its own."""
    given = []
    real = nodes.generate.extractive_draft

    def composer(*args, **kwargs):
        given.append(kwargs.get("analysis"))
        return real(*args, **kwargs)

    monkeypatch.setattr(nodes.generate, "extractive_draft", composer)
    doctored = {**reading.analyse("What is a topic?"), "terms": ["doctored"]}
    out = generate(_state("What is a topic?", doctored), _runtime(generator="extractive"),
                   store=fake_store, embeddings=embeddings, chat=None, profiles=None)
    assert out["draft"]["sentences"] and given == [doctored]
