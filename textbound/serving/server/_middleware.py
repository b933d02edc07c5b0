"""ASGI middleware: header and body size, JSON depth and batch limits."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

MAX_JSON_DEPTH = 32
"""Deepest JSON nesting a request body may have; a /chat body needs five levels."""
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
"""Longest JSON integer Python's parser converts (`sys.get_int_max_str_digits`); 4,300 digits."""

MAX_HEADER_BYTES = 8 * 1024
"""Longest one request header (name and value) may be; an X-API-Key is far shorter."""
MAX_HEADERS_BYTES = 32 * 1024
"""Most all of a request's headers together may hold."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def route_path(scope: Scope) -> str:
    """Return the request's path as the app's routes declare it: without `root_path`.

    Under `/c/<course>/` (`textbound.serving.server._courses`), or behind a proxy that sets a root
    path, `scope["path"]` holds the whole path and `root_path` the part before the app's own routes
    (Starlette's convention); a path outside the root path is the app's as it is.
    """
    path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root):] or "/"
    return path


async def _send_json(send: Send, status: int, body: dict[str, Any],
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


_JSON_TOKENS = re.compile(rb'\\.|["\[\]{}]', re.S)
_LONG_DIGITS = re.compile(rb"[0-9]{%d}" % (MAX_INT_DIGITS + 1))


def _too_long_integer(body: bytes) -> bool:
    """Whether JSON text holds an integer Python refuses to convert (a ValueError, then a 500).

    Only a body with such a run of digits is parsed here; digits inside a string parse fine.
    """
    if _LONG_DIGITS.search(body) is None:
        return False
    try:
        json.loads(body)
    except ValueError as exc:
        return "integer string conversion" in str(exc)
    return False


def _too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON text nests arrays/objects deeper than limit (linear; strings skipped)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth, in_string = 0, False
    for m in _JSON_TOKENS.finditer(body):
        token = m.group()
        if token == b'"':
            in_string = not in_string
        elif in_string or len(token) == 2:
            continue
        elif token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _body_problem(path: str, body: bytes, max_batch: int | None) -> tuple[int, str] | None:
    """Return (status, detail) for a body the app must not see, else None.

    Deep nesting would exhaust the parser's recursion (a 500), so would an integer longer than
    Python converts (a ValueError, a 500 with a traceback); LangServe meets a batch whose
    `inputs` is not a list with a TypeError (a 500 too); a long batch would hold the server.
    """
    if _too_deep(body):
        return 400, f"the JSON body nests deeper than {MAX_JSON_DEPTH} levels"
    if _too_long_integer(body):
        return 400, (f"the JSON body holds an integer longer than {MAX_INT_DIGITS:,} digits; "
                     "send long numbers as text")
    if max_batch is None or not (path.startswith("/chat/") and path.endswith("/batch")):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None  # LangServe (and the UnicodeDecodeError handler) answer these
    if not isinstance(data, dict):
        return None
    inputs = data.get("inputs")
    if not isinstance(inputs, list):
        return 422, ("'inputs' must be a JSON array of inputs, e.g. "
                     '{"inputs": [{"question": "..."}]}, not ' + type(inputs).__name__)
    if len(inputs) > max_batch:
        return 413, (f"a batch may hold at most {max_batch} inputs (TEXTBOUND_MAX_BATCH_SIZE); "
                     f"this one holds {len(inputs)}")
    return None


class BodyLimit:
    """Answer 413 to a body over max_bytes (declared or sent), and 4xx to one `_body_problem` names.

    With `max_batch`, a /chat/batch body must have a list of at most that many `inputs`. A PUT
    under one of `streamed` passes untouched: its route streams the body to disk under a limit
    of its own (document uploads, `textbound.documents.uploads`).
    """

    def __init__(self, app: Any, max_bytes: int, max_batch: int | None = None,
                 streamed: tuple[str, ...] = ()) -> None:
        self.app, self.max_bytes, self.max_batch = app, max_bytes, max_batch
        self.streamed = streamed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.streamed and scope.get("method") == "PUT"
                                       and route_path(scope).startswith(self.streamed)):
            await self.app(scope, receive, send)
            return
        too_big = {"detail": f"request body is larger than the server's limit of "
                             f"{self.max_bytes:,} bytes (TEXTBOUND_MAX_REQUEST_BYTES)"}
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                if int(declared) > self.max_bytes:
                    await _send_json(send, 413, too_big)
                    return
            except ValueError:
                await _send_json(send, 400, {"detail": "invalid Content-Length header"})
                return
        parts, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                await _send_json(send, 413, too_big)
                return
            parts.append(body)
            more = bool(message.get("more_body", False))
        if scope.get("method") == "POST" and size:
            problem = _body_problem(route_path(scope), b"".join(parts), self.max_batch)
            if problem is not None:
                await _send_json(send, problem[0], {"detail": problem[1]})
                return
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(parts), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _header_problem(headers: list[tuple[bytes, bytes]]) -> str | None:
    """Return why these headers are too large to serve (a 431), else None."""
    total = 0
    for name, value in headers:
        size = len(name) + len(value)
        if size > MAX_HEADER_BYTES:
            shown = name.decode("latin-1")[:40]
            return (f"the {shown} header is {size:,} bytes; one header may hold at most "
                    f"{MAX_HEADER_BYTES:,}")
        total += size
    if total > MAX_HEADERS_BYTES:
        return (f"the request's headers are {total:,} bytes; all together they may hold at "
                f"most {MAX_HEADERS_BYTES:,}")
    return None


class HeaderLimit:
    """Answer 431 to a request whose headers are over the limits, before anything reads them.

    uvicorn (with httptools) bounds no header's size, and a 60 KB X-API-Key was reported to
    reset the connection with no status; the client is now told which header is too big.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = _header_problem(list(scope.get("headers") or []))
            if problem is not None:
                await _send_json(send, 431, {"detail": problem})
                return
        await self.app(scope, receive, send)
