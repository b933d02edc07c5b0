"""Adding or replacing a document never changes the course's profile (issue 39)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graph.builder import build_graph
from tests.conftest import make_settings
from textbound import course
from textbound.documents.ingest import ingest
from textbound.documents.profile import ProfileResolver
from textbound.documents.store.memory import MemoryStore

PID = "How do I tune a PID controller for a robot arm?"


def _bundled_chunk(embeddings: Any) -> MemoryStore:
    text = ("A topic is a named bus over which nodes exchange messages. Topics implement the "
            "publish-subscribe pattern: publishers and subscribers never know each other.")
    return MemoryStore.holding(embeddings, [(
        "c-topic", text, {"source": "02-ros2-fundamentals.md", "title": "ROS 2 Fundamentals",
                          "section": "ROS 2 Fundamentals > Topics",
                          "heading_path": ["ROS 2 Fundamentals", "Topics"],
                          "start": 0, "end": len(text)})], collection="textbook")


def _what(profile: course.Profile) -> tuple[Any, ...]:
    return profile.origin, profile.title, profile.scope, profile.out_of_scope


def test_a_document_added_to_the_bundled_course_keeps_its_profile(tmp_path: Path) -> None:
    """Notes beside the bundled book: same title, scope and out-of-scope topics as before."""
    settings = make_settings(tmp_path)
    toc = [{"source": "corpus/02-ros2-fundamentals.md", "title": "ROS 2", "sections": []}]
    resolver = ProfileResolver(settings, "textbook", lambda: toc)
    before = _what(resolver.current())
    assert before[0] == "bundled" and before[3]
    toc.append({"source": "uploads/textbook/my-notes.md", "title": "My notes", "sections": []})
    assert _what(resolver.current()) == before


def test_uploading_to_the_bundled_course_keeps_refusing_out_of_scope_topics(
        tmp_path: Path, embeddings: Any, exploding_chat: Any) -> None:
    """Through ingestion: a note added and a bundled chapter replaced, PID is still out of scope."""
    settings = make_settings(tmp_path / "data", collection="textbook", audit_log=None)
    store = _bundled_chunk(embeddings)
    graph = build_graph(settings=settings, embeddings=embeddings, store=store,
                        chat_model=exploding_chat)
    first = graph.invoke({"question": PID}, context={"generator": "extractive"})
    assert first["refusal_reason"] == "out_of_scope"
    notes = tmp_path / "my-notes.md"
    notes.write_text("# Lab notes\n\n## Launch files\n\nA launch file starts several nodes at "
                     "once with their parameters.\n", encoding="utf-8")
    again = tmp_path / "02-ros2-fundamentals.md"
    again.write_text("# ROS 2 Fundamentals\n\n## Topics\n\nA topic carries messages between "
                     "nodes; a service answers one request.\n", encoding="utf-8")
    ingest(store, [notes, again])
    assert {d["source"] for d in store.table_of_contents()} == {"my-notes.md",
                                                                 "02-ros2-fundamentals.md"}
    after = graph.invoke({"question": PID}, context={"generator": "extractive"})
    assert after["refusal_reason"] == "out_of_scope"
    assert "Physical AI & Humanoid Robotics" in after["answer"]
