"""The reliability suite's shared pieces: case counters, bounded calls, scripted fakes, servers.

Every hypothesis-driven test counts the cases it ran under a category; the counts are printed at
the end of the run and written to test-artifacts/reliability-cases.json (RELIABILITY.md quotes
them).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import Request
from langchain_core.messages import AIMessage

from tests.conftest import REPO, ScriptedChat, make_settings  # noqa: F401

# the fixtures are imported, never the session-scoped ingested_template (tests/conftest.py's): a
# second definition of it here would be a second session copy, ingesting the book once more
from tests.e2e.conftest import data_dir, free_port  # noqa: F401 - fixtures

CASES: Counter[str] = Counter()
"""Generated or injected cases per category, for the summary and RELIABILITY.md."""
REPORT = REPO / "test-artifacts" / "reliability-cases.json"

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=16, thread_name_prefix="bounded")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if CASES:
        terminalreporter.section("reliability cases")
        for name, n in sorted(CASES.items()):
            terminalreporter.write_line(f"{name:40} {n:6d}")


def pytest_sessionfinish(session: Any) -> None:
    if CASES:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(json.dumps(dict(sorted(CASES.items())), indent=2) + "\n")


@pytest.fixture
def cases() -> Counter[str]:
    """The run-wide counter of cases per category."""
    return CASES


def bounded(fn: Callable[..., Any], *args: Any, timeout: float = 60, **kwargs: Any) -> Any:
    """Call fn in a worker thread; fail the test (instead of hanging) if it takes too long."""
    future = _POOL.submit(fn, *args, **kwargs)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not return within {timeout} s (a hang)")


# the scripted chat model lives in tests/conftest.py (shared with the unit tier)


def tool_call(args: dict[str, Any]) -> AIMessage:
    """An AIMessage carrying a GroundedAnswer tool call with these arguments."""
    return AIMessage(content="", tool_calls=[
        {"name": "GroundedAnswer", "args": args, "id": "call_1", "type": "tool_call"}])


# --- small graphs and apps (`fake_store`, the four-chunk book, is tests/conftest.py's) ---------
def small_graph(tmp_path: Path, embeddings: Any, store: Any, model: Any = None,
                **settings: Any) -> Any:
    """A graph over `store` with its own data folder and audit log."""
    from graph.builder import build_graph

    s = make_settings(tmp_path, **settings)
    return build_graph(settings=s, embeddings=embeddings, store=store, chat_model=model)


def small_app(tmp_path: Path, embeddings: Any, store: Any, model: Any = None,
              **settings: Any) -> Any:
    """create_app over `store` (the services it checks are the graph's)."""
    from graph.builder import build_services
    from textbound.serving.server import create_app

    s = make_settings(tmp_path, **settings)
    services = build_services(settings=s, embeddings=embeddings, store=store,
                              chat_model=model)
    return create_app(services)


def audit_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of an audit log, parsed (a malformed line fails the test)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- uvicorn in a thread -----------------------------------------------------------------------
class ThreadServer:
    """Serve an ASGI app with uvicorn in a daemon thread on a free loopback port.

    With `settings`, uvicorn runs with `textbound serve`'s own config (read deadlines included).
    """

    def __init__(self, app: Any, settings: Any = None) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        if settings is not None:
            from textbound.serving.server import uvicorn_config

            config = uvicorn_config(app, settings, port=self.port, log_level="warning")
        else:
            config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                    lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True, name="uvicorn-test")

    def _run(self) -> None:
        asyncio.run(self.server.serve())

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start within 30 s")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


# --- a fake OpenAI-compatible chat server ------------------------------------------------------
class FakeOpenAI:
    """/v1/chat/completions that fails as told: 500, 429, garbage, malformed, sleep, ok, echo.

    `mode` is read per request; `calls` counts the requests that reached it. "ok" answers with a
    GroundedAnswer citing C1 with `ok_text`; "echo" repeats the system prompt as the answer.
    """

    def __init__(self) -> None:
        from fastapi import FastAPI
        from fastapi.responses import JSONResponse, PlainTextResponse

        self.mode = "ok"
        self.calls = 0
        self.sleep_s = 5.0
        self.ok_text = ""
        self.requests: list[dict[str, Any]] = []
        app = FastAPI()

        def completion(content: str) -> dict[str, Any]:
            return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                    "model": "fake", "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant",
                                                              "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Any:
            self.calls += 1
            body = await request.json()
            self.requests.append(body)
            mode = self.mode
            if mode == "500":
                return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, 500)
            if mode == "429":
                return JSONResponse({"error": {"message": "slow down", "type": "rate_limit"}},
                                    429, headers={"retry-after": "0"})
            if mode == "garbage":
                return PlainTextResponse("<html>not json at all", 200)
            if mode == "malformed":
                return JSONResponse(completion('{"sentences": "nope", "confidence": 3}'))
            if mode == "sleep":
                await asyncio.sleep(self.sleep_s)
                return JSONResponse(completion('{"sentences": [], "confidence": 0.9}'))
            if mode == "echo":
                system = body["messages"][0]["content"]
                answer = {"sentences": [{"text": system[:600], "chunk_ids": ["C1"]}],
                          "confidence": 0.95}
                return JSONResponse(completion(json.dumps(answer)))
            answer = {"sentences": [{"text": self.ok_text, "chunk_ids": ["C1"]}],
                      "confidence": 0.95}
            return JSONResponse(completion(json.dumps(answer)))

        self.app = app


@pytest.fixture(scope="module")
def fake_openai() -> Iterator[FakeOpenAI]:
    """A FakeOpenAI served on loopback for the module; reset its mode per test."""
    fake = FakeOpenAI()
    with ThreadServer(fake.app) as srv:
        fake.url = srv.url + "/v1"  # type: ignore[attr-defined]
        yield fake
