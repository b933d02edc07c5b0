"""`textbound eval` on a conversation file: turns in order in one thread each, scored per turn,
first turns apart from follow-ups, and the standalone rewrites measured against the gold."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from textbound.errors import SetupError
from textbound.quality.evaluation.conversations import (
    is_conversation_file,
    load_conversations,
    rewrite_overlap,
    rewrite_recovered,
    rewrite_right,
    run_conversations,
    summarize_conversations,
)
from textbound.quality.evaluation.report import write_markdown
from textbound.quality.evaluation.runner import make_record


def _turn(question: str, expected: str = "answer", kind: str = "answerable",
          answers: list[str] | None = None, follow_up: str | None = None,
          standalone: str | None = None) -> dict[str, Any]:
    return {"question": question, "expected": expected, "kind": kind, "answers": answers or [],
            "follow_up": follow_up, "standalone": standalone or question}


CONVERSATIONS = [
    {"id": "c1", "turns": [
        _turn("what does a service do", answers=["request-response"]),
        _turn("what file defines it", answers=[".srv"], follow_up="pronoun",
              standalone="What file defines a ROS 2 service?"),
        _turn("how much does it cost", "refuse", "near_miss", follow_up="pronoun",
              standalone="How much does a ROS 2 service cost?"),
    ]},
    {"id": "c2", "turns": [
        _turn("what is a topic", answers=["named bus"]),
        _turn("and a node?", answers=["unit of computation"], follow_up="and_x",
              standalone="What is a ROS 2 node?"),
        _turn("capital of france", "refuse", "out_of_corpus", follow_up="standalone"),
    ]},
]

# what the scripted graph answers, per question; "rewrite" is its standalone question
SCRIPT = {
    "what does a service do": {"answer": "A request-response call."},
    "what file defines it": {"answer": "A .srv file.",
                             "rewrite": "what file defines a ros 2 service"},
    "how much does it cost": {"answer": "It costs nothing.",
                              "rewrite": "how much does a ros 2 service cost"},
    "what is a topic": {"answer": "A named bus."},
    "and a node?": {"refuse": True, "rewrite": "and a node? what is a topic"},
    "capital of france": {"refuse": True, "rewrite": "capital of france what is a topic"},
}


class ScriptedThreadGraph:
    """What `run_conversations` needs of a graph: invoke() with a thread, and output_channels.

    Answers from SCRIPT and keeps each thread's turn count, as a checkpointed graph would.
    """

    output_channels = ["answer", "was_refusal", "refusal_reason", "sources", "diagnostics"]

    def __init__(self) -> None:
        self.turns: dict[str, list[str]] = {}
        self.lock = threading.Lock()

    def invoke(self, payload: dict[str, Any], *, config: dict[str, Any],
               context: dict[str, Any], output_keys: list[str] | None) -> dict[str, Any]:
        thread = config["configurable"]["thread_id"]
        with self.lock:
            asked = self.turns.setdefault(thread, [])
            asked.append(payload["question"])
        step = SCRIPT[payload["question"]]
        standalone = step.get("rewrite", payload["question"])
        refused = bool(step.get("refuse"))
        return {"answer": "The book does not say." if refused else step["answer"],
                "was_refusal": refused,
                "refusal_reason": "insufficient_context" if refused else None,
                "sources": [], "chunks": [],
                "diagnostics": {"path": "refuse_insufficient_context" if refused
                                else "release_answer", "latency_ms": 5.0,
                                "conversation": {"thread_id": thread, "turn": len(asked),
                                                 "asked": payload["question"],
                                                 "standalone": standalone,
                                                 "rewritten": standalone != payload["question"],
                                                 "rule": "carry" if "rewrite" in step
                                                 else None}}}


@pytest.fixture
def records() -> list[dict[str, Any]]:
    graph = ScriptedThreadGraph()
    out = run_conversations(graph, CONVERSATIONS, {"policy": "calibrated"}, make_record,
                            thread_prefix="t", workers=2)
    assert graph.turns == {"t:c1": [t["question"] for t in CONVERSATIONS[0]["turns"]],
                           "t:c2": [t["question"] for t in CONVERSATIONS[1]["turns"]]}
    return out


def test_each_conversation_runs_in_its_own_thread_in_order(records):
    """Turns keep their order within a thread; records carry turn, thread and both questions."""
    assert [(r["conversation"], r["turn"]) for r in records] == [
        ("c1", 1), ("c1", 2), ("c1", 3), ("c2", 1), ("c2", 2), ("c2", 3)]
    second = records[1]
    assert second["id"] == "c1#2" and second["thread_id"] == "t:c1"
    assert second["asked"] == "what file defines it"
    assert second["standalone"] == "what file defines a ros 2 service"
    assert second["standalone_gold"] == "What file defines a ROS 2 service?"
    assert second["answer"] == "A .srv file." and second["path"] == "release_answer"


def test_follow_ups_are_counted_apart_from_first_turns(records):
    """Correct, refused and leaked follow-ups use the single-question correctness rule."""
    summary = summarize_conversations(records)
    first, follow = summary["first_turns"], summary["follow_ups"]
    assert first["n"] == 2 and first["answerable"]["correct"] == 2
    assert follow["n"] == 4
    assert follow["answerable"] == {"n": 2, "correct": 1, "correct_rate": 0.5, "refused": 1,
                                    "refused_rate": 0.5, "answered_wrong": 0}
    assert follow["near_miss"] == {"n": 1, "answered": 1, "leak_rate": 1.0}
    assert follow["out_of_corpus"] == {"n": 1, "answered": 0, "leak_rate": 0.0}
    assert follow["by_follow_up"]["pronoun"]["leaked"] == 1
    assert follow["by_follow_up"]["and_x"]["correct"] == 0


def test_rewrites_are_scored_and_standalone_switches_must_stay(records):
    """Rewrites are scored against the gold; a rewritten stand-alone follow-up is counted."""
    rewrite = summarize_conversations(records)["rewrite"]
    # "what file defines a ros 2 service" and "how much does a ros 2 service cost" are right;
    # "and a node? what is a topic" carried the old subject next to the new one
    assert rewrite["n"] == 3 and rewrite["ok"] == 2
    assert rewrite["standalone_n"] == 1 and rewrite["standalone_rewritten"] == 1
    assert rewrite["rules"] == {"carry": 3}
    assert summarize_conversations(records)["first_turns"]["rewritten"] == 0


def test_rewrite_overlap_is_content_word_f1():
    """The F1 of distinct content words; a possessive 's and stop words do not count."""
    assert rewrite_overlap("what file defines a ROS 2 service's interface",
                           "What file defines a ROS 2 service's interface?") == 1.0
    assert rewrite_overlap("why?", "Why?") == 1.0
    assert rewrite_overlap("", "What is a topic?") == 0.0


def test_rewrite_right_needs_the_carried_subject():
    """A follow-up left as asked, or carrying the old subject, is wrong; other wording is right."""
    gold = "What file defines a ROS 2 service's interface?"
    asked = "what file defines its interface?"
    assert rewrite_recovered(asked, asked, gold) == 0.0
    assert not rewrite_right(asked, asked, gold)  # F1 0.67, but no subject carried
    assert rewrite_right(asked, "which file defines the ros 2 service interface", gold)
    assert not rewrite_right("and a node?", "and a node? what is a topic",
                             "What is a ROS 2 node?")
    assert rewrite_right("why?", "why do ros messages represent orientation",
                         "Why do ROS messages represent orientations as quaternions?")
    assert rewrite_recovered("what is ros 2", "what is ros 2", "what is ros 2") == 1.0


def test_conversation_report_section(records, tmp_path):
    """report.md gains the conversations tables only for a conversation file."""
    summary = summarize_conversations(records)
    report = {"questions": {"path": "c.jsonl", "n": 6, "limit": None, "conversations": 2},
              "corpus": {"corpus": "corpus", "chunks": 1, "collection": "x", "ingest_seconds": 0},
              "seconds_total": 1, "workers": 2,
              "scoring": {"short_gold": "s", "long_gold": "l"},
              "policies": {"calibrated": {"kinds": {}, "failures": {}, "latency": {},
                                          "calibration": {"floor": 0, "answer_threshold": 0,
                                                          "weights": {}},
                                          "tunables": {}}},
              "conversations": {"calibrated": summary}}
    write_markdown(report, tmp_path / "report.md")
    text = (tmp_path / "report.md").read_text()
    assert "| calibrated | follow-up | 4 | 1/2 (50.0%) | 1/2 | 1/1 | 0/1 |" in text
    assert "| calibrated | 3 | 2 (66.7%) |" in text
    del report["conversations"]
    write_markdown(report, tmp_path / "single.md")
    assert "Conversations" not in (tmp_path / "single.md").read_text()


def test_conversation_files_are_told_from_question_files(tmp_path: Path):
    """A line with turns makes a conversation file; missing turn fields name the line."""
    conv = tmp_path / "c.jsonl"
    conv.write_text("\n" + json.dumps(CONVERSATIONS[0]) + "\n")
    single = tmp_path / "q.jsonl"
    single.write_text(json.dumps({"id": "q", "question": "x", "expected": "refuse",
                                  "kind": "near_miss"}) + "\n")
    assert is_conversation_file(conv) and not is_conversation_file(single)
    assert load_conversations(conv)[0]["turns"][0]["follow_up"] is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "b", "turns": [{"question": "x"}]}) + "\n")
    with pytest.raises(SetupError, match=r"bad.jsonl:1: turn 1 is missing expected, kind"):
        load_conversations(bad)
    bad.write_text(json.dumps({"id": "b", "turns": []}) + "\n")
    with pytest.raises(SetupError, match="needs an id and turns"):
        load_conversations(bad)


def test_runner_keeps_threads_on_the_real_graph_with_the_shipped_fakes(tmp_path: Path):
    """On a graph of fakes with a memory checkpointer, a follow-up is rewritten in its own
    thread only, and the summary counts what the records say."""
    from graph.builder import build_graph
    from textbound.conversation.threads import memory_saver
    from textbound.documents.ingest import ingest
    from textbound.fakes import HashEmbedder, MemoryStore, ScriptedChatModel
    from textbound.settings import Settings

    book = tmp_path / "book"
    book.mkdir()
    (book / "ros.md").write_text("# ROS 2\n\n## Services\n\nA service is a request-response "
                                 "interaction between two nodes. Service types are defined in "
                                 ".srv files.\n")
    embeddings = HashEmbedder()
    store = MemoryStore(embeddings)
    ingest(store, [book])
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", audit_log="")  # type: ignore[call-arg]
    chat = ScriptedChatModel(steps=[AssertionError("a chat model was called")])
    graph = build_graph(settings=settings, embeddings=embeddings, store=store, chat_model=chat,
                        checkpointer=memory_saver())
    conversations = [
        {"id": "a", "turns": [
            _turn("what does a ros 2 service do?", answers=["request-response"]),
            _turn("what file defines its interface?", answers=[".srv"], follow_up="pronoun",
                  standalone="What file defines a ROS 2 service's interface?"),
            _turn("hello", "refuse", "out_of_corpus", follow_up="standalone")]},
        {"id": "b", "turns": [
            _turn("what file defines its interface?", "refuse", "near_miss")]},
    ]
    records = run_conversations(graph, conversations, {"policy": "calibrated"}, make_record,
                                thread_prefix="fake", workers=2)
    assert chat.calls == 0
    assert [(r["thread_id"], r["turn"]) for r in records] == [
        ("fake:a", 1), ("fake:a", 2), ("fake:a", 3), ("fake:b", 1)]
    first, follow_up, greeting, other = records
    assert not first["rewritten"] and first["standalone"] == first["asked"]
    assert follow_up["rewritten"] and "service" in follow_up["standalone"].lower()
    assert follow_up["rewrite_ok"]
    assert not other["rewritten"]  # thread b never saw thread a's service
    assert greeting["path"] == "greet" and not greeting["was_refusal"]
    summary = summarize_conversations(records)
    assert summary["follow_ups"]["out_of_corpus"] == {"n": 1, "answered": 1, "leak_rate": 1.0}
    assert summary["first_turns"]["near_miss"]["answered"] == int(not other["was_refusal"])
    answerable = summary["follow_ups"]["answerable"]
    assert answerable["n"] == 1
    assert answerable["refused"] == int(follow_up["was_refusal"])
    assert answerable["correct"] == int(bool(follow_up["correct"]))
    assert summary["rewrite"]["standalone_rewritten"] == int(greeting["rewritten"])


def test_eval_langsmith_refuses_a_conversation_file(monkeypatch, tmp_path):
    """`eval --langsmith` runs single questions: a conversation file stops it before any work."""
    from typer.testing import CliRunner

    import textbound.quality.evaluation.command as ev
    from textbound.serving.cli import app

    def boom(*args, **kwargs):
        raise AssertionError("evaluation ran")

    monkeypatch.setattr(ev, "evaluate", boom)
    conv = tmp_path / "c.jsonl"
    conv.write_text(json.dumps(CONVERSATIONS[0]) + "\n")
    result = CliRunner().invoke(app, ["eval", "--langsmith", "--questions", str(conv),
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "holds conversations" in result.output
