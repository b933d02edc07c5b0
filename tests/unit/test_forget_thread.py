"""Deleting a conversation removes its turns and its lines in the audit and feedback logs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.conftest import make_settings
from textbound.records.audit import append_json_line, drop_thread_lines
from textbound.records.feedback import forget_thread_records

KEY = "forget-key"
AUTH = {"X-API-Key": KEY}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] \
        if path.exists() else []


def _line(thread: str | None, n: int, event: str = "answer") -> dict[str, Any]:
    return {"event": event, "thread_id": thread, "question": f"q{n} of {thread}",
            "answer": f"a{n}", "run_id": f"r{n}"}


def test_only_the_threads_lines_leave_both_logs(tmp_path: Path) -> None:
    """Lines of other threads, and of questions asked alone, stay, in their order."""
    audit, feedback = tmp_path / "audit.jsonl", tmp_path / "feedback.jsonl"
    lock = threading.Lock()
    for i, thread in enumerate(["t-1", "t-2", None, "t-1", "t-10"]):
        append_json_line(audit, _line(thread, i), lock)
    append_json_line(feedback, _line("t-1", 0, "feedback"), lock)
    append_json_line(feedback, _line("t-2", 1, "feedback"), lock)

    assert forget_thread_records(audit, "t-1") == 3
    assert [r["thread_id"] for r in lines(audit)] == ["t-2", None, "t-10"]
    assert [r["thread_id"] for r in lines(feedback)] == ["t-2"]
    assert forget_thread_records(audit, "t-1") == 0  # nothing left of it: nothing rewritten


def test_appends_during_a_deletion_are_never_lost(tmp_path: Path) -> None:
    """Four writers append while the log is rewritten again and again: every line survives."""
    audit = tmp_path / "audit.jsonl"
    lock = threading.Lock()  # each writer's own lock: only the log's lock file is shared
    for i in range(50):
        append_json_line(audit, _line("gone", i), lock)
    done = threading.Event()

    def write(w: int) -> None:
        own = threading.Lock()
        for i in range(150):
            append_json_line(audit, _line(f"keep-{w}", i), own)

    writers = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for t in writers:
        t.start()

    def drop() -> None:
        while not done.is_set():
            drop_thread_lines(audit, "gone")

    dropper = threading.Thread(target=drop)
    dropper.start()
    for t in writers:
        t.join()
    done.set()
    dropper.join()
    drop_thread_lines(audit, "gone")
    kept = lines(audit)
    assert len(kept) == 600 and {r["thread_id"] for r in kept} == {f"keep-{w}" for w in range(4)}


@pytest.fixture
def client(tmp_path: Path, embeddings: Any, fake_store: Any) -> Iterator[TestClient]:
    from graph.builder import build_services
    from textbound.serving.server import create_app

    settings = make_settings(tmp_path / "data", api_key=KEY, checkpointer="memory")
    services = build_services(settings=settings, embeddings=embeddings, store=fake_store)
    with TestClient(create_app(services)) as c:
        yield c


def _ask(client: TestClient, question: str, thread: str) -> dict[str, Any]:
    r = client.post("/chat/invoke", headers=AUTH, json={
        "input": {"question": question}, "config": {"configurable": {"thread_id": thread}}})
    assert r.status_code == 200, r.text
    return r.json()["output"]


def test_delete_thread_over_http_removes_its_questions_answers_and_ratings(
        client: TestClient, tmp_path: Path) -> None:
    """DELETE /threads/{id}: no turn, no audit line and no rating of it is left; others stay."""
    data = tmp_path / "data"
    first = _ask(client, "What is a topic?", "t-1")
    _ask(client, "How do nodes use it?", "t-1")
    _ask(client, "What is a topic?", "t-2")
    rated = client.post("/feedback", headers=AUTH, json={"run_id": first["run_id"],
                                                          "rating": "down"})
    assert rated.status_code == 201, rated.text

    r = client.delete("/threads/t-1", headers=AUTH)
    assert r.status_code == 204
    assert client.get("/threads/t-1", headers=AUTH).json()["turns"] == []
    assert [x["thread_id"] for x in lines(data / "audit.jsonl")] == ["t-2"]
    assert lines(data / "feedback.jsonl") == []
    assert "What is a topic?" in json.dumps(lines(data / "audit.jsonl"))  # t-2's stays


def test_the_openapi_description_says_what_deletion_removes(client: TestClient) -> None:
    """The route's description names the audit and feedback logs."""
    op = client.get("/openapi.json", headers=AUTH).json()["paths"]["/threads/{thread_id}"]
    text = op["delete"]["summary"] + op["delete"]["description"]
    assert "audit" in text and "feedback" in text


def test_threads_delete_on_the_command_line_removes_the_logs_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`textbound threads delete ID` forgets the same lines the HTTP route does."""
    from textbound.serving.cli import app

    data = tmp_path / "data"
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(data))
    lock = threading.Lock()
    for i, thread in enumerate(["t-1", "t-2"]):
        append_json_line(data / "audit.jsonl", _line(thread, i), lock)
        append_json_line(data / "feedback.jsonl", _line(thread, i, "feedback"), lock)
    from textbound.records.keystore import SqliteKeyStore

    owners = SqliteKeyStore(data / "keys.sqlite")
    owners.claim("t-1", "student-a")
    owners.claim("t-2", "student-b")
    result = CliRunner().invoke(app, ["threads", "delete", "t-1"])
    assert result.exit_code == 0, result.output
    assert [x["thread_id"] for x in lines(data / "audit.jsonl")] == ["t-2"]
    assert [x["thread_id"] for x in lines(data / "feedback.jsonl")] == ["t-2"]
    # the owner goes too, as over HTTP: the id may start a new conversation; t-2's stays
    assert owners.owner("t-1") is None
    assert owners.owner("t-2") == "student-b"
    owners.close()


def test_forget_in_chat_removes_the_conversations_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`forget` in `textbound chat` removes the turn it just logged; the next thread's stays."""
    from textbound.serving.cli import app

    data = tmp_path / "data"
    book = tmp_path / "book.md"
    book.write_text("# Gliders\n\nA buoyancy engine pumps oil into a bladder so the glider "
                    "rises.\n")
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(data))
    monkeypatch.setenv("TEXTBOUND_SENTENCE_VECTORS", "false")
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(book)]).exit_code == 0
    result = runner.invoke(app, ["chat", "--thread", "t-1", "--json"],
                           input="What does a buoyancy engine pump?\nforget\n"
                                 "What does a buoyancy engine pump?\n")
    assert result.exit_code == 0, result.output
    kept = lines(data / "audit.jsonl")
    assert len(kept) == 1 and kept[0]["thread_id"] not in (None, "t-1")
