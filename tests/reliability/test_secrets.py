"""Secrets and access: keys never leak, every data route needs the API key, bodies are bounded."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.reliability.conftest import FakeOpenAI, bounded, free_port

SECRETS = {
    "TEXTBOUND_API_KEY": "tb-api-7Q1xSECRET-aaaa",
    "TEXTBOUND_CHAT_API_KEY": "tb-chat-9Z2ySECRET-bbbb",
    "TEXTBOUND_QDRANT_API_KEY": "tb-qdrant-4K8wSECRET-cccc",
    "OPENAI_API_KEY": "sk-openai-3M5vSECRET-dddd",
}
API_KEY = SECRETS["TEXTBOUND_API_KEY"]
Q = {"input": {"question": "What is a topic?"}}


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)


def _assert_clean(*texts: str) -> None:
    blob = "\n".join(texts)
    for name, value in SECRETS.items():
        assert value not in blob, f"{name} leaked"
        assert value[-10:] not in blob, f"part of {name} leaked"


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection:UserWarning")
def test_keys_never_leak_on_failure_paths(secret_env: None, tmp_path: Path, embeddings: Any,
                                          fake_store: Any, fake_openai: FakeOpenAI,
                                          caplog: pytest.LogCaptureFixture,
                                          capfd: pytest.CaptureFixture[str],
                                          cases: Counter[str]) -> None:
    """Store down, chat failing, bad keys, bad input: no key in responses, logs or audit lines."""
    from graph.builder import build_services
    from textbound.serving.server import create_app
    from textbound.settings import Settings

    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    headers = {"X-API-Key": API_KEY}
    # 1. a Qdrant server that is not there (its key set), the whole app from the environment
    down = Settings(_env_file=None, data_dir=tmp_path / "down",  # type: ignore[call-arg]
                    qdrant_url=f"http://127.0.0.1:{free_port()}", qdrant_timeout_s=2)
    with TestClient(create_app(settings=down)) as c:
        for r in (c.post("/chat/invoke", json=Q, headers=headers), c.get("/healthz"),
                  c.get("/api/chapters", headers=headers), c.post("/chat/invoke", json=Q),
                  c.post("/chat/invoke", json=Q, headers={"X-API-Key": API_KEY[:-1]}),
                  c.post("/chat/batch", json={"inputs": [{"question": 1}]}, headers=headers)):
            seen.append(r.text + str(r.headers))
            assert r.status_code < 500 or r.status_code == 503
    # 2. a chat server that fails in every way, then refuses the connection
    s = Settings(_env_file=None, data_dir=tmp_path / "chat", chat_model="fake",  # type: ignore[call-arg]
                 chat_base_url=fake_openai.url, generator="chat",  # type: ignore[attr-defined]
                 chat_timeout_s=1, chat_max_retries=0)
    services = build_services(settings=s, embeddings=embeddings, store=fake_store)
    with TestClient(create_app(services)) as c:
        for mode in ("500", "429", "garbage", "malformed", "sleep", "echo"):
            fake_openai.mode = mode
            r = bounded(c.post, "/chat/invoke", json=Q, headers=headers)
            seen.append(r.text)
            cases["secrets/failure_paths"] += 1
    audit = "".join(p.read_text() for p in tmp_path.rglob("audit.jsonl"))
    out, err = capfd.readouterr()
    _assert_clean(*seen, audit, out, err, caplog.text)
    assert audit.count("\n") >= 7


ROUTES = [
    ("POST", "/chat/invoke"), ("POST", "/chat/batch"), ("POST", "/chat/stream"),
    ("POST", "/chat/stream_events"), ("POST", "/chat/stream_log"),
    ("GET", "/chat/input_schema"), ("GET", "/chat/output_schema"),
    ("GET", "/chat/config_schema"), ("GET", "/chat/playground/"), ("GET", "/docs"),
    ("GET", "/redoc"), ("GET", "/openapi.json"), ("GET", "/api/reader"), ("GET", "/api/chapters"),
    ("GET", "/api/chapters/book.md"), ("POST", "/"), ("GET", "/nonexistent"),
]


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, embeddings: Any) -> Iterator[TestClient]:
    from tests.conftest import book_store
    from tests.reliability.conftest import small_app

    app = small_app(tmp_path_factory.mktemp("guarded"), embeddings,
                    book_store(embeddings), api_key=API_KEY, max_request_bytes=5_000)
    with TestClient(app) as c:
        yield c


@pytest.mark.filterwarnings("ignore:astream_log is deprecated")  # LangServe's /stream_log
@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_route_refuses_requests_without_the_key(guarded: TestClient, cases: Counter[str],
                                                method: str, path: str) -> None:
    """Every route but /healthz and the page's assets: 401 without the key or with a wrong one."""
    cases["access/routes_checked"] += 1
    body = {"inputs": [Q["input"]]} if path.endswith("batch") else Q
    kw: dict[str, Any] = {"json": body} if method == "POST" else {}
    for headers in ({}, {"X-API-Key": "wrong"}, {"X-API-Key": ""}, {"Authorization": API_KEY}):
        r = guarded.request(method, path, headers=headers, **kw)
        assert r.status_code == 401, (path, headers, r.status_code)
        assert "X-API-Key" in r.json()["detail"]
    ok = guarded.request(method, path, headers={"X-API-Key": API_KEY}, **kw)
    assert ok.status_code != 401


@pytest.mark.parametrize("path", ["/healthz", "/", "/reader/static/reader.js",
                                  "/reader/static/reader.css"])
def test_open_routes_need_no_key(guarded: TestClient, path: str) -> None:
    """The health check and the reader page's assets (no data) are open to GET."""
    assert guarded.get(path).status_code in (200, 503)


@pytest.mark.parametrize("path", ["/chat/invoke", "/chat/batch", "/chat/stream"])
def test_bodies_over_the_limit_are_413(guarded: TestClient, cases: Counter[str],
                                       path: str) -> None:
    """Declared or streamed (chunked, no length), a body over the limit is 413 naming it."""
    cases["access/oversized_bodies"] += 2
    big = b'{"input": {"question": "' + b"q" * 6_000 + b'"}}'
    headers = {"X-API-Key": API_KEY, "Content-Type": "application/json"}
    r = guarded.post(path, content=big, headers=headers)
    assert r.status_code == 413 and "TEXTBOUND_MAX_REQUEST_BYTES" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 1000):
            yield big[i:i + 1000]

    r = guarded.post(path, content=chunks(), headers=headers)
    assert r.status_code == 413
    # the limit applies before authentication's cost too: no key, still refused
    assert guarded.post(path, content=big).status_code in (401, 413)
