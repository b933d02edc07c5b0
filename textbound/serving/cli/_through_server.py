"""`ask` and `stats` through a running `textbound serve`, which holds the embedded collection.

A command first looks for the collection's server (`textbound.serving.cli._running`); when one
runs, it asks over HTTP what it would otherwise read from the store, with the settings' API key (the
teacher's). The server writes the audit line of a question asked this way, as for any other.
"""

from __future__ import annotations

from typing import Any

from textbound.serving.cli._common import fail
from textbound.serving.cli._running import RunningServer
from textbound.settings import Settings

TIMEOUT_S = 300.0
"""A question may wait on a chat model; the server bounds that itself."""


def server_of(collection: str | None = None) -> tuple[RunningServer, Settings] | None:
    """Return the running server of the collection (default: the settings') and the settings."""
    from textbound.serving.cli._common import get_settings
    from textbound.serving.cli._running import running_server

    settings = get_settings(collection)
    server = running_server(settings)
    return (server, settings) if server is not None else None


def _client(server: RunningServer, settings: Settings) -> Any:
    import httpx

    key = settings.api_key.get_secret_value() if settings.api_key else ""
    return httpx.Client(base_url=server.url, timeout=TIMEOUT_S,
                        headers={"X-API-Key": key} if key else {})


def _detail(response: Any) -> str:
    try:
        detail = response.json().get("detail")
    except ValueError:
        detail = None
    text = str(detail) if detail else response.text[:300]
    if response.status_code in (401, 403):
        text += " (set TEXTBOUND_API_KEY to the server's teacher key)"
    return f"HTTP {response.status_code}: {text}"


def _unreachable(server: RunningServer, exc: Exception) -> Any:
    return fail(f"the textbound server (pid {server.pid}) holds collection "
                f"{server.collection!r} but does not answer at {server.url} ({exc}); wait for "
                "it to start, or stop it")


def ask_server(server: RunningServer, settings: Settings, payload: dict[str, Any],
               thread_id: str | None, context: dict[str, Any]) -> dict[str, Any]:
    """Answer one question with the server's graph; return the response contract.

    `context` (policy, generator) goes as per-request tunables, which the server checks.
    """
    import httpx

    configurable = {**context, **({"thread_id": thread_id} if thread_id else {})}
    body = {"input": {k: v for k, v in payload.items() if v is not None},
            "config": {"configurable": configurable}}
    try:
        with _client(server, settings) as client:
            r = client.post("/chat/invoke", json=body)
    except httpx.HTTPError as exc:
        raise _unreachable(server, exc) from exc
    if r.status_code != 200:
        raise fail(f"the textbound server at {server.url} did not answer: {_detail(r)}")
    return dict(r.json()["output"])


def stats_from_server(server: RunningServer, settings: Settings) -> dict[str, Any]:
    """Return what `textbound stats` shows, as the server reports it (and its table of contents)."""
    import httpx

    try:
        with _client(server, settings) as client:
            chapters = client.get("/api/chapters")
            if chapters.status_code != 200:
                raise fail(f"the textbound server at {server.url} did not list the "
                           f"collection: {_detail(chapters)}")
            health = client.get("/healthz")
            reader = client.get("/api/reader")
    except httpx.HTTPError as exc:
        raise _unreachable(server, exc) from exc
    checks = (health.json().get("checks") or {}) if health.status_code in (200, 503) else {}
    course = reader.json() if reader.status_code == 200 else {}
    toc = list(chapters.json().get("chapters") or [])
    return {"collection": server.collection, "location": f"{server.url} (pid {server.pid})",
            "embedding_model": settings.embedding_model,
            "dimension": (checks.get("embeddings") or {}).get("dimension"),
            "chunks": (checks.get("collection") or {}).get("chunks"), "documents": len(toc),
            "score_scale": "raw cosine [-1, 1]", "course": course.get("course_title"),
            "profile": course.get("profile"), "table_of_contents": toc}
