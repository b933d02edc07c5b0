"""LangSmith: filterable metadata and tags on traced runs.

Tracing is switched on only by LangSmith's own environment variables (`LANGSMITH_TRACING=true`
with `LANGSMITH_API_KEY`, optionally `LANGSMITH_PROJECT` / `LANGSMITH_ENDPOINT`); textbound never
requires it and does nothing when it is off. When it is on, `annotate_current_run` (called by
`nodes._common.Reply` for every answer and refusal) adds to the graph's root run:

* metadata: `outcome`, `refusal_reason` (`answered` for answers), `confidence_level`,
  `collection`, `generator`, `policy`, `calibration` (policy name + a hash of the thresholds and
  weights in force), `answer_threshold`, `floor`, `path` (terminal node), `selected_text`, and
  `session_id` (which LangSmith also uses to group runs into threads);
* tags: `textbound`, `outcome:<answered|refused>`, `refusal_reason:<reason|answered>`,
  `confidence:<level>`, `collection:<name>`, `generator:<name>`, `policy:<name>`,
  `calibration:<id>`.

Hooking the terminal node rather than each caller covers every entry point (CLI, HTTP server,
LangServe, Studio, notebooks) the same way. The root run is still open when the terminal node
runs, so the tags travel with the run's final update.

Experiments on labelled questions live in `textbound.quality.evaluation.experiments`: this
module is imported by every node (through `nodes._common`), so it imports nothing but the
standard library and, lazily, LangSmith's own run helpers.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "annotate_current_run",
    "apply_to_run",
    "graph_run_id",
    "run_metadata",
    "run_tags",
]

log = logging.getLogger("textbound.records.tracing")
_warned = False


# --- run metadata and tags -----------------------------------------------------------------------
def _calibration_id(tunables: Mapping[str, Any]) -> str | None:
    cal = tunables.get("calibration")
    if not isinstance(cal, Mapping):
        return None
    digest = hashlib.sha256(json.dumps(cal, sort_keys=True, default=str).encode()).hexdigest()
    return f"{cal.get('name') or tunables.get('policy') or 'custom'}:{digest[:8]}"


def run_metadata(
    response: Mapping[str, Any],
    state: Mapping[str, Any] | None = None,
    *,
    collection: str | None = None,
    tunables: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the filterable metadata of one response (the contract, plus the run when known).

    `tunables` are the run's values by name, with its gate policy under "calibration".
    """
    state = state or {}
    diag = response.get("diagnostics") or {}
    tun = tunables or {}
    thresholds = diag.get("thresholds") or {}
    reason = response.get("refusal_reason")
    md: dict[str, Any] = {
        "outcome": "refused" if response.get("was_refusal") else "answered",
        "refusal_reason": reason or "answered",
        "confidence_level": response.get("confidence_level"),
        "collection": collection,
        "generator": diag.get("generator") or tun.get("generator"),
        "policy": thresholds.get("policy") or tun.get("policy"),
        "calibration": _calibration_id(tun),
        "answer_threshold": tun.get("answer_threshold"),
        "floor": tun.get("floor"),
        "path": diag.get("path"),
        "selected_text": bool(state.get("selected_text")) if state else None,
        "session_id": state.get("session_id"),
    }
    return {k: v for k, v in md.items() if v is not None}


def run_tags(metadata: Mapping[str, Any]) -> list[str]:
    """Return the tags for metadata from `run_metadata` (low-cardinality fields only)."""
    tags = ["textbound"]
    for key, prefix in (("outcome", "outcome"), ("refusal_reason", "refusal_reason"),
                        ("confidence_level", "confidence"), ("collection", "collection"),
                        ("generator", "generator"), ("policy", "policy"),
                        ("calibration", "calibration")):
        if metadata.get(key) is not None:
            tags.append(f"{prefix}:{metadata[key]}")
    return tags


def apply_to_run(run: Any, metadata: Mapping[str, Any], tags: Sequence[str]) -> None:
    """Add metadata and the tags the run does not have yet to a LangSmith run tree."""
    run.add_metadata(dict(metadata))
    have = set(run.tags or [])
    run.add_tags([t for t in tags if t not in have])


def _graph_root(current: Any) -> Any:
    """Climb from the current run to the outermost run LangChain's tracer started itself.

    Runs started outside the graph (a caller's `@traceable`, an `evaluate` target) are known to
    the tracer as external parents; the climb stops below them, so one caller running many
    questions inside one trace never collects every question's tags.
    """
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tracers.langchain import LangChainTracer

    config = var_child_runnable_config.get() or {}
    handlers = getattr(config.get("callbacks"), "handlers", None) or []
    tracer = next((h for h in handlers if isinstance(h, LangChainTracer)), None)
    if tracer is None:
        return current
    external = getattr(tracer, "_external_run_ids", {})
    run = current
    while run.parent_run_id is not None:
        parent = tracer.run_map.get(str(run.parent_run_id))
        if parent is None or str(parent.id) in external:
            break
        run = parent
    return run


def graph_run_id(config: Mapping[str, Any]) -> str | None:
    """Return the id of the run that called the current node's run (the graph's), if traced.

    A node's config carries the callback manager of its own run; a tracer among its handlers
    (LangSmith's, or any `BaseTracer`) knows that run's parent, the graph run. Without a tracer
    no run id is recorded anywhere, and None is returned.
    """
    from langchain_core.tracers.base import BaseTracer

    callbacks = config.get("callbacks")
    node_run = getattr(callbacks, "parent_run_id", None)
    handlers = getattr(callbacks, "handlers", None) or []
    tracer = next((h for h in handlers if isinstance(h, BaseTracer)), None)
    if tracer is None or node_run is None:
        return None
    run = tracer.run_map.get(str(node_run))
    return str(run.parent_run_id) if run is not None and run.parent_run_id else None


def annotate_current_run(
    response: Mapping[str, Any],
    state: Mapping[str, Any] | None = None,
    *,
    collection: str | None = None,
    tunables: Mapping[str, Any] | None = None,
) -> bool:
    """Attach the response's metadata and tags to the traced graph run, if there is one.

    Returns whether a run was annotated. Never raises: tracing must not turn an answer into an
    error, so a failure is logged (once, as a warning) and ignored.
    """
    global _warned
    try:
        from langsmith.run_helpers import get_current_run_tree

        current = get_current_run_tree()
        if current is None:
            return False
        md = run_metadata(response, state, collection=collection, tunables=tunables)
        apply_to_run(_graph_root(current), md, run_tags(md))
        return True
    except Exception as exc:  # noqa: BLE001 - see docstring: tracing is best effort
        if not _warned:
            _warned = True
            log.warning("could not add textbound metadata to the LangSmith run: %r", exc)
        return False
