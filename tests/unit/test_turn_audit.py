"""A thread's turn has an audit line only once the thread kept it (textbound/records/turn_audit.py).

The reply node makes the line before the checkpoint is saved; a save that fails, or a turn
cancelled between the two, must leave no line for a turn the conversation does not hold.
(A real SIGKILL between them: tests/reliability/test_turn_kill.py.)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from graph.builder import build_graph
from textbound import course
from textbound.conversation.threads import (
    ThreadStoreError,
    memory_saver,
    thread_turns,
    turn_options,
)
from textbound.fakes import MemoryAudit
from textbound.records.turn_audit import HeldAudit

from ..conftest import make_settings

QUESTION = "What is a ROS 2 service?"


def audit_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] \
        if path.exists() else []


class Saver(type(memory_saver())):  # type: ignore[misc]
    """The in-memory saver, with a hook run before each save of a checkpoint."""

    before: Any = None
    pause: asyncio.Event | None = None

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.before is not None:
            self.before(checkpoint)
        return super().put(config, checkpoint, metadata, new_versions)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if self.pause is not None:
            self.pause.set()
            await asyncio.sleep(30)  # cancelled here
        return self.put(config, checkpoint, metadata, new_versions)


@pytest.fixture
def setup(tmp_path: Path, embeddings: Any, fake_store: Any, exploding_chat: Any
          ) -> tuple[Any, Saver, Path]:
    saver = Saver(serde=memory_saver().serde)
    log = tmp_path / "audit.jsonl"
    graph = build_graph(settings=make_settings(tmp_path, audit_log=log), embeddings=embeddings,
                        store=fake_store, chat_model=exploding_chat,
                        profile=course.load_profile(), checkpointer=saver)
    return graph, saver, log


def ask(graph: Any, thread: str | None = "t-1") -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}} if thread else None
    return graph.invoke({"question": QUESTION}, config, **turn_options(graph))  # type: ignore[no-any-return]


def test_the_line_is_written_after_the_save(setup: tuple[Any, Saver, Path]) -> None:
    """At every save of the turn its line is not written yet; once the turn is kept, it is."""
    graph, saver, log = setup
    seen: list[int] = []
    saver.before = lambda _checkpoint: seen.append(len(audit_lines(log)))
    out = ask(graph)
    assert seen == [0]
    assert [r["run_id"] for r in audit_lines(log)] == [out["run_id"]]
    # under LangGraph's default durability (a save after every step) it holds too
    seen.clear()
    again = graph.invoke({"question": QUESTION}, {"configurable": {"thread_id": "t-1"}})
    assert seen and set(seen) == {1}
    assert [r["run_id"] for r in audit_lines(log)] == [out["run_id"], again["run_id"]]


def test_a_failed_save_leaves_no_line(setup: tuple[Any, Saver, Path]) -> None:
    """The store fails as the turn is saved: no turn in the thread, no line in the log."""
    graph, saver, log = setup

    def fail(_checkpoint: Any) -> None:
        raise sqlite3.OperationalError("database is locked")

    saver.before = fail
    with pytest.raises(ThreadStoreError):
        ask(graph)
    saver.before = None
    assert audit_lines(log) == [] and thread_turns(graph, "t-1") == []
    kept = ask(graph)  # the next turn's line is its own, never the lost one's
    assert [r["run_id"] for r in audit_lines(log)] == [kept["run_id"]]
    assert [t["run_id"] for t in thread_turns(graph, "t-1")] == [kept["run_id"]]


def test_a_turn_cancelled_before_its_save_leaves_no_line(setup: tuple[Any, Saver, Path]
                                                          ) -> None:
    """A client that hangs up while the turn is being saved: neither the turn nor its line."""
    graph, saver, log = setup

    async def cancelled() -> None:
        saver.pause = asyncio.Event()
        task = asyncio.create_task(graph.ainvoke(
            {"question": QUESTION}, {"configurable": {"thread_id": "t-1"}},
            **turn_options(graph)))
        await asyncio.wait_for(saver.pause.wait(), 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    saver.pause = None
    assert audit_lines(log) == [] and thread_turns(graph, "t-1") == []
    kept = ask(graph)
    assert [r["run_id"] for r in audit_lines(log)] == [kept["run_id"]]


def test_a_question_without_a_thread_is_written_at_once(setup: tuple[Any, Saver, Path]) -> None:
    graph, saver, log = setup
    out = ask(graph, None)
    assert [r["run_id"] for r in audit_lines(log)] == [out["run_id"]]


def test_held_audit_writes_only_the_saved_run() -> None:
    """A line waits for the save of its own run; a newer turn of the thread replaces it."""
    sink = MemoryAudit()
    held = HeldAudit(sink, limit=2)
    assert held.write({"thread_id": None, "run_id": "alone"})
    held.write({"thread_id": "a", "run_id": "r1"})
    assert not held.saved("a", "other-run") and not held.saved("b", "r1")
    held.write({"thread_id": "a", "run_id": "r2"})  # r1's turn was never saved
    assert held.saved("a", "r2") and not held.saved("a", "r2")
    held.write({"thread_id": "b", "run_id": "r3"})
    held.lost("b")
    assert not held.saved("b", "r3")
    for n in range(3):  # past the limit the oldest held line goes
        held.write({"thread_id": f"x{n}", "run_id": f"x{n}"})
    assert [r["run_id"] for r in held.held()] == ["x1", "x2"]
    assert [r["run_id"] for r in sink.records] == ["alone", "r2"]
