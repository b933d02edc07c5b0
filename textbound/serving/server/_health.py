"""`/healthz`: what is checked (store, collection, embeddings, audit log, chat model) and shown."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from textbound.serving.server._roles import caller_of
from textbound.serving.server._sanitize import hide_paths, redact

if TYPE_CHECKING:
    from graph.services import Services


def check_health(services: Services) -> dict[str, Any]:
    """Check the store answers, the collection exists and is non-empty, and embeddings work."""
    checks: dict[str, dict[str, Any]] = {}
    store, embeddings = services.store, services.embeddings
    try:
        exists = bool(store.exists())
        checks["store"] = {"ok": True, "location": store.location}
    except Exception as exc:  # noqa: BLE001 - reported in the response, with its message
        exists = False
        checks["store"] = {"ok": False, "error": str(exc)}
    name = store.collection
    if not checks["store"]["ok"]:
        checks["collection"] = {"ok": False, "name": name, "error": "store unreachable"}
    elif not exists:
        checks["collection"] = {"ok": False, "name": name,
                                "error": f"collection {name!r} does not exist; run "
                                         "`textbound ingest`"}
    else:
        try:
            points = int(store.info()["points"])
            store.check_compatible()
            checks["collection"] = {"ok": points > 0, "name": name, "chunks": points}
            if points == 0:
                checks["collection"]["error"] = f"collection {name!r} is empty; run " \
                                                "`textbound ingest`"
        except Exception as exc:  # noqa: BLE001
            checks["collection"] = {"ok": False, "name": name, "error": str(exc)}
    try:
        vector = embeddings.embed_query("health check")
        finite = bool(vector) and all(math.isfinite(x) for x in vector)
        checks["embeddings"] = {"ok": finite, "dimension": len(vector)}
        if not finite:
            checks["embeddings"]["error"] = "the embedding model returned an unusable vector"
    except Exception as exc:  # noqa: BLE001
        checks["embeddings"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    checks["audit_log"] = services.audit.check()
    if services.settings.tunable_values().generator == "chat":
        if services.chat is None:
            checks["chat_model"] = {"ok": False, "error": "generator is chat but no chat model "
                                                          "is configured (TEXTBOUND_CHAT_MODEL)"}
        else:
            checks["chat_model"] = services.chat.guard.check()
    problems = [f"{k}: {v['error']}" for k, v in checks.items() if not v["ok"]]
    return {"status": "ok" if not problems else "unavailable", "checks": checks,
            "problems": problems}


def mount_health(app: FastAPI, services: Services) -> None:
    """Add `/healthz`: the full report for the teacher (or with no keys at all), else status."""

    @app.get("/healthz", tags=["health"],
             summary="Store, collection, embeddings, audit log and chat model status",
             responses={503: {"description": "A check failed (details with the teacher key)."}})
    def healthz(request: Request) -> JSONResponse:
        """Return 200 when every check passes, else 503.

        Without the teacher key (when the server has keys) the body is only `{"status": ...}`;
        with it, each check and its problem, credentials in URLs hidden.
        """
        report = hide_paths(check_health(services), services.settings)
        status = 200 if report["status"] == "ok" else 503
        caller = caller_of(request)
        if caller is None or not caller.teacher:
            return JSONResponse({"status": report["status"]}, status_code=status)
        return JSONResponse(redact(report), status_code=status)
