"""Courses side by side: `/c/<course>/...` reaches that course's own app.

Which courses and what each keeps where: `textbound.records.courses`.

`CourseRouter` is the server's outermost layer. A request under `/c/<course>/` goes to that
course's app with the prefix as its `root_path` (as Starlette's `Mount` does), so each course's
app declares the same routes as a one-course server and checks keys against its own course:
`/c/<course>/chat/invoke` is that course's `/chat/invoke`. The default course
(`TEXTBOUND_COLLECTION`) answers at `/c/<its name>/` as well as at `/`. `/c/<course>` without
the slash is redirected to the page at `/c/<course>/`; a course the server does not serve is a
404 that says so, before any key is asked for (it holds nothing to protect).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textbound.records.courses import COURSE_PATH
from textbound.serving.server._middleware import Receive, Scope, Send, _send_json, route_path

__all__ = ["CourseRouter"]

_PREFIX = COURSE_PATH + "/"


class CourseRouter:
    """Send `/c/<course>/...` to the course's app; everything else to the default course's."""

    def __init__(self, app: Any, *, default: str, courses: Mapping[str, Any]) -> None:
        self.app, self.default, self.courses = app, default, dict(courses)

    def _app_of(self, name: str) -> Any:
        return self.app if name == self.default else self.courses.get(name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = route_path(scope)
        if scope["type"] != "http" or not (path.startswith(_PREFIX) or path == COURSE_PATH):
            await self.app(scope, receive, send)
            return
        name, slash, _ = path[len(_PREFIX):].partition("/")
        target = self._app_of(name) if name else None
        if target is None:
            shown = name if len(name) <= 60 else name[:60] + "..."
            await _send_json(send, 404, {"detail": (
                f"no course {shown!r} on this server: check the address the teacher gave "
                f"(a course's page is {COURSE_PATH}/<course>/)")})
            return
        root = str(scope.get("root_path", "")) + _PREFIX + name
        if not slash:  # the page's links are relative to the course's folder
            query = scope.get("query_string", b"")
            location = (root + "/" + ("?" + query.decode("latin-1") if query else "")).encode()
            await send({"type": "http.response.start", "status": 307,
                        "headers": [(b"location", location), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        # Starlette's convention, as its Mount: `path` stays whole, `root_path` grows
        await target({**scope, "root_path": root}, receive, send)
