"""The red-team's findings of issue 28, one test each (finding 1, the kills, has its own file).

2 long non-ASCII names, NFC and look-alike names; 3 quadratic HTML and the per-document time
limit; 4 content sniffing; 5 list settings and one-line setting errors; 6 slow and vanishing
upload bodies; 7 server paths in responses; 8 credentials in the access log.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import REPO, make_settings
from tests.unit.test_uploads import AUTH, KEY, _client, _finished
from textbound.documents.ingest import ingest
from textbound.documents.ingest.html import html_to_markdown as _html_to_markdown
from textbound.documents.store.memory import MemoryStore
from textbound.fakes import HashEmbedder


@pytest.fixture
def client(tmp_path: Path, embeddings: Any) -> Iterator[TestClient]:
    """A server with an API key over an empty collection."""
    yield from _client(tmp_path, embeddings, api_key=KEY, max_upload_bytes=200_000)


# --- 2: names ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["é" * 120 + ".md", "数" * 103 + ".md"])
def test_a_name_too_long_in_bytes_is_refused_not_a_500(client: TestClient, name: str) -> None:
    """120 é or 103 CJK characters are under 200 characters but over 200 bytes: 422 says so."""
    r = client.put(f"/api/documents/{name}", content="# Hi\n\nSome text.", headers=AUTH)
    assert r.status_code == 422, r.text
    assert "bytes" in r.json()["detail"]


def test_a_long_name_within_the_byte_limit_is_kept(client: TestClient) -> None:
    """98 é and .md are 199 bytes, within the limit: the upload is kept under its name."""
    name = "é" * 98 + ".md"
    job = _finished(client, client.put(f"/api/documents/{name}", content="# Hi\n\nSome text.",
                                       headers=AUTH))
    assert job["status"] == "done" and job["source"] == name


def test_a_decomposed_name_is_stored_composed(client: TestClient) -> None:
    """A browser's NFD name (e + combining acute) is stored as NFC."""
    job = _finished(client, client.put("/api/documents/e\u0301cole.md",
                                       content="# École\n\nLes élèves lisent.", headers=AUTH))
    assert job["source"] == "\u00e9cole.md"


@pytest.mark.parametrize("alike", ["ZORBLAX.md", "z\u043erblax.md", "zorbIax.md"])
def test_a_look_alike_name_is_refused_naming_the_original(client: TestClient,
                                                          alike: str) -> None:
    """Case and confusable variants of an existing name get 409 naming it."""
    _finished(client, client.put("/api/documents/zorblax.md", content="# Z\n\nZorblax text.",
                                 headers=AUTH))
    r = client.put(f"/api/documents/{alike}", content="# Z\n\nOther text.", headers=AUTH)
    assert r.status_code == 409, r.text
    assert "'zorblax.md'" in r.json()["detail"]
    again = client.put("/api/documents/zorblax.md", content="# Z\n\nNew text.", headers=AUTH)
    assert again.status_code == 202  # the same name replaces, as before


# --- 3: HTML -------------------------------------------------------------------------------------
def _nested(n: int) -> str:
    return ("<html><body>" + "".join(f"<div><p>paragraph {i}</p>" for i in range(n))
            + "</div>" * n + "</body></html>")


def _best_of_3(html: str) -> float:
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        _html_to_markdown(html)
        times.append(time.perf_counter() - t0)
    return min(times)


def test_html_conversion_is_linear_in_nested_elements() -> None:
    """4x the nested blocks takes well under 16x the time (it took 15x: 1.2 s -> 18.4 s)."""
    small, large = _best_of_3(_nested(1000)), _best_of_3(_nested(4000))
    assert large / small < 8, (small, large)
    md, _ = _html_to_markdown(_nested(50))
    assert md.count("paragraph") == 50  # each block once, in order
    assert md.index("paragraph 3") < md.index("paragraph 40")


def test_a_document_over_the_time_limit_fails_its_job_with_the_reason(
        tmp_path: Path, embeddings: Any) -> None:
    """A file that takes longer than TEXTBOUND_INGEST_TIME_LIMIT_S fails, saying so."""
    for client in _client(tmp_path, embeddings, api_key=KEY, max_upload_bytes=2_000_000,
                          ingest_time_limit_s=1e-6):
        job = _finished(client, client.put("/api/documents/deep.html", content=_nested(3000),
                                           headers=AUTH))
        assert job["status"] == "failed" and "TEXTBOUND_INGEST_TIME_LIMIT_S" in job["error"]
        page = client.put("/api/documents/next.md", content="# N\n\nNext.", headers=AUTH)
        assert page.status_code == 202  # the worker is free for the next one


# --- 4: content sniffing -------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "content", "reason"), [
    ("paper.md", b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n", "a PDF"),
    ("notes.txt", bytes(range(1, 32)) * 40, "binary"),
    ("photo.txt", b"\x89PNG\r\n\x1a\n" + b"data" * 50, "PNG"),
    ("page.html", b"PK\x03\x04" + b"zipped" * 50, "ZIP"),
    ("fake.pdf", b"# Not a PDF\n\nJust text.", "not a PDF"),
])
def test_content_that_is_not_its_declared_type_is_skipped(tmp_path: Path, name: str,
                                                          content: bytes, reason: str) -> None:
    """PDF bytes in a .md, binary in a .txt or .html, text in a .pdf: skipped with a reason."""
    (tmp_path / name).write_bytes(content)
    summary = ingest(MemoryStore(HashEmbedder()), [tmp_path / name])
    assert summary.chunks_added == 0
    assert len(summary.skipped) == 1 and reason in summary.skipped[0][1]


# --- 5: settings ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "origins"), [
    ("https://a.example", ["https://a.example"]),
    ("https://a.example, https://b.example", ["https://a.example", "https://b.example"]),
    ('["https://a.example"]', ["https://a.example"]),
    ("", []),
])
def test_a_list_setting_takes_commas_or_json(monkeypatch: pytest.MonkeyPatch, value: str,
                                             origins: list[str]) -> None:
    """TEXTBOUND_CORS_ORIGINS as a plain origin, comma-separated, JSON or empty."""
    from textbound.settings import load_settings

    monkeypatch.setenv("TEXTBOUND_CORS_ORIGINS", value)
    assert load_settings(_env_file=None).cors_origins == origins


COMMANDS = [["ingest"], ["ask", "hi"], ["stats"], ["init", "--title", "T"], ["demo"],
            ["report"], ["serve"], ["chat"], ["eval"], ["migrate-store"],
            ["calibrate", "--questions", "q.jsonl", "--corpus", "c"]]


def test_a_bad_setting_is_one_line_for_every_command(tmp_path: Path) -> None:
    """Every command exits 2 with one line naming the variable and the form it takes."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTBOUND_")}
    variable, value, expected = "TEXTBOUND_CORS_ORIGINS", "[not json", "a comma-separated list"
    env |= {variable: value, "TEXTBOUND_DATA_DIR": str(tmp_path),
            "PYTHONPATH": str(REPO)}  # this checkout's code, whatever is installed
    for args in COMMANDS:
        run = subprocess.run([sys.executable, "-m", "textbound.serving.cli", *args], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        lines = (run.stdout + run.stderr).strip().splitlines()
        assert run.returncode == 2, (args, run.stderr[-2000:])
        assert len(lines) == 1 and f"{variable}={value}" in lines[0], (args, lines)
        assert expected in lines[0] and "Traceback" not in run.stderr


# --- 6: slow and vanishing upload bodies ---------------------------------------------------------
def _upload_server(tmp_path: Path, embeddings: Any) -> Any:
    from tests.reliability.conftest import ThreadServer, small_app
    from textbound.documents.store import VectorStore

    settings = {"api_key": KEY, "request_read_timeout_s": 1.0}
    store = VectorStore.from_settings(make_settings(tmp_path, **settings), embeddings)
    app = small_app(tmp_path, embeddings, store, **settings)
    return ThreadServer(app, make_settings(tmp_path, **settings)), store


def _partial_put(port: int, name: str) -> Any:
    import socket

    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(f"PUT /api/documents/{name} HTTP/1.1\r\nHost: x\r\nX-API-Key: {KEY}\r\n"
              "Content-Length: 5000\r\nContent-Type: text/markdown\r\n\r\n# Slow\n\nA few "
              "words".encode())
    return s


def test_a_slow_upload_body_gets_408_and_a_hang_up_one_clean_line(
        tmp_path: Path, embeddings: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A body slower than the read deadline is answered 408; a client that leaves is logged."""
    import logging

    caplog.set_level(logging.INFO)
    server, store = _upload_server(tmp_path, embeddings)
    try:
        with server as srv:
            slow = _partial_put(srv.port, "slow.md")
            reply = b""
            while chunk := slow.recv(4096):
                reply += chunk
            slow.close()
            gone = _partial_put(srv.port, "gone.md")
            time.sleep(0.3)
            gone.close()
            time.sleep(0.5)
    finally:
        store.close()
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "Exception in ASGI application" in m], messages
    assert any("'slow.md' stopped after" in m and "408" in m for m in messages), messages
    assert any("'gone.md' stopped after" in m and "disconnected" in m for m in messages)
    assert not list((tmp_path / "uploads").rglob(".incoming-*"))


# --- 7: server paths -----------------------------------------------------------------------------
def test_responses_name_paths_relative_to_the_data_folder(tmp_path: Path,
                                                          embeddings: Any) -> None:
    """/healthz, a re-ingest's 409 and /api/reader's profile never show the server's paths."""
    data = tmp_path / "data"
    (data / "profiles").mkdir(parents=True)
    (data / "profiles" / "textbook.yaml").write_text("title: Tide pools\n")
    for client in _client(tmp_path, embeddings, api_key=KEY):
        _finished(client, client.put("/api/documents/gone.md", content="# Gone\n\nSoon gone.",
                                     headers=AUTH))
        (data / "uploads" / "textbook" / "gone.md").unlink()
        replies = [client.get("/healthz", headers=AUTH),
                   client.post("/api/documents/gone.md/reingest", headers=AUTH),
                   client.get("/api/reader", headers=AUTH)]
        assert [r.status_code for r in replies] == [200, 409, 200]
        for r in replies:
            assert str(tmp_path) not in r.text, r.text
        assert replies[0].json()["checks"]["store"]["location"].startswith("<data folder>/")
        assert "<data folder>/uploads/textbook/gone.md" in replies[1].json()["detail"]
        assert replies[2].json()["profile"] == "<data folder>/profiles/textbook.yaml"


# --- 8: credentials in the access log ------------------------------------------------------------
def test_query_string_credentials_are_redacted_in_the_access_log(tmp_path: Path) -> None:
    """`?api_key=...` (refused anyway) is written as api_key=*** by `textbound serve`'s log."""
    import logging

    from textbound.serving.server import uvicorn_config

    class Lines(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    uvicorn_config(object(), make_settings(tmp_path), log_level="info")
    access, lines = logging.getLogger("uvicorn.access"), Lines()
    access.addHandler(lines)  # uvicorn's access logger does not propagate to the root
    try:
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET",
                    "/chat/invoke?api_key=s3cret-1&x=1&token=s3cret-2&q=ok", "1.1", 401)
    finally:
        access.removeHandler(lines)
    assert len(lines.lines) == 1 and "s3cret" not in lines.lines[0]
    assert "/chat/invoke?api_key=***&x=1&token=***&q=ok" in lines.lines[0]
