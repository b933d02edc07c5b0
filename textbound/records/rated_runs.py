"""The rated run, as the server's own records tell it.

Its audit line, found from the end of the log, and what a teacher needs of it (questions, answer,
outcome, the cited passages' places and text), completed from the run's thread and the store.
textbound.records.feedback re-exports these names.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from textbound.documents.ingest.chunking import page_label_at

__all__ = ["PassageLookup", "TurnLookup", "describe_run", "find_run", "store_passages"]

log = logging.getLogger("textbound.records.feedback")

_EXCERPT_CHARS = 300
_PLACE = ("source", "section", "page", "page_label")
"""Where a cited passage is: the page as the file numbers it, and as the book prints it."""
_BLOCK = 1 << 16

TurnLookup = Callable[[str], Sequence[Mapping[str, Any]]]
"""A thread id -> its turns, oldest first
(`textbound.conversation.threads.thread_turns` over a graph)."""
PassageLookup = Callable[[list[str]], Mapping[str, Mapping[str, Any]]]
"""Chunk ids -> {chunk_id: {"source", "section", "page", "page_label", "text"}} for those the
store holds."""


# --- the audit log, read back to front -----------------------------------------------------------
def _lines_backwards(path: Path) -> Iterator[bytes]:
    """Yield the file's lines, last first, reading fixed-size blocks from the end."""
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        pos = f.tell()
        tail = b""
        while pos > 0:
            step = min(_BLOCK, pos)
            pos -= step
            f.seek(pos)
            parts = (f.read(step) + tail).split(b"\n")
            tail = parts[0]
            yield from reversed(parts[1:])
        yield tail


def find_run(audit_log: Path, run_id: str) -> dict[str, Any] | None:
    """Return the audit line of the response with this run id (the latest, if repeated), or None.

    Read from the end, where recent runs are; a line is parsed only when it holds the id's text.
    """
    if not Path(audit_log).is_file():
        return None
    needle = run_id.encode()
    for raw in _lines_backwards(Path(audit_log)):
        if needle not in raw:
            continue
        try:
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict) and rec.get("event") in ("answer", "refusal") \
                and str(rec.get("run_id", "")).lower() == run_id:
            return rec
    return None


# --- the run as a teacher sees it ----------------------------------------------------------------
def _cited(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    sources = rec.get("sources")
    out = []
    for s in sources if isinstance(sources, list) else []:
        if isinstance(s, Mapping) and s.get("chunk_id"):
            out.append({"chunk_id": str(s["chunk_id"]),
                        **{k: s[k] for k in _PLACE if s.get(k) is not None}})
    return out


def _fill(cited: list[dict[str, Any]], known: Sequence[Any]) -> None:
    """Complete cited passages in place from another record of the same run (same chunk ids)."""
    by_id = {str(s.get("chunk_id")): s for s in known if isinstance(s, Mapping)}
    for c in cited:
        found = by_id.get(c["chunk_id"]) or {}
        for k in _PLACE:
            if c.get(k) is None and found.get(k) is not None:
                c[k] = found[k]


def describe_run(
    rec: Mapping[str, Any],
    *,
    turns: TurnLookup | None = None,
    passages: PassageLookup | None = None,
    response: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return what a teacher needs of one run, from its audit line and the server's records.

    The audit line gives the questions, the outcome and the cited chunk ids; the answer and the
    passages' places come from the line when it holds them, else from `response` (a response
    this process produced itself, with the same run id), else from the thread's turn with this
    run id (`turns`); the passages' text from the store (`passages`). A failing lookup is skipped.
    """
    run_id = str(rec.get("run_id"))
    cited = _cited(rec)
    answer = rec.get("answer") if isinstance(rec.get("answer"), str) else None
    thread_id = rec.get("thread_id") if isinstance(rec.get("thread_id"), str) else None
    others: list[Mapping[str, Any]] = []
    if response is not None and str(response.get("run_id")) == run_id:
        others.append(response)
    if thread_id and turns is not None and (answer is None or any(
            c.get("source") is None for c in cited)):
        try:
            others.extend(t for t in turns(thread_id) if str(t.get("run_id")) == run_id)
        except Exception as exc:  # noqa: BLE001 - the history only adds detail to the rating
            log.warning("could not read thread %s for feedback on run %s: %r",
                        thread_id, run_id, exc)
    for other in others:
        if answer is None and isinstance(other.get("answer"), str):
            answer = other["answer"]
        _fill(cited, other.get("sources") or [])
    if passages is not None and cited:
        try:
            found = passages([c["chunk_id"] for c in cited])
        except Exception as exc:  # noqa: BLE001 - a store that is busy or gone: places only
            log.warning("could not read the cited passages of run %s: %r", run_id, exc)
            found = {}
        for c in cited:
            p = found.get(c["chunk_id"]) or {}
            _fill([c], [{"chunk_id": c["chunk_id"], **p}])
            if isinstance(p.get("text"), str) and p["text"]:
                text = " ".join(p["text"].split())
                c["excerpt"] = text if len(text) <= _EXCERPT_CHARS else \
                    text[:_EXCERPT_CHARS - 1].rstrip() + "…"
    was_refusal = rec.get("event") == "refusal"
    question = rec.get("question") if isinstance(rec.get("question"), str) else ""
    asked = rec.get("asked_question")
    return {
        "run_id": run_id,
        "thread_id": thread_id,
        "run_timestamp": rec.get("timestamp"),
        "asked_question": asked if isinstance(asked, str) else question,
        "question": question,
        "answer": answer,
        "was_refusal": was_refusal,
        "refusal_reason": rec.get("refusal_reason") if was_refusal else None,
        "sources": cited,
    }


def store_passages(store: Any) -> PassageLookup:
    """Return a passage lookup over a store's `retrieve` (text, source, section and page)."""
    def lookup(chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        return {c.chunk_id: {"text": c.text, "source": c.metadata.get("source"),
                             "section": c.metadata.get("section"),
                             "page": c.metadata.get("page"),
                             "page_label": page_label_at(c.metadata, None)}
                for c in store.retrieve(chunk_ids)}
    return lookup
