"""`textbound serve` in a subprocess on a free loopback port, driven by RemoteRunnable and httpx."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import VENV_BIN, Running, free_port, run_server, server_env
from textbound.serving.server import CONTRACT_KEYS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEY = "test-key-7f3a"
ORIGIN = "http://reader.localhost:5173"
MAX_BYTES = 20_000
ANSWERABLE = "What is a ROS 2 topic?"
OUT_OF_SCOPE = "What is the capital of France?"
INTERNAL_KEYS = ("draft", "tunables", "evidence", "query_vector", "input_verdict")


@pytest.fixture(scope="module")
def server(ingested_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """One `textbound serve` with an API key, CORS for ORIGIN and a 20 kB body limit."""
    root = tmp_path_factory.mktemp("serve")
    data = root / "data"
    shutil.copytree(ingested_template, data)
    port = free_port()
    env = server_env(data, TEXTBOUND_API_KEY=KEY, TEXTBOUND_CORS_ORIGINS=json.dumps([ORIGIN]),
                     TEXTBOUND_MAX_REQUEST_BYTES=str(MAX_BYTES))
    cmd = [str(VENV_BIN / "textbound"), "serve", "--host", "127.0.0.1", "--port", str(port),
           "--log-level", "warning"]
    with run_server(cmd, env=env, cwd=root, port=port, ready_path="/healthz", timeout_s=120,
                    log=root / "serve.log") as running:
        yield running


@pytest.fixture
def remote(server: Running) -> Any:
    from langserve import RemoteRunnable

    return RemoteRunnable(server.url + "/chat", headers={"X-API-Key": KEY}, timeout=60)


def _no_internal_keys(obj: Any) -> None:
    text = json.dumps(obj)
    for key in INTERNAL_KEYS:
        assert f'"{key}"' not in text, f"internal state key {key!r} leaked: {text[:300]}"


def test_healthz_is_open_and_checks_store_collection_and_model(server: Running) -> None:
    """/healthz needs no key but then says only ok; with the key it reports each check."""
    anonymous = httpx.get(server.url + "/healthz")
    assert anonymous.status_code == 200 and anonymous.json() == {"status": "ok"}
    r = httpx.get(server.url + "/healthz", headers={"X-API-Key": KEY})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "ok" and body["problems"] == []
    assert body["checks"]["collection"]["chunks"] > 100
    assert body["checks"]["embeddings"]["dimension"] == 384


ROUTES = [
    ("POST", "/chat/invoke"), ("POST", "/chat/batch"), ("POST", "/chat/stream"),
    ("POST", "/chat/stream_events"), ("POST", "/chat/stream_log"), ("GET", "/chat/input_schema"),
    ("GET", "/chat/output_schema"), ("GET", "/chat/config_schema"), ("GET", "/chat/playground/"),
    ("GET", "/docs"), ("GET", "/openapi.json"), ("GET", "/api/chapters"),
]


@pytest.mark.parametrize("path", ["/", "/reader/static/reader.js", "/reader/static/reader.css"])
def test_reader_page_assets_are_open(server: Running, path: str) -> None:
    """A browser can load the reader page without the key (it then sends it on /api and /chat)."""
    r = httpx.get(server.url + path)
    assert r.status_code == 200, r.text[:200]
    assert httpx.post(server.url + path).status_code in (401, 405)


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_route_requires_the_api_key(server: Running, method: str, path: str) -> None:
    """Without the key or with a wrong one the route answers 401; with it, not."""
    body = ({"inputs": [{"question": OUT_OF_SCOPE}]} if path.endswith("batch")
            else {"input": {"question": OUT_OF_SCOPE}})
    kw: dict[str, Any] = {"json": body} if method == "POST" else {}
    assert httpx.request(method, server.url + path, **kw).status_code == 401
    wrong = httpx.request(method, server.url + path, headers={"X-API-Key": "nope"}, **kw)
    assert wrong.status_code == 401 and "X-API-Key" in wrong.json()["detail"]
    ok = httpx.request(method, server.url + path, headers={"X-API-Key": KEY}, timeout=60, **kw)
    assert ok.status_code == 200, ok.text[:500]


def test_invoke_answers_with_citations(remote: Any) -> None:
    """RemoteRunnable.invoke returns the response contract with a cited answer."""
    out = remote.invoke({"question": ANSWERABLE})
    assert tuple(out) == CONTRACT_KEYS
    assert not out["was_refusal"] and out["sources"] and "[1]" in out["answer"]
    assert out["diagnostics"]["path"] == "release_answer"
    _no_internal_keys(out)


def test_batch_answers_and_refuses(remote: Any) -> None:
    """RemoteRunnable.batch runs each input through the graph."""
    outs = remote.batch([{"question": ANSWERABLE}, {"question": OUT_OF_SCOPE}])
    assert [o["was_refusal"] for o in outs] == [False, True]
    assert outs[1]["diagnostics"]["path"] == f"refuse_{outs[1]['refusal_reason']}"
    assert outs[1]["sources"] == []


def test_stream_sends_progress_then_only_the_validated_answer(remote: Any) -> None:
    """Chunks are node progress, then the contract; the draft never leaves the server."""
    chunks = list(remote.stream({"question": ANSWERABLE}))
    progress = [c["progress"]["node"] for c in chunks[:-1]]
    assert progress[0] == "check_question"
    assert progress.index("generate") < progress.index("validate_grounding") < \
        progress.index("release_answer")
    assert all(set(c) == {"progress"} for c in chunks[:-1])
    assert tuple(chunks[-1]) == CONTRACT_KEYS and not chunks[-1]["was_refusal"]
    _no_internal_keys(chunks)


def test_stream_events_show_only_the_wrapper(remote: Any) -> None:
    """astream_events carries progress and the final contract, never a node's state."""

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in remote.astream_events({"question": ANSWERABLE}, version="v2")]

    events = asyncio.run(collect())
    kinds = [e["event"] for e in events]
    assert kinds[0] == "on_chain_start" and kinds[-1] == "on_chain_end"
    assert {e["name"] for e in events} == {"/chat"}
    assert tuple(events[-1]["data"]["output"]) == CONTRACT_KEYS
    _no_internal_keys(events)


def test_raw_http_invoke_and_sse_stream(server: Running) -> None:
    """Plain HTTP clients get JSON from /invoke and server-sent events from /stream."""
    headers = {"X-API-Key": KEY}
    r = httpx.post(server.url + "/chat/invoke", json={"input": {"question": OUT_OF_SCOPE}},
                   headers=headers, timeout=60)
    assert r.status_code == 200
    assert r.json()["output"]["was_refusal"] is True
    events: list[tuple[str, str]] = []
    with httpx.stream("POST", server.url + "/chat/stream", headers=headers, timeout=60,
                      json={"input": {"question": ANSWERABLE}}) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        for line in resp.iter_lines():
            if line.startswith("event: "):
                events.append((line[7:], ""))
            elif line.startswith("data: "):
                events[-1] = (events[-1][0], line[6:])
    names = [e for e, _ in events]
    assert names[0] == "metadata" and names[-1] == "end" and "error" not in names
    data = [json.loads(d) for e, d in events if e == "data"]
    assert tuple(data[-1]) == CONTRACT_KEYS and data[-1]["sources"]


def test_loosening_override_is_rejected_over_http(server: Running) -> None:
    """A client lowering the floor gets 422 naming the field; raising it is accepted."""
    body = {"input": {"question": ANSWERABLE}, "config": {"configurable": {"floor": -0.5}}}
    r = httpx.post(server.url + "/chat/invoke", json=body, headers={"X-API-Key": KEY}, timeout=60)
    assert r.status_code == 422 and "floor" in r.json()["detail"]
    body["config"] = {"configurable": {"floor": 0.95}}
    r = httpx.post(server.url + "/chat/invoke", json=body, headers={"X-API-Key": KEY}, timeout=60)
    assert r.status_code == 200
    out = r.json()["output"]
    assert out["diagnostics"]["thresholds"]["floor"] == 0.95 and out["was_refusal"]


def test_oversized_body_is_413(server: Running) -> None:
    """A body over TEXTBOUND_MAX_REQUEST_BYTES is refused, declared or streamed in chunks."""
    big = json.dumps({"input": {"question": "x" * (MAX_BYTES + 10)}}).encode()
    headers = {"X-API-Key": KEY, "Content-Type": "application/json"}
    r = httpx.post(server.url + "/chat/invoke", content=big, headers=headers)
    assert r.status_code == 413 and "limit" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 4096):
            yield big[i:i + 4096]

    r = httpx.post(server.url + "/chat/invoke", content=chunks(), headers=headers)
    assert r.status_code == 413
    small = httpx.post(server.url + "/chat/invoke", headers=headers, timeout=60,
                       content=json.dumps({"input": {"question": OUT_OF_SCOPE}}).encode())
    assert small.status_code == 200


def test_cors_allows_only_the_configured_origin(server: Running) -> None:
    """Preflights from the configured origin pass without a key; others get no CORS grant."""
    pre = {"Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "content-type,x-api-key"}
    ok = httpx.options(server.url + "/chat/invoke", headers={"Origin": ORIGIN, **pre})
    assert ok.status_code == 200
    assert ok.headers["access-control-allow-origin"] == ORIGIN
    assert "x-api-key" in ok.headers["access-control-allow-headers"].lower()
    other = httpx.options(server.url + "/chat/invoke",
                          headers={"Origin": "http://elsewhere.localhost", **pre})
    assert "access-control-allow-origin" not in other.headers
    denied = httpx.post(server.url + "/chat/invoke", headers={"Origin": ORIGIN},
                        json={"input": {"question": OUT_OF_SCOPE}})
    assert denied.status_code == 401
    assert denied.headers["access-control-allow-origin"] == ORIGIN


def test_healthz_is_503_and_says_why_without_a_collection(tmp_path: Path) -> None:
    """An empty data folder: the store answers, the collection is missing, so 503."""
    from fastapi.testclient import TestClient

    from tests.conftest import make_settings
    from textbound.serving.server import create_app

    app = create_app(settings=make_settings(tmp_path / "empty"))
    with TestClient(app) as client:
        r = client.get("/healthz")
    assert r.status_code == 503
    body = r.json()
    assert body["checks"]["store"]["ok"] and not body["checks"]["collection"]["ok"]
    assert any("does not exist" in p and "textbound ingest" in p for p in body["problems"])
