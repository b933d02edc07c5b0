"""Who may call which route: the one table (`ROUTE_ROLES`), the check (`RoleAuth`), rate limits.

Each route of the app is declared here once with the role it needs: `open` (anyone), `student`
(any key of the course: a student's or the teacher's) or `teacher` (the course's teacher key).
`RoleAuth` answers 401 without a valid key and 403 with a student key on a teacher route; the
OpenAPI document and the route-by-role test read the same table. A server with no key at all (no
`TEXTBOUND_API_KEY`, no `textbound keys create`) is open as before: every caller is its teacher.
On a server of several courses (`textbound.records.courses`) each course's app has its own
`RoleAuth`: only that course's keys count there, `TEXTBOUND_API_KEY` only on the default
course's, and a server with a key for any course opens none without one.

The asking and rating routes are rate-limited per key (`ROUTE_LIMITS`; the settings
`ask_per_minute` and `rate_per_minute`): over the limit a request gets 429 with Retry-After. A
server with no keys has no one to count per key, and limits nothing.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from starlette.routing import BaseRoute, Match

from textbound.records.keys import CALLER, Caller, KeyStore, KeyStoreError, caller_of, identify
from textbound.serving.server._middleware import Receive, Scope, Send, _send_json
from textbound.serving.server._turns import threads_down

if TYPE_CHECKING:
    from textbound.settings import Settings

__all__ = ["CALLER", "LIMITED", "ROUTE_LIMITS", "ROUTE_ROLES", "Need", "RateLimiter", "RoleAuth",
           "caller_of", "required"]

Need = Literal["open", "student", "teacher"]
Limit = Literal["ask", "rate"]

_ASKING = ("invoke", "batch", "stream", "stream_log", "stream_events")
ROUTE_ROLES: dict[tuple[str, str], Need] = {
    # the page and its files hold no data: a browser cannot send a key when it loads them
    ("GET", "/"): "open", ("HEAD", "/"): "open",
    ("GET", "/reader/static"): "open", ("HEAD", "/reader/static"): "open",
    ("GET", "/docs/static"): "open", ("HEAD", "/docs/static"): "open",
    ("GET", "/healthz"): "open",
    ("GET", "/docs"): "student",
    ("GET", "/openapi.json"): "student", ("HEAD", "/openapi.json"): "student",
    **{("POST", f"/chat/{name}"): "student" for name in _ASKING},
    ("GET", "/chat/input_schema"): "student",
    ("GET", "/chat/output_schema"): "student",
    ("GET", "/chat/config_schema"): "student",
    ("GET", "/chat/playground/{file_path:path}"): "student",
    ("POST", "/chat/token_feedback"): "student",
    # a student's own conversations only; the teacher's, all of them (checked by the routes)
    ("GET", "/threads/{thread_id}"): "student",
    ("DELETE", "/threads/{thread_id}"): "student",
    ("POST", "/feedback"): "student",
    ("GET", "/api/reader"): "student",
    ("GET", "/api/chapters"): "student",
    ("GET", "/api/chapters/{source:path}"): "student",
    ("PUT", "/api/documents/{name}"): "teacher",
    ("POST", "/api/documents/{source:path}/reingest"): "teacher",
    ("GET", "/api/documents/jobs/{job_id}"): "teacher",
}
"""Every route, by (method, path as declared), with the role it needs."""

UNDECLARED: Need = "student"
"""What a path no route declares needs (any key), so an unknown path says nothing without one."""

ROUTE_LIMITS: dict[tuple[str, str], Limit] = {
    **{("POST", f"/chat/{name}"): "ask" for name in _ASKING},
    ("POST", "/feedback"): "rate",
}
"""The rate-limited routes: asking a question, rating an answer."""
LIMITED: dict[Limit, str] = {"ask": "ask_per_minute", "rate": "rate_per_minute"}
"""The setting that bounds each limit, per key and minute."""

_RANK: dict[Need, int] = {"open": 0, "student": 1, "teacher": 2}


def required(method: str, path: str) -> Need:
    """Return the role the declared route (method, path) needs."""
    return ROUTE_ROLES.get((method, path), UNDECLARED)


def _route_of(routes: Iterable[BaseRoute], scope: Scope) -> tuple[str, str] | None:
    """Return the (method, declared path) of the route that serves this request, if any."""
    for route in routes:
        match, _ = route.matches(scope)
        if match == Match.FULL:
            return scope["method"], str(getattr(route, "path", ""))
    return None


class RateLimiter:
    """A token bucket per (key, limit): `per_minute` at once, refilled evenly over a minute."""

    def __init__(self, per_minute: Callable[[Limit], int]) -> None:
        self.per_minute = per_minute
        self._buckets: dict[tuple[str, Limit], tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, who: str, limit: Limit) -> float:
        """Spend one request of `who`'s allowance; return 0, or the seconds until one is free."""
        size = self.per_minute(limit)
        if size <= 0:
            return 0.0
        rate = size / 60.0
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.get((who, limit), (float(size), now))
            tokens = min(float(size), tokens + (now - then) * rate)
            if tokens < 1.0:
                self._buckets[(who, limit)] = (tokens, now)
                return (1.0 - tokens) / rate
            self._buckets[(who, limit)] = (tokens - 1.0, now)
            if len(self._buckets) > 100_000:  # forget the idle: a full bucket is no bucket
                self._buckets = {k: v for k, v in self._buckets.items() if v[0] < size - 1}
            return 0.0


class RoleAuth:
    """Let a request through only with a key whose role its route allows, within its rate limit."""

    def __init__(self, app: Any, *, routes: list[BaseRoute], keys: KeyStore,
                 settings: Settings, limiter: RateLimiter | None = None,
                 default_course: str | None = None) -> None:
        self.app, self.routes, self.keys, self.settings = app, routes, keys, settings
        self.limiter = limiter or RateLimiter(
            lambda limit: int(getattr(settings, LIMITED[limit])))
        # TEXTBOUND_API_KEY is the teacher key of the server's default course only
        self.env_course = default_course or settings.collection

    def _caller(self, given: bytes) -> Caller | None:
        records = self.keys.records(active_only=True)
        env = self.settings.api_key.get_secret_value() if self.settings.api_key else ""
        course = self.settings.collection
        if not records and not env:
            # a server with no key at all, for any of its courses, is open
            return Caller(None, "teacher", course)
        return identify(given, records, course=course,
                        env_key=(env or None) if course == self.env_course else None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") == "OPTIONS":
            await self.app(scope, receive, send)
            return
        route = _route_of(self.routes, scope)
        need = required(*route) if route else UNDECLARED
        given = dict(scope.get("headers") or []).get(b"x-api-key", b"")
        try:
            caller = await asyncio.to_thread(self._caller, given)
        except KeyStoreError as exc:
            if need != "open":  # fail closed: no key can be checked, so none is accepted
                body: dict[str, Any] = {"detail": f"{exc}; try again shortly"}
                if route is not None and ROUTE_LIMITS.get(route) == "ask":
                    # a question is refused as one whose conversation cannot be read: the
                    # keys live beside the conversations (the same database on PostgreSQL)
                    body["output"] = threads_down(exc)
                await _send_json(send, 503, body, headers=[(b"retry-after", b"2")])
                return
            caller = None
        scope[CALLER] = caller
        if need != "open":
            if caller is None:
                await _send_json(send, 401, {"detail": "missing or wrong X-API-Key header"})
                return
            if _RANK[caller.role] < _RANK[need]:
                await _send_json(send, 403, {"detail": "this needs the course's teacher key; "
                                                       "a student key cannot do it"})
                return
        limit = ROUTE_LIMITS.get(route) if route else None
        if limit is not None and caller is not None and caller.key_id is not None:
            wait = self.limiter.take(caller.key_id, limit)
            if wait > 0:
                seconds = max(1, math.ceil(wait))
                await _send_json(send, 429, {"detail": (
                    f"too many requests with this key: at most "
                    f"{getattr(self.settings, LIMITED[limit])} a minute "
                    f"(TEXTBOUND_{LIMITED[limit].upper()}); try again in {seconds} s")},
                    headers=[(b"retry-after", str(seconds).encode())])
                return
        await self.app(scope, receive, send)
