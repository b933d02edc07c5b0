"""A running `textbound serve` announces itself, so `ask` and `stats` can go through it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from tests.conftest import make_settings
from textbound.serving.cli import _through_server
from textbound.serving.cli._running import announced, running_server, server_file


def test_the_announcement_lasts_as_long_as_the_server(tmp_path: Path) -> None:
    """Found while the block runs, at a local address for 0.0.0.0; gone after it."""
    settings = make_settings(tmp_path, collection="course")
    other = make_settings(tmp_path, collection="other")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with announced(settings, "0.0.0.0", 8123) as path:
            data = json.loads(path.read_text())
            data["pid"] = child.pid  # as if that process were the server
            path.write_text(json.dumps(data))
            found = running_server(settings)
            assert found is not None and found.url == "http://127.0.0.1:8123"
            assert found.pid == child.pid and running_server(other) is None
        assert path.exists()  # not this process's announcement: left to its owner
    finally:
        child.kill()
        child.wait()
    assert running_server(settings) is None  # its process is gone: a stale file is ignored
    with announced(settings, "::", 9000):
        assert server_file(settings).is_file()
    assert not server_file(settings).exists()


def test_ask_goes_through_the_announced_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a server announced, `ask` posts to its /chat/invoke and never opens the store."""
    from textbound.serving.cli import answers, app
    from textbound.serving.cli._running import RunningServer

    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("TEXTBOUND_API_KEY", "teacher-key")
    sent: list[httpx.Request] = []
    contract = {"answer": "A topic is a named bus.", "was_refusal": False,
                "refusal_reason": None, "sources": [], "confidence_level": "high",
                "suggestions": [], "run_id": "r-1",
                "diagnostics": {"path": "release_answer", "chunks_retrieved": 3,
                                "max_score": 0.7, "latency_ms": 5.0}}

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"output": contract, "metadata": {}})

    real_client = httpx.Client
    monkeypatch.setattr(httpx, "Client", lambda **kw: real_client(
        transport=httpx.MockTransport(handler), **kw))
    monkeypatch.setattr(_through_server, "server_of", lambda collection=None: (
        RunningServer(1, "http://127.0.0.1:9", "textbook"),
        make_settings(tmp_path, api_key="teacher-key")))
    monkeypatch.setattr(answers, "server_of", _through_server.server_of)

    def no_store(*_: Any, **__: Any) -> Any:
        raise AssertionError("the store was opened")

    monkeypatch.setattr(answers, "answering", no_store)
    res = CliRunner().invoke(app, ["ask", "What is a topic?", "--thread", "t-1", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["run_id"] == "r-1"
    [request] = sent
    assert request.url.path == "/chat/invoke" and request.headers["X-API-Key"] == "teacher-key"
    assert json.loads(request.content) == {
        "input": {"question": "What is a topic?"},
        "config": {"configurable": {"thread_id": "t-1"}}}
