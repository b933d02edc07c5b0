"""The exception handlers: 503 for an unavailable store, 400/422 where a library would say 500."""

from __future__ import annotations

import json
import traceback

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from textbound.errors import StoreUnavailableError
from textbound.serving.server._contract import StoreUnavailableResponse
from textbound.serving.server._middleware import route_path
from textbound.serving.server._sanitize import json_safe, redact, scrub


def add_error_handlers(app: FastAPI) -> None:
    """Register the handlers that answer these errors with a status and `{"detail": ...}`."""

    @app.exception_handler(StoreUnavailableResponse)
    async def store_unavailable(request: Request, exc: StoreUnavailableResponse) -> JSONResponse:
        """Answer 503 with what is wrong, the fix, and the refusal contract."""
        return JSONResponse(redact({"detail": str(exc), "output": exc.contract}),
                            status_code=503, headers={"Retry-After": "5"})

    @app.exception_handler(StoreUnavailableError)
    async def store_error(request: Request, exc: StoreUnavailableError) -> JSONResponse:
        """Answer 503 naming the problem when a route (e.g. the reader's) cannot reach the store."""
        return JSONResponse({"detail": redact(str(exc))}, status_code=503,
                            headers={"Retry-After": "5"})

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        """Answer 422 saying what is wrong; values JSON cannot carry (inf, nan) are echoed as text.

        FastAPI's own handler echoes the offending input and fails (a 500) on `Infinity`.
        """
        return JSONResponse({"detail": scrub(json_safe(jsonable_encoder(exc.errors())))},
                            status_code=422)

    # LangServe turns a JSONDecodeError into a 422, but not these two, which would be 500s
    @app.exception_handler(UnicodeDecodeError)
    async def undecodable_body(request: Request, exc: UnicodeDecodeError) -> JSONResponse:
        """Answer 400 to a /chat body that is not UTF-8 (Starlette's request.json() raises)."""
        if request.method != "POST" or not route_path(request.scope).startswith("/chat/"):
            raise exc
        return JSONResponse({"detail": "the request body is not UTF-8 encoded JSON"},
                            status_code=400)

    @app.exception_handler(TypeError)
    async def invalid_config(request: Request, exc: TypeError) -> JSONResponse:
        """Answer 422 to a `config` that is not an object (LangServe raises a TypeError)."""
        frames = traceback.extract_tb(exc.__traceback__)
        if not frames or frames[-1].name != "_unpack_request_config":
            raise exc
        return JSONResponse({"detail": f"'config' must be a JSON object ({exc})"},
                            status_code=422)

    @app.exception_handler(ValidationError)
    async def invalid_batch_input(request: Request, exc: ValidationError) -> JSONResponse:
        """Answer 422 to a /chat/batch input LangServe validates outside its 422 translation."""
        if not route_path(request.scope).endswith("/batch"):
            raise exc
        return JSONResponse({"detail": scrub(json.loads(exc.json(include_url=False)))},
                            status_code=422)
