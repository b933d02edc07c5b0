"""`POST /feedback` in the app, over the shipped fakes: statuses, key, body limit, OpenAPI."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import make_settings
from tests.unit.test_feedback import RUN, audit_line, write_audit
from textbound.fakes import HashEmbedder, MemoryStore
from textbound.serving.server import create_app

KEY = "feedback-key"
AUTH = {"X-API-Key": KEY}
PASSAGE = "A service is described by a .srv file: a request part and a response part."


def fake_services(data: Path, **settings: Any) -> Any:
    """Services over a one-chunk MemoryStore and hash embeddings; the audit log in `data`."""
    from graph.builder import build_services

    store = MemoryStore(HashEmbedder())
    store.ensure_collection(16)
    store.upsert(["c-srv"], store.embeddings.embed_documents([PASSAGE]), [PASSAGE],
                 [{"source": "02-ros2.md", "section": "Chapter 2 > Services", "page": 4}])
    return build_services(settings=make_settings(data, **settings), embeddings=HashEmbedder(),
                          store=store)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    services = fake_services(tmp_path / "data", api_key=KEY, max_request_bytes=4000)
    write_audit(services.settings.audit_log, audit_line(
        sources=[{"chunk_id": "c-srv", "score": 0.8}]))
    with TestClient(create_app(services)) as c:
        c.feedback_path = tmp_path / "data" / "feedback.jsonl"  # type: ignore[attr-defined]
        yield c


def stored(client: TestClient) -> list[dict[str, Any]]:
    path = Path(client.feedback_path)  # type: ignore[attr-defined]
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] \
        if path.exists() else []


def post(client: TestClient, body: Any, headers: dict[str, str] | None = None) -> Any:
    return client.post("/feedback", json=body, headers=AUTH if headers is None else headers)


def test_a_rating_is_201_with_the_stored_summary(client: TestClient) -> None:
    """201: the run's question and cited place, from the server's records."""
    r = post(client, {"run_id": RUN, "rating": "down", "comment": "it is a .srv\u200b file"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["run_id"] == RUN and body["rating"] == "down"
    assert body["comment"] == "it is a .srv file"
    assert body["question"] == "What file defines its interface?"
    assert body["sources"] == [{"chunk_id": "c-srv", "source": "02-ros2.md",
                                "section": "Chapter 2 > Services"}]
    assert body["replaces_earlier"] is False
    [line] = stored(client)
    assert line["sources"][0]["excerpt"] == PASSAGE and line["sources"][0]["page"] == 4


def test_rating_again_is_201_and_replaces_the_earlier_rating(client: TestClient) -> None:
    """The latest rating wins; the response says it replaced one."""
    assert post(client, {"run_id": RUN, "rating": "down"}).status_code == 201
    again = post(client, {"run_id": RUN, "rating": "up", "comment": None})
    assert again.status_code == 201 and again.json()["replaces_earlier"] is True
    assert [r["rating"] for r in stored(client)] == ["down", "up"]


def test_an_unknown_run_is_404(client: TestClient) -> None:
    """A run id the audit log does not hold: 404 saying so; nothing stored."""
    r = post(client, {"run_id": str(uuid.uuid4()), "rating": "up"})
    assert r.status_code == 404 and "no response with run_id" in r.json()["detail"]
    assert "/" not in r.json()["detail"].split("run_id")[0]  # no server path
    assert stored(client) == []


@pytest.mark.parametrize("given", ["UP", " Down ", "dOwN"])
def test_a_rating_in_any_case_is_accepted_as_the_cli_accepts_it(client: TestClient,
                                                                given: str) -> None:
    """`UP` is `up` over HTTP as in `textbound feedback`: one list, read in any case."""
    from textbound.records.feedback import check_rating

    r = post(client, {"run_id": RUN, "rating": given})
    assert r.status_code == 201, r.text
    assert r.json()["rating"] == check_rating(given) == given.strip().lower()
    assert [line["rating"] for line in stored(client)] == [given.strip().lower()]


@pytest.mark.parametrize("body", [
    {"run_id": RUN, "rating": "meh"},
    {"run_id": RUN},
    {"run_id": RUN, "rating": "up", "extra": 1},
    {"run_id": RUN, "rating": "up", "comment": 5},
])
def test_a_bad_rating_or_body_is_422(client: TestClient, body: dict[str, Any]) -> None:
    """Rating other than up/down, a missing one, an unknown field, a comment not text: 422."""
    assert post(client, body).status_code == 422
    assert stored(client) == []


@pytest.mark.parametrize(("body", "says"), [
    ({"run_id": "not-a-uuid", "rating": "up"}, "not a run id"),
    ({"run_id": RUN, "rating": "down", "comment": "y" * 1001}, "at most 1,000"),
])
def test_a_bad_run_id_or_comment_is_422_saying_why(client: TestClient, body: dict[str, Any],
                                                   says: str) -> None:
    """The 422's detail is one sentence naming the problem."""
    r = post(client, body)
    assert r.status_code == 422 and says in r.json()["detail"]


def test_the_api_key_is_required(client: TestClient) -> None:
    """Without the key: 401, nothing stored."""
    assert post(client, {"run_id": RUN, "rating": "up"}, headers={}).status_code == 401
    assert stored(client) == []


def test_the_body_limit_applies(client: TestClient) -> None:
    """A body over TEXTBOUND_MAX_REQUEST_BYTES is 413 before the route runs."""
    r = post(client, {"run_id": RUN, "rating": "down", "comment": "z" * 5000})
    assert r.status_code == 413


def test_without_an_audit_log_feedback_is_503(tmp_path: Path) -> None:
    """TEXTBOUND_AUDIT_LOG="": 503 naming the setting."""
    services = fake_services(tmp_path / "data", audit_log="")
    with TestClient(create_app(services)) as c:
        r = c.post("/feedback", json={"run_id": RUN, "rating": "up"})
    assert r.status_code == 503 and "TEXTBOUND_AUDIT_LOG" in r.json()["detail"]


def test_openapi_documents_the_route(client: TestClient) -> None:
    """The spec lists POST /feedback with its body, 201 and every error status."""
    spec = client.get("/openapi.json", headers=AUTH).json()
    op = spec["paths"]["/feedback"]["post"]
    assert set(op["responses"]) >= {"201", "400", "401", "404", "408", "413", "422", "503"}
    body = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema = spec["components"]["schemas"][body.rsplit("/", 1)[1]]
    assert schema["properties"]["rating"]["enum"] == ["up", "down"]
    assert "Problem" in json.dumps(op["responses"]["404"])
