"""Adding documents while serving: PUT /api/documents/{name}, re-ingest, and their jobs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graph.builder import build_services
from textbound.documents.ingest import ingest
from textbound.documents.store import VectorStore
from textbound.documents.uploads import uploads_dir
from textbound.serving.server import create_app

from ..conftest import make_settings

KEY = "upload-key-1"
AUTH = {"X-API-Key": KEY}
PAGE = ("<html><head><title>Tide Pools</title></head><body><h1>Tide Pools</h1>"
        "<h2>Anemones</h2><p>A sea anemone catches small fish with stinging tentacles. "
        "It can live for decades in the same rock crevice.</p></body></html>")


def _client(tmp_path: Path, embeddings: Any, **settings: Any) -> Iterator[TestClient]:
    config = make_settings(tmp_path / "data", **settings)
    store = VectorStore.from_settings(config, embeddings)
    services = build_services(settings=config, embeddings=embeddings, store=store)
    try:
        with TestClient(create_app(services)) as client:
            yield client
    finally:
        store.close()


@pytest.fixture
def client(tmp_path: Path, embeddings: Any) -> Iterator[TestClient]:
    """A server over an empty collection, with an API key and a 1 kB limit on other bodies."""
    yield from _client(tmp_path, embeddings, api_key=KEY, max_request_bytes=1_000,
                       max_upload_bytes=20_000)


def _finished(client: TestClient, response: Any) -> dict[str, Any]:
    assert response.status_code == 202, response.text
    job = response.json()
    deadline = time.monotonic() + 120
    while job["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
        job = client.get(job["status_url"], headers=AUTH).json()
    return job


def test_an_uploaded_file_is_kept_ingested_and_listed(client: TestClient, tmp_path: Path) -> None:
    """The file is saved under the data folder, its passages stored, the reader lists it."""
    job = _finished(client, client.put("/api/documents/tide-pools.html", content=PAGE,
                                       headers=AUTH))
    assert job["status"] == "done", job
    assert job["summary"]["chunks_added"] >= 1 and job["summary"]["files_skipped"] == []
    kept = uploads_dir(make_settings(tmp_path / "data")) / "tide-pools.html"
    assert kept.read_text() == PAGE
    toc = client.get("/api/chapters", headers=AUTH).json()["chapters"]
    assert [c["source"] for c in toc] == ["tide-pools.html"]
    assert toc[0]["title"] == "Tide Pools" and toc[0]["sections"] == ["Anemones"]
    chapter = client.get("/api/chapters/tide-pools.html", headers=AUTH).json()
    assert "stinging tentacles" in chapter["text"] and not chapter["stale"]


def test_an_upload_larger_than_the_request_limit_is_streamed(client: TestClient) -> None:
    """Uploads have their own limit: a 5 kB file passes a 1 kB TEXTBOUND_MAX_REQUEST_BYTES."""
    text = "# Kelp\n\n" + "Kelp forests shelter many fish along rocky coasts. " * 100
    job = _finished(client, client.put("/api/documents/kelp.md", content=text, headers=AUTH))
    assert job["status"] == "done" and job["summary"]["chunks_added"] > 1


def test_uploading_again_replaces_the_documents_passages(client: TestClient) -> None:
    """The same name again is the new version: its old passages go, unchanged ones stay."""
    _finished(client, client.put("/api/documents/notes.md", content="# Notes\n\nOld words here.",
                                 headers=AUTH))
    job = _finished(client, client.put("/api/documents/notes.md",
                                       content="# Notes\n\nNew words here.", headers=AUTH))
    assert job["summary"]["chunks_added"] == 1 and job["summary"]["chunks_removed"] == 1


def test_a_file_ingestion_cannot_use_is_skipped_with_the_reason(client: TestClient,
                                                                tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are skipped as `textbound ingest` skips them; the old version
    stays, on disk and in the collection."""
    _finished(client, client.put("/api/documents/notes.txt", content="Plain notes on kelp.",
                                 headers=AUTH))
    job = _finished(client, client.put("/api/documents/notes.txt", content=b"\xff\xfe bad",
                                       headers=AUTH))
    assert job["status"] == "skipped" and "not valid UTF-8" in job["reason"], job
    assert job["summary"]["files_skipped"][0]["file"] == "notes.txt"
    kept = uploads_dir(make_settings(tmp_path / "data")) / "notes.txt"
    assert kept.read_text() == "Plain notes on kelp."
    assert sorted(p.name for p in kept.parent.iterdir()) == ["notes.txt"]


def test_a_skipped_new_file_is_not_kept(client: TestClient, tmp_path: Path) -> None:
    """A first upload that gives no passages leaves nothing behind."""
    job = _finished(client, client.put("/api/documents/blank.md", content="   \n",
                                       headers=AUTH))
    assert job["status"] == "skipped" and "no text" in job["reason"]
    assert list(uploads_dir(make_settings(tmp_path / "data")).iterdir()) == []


@pytest.mark.parametrize(("name", "body", "headers", "status", "words"), [
    ("book.pages", b"PK\x03\x04", {}, 415, "cannot ingest .pages"),
    ("book.pdf", b"<html>", {}, 415, "not a PDF"),
    ("book.pdf", b"%PDF-1.4", {"Content-Type": "multipart/form-data; boundary=x"}, 415,
     "not a multipart form"),
    ("book.md", b"", {}, 422, "is empty"),
    (".hidden.md", b"# x", {}, 422, "not a plain file name"),
    ("%FF%FE.md", b"# x", {}, 422, "'%FF%FE.md' is not valid UTF-8"),
    ("big.md", b"x" * 20_001, {}, 413, "TEXTBOUND_MAX_UPLOAD_BYTES"),
])
def test_an_upload_outside_the_limits_is_refused_saying_why(
        client: TestClient, tmp_path: Path, name: str, body: bytes, headers: dict[str, str],
        status: int, words: str) -> None:
    """413 over the size limit, 415 for a type ingestion cannot read, 422 for a bad name or body."""
    r = client.put(f"/api/documents/{name}", content=body, headers={**AUTH, **headers})
    assert r.status_code == status, r.text
    assert words in r.json()["detail"]
    folder = uploads_dir(make_settings(tmp_path / "data"))
    assert not folder.exists() or list(folder.iterdir()) == []


def test_uploads_need_the_api_key(client: TestClient) -> None:
    """Without X-API-Key the upload is 401."""
    assert client.put("/api/documents/a.md", content="# A\n\nText.").status_code == 401


def test_a_server_without_an_api_key_takes_no_uploads(tmp_path: Path, embeddings: Any) -> None:
    """Writing to the collection needs a key on the server: without one, 403 saying so."""
    for client in _client(tmp_path, embeddings):
        r = client.put("/api/documents/a.md", content="# A\n\nText.")
        assert r.status_code == 403 and "TEXTBOUND_API_KEY" in r.json()["detail"]


def test_reingest_reads_the_file_again_under_its_source(tmp_path: Path, embeddings: Any) -> None:
    """A document ingested by the CLI from a folder is read again from its file, same source."""
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "kelp.md").write_text("# Kelp\n\nKelp grows fast.")
    config = make_settings(tmp_path / "data")
    store = VectorStore.from_settings(config, embeddings)
    ingest(store, [folder])
    store.close()
    (folder / "kelp.md").write_text("# Kelp\n\nKelp grows very fast in cold water.")
    for client in _client(tmp_path, embeddings, api_key=KEY):
        job = _finished(client, client.post("/api/documents/course/kelp.md/reingest",
                                            headers=AUTH))
        assert job["status"] == "done" and job["source"] == "course/kelp.md"
        assert job["summary"]["chunks_added"] == 1 and job["summary"]["chunks_removed"] == 1
        toc = client.get("/api/chapters", headers=AUTH).json()["chapters"]
        assert [c["source"] for c in toc] == ["course/kelp.md"]
        r = client.post("/api/documents/nope.md/reingest", headers=AUTH)
        assert r.status_code == 404
        assert client.get("/api/documents/jobs/unknown", headers=AUTH).status_code == 404
