"""With the chat generator the model rewrites a follow-up; the rule stands in when it fails."""

from dataclasses import replace

import pytest
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from graph.context import resolve_tunables
from nodes.contextualize import contextualize
from textbound.fakes import ScriptedChatModel
from textbound.providers.chat import ChatClient

from ..conftest import make_settings

HISTORY = [{"question": "What does a ROS 2 service do?",
            "standalone": "What does a ROS 2 service do?", "subject": "a ROS 2 service",
            "answer": "A service implements a request-response interaction. [1]",
            "was_refusal": False, "refusal_reason": None, "run_id": "r", "sources": []}]


def _run(tmp_path, question, steps):
    model = ScriptedChatModel(steps=steps)
    ctx = replace(resolve_tunables(make_settings(tmp_path)), generator="chat", thread_id="t")
    state = {"clean_question": question, "history": HISTORY}
    out = contextualize(state, Runtime(context=ctx), chat=ChatClient(model=model, deadline_s=10))
    return out, model


def test_the_model_rewrites_a_follow_up(tmp_path):
    out, model = _run(tmp_path, "What file defines its interface?",
                      [AIMessage("Which file defines the interface of a ROS 2 service?")])
    conv = out["conversation"]
    assert (conv["rule"], conv["standalone"]) == (
        "model", "Which file defines the interface of a ROS 2 service?")
    assert out["clean_question"] == conv["standalone"] and model.calls == 1
    prompt = model.seen[0][0].content
    assert "What does a ROS 2 service do?" in prompt
    assert "What file defines its interface?" in prompt


@pytest.mark.parametrize("step", [
    AIMessage("A service is defined in a .srv file.\nIt has a request and a response."),
    AIMessage("The interface is defined in a .srv file."),  # an answer, not a question
    AIMessage(""),
    TimeoutError("model too slow"),
])
def test_a_failed_or_unusable_rewrite_falls_back_to_the_rule(tmp_path, step):
    out, _ = _run(tmp_path, "What file defines its interface?", [step])
    conv = out["conversation"]
    assert conv["rule"] == "pronoun"
    assert conv["standalone"] == "What file defines a ROS 2 service's interface?"


def test_a_standalone_question_never_reaches_the_model(tmp_path):
    out, model = _run(tmp_path, "What is Gazebo?", [AssertionError("must not be called")])
    assert model.calls == 0 and not out["conversation"]["rewritten"]
    assert "clean_question" not in out
