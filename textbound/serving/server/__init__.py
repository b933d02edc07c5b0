"""The HTTP server: the graph as a LangServe endpoint at `/chat`, `/healthz`, and the reader seam.

`/chat` serves a guarded wrapper around the compiled graph rather than the graph itself, for two
reasons. Streaming a LangGraph graph directly (or its `stream_events`) would expose every node's
state update, including the unvalidated `draft` that only `validate_grounding` may release; the
wrapper streams node names as progress and then the final response contract, nothing else. And
LangServe only forwards `config["configurable"]`, so per-request tunables are checked here: they
must be fields of `graph.context.Context`, within bounds, and (unless the server sets
`allow_gate_override`) only ever tighten the gates. A rejected request is a 422 naming the field.

Streamed chunks (`/chat/stream`, and `on_chain_stream` in `/chat/stream_events`) are either
`{"progress": {"node": <node name>, "step": <n>}}` or, last, the response contract itself.

What one hostile client can do is bounded here too: bodies by size, JSON nesting and batch
length (`BodyLimit`); batch inputs by a shared concurrency limit (`GuardedGraph.abatch`); slow
senders by a read deadline on the connection (`read_deadline_protocol`); graph steps get a thread
pool of their own, larger than the chat-call limit, so questions that need no model never wait

Modules, one job each:

- `_runnable`: `GuardedGraph`, the graph as a Runnable that shows only input, progress, contract.
- `_contract`: the input model, the response contract (`CONTRACT_KEYS`), the 503 carrier.
- `_overrides`: the HTTP override policy (`check_overrides`, `STRICTER_POLICIES`).
- `_health`: `/healthz` and its checks (`check_health`).
- `_feedback`: `POST /feedback`, a student's rating of a response (`textbound.records.feedback`).
- `_documents`: the document routes, uploads and re-ingests (`textbound.documents.uploads` runs
  the jobs).
- `_middleware`: header and body size, JSON depth and batch limits (`BodyLimit`).
- `_roles`: the role each route needs (`ROUTE_ROLES`), the key check and rate limits
  (`RoleAuth`); the keys themselves are `textbound.records.keys`.
- `_threads`: `GET`/`DELETE /threads/{id}`, and whose conversation a thread is (`check_owner`).
- `_turns`: one turn at a time per thread (`TurnLocks`), and the refusal when the thread
  store is down (`threads_down`).
- `_errors`: the exception handlers (503 for the store, 400/422 instead of 500s).
- `_openapi`: the OpenAPI spec's fixes and Swagger UI from local files at `/docs`.
- `_uvicorn`: `uvicorn_config` with the read deadline (`read_deadline_protocol`).
- `_sanitize`: `textbound.text.sanitize` under its old name: valid Unicode, credentials redacted
  (`redact`), JSON-safe floats, server paths hidden.
- `_courses`: `CourseRouter`, which sends `/c/<course>/...` to that course's own app
  (`textbound.records.courses`: TEXTBOUND_COURSES, each course's files, keys and threads).
- `_app`: `create_app`, which wires them together, one app per course.
"""

from __future__ import annotations

from textbound.serving.server._app import create_app, serving_services
from textbound.serving.server._contract import (
    CONTRACT_KEYS,
    ChatInput,
    ChatOutput,
    StoreUnavailableResponse,
)
from textbound.serving.server._contract import Source as Source
from textbound.serving.server._health import check_health
from textbound.serving.server._middleware import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from textbound.serving.server._middleware import BodyLimit as BodyLimit
from textbound.serving.server._openapi import DOCS_STATIC as DOCS_STATIC
from textbound.serving.server._overrides import STRICTER_POLICIES as STRICTER_POLICIES
from textbound.serving.server._overrides import OverrideError, check_overrides
from textbound.serving.server._roles import ROUTE_ROLES as ROUTE_ROLES
from textbound.serving.server._runnable import GuardedGraph
from textbound.serving.server._sanitize import redact
from textbound.serving.server._uvicorn import read_deadline_protocol, uvicorn_config
from textbound.tunables import FIXED_BECAUSE as FIXED_BECAUSE
from textbound.tunables import OVERRIDE_RULES as OVERRIDE_RULES

# `__all__` is the public API; the `X as X` imports keep every name importable from
# `textbound.serving.server` as it was when this was one module.
__all__ = [
    "CONTRACT_KEYS",
    "ChatInput",
    "ChatOutput",
    "GuardedGraph",
    "OverrideError",
    "StoreUnavailableResponse",
    "check_health",
    "check_overrides",
    "create_app",
    "read_deadline_protocol",
    "redact",
    "serving_services",
    "uvicorn_config",
]
