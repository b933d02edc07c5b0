"""The API's documentation: the OpenAPI spec's fixes and Swagger UI served from local files."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from fastapi import FastAPI, Request

from textbound.serving.server._middleware import MAX_HEADER_BYTES, MAX_HEADERS_BYTES, MAX_JSON_DEPTH
from textbound.serving.server._roles import ROUTE_LIMITS, required

DOCS_STATIC = "/docs/static"
_PROBLEM = {"$ref": "#/components/schemas/Problem"}
_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before trying again.",
                                "schema": {"type": "integer"}}}
_SSE_EVENTS = ("metadata", "data", "error", "end")
_NEEDS = {"open": "**Role:** none (open to anyone).",
          "student": "**Role:** student (any key of the course; a student sees only their own "
                     "conversations, the teacher all of them).",
          "teacher": "**Role:** teacher (the course's teacher key)."}


def _json(schema: dict[str, Any], description: str, **extra: Any) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}},
            **extra}


def document_responses(app: FastAPI, *, read_timeout_s: float) -> None:
    """Make the OpenAPI spec tell the truth about what the middleware and handlers answer.

    FastAPI documents only what a route returns. The status codes the middleware sends (400,
    401, 408, 413, 431), the 503s, the `{"detail": "..."}` string the 422 handlers send beside
    FastAPI's list, and the streams' `text/event-stream` are added here; the reliability tier's
    schemathesis run (tests/reliability/test_schemathesis.py) holds the server to this spec.
    Each operation also says which role it needs (`x-textbound-role`, and a line of its
    description), from the one table `textbound.serving.server._roles.ROUTE_ROLES`.
    """
    build = app.openapi
    declared = {getattr(r, "path_format", ""): getattr(r, "path", "") for r in app.routes}

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = build()
        schemas = spec.setdefault("components", {}).setdefault("schemas", {})
        schemas["Problem"] = {
            "type": "object", "required": ["detail"], "title": "Problem",
            "properties": {"detail": {"type": "string", "description": "What is wrong."}}}
        schemas["ServerSentEvent"] = {
            "type": "object", "required": ["event"], "title": "ServerSentEvent",
            "description": "One server-sent event: `metadata` (the run id), `data` (a chunk), "
                           "then `end`, or `error`. `data` holds JSON text.",
            "properties": {"event": {"type": "string", "enum": list(_SSE_EVENTS)},
                           "data": {"type": "string", "contentMediaType": "application/json"},
                           "id": {"type": "string"}, "retry": {"type": "integer"}}}
        schemas["Health"] = {
            "type": "object", "required": ["status"], "title": "Health",
            "description": "Only `status` without the API key (when one is set).",
            "properties": {
                "status": {"type": "string", "enum": ["ok", "unavailable"]},
                "checks": {"type": "object", "additionalProperties": {
                    "type": "object", "required": ["ok"],
                    "properties": {"ok": {"type": "boolean"}}}},
                "problems": {"type": "array", "items": {"type": "string"}}}}
        if "HTTPValidationError" in schemas:
            # the 422 handlers answer a list of errors (validation) or one sentence (a mistyped
            # batch `inputs` or `config`, or an override that would loosen a gate)
            detail = schemas["HTTPValidationError"]["properties"]["detail"]
            schemas["HTTPValidationError"]["properties"]["detail"] = {
                "title": "Detail", "anyOf": [
                    {k: v for k, v in detail.items() if k != "title"},
                    {"type": "string"}]}
        for path, operations in spec.get("paths", {}).items():
            for method, op in operations.items():
                responses = op.setdefault("responses", {})
                if path == "/healthz":
                    for code in ("200", "503"):
                        responses[code] = _json({"$ref": "#/components/schemas/Health"},
                                                responses[code]["description"])
                if "{" in path:
                    responses.setdefault("404", _json(_PROBLEM, "Not found."))
                for problem in ("404", "409"):  # HTTPException bodies are {"detail": "..."}
                    if problem in responses:
                        responses[problem].setdefault("content", {
                            "application/json": {"schema": _PROBLEM}})
                need = required(method.upper(), declared.get(path, path))
                op["x-textbound-role"] = need
                op["description"] = (f"{_NEEDS[need]}\n\n{op.get('description') or ''}"
                                     ).strip()
                if need != "open":
                    responses.setdefault("401", _json(_PROBLEM, "Missing or wrong X-API-Key "
                                                                "(on a server with keys)."))
                    if not path.endswith(("/invoke", "/batch")):  # their 503 carries output
                        responses.setdefault("503", _json(
                            _PROBLEM, "The key store cannot be read.", headers=_RETRY_AFTER))
                if need == "teacher":
                    responses.setdefault("403", _json(_PROBLEM, "A student key."))
                if (method.upper(), declared.get(path, path)) in ROUTE_LIMITS:
                    responses.setdefault("429", _json(_PROBLEM, "Over this key's rate limit.",
                                                      headers=_RETRY_AFTER))
                responses.setdefault("431", _json(_PROBLEM, (
                    f"A header is over {MAX_HEADER_BYTES:,} bytes, or all headers together over "
                    f"{MAX_HEADERS_BYTES:,}; `detail` names the header.")))
                responses.setdefault("408", {
                    "description": f"The request was not received within {read_timeout_s:g} s "
                                   "(TEXTBOUND_REQUEST_READ_TIMEOUT_S); the connection closes.",
                    "content": {"text/plain": {"schema": {"type": "string"}}}})
                if method == "post":
                    responses.setdefault("400", _json(_PROBLEM, (
                        "The body is not UTF-8 JSON, nests deeper than "
                        f"{MAX_JSON_DEPTH} levels or has an invalid Content-Length, or the "
                        "request asks for what this server does not enable (token feedback); "
                        "`detail` says which.")))
                    responses.setdefault("413", _json(_PROBLEM, "The body (or a batch's inputs) "
                                                                "is over the server's limit."))
                if path.startswith("/api/chapters"):
                    responses.setdefault("503", _json(_PROBLEM, "The vector store is unavailable.",
                                                      headers=_RETRY_AFTER))
                if method != "post" or not path.startswith("/chat/"):
                    continue
                if path.endswith(("/invoke", "/batch")):
                    # streams have sent their 200 before the graph runs; they end with the
                    # store_unavailable contract instead
                    responses.setdefault("503", _json(
                        {"type": "object", "required": ["detail", "output"],
                         "properties": {"detail": {"type": "string"},
                                        "output": {"$ref": "#/components/schemas/ChatOutput"}}},
                        "The vector store is unavailable; `detail` says why, `output` holds the "
                        "store_unavailable refusal.", headers=_RETRY_AFTER))
                if path.endswith(("/stream", "/stream_events", "/stream_log")):
                    responses.setdefault("200", {})["content"] = {"text/event-stream": {
                        "schema": {"$ref": "#/components/schemas/ServerSentEvent"}}}
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


def _swagger_static() -> str | None:
    """Return the folder of Swagger UI's files from the swagger-ui-py package, if installed.

    Found without importing the package (its handlers import web frameworks we do not use).
    """
    spec = importlib.util.find_spec("swagger_ui")
    folders = list(spec.submodule_search_locations or []) if spec else []
    static = [os.path.join(f, "static") for f in folders
              if os.path.isfile(os.path.join(f, "static", "swagger-ui-bundle.js"))]
    return static[0] if static else None


def mount_docs(app: FastAPI) -> None:
    """Serve Swagger UI at /docs from the installed package's files: no CDN, works offline.

    FastAPI's own /docs loads Swagger UI from a CDN and is blank offline; ReDoc (also from a
    CDN) is not served. Without swagger-ui-py, /docs is absent and /openapi.json remains.
    """
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles

    static = _swagger_static()
    if static is None:
        return
    app.mount(DOCS_STATIC, StaticFiles(directory=static), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    def docs(request: Request) -> HTMLResponse:
        # under a course's /c/<course>/, its own spec and files
        root = str(request.scope.get("root_path", "")).rstrip("/")
        return get_swagger_ui_html(
            openapi_url=root + (app.openapi_url or "/openapi.json"), title=f"{app.title} API",
            swagger_js_url=f"{root}{DOCS_STATIC}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_STATIC}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_STATIC}/favicon-32x32.png",
            # no badge fetched from the public validator
            swagger_ui_parameters={"validatorUrl": None})

