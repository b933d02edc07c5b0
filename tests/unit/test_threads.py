"""Conversations through the graph: threads on a checkpointer, bounded, private, each turn fresh."""

import asyncio
import json
from pathlib import Path

import pytest

from graph.builder import build_graph
from textbound import course
from textbound.conversation.history import next_history
from textbound.conversation.threads import (
    ThreadIdError,
    ThreadSqliteSaver,
    delete_thread,
    memory_saver,
    thread_turns,
    validate_thread_id,
)

from ..conftest import make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
"""The fixed test calibration: what a conversation does here never hangs on the shipped fit."""


def _settings(tmp_path, **kw):
    return make_settings(tmp_path, calibration_file=CALIBRATION, **kw)


@pytest.fixture
def graph(tmp_path, embeddings, fake_store, exploding_chat):
    settings = _settings(tmp_path, audit_log=tmp_path / "audit.jsonl")
    return build_graph(settings=settings, embeddings=embeddings, store=fake_store,
                       chat_model=exploding_chat, profile=course.load_profile(),
                       checkpointer=memory_saver())


def ask(graph, question, thread=None, **input):
    config = {"configurable": {"thread_id": thread}} if thread else None
    return graph.invoke({"question": question, **input}, config)


def test_a_follow_up_is_answered_from_its_standalone_question(graph, tmp_path):
    first = ask(graph, "What is a ROS 2 service?", "t-1")
    assert first["diagnostics"]["conversation"]["turn"] == 1
    second = ask(graph, "What does the client of it wait for?", "t-1")
    conv = second["diagnostics"]["conversation"]
    assert conv["rewritten"] and conv["rule"] == "pronoun" and conv["turn"] == 2
    assert conv["asked"] == "What does the client of it wait for?"
    assert "ROS 2 service" in conv["standalone"]
    assert not second["was_refusal"] and second["sources"][0]["chunk_id"] == "c-service"
    lines = [json.loads(x) for x in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert lines[-1]["asked_question"] == conv["asked"]
    assert lines[-1]["question"] == conv["standalone"]
    assert lines[-1]["thread_id"] == "t-1" and lines[-1]["run_id"] == second["run_id"]


def test_two_threads_never_mix(graph):
    ask(graph, "What is a ROS 2 service?", "a")
    ask(graph, "What is Gazebo?", "b")
    in_a = ask(graph, "what does it simulate?", "a")["diagnostics"]["conversation"]
    in_b = ask(graph, "what does it simulate?", "b")["diagnostics"]["conversation"]
    assert "service" in in_a["standalone"] and "Gazebo" not in in_a["standalone"]
    assert "Gazebo" in in_b["standalone"] and "service" not in in_b["standalone"]
    assert [t["question"] for t in thread_turns(graph, "a")] == [
        "What is a ROS 2 service?", "what does it simulate?"]


def test_without_a_thread_every_question_stands_alone(graph):
    ask(graph, "What is a ROS 2 service?")
    out = ask(graph, "What file defines its interface?")
    assert not out["diagnostics"]["conversation"]["rewritten"]
    assert out["diagnostics"]["conversation"]["thread_id"] is None


def test_each_turn_starts_afresh(graph):
    """A refused follow-up carries none of the last answer's verdicts, evidence or selection."""
    ask(graph, "What does the passage say?", "t",
        selected_text="A topic is a named bus over which nodes exchange messages.")
    out = ask(graph, "What is the capital of France?", "t")
    assert out["was_refusal"] and out["diagnostics"]["path"] != "release_answer"
    assert "select_passage" not in out["diagnostics"]["timings_ms"]
    assert list(out["diagnostics"]["timings_ms"])[0] == "check_question"
    assert out["sources"] == []
    state = graph.get_state({"configurable": {"thread_id": "t"}}).values
    assert [v["gate"] for v in state["verdicts"]][0] == "check_question"
    assert state["selected_text"] is None and state["draft"] is None


def test_a_refused_follow_up_is_refused_as_its_standalone_question_is(graph):
    """Same reason, same message, before generation: nothing of the thread reaches it."""
    first = ask(graph, "What does a client of a ROS 2 service wait for?", "t")
    assert not first["was_refusal"]
    out = ask(graph, "How much does it cost?", "t")
    standalone = out["diagnostics"]["conversation"]["standalone"]
    alone = ask(graph, standalone)
    assert out["was_refusal"] and "generate" not in out["diagnostics"]["timings_ms"]
    assert (out["refusal_reason"], out["answer"]) == (alone["refusal_reason"], alone["answer"])
    assert first["answer"].split(" [")[0] not in out["answer"]


def test_history_is_bounded_by_turns_and_characters():
    turn = {"question": "q", "standalone": "q", "subject": None, "answer": "a" * 50,
            "was_refusal": False, "refusal_reason": None, "run_id": "r", "sources": []}
    kept = []
    for n in range(12):
        kept = next_history(kept, {**turn, "run_id": str(n)}, turns=8, chars=10_000)
    assert [t["run_id"] for t in kept] == [str(n) for n in range(4, 12)]
    kept = next_history(kept, {**turn, "answer": "b" * 5000}, turns=8, chars=300)
    assert len(kept) == 1 and len(kept[0]["answer"]) == 300


def test_history_bounds_come_from_settings(tmp_path, embeddings, fake_store):
    settings = _settings(tmp_path, history_turns=2)
    g = build_graph(settings=settings, embeddings=embeddings, store=fake_store,
                    profile=course.load_profile(), checkpointer=memory_saver())
    for q in ("What is a ROS 2 service?", "What is Gazebo?", "What is a topic?"):
        ask(g, q, "t")
    assert [t["question"] for t in thread_turns(g, "t")] == ["What is Gazebo?", "What is a topic?"]


@pytest.mark.parametrize("bad", ["", "x" * 129, "a b", "../etc", "é", "a/b", 7])
def test_a_bad_thread_id_is_refused_with_the_rule(graph, bad):
    with pytest.raises(ThreadIdError, match="letter, digit"):
        validate_thread_id(bad)
    with pytest.raises(ThreadIdError):
        graph.invoke({"question": "What is Gazebo?"}, {"configurable": {"thread_id": bad}})


def test_deleting_a_thread_forgets_it_and_only_it(graph):
    ask(graph, "What is a ROS 2 service?", "keep")
    ask(graph, "What is Gazebo?", "drop")
    delete_thread(graph, "drop")
    assert thread_turns(graph, "drop") == []
    assert len(thread_turns(graph, "keep")) == 1
    out = ask(graph, "what does it simulate?", "drop")
    assert not out["diagnostics"]["conversation"]["rewritten"]


def test_sqlite_threads_survive_a_restart(tmp_path, embeddings, fake_store):
    def fresh():
        return build_graph(settings=_settings(tmp_path), embeddings=embeddings,
                           store=fake_store, profile=course.load_profile(),
                           checkpointer=ThreadSqliteSaver.open(tmp_path / "threads.sqlite"))

    first = fresh()
    ask(first, "What is a ROS 2 service?", "t")
    first.checkpointer.conn.close()
    again = fresh()
    out = ask(again, "What does the client of it wait for?", "t")
    assert out["diagnostics"]["conversation"]["turn"] == 2
    assert "ROS 2 service" in out["diagnostics"]["conversation"]["standalone"]


def test_the_async_path_keeps_threads_too(tmp_path, embeddings, fake_store):
    """The HTTP server runs the graph's async methods on the same SQLite saver as the CLI."""
    g = build_graph(settings=_settings(tmp_path), embeddings=embeddings, store=fake_store,
                    profile=course.load_profile(),
                    checkpointer=ThreadSqliteSaver.open(tmp_path / "threads.sqlite"))
    config = {"configurable": {"thread_id": "t"}}

    async def converse():
        await g.ainvoke({"question": "What is a ROS 2 service?"}, config)
        return await g.ainvoke({"question": "What does the client of it wait for?"}, config)

    out = asyncio.run(converse())
    assert out["diagnostics"]["conversation"]["rewritten"]
    assert len(thread_turns(g, "t")) == 2


def test_only_a_run_in_a_valid_thread_is_checkpointed(tmp_path, embeddings, fake_store):
    """No thread, or a bad one (refused before anything is written): the saver keeps nothing."""
    saver = memory_saver()
    g = build_graph(settings=_settings(tmp_path), embeddings=embeddings, store=fake_store,
                    checkpointer=saver)
    g.invoke({"question": "What is Gazebo?"})
    g.invoke({"question": "What is Gazebo?"}, {"configurable": {"top_k": 3}})
    with pytest.raises(ThreadIdError):
        g.invoke({"question": "What is Gazebo?"}, {"configurable": {"thread_id": "a b"}})
    assert list(saver.list(None)) == []
    g.invoke({"question": "What is Gazebo?"}, {"configurable": {"thread_id": "t"}})
    assert {c.config["configurable"]["thread_id"] for c in saver.list(None)} == {"t"}
