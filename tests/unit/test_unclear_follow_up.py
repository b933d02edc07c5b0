"""A follow-up with no conversation to follow ("tell me more", "why?") is asked what it is about."""

import json

import pytest

from graph.builder import build_graph
from graph.reasons import RefusalReason
from textbound import course
from textbound.conversation.rewrite import follow_up_cue
from textbound.conversation.threads import memory_saver

from ..conftest import make_settings


@pytest.fixture
def graph(tmp_path, embeddings, fake_store, exploding_chat):
    settings = make_settings(tmp_path, audit_log=tmp_path / "audit.jsonl")
    return build_graph(settings=settings, embeddings=embeddings, store=fake_store,
                       chat_model=exploding_chat, profile=course.load_profile(),
                       checkpointer=memory_saver())


def ask(graph, question, thread=None):
    config = {"configurable": {"thread_id": thread}} if thread else None
    # generator=chat: a follow-up that reached generation would call the exploding model
    return graph.invoke({"question": question}, config, context={"generator": "chat"})


@pytest.mark.parametrize(("question", "cue"), [
    ("why?", "why"), ("Why not?", "why"), ("and why?", "why"),
    ("tell me more", "more"), ("Tell me more please.", "more"), ("go on", "more"),
    ("give me an example", "example"), ("Can you give me another example?", "example"),
    ("what's the trade-off?", "relation"),
])
def test_a_bare_follow_up_is_named(question, cue):
    """The follow-ups that mean nothing without an earlier turn are recognised."""
    assert follow_up_cue(question) == cue


@pytest.mark.parametrize("question", [
    "Why do ROS messages use quaternions?", "Give me an example of a ROS 2 topic.",
    "What is a ROS 2 topic?", "Who invented ROS?", "Tell me about ROS 2 services.",
])
def test_a_question_that_names_its_subject_is_no_bare_follow_up(question):
    """A question that says what it is about stands alone."""
    assert follow_up_cue(question) is None


@pytest.mark.parametrize("question", ["tell me more", "why?", "give me an example"])
def test_without_a_thread_a_bare_follow_up_is_refused_asking_what_it_is_about(
        graph, tmp_path, exploding_chat, question):
    """No retrieval, no model: the refusal asks what it is about and names the follow-up."""
    out = ask(graph, question)
    assert out["was_refusal"] and out["refusal_reason"] == RefusalReason.UNCLEAR_FOLLOW_UP
    assert "What would you like to know?" in out["answer"]
    assert out["sources"] == [] and out["suggestions"] == []
    assert out["diagnostics"]["follow_up"] == follow_up_cue(question)
    assert "retrieve" not in out["diagnostics"]["timings_ms"]
    assert exploding_chat.calls == 0
    line = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])
    assert line["refusal_reason"] == "unclear_follow_up"


def test_as_a_threads_first_turn_a_bare_follow_up_is_refused(graph):
    """A thread with no earlier turn has nothing to follow either."""
    out = ask(graph, "why?", "t-new")
    assert out["refusal_reason"] == RefusalReason.UNCLEAR_FOLLOW_UP


def test_after_an_earlier_turn_the_same_follow_up_is_read_against_it(graph):
    """In a thread with a turn to follow, "tell me more" is rewritten, never refused as unclear."""
    ask(graph, "What is a ROS 2 service?", "t-1")
    out = ask(graph, "tell me more", "t-1")
    assert out["refusal_reason"] != RefusalReason.UNCLEAR_FOLLOW_UP
    conv = out["diagnostics"]["conversation"]
    assert conv["rule"] == "more" and "ROS 2 service" in conv["standalone"]
