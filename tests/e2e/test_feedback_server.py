"""Feedback end to end: a real `textbound serve` answers, a rating is stored, the report has it."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import VENV_BIN, Running, free_port, run_server, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEY = "feedback-e2e-key"
AUTH = {"X-API-Key": KEY}


@pytest.fixture(scope="module")
def served(ingested_template: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Path]]:
    """One `textbound serve` with an API key over a copy of the ingested textbook."""
    root = tmp_path_factory.mktemp("feedback-serve")
    data = root / "data"
    shutil.copytree(ingested_template, data)
    port = free_port()
    cmd = [str(VENV_BIN / "textbound"), "serve", "--host", "127.0.0.1", "--port", str(port),
           "--log-level", "warning"]
    with run_server(cmd, env=server_env(data, TEXTBOUND_API_KEY=KEY), cwd=root, port=port,
                    ready_path="/healthz", timeout_s=120, log=root / "serve.log") as running:
        yield running, data


def ask(server: Running, question: str, thread_id: str) -> dict[str, Any]:
    r = httpx.post(server.url + "/chat/invoke", headers=AUTH, timeout=120, json={
        "input": {"question": question},
        "config": {"configurable": {"thread_id": thread_id}}})
    assert r.status_code == 200, r.text
    out = r.json()["output"]
    assert isinstance(out.get("run_id"), str), out
    return out


def rate(server: Running, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(server.url + "/feedback", headers=AUTH, json=body, timeout=30)


def test_a_rated_answer_and_refusal_appear_in_the_report(
        served: tuple[Running, Path], tmp_path: Path) -> None:
    """Ask, rate down with a comment, rate a refusal down; `textbound report` lists both."""
    server, data = served
    thread = f"tab-{uuid.uuid4().hex[:8]}"
    answer = ask(server, "What is a ROS 2 topic?", thread)
    assert not answer["was_refusal"], answer
    r = rate(server, {"run_id": answer["run_id"], "rating": "down",
                      "comment": "I wanted the QoS settings too"})
    assert r.status_code == 201, r.text
    summary = r.json()
    assert summary["question"] == "What is a ROS 2 topic?"
    assert summary["sources"] and all(s["source"] for s in summary["sources"])
    refusal = ask(server, "What is the capital of France?", thread)
    assert refusal["was_refusal"]
    assert rate(server, {"run_id": refusal["run_id"], "rating": "down"}).status_code == 201

    [first, second] = [json.loads(x) for x in
                       (data / "feedback.jsonl").read_text(encoding="utf-8").splitlines()]
    assert first["answer"] == answer["answer"]  # from the server's records, not the client
    assert second["refusal_reason"] == refusal["refusal_reason"]

    out = tmp_path / "report"
    done = subprocess.run([str(VENV_BIN / "textbound"), "report", "--out", str(out)],
                          env=server_env(data), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "2 of 2 rated responses marked wrong" in done.stdout
    md = (out / "report.md").read_text(encoding="utf-8")
    section = md.split("## Answers students marked wrong", 1)[1]
    assert "I wanted the QoS settings too" in section and "What is a ROS 2 topic?" in section
    assert "### refusals — 1 marked wrong" in section
    assert "Chapter 2: ROS 2 Fundamentals" in section


def test_an_unknown_run_is_404_and_a_bad_rating_422(served: tuple[Running, Path]) -> None:
    """The live server answers the documented statuses."""
    server, _ = served
    assert rate(server, {"run_id": str(uuid.uuid4()), "rating": "up"}).status_code == 404
    assert rate(server, {"run_id": str(uuid.uuid4()), "rating": "meh"}).status_code == 422
    no_key = httpx.post(server.url + "/feedback", json={"run_id": str(uuid.uuid4()),
                                                         "rating": "up"})
    assert no_key.status_code == 401
