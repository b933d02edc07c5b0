"""How `textbound serve` runs the app: uvicorn with a read deadline on every connection."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from textbound.settings import Settings

READ_OVERDUE = "textbound.read_overdue"
"""Set in a request's ASGI scope when its body was cut off by the read deadline (408)."""


def read_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """Return uvicorn's HTTP protocol with a deadline for reading each request, body included.

    uvicorn bounds only idle keep-alive connections, so a client that sends headers or a body a
    byte at a time (slowloris) would hold its connection forever. The deadline starts when the
    connection opens or the previous response ends; a request still being read then is closed,
    with 408 when no response has begun (headers or body alike), and its scope gets
    READ_OVERDUE so the app can log why its body stopped.
    """
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class ReadDeadlineProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _read_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            if self._read_timer is not None:
                self._read_timer.cancel()
            self._read_timer = self.loop.call_later(seconds, self._read_overdue)

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._read_timer is not None:
                self._read_timer.cancel()
            super().connection_lost(exc)

        def _read_overdue(self) -> None:
            cycle = self.cycle
            between = cycle is None or cycle.response_complete  # headers not complete yet
            if self.transport.is_closing() or not (between or cycle.more_body):
                return
            if not between:  # the app, reading the body, sees a disconnect: tell it why
                cycle.scope[READ_OVERDUE] = True
            if between or not cycle.response_started:
                body = b"the request was not received in time"
                self.transport.write(
                    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                    b"connection: close\r\ncontent-length: " + str(len(body)).encode()
                    + b"\r\n\r\n" + body)
            self.transport.close()

    return ReadDeadlineProtocol


_SECRET_PARAM = re.compile(
    r"(?i)([?&][^=&#]*(?:key|token|secret|password|passwd|auth|credential|signature)[^=&#]*=)"
    r"[^&#\s]*")


def redact_query(target: str) -> str:
    """Hide the values of query parameters that carry credentials (`?api_key=...` and the like)."""
    return _SECRET_PARAM.sub(r"\1***", target)


class RedactQueryCredentials(logging.Filter):
    """Keep credentials sent in a query string out of uvicorn's access log.

    A client that puts its API key in the URL is refused (the key goes in X-API-Key), but the
    access log would still keep the secret; the log line shows `api_key=***` instead.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the request target (uvicorn's third argument); keep the line."""
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_query(args[2]), *args[3:])
        return True


def uvicorn_config(app: Any, settings: Settings, *, host: str = "127.0.0.1", port: int = 8000,
                   log_level: str = "info") -> Any:
    """Return the uvicorn.Config `textbound serve` runs: the read deadline on every connection."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                            http=read_deadline_protocol(settings.request_read_timeout_s),
                            timeout_keep_alive=5)
    access = logging.getLogger("uvicorn.access")  # configured by Config just now
    if not any(isinstance(f, RedactQueryCredentials) for f in access.filters):
        access.addFilter(RedactQueryCredentials())
    return config
