"""Feedback on real runs of the graph: the response's run_id is rated, the report shows it.

The graph runs over the shipped MemoryStore holding the four test chunks (real local
embeddings), in a thread held by an in-memory checkpointer, through the HTTP app; and through
`textbound chat` over an ingested file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.conftest import book_store, make_settings
from textbound.quality import analytics as an
from textbound.serving.server import create_app

QUESTION = "What is a topic?"


@pytest.fixture
def served(tmp_path: Path, embeddings: Any) -> Iterator[tuple[TestClient, Path]]:
    """The app over a MemoryStore of the test chunks, with a graph keeping threads in memory."""
    from langgraph.checkpoint.memory import InMemorySaver

    from graph.builder import build_graph, build_services

    store = book_store(embeddings, collection="memory", stats=None)
    services = build_services(settings=make_settings(tmp_path / "data"), embeddings=embeddings,
                              store=store)
    graph = build_graph(services=services, checkpointer=InMemorySaver())
    with TestClient(create_app(services, graph=graph)) as client:
        yield client, tmp_path / "data"


def ask(client: TestClient, question: str, thread_id: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"input": {"question": question}}
    if thread_id:
        body["config"] = {"configurable": {"thread_id": thread_id}}
    r = client.post("/chat/invoke", json=body)
    assert r.status_code == 200, r.text
    return r.json()["output"]


def test_a_rated_thread_answer_is_stored_with_its_answer_and_reported(
        served: tuple[TestClient, Path], tmp_path: Path) -> None:
    """The answer and the cited places come from the thread; the report files it by chapter."""
    client, data = served
    out = ask(client, QUESTION, "tab-1")
    assert not out["was_refusal"] and out["run_id"]
    r = client.post("/feedback", json={"run_id": out["run_id"], "rating": "down",
                                       "comment": "say what a message is"})
    assert r.status_code == 201, r.text
    [line] = [json.loads(x) for x in (data / "feedback.jsonl").read_text().splitlines()]
    assert line["answer"] == out["answer"] and line["thread_id"] == "tab-1"
    assert [s["chunk_id"] for s in line["sources"]] == [s["chunk_id"] for s in out["sources"]]
    assert line["sources"][0]["section"] == out["sources"][0]["section"]
    assert line["sources"][0]["excerpt"].startswith("A topic is a named bus")

    result = an.build_report(data / "audit.jsonl", tmp_path / "report",
                             locate=lambda t: [("x", 0.9)] * len(t))
    [chapter] = result.feedback.chapters
    assert chapter.chapter == "Book (book.md)"
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "say what a message is" in md and QUESTION in md


def test_a_run_without_a_thread_can_be_rated_too(served: tuple[TestClient, Path]) -> None:
    """No thread: the audit line and the store give the question and the passage."""
    client, data = served
    out = ask(client, QUESTION, None)
    r = client.post("/feedback", json={"run_id": out["run_id"], "rating": "up"})
    assert r.status_code == 201, r.text
    assert r.json()["sources"][0]["source"] == "book.md"


def test_a_refusal_is_rated_and_filed_under_refusals(served: tuple[TestClient, Path],
                                                     tmp_path: Path) -> None:
    """A refused run is rated like an answer; the report groups it under refusals."""
    client, data = served
    out = ask(client, "What is the capital of France?", "tab-2")
    assert out["was_refusal"]
    assert client.post("/feedback", json={"run_id": out["run_id"],
                                          "rating": "down"}).status_code == 201
    result = an.build_report(data / "audit.jsonl", tmp_path / "report",
                             locate=lambda t: [("x", 0.9)] * len(t))
    assert [c.chapter for c in result.feedback.chapters] == ["refusals"]


def test_chat_down_rates_the_last_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`textbound chat`: a question, then `/down comment`: the rating is stored."""
    from textbound.serving.cli import app

    book = tmp_path / "book"
    book.mkdir()
    (book / "gliders.md").write_text(
        "# Gliders\n\n## Buoyancy\n\nA buoyancy engine pumps oil from an internal reservoir "
        "into an external bladder, which makes the glider lighter than the water around it.\n")
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEXTBOUND_SENTENCE_VECTORS", "false")
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(book)]).exit_code == 0
    result = runner.invoke(app, ["chat"], input="What does a buoyancy engine pump?\n"
                                                "/down it should name the bladder\nexit\n")
    assert result.exit_code == 0, result.output
    assert "rated down" in result.stdout
    [line] = [json.loads(x) for x in
              (tmp_path / "data" / "feedback.jsonl").read_text().splitlines()]
    assert line["comment"] == "it should name the bladder"
    assert line["asked_question"] == "What does a buoyancy engine pump?"
    assert "oil" in (line["answer"] or "")


def test_feedback_command_reads_the_answer_from_the_kept_conversation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`textbound feedback RUN_ID`: the answer comes from the thread `ask --thread` kept."""
    from textbound.serving.cli import app

    book = tmp_path / "book"
    book.mkdir()
    (book / "gliders.md").write_text(
        "# Gliders\n\n## Buoyancy\n\nA buoyancy engine pumps oil from an internal reservoir "
        "into an external bladder, which makes the glider lighter than the water around it.\n")
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEXTBOUND_SENTENCE_VECTORS", "false")
    runner = CliRunner()
    assert runner.invoke(app, ["ingest", str(book)]).exit_code == 0
    # its own collection option: `ask` closes its store (the process-wide graph would keep it)
    asked = runner.invoke(app, ["ask", "What does a buoyancy engine pump?", "--thread", "t-1",
                                "--json", "--collection", "textbook"])
    assert asked.exit_code == 0, asked.output
    out = json.loads(asked.stdout)
    rated = runner.invoke(app, ["feedback", out["run_id"], "down", "--json"])
    assert rated.exit_code == 0, rated.output
    record = json.loads(rated.stdout)
    assert record["answer"] == out["answer"] and record["thread_id"] == "t-1"
    assert record["sources"][0]["excerpt"].startswith("A buoyancy engine pumps oil")
