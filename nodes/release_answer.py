"""release_answer: render a validated draft with [n] citation markers and its sources."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from graph.context import RunContext
from graph.state import ChunkDict, State
from nodes._common import Reply, timed
from textbound.answer.sources import confidence_level
from textbound.text.units import FENCE

__all__ = ["release_answer", "render"]

_MARKER = re.compile(r"\s*\[(?:\d+|C\d+)\]")


def _unmarked(text: str, code: set[str] | None = None) -> str:
    """Return a sentence without the source's own citation markers, its code left verbatim.

    A sentence that quotes a code block holds line breaks: its lines set in the source's fenced
    block (`code`, from `_code_lines`) are code, where `x[[1]]` and `e[3] <- 17` are code, not
    citations, whether they come first, between a lead-in and a clause going on ("which plots
    ..."), or last. Without the source (`code` None) the first line is read as the lead-in, the
    last as that clause when it opens in lower case, and the lines between as code.
    """
    lines = text.split("\n")
    last = len(lines) - 1
    if code is not None:
        kept = [line if line in code else _MARKER.sub("", line) for line in lines]
    elif len(lines) == 1:
        return _MARKER.sub("", text).strip()
    else:
        kept = [_MARKER.sub("", line) if n == 0 or (n == last and line[:1].islower()) else line
                for n, line in enumerate(lines)]
    return "\n".join(kept).strip()


def _code_lines(spans: list[Any], by_id: dict[str, ChunkDict]) -> set[str] | None:
    """The lines inside a fenced code block that a sentence's quoted spans cover in their chunks.

    None when the sentence has no span in a chunk at hand (nothing to tell code from prose by).
    """
    code: set[str] | None = None
    for cid, s, e in spans:
        chunk = by_id.get(cid)
        if chunk is None:
            continue
        code = code if code is not None else set()
        inside, pos = False, 0
        for line in str(chunk["text"]).splitlines(keepends=True):
            start, pos = pos, pos + len(line)
            if FENCE.match(line):
                inside = not inside
            elif inside and start < int(e) and int(s) < pos:
                code.add(line.rstrip("\r\n"))
    return code


def render(draft: dict[str, Any], evidence: list[ChunkDict]
           ) -> tuple[str, list[ChunkDict], dict[str, list[list[int]]]]:
    """Return the answer with citation markers, the cited chunks and the quoted offsets.

    The offsets are the source positions of each quoted sentence, per chunk, so a reader can
    highlight the exact passage. A sentence after a quoted block (a unit holding line breaks:
    code, a list, a table) starts a line of its own instead of joining the block's last line.
    """
    by_id = {c["chunk_id"]: c for c in evidence}
    cited: list[ChunkDict] = []
    number: dict[str, int] = {}
    highlights: dict[str, list[list[int]]] = {}
    parts: list[str] = []
    for s in draft["sentences"]:
        marks = []
        for cid in s["citations"]:
            if cid not in by_id:
                continue
            if cid not in number:
                cited.append(by_id[cid])
                number[cid] = len(cited)
            marks.append(f"[{number[cid]}]")
        # markers that were inside the source text would point at the wrong passage
        spans = s.get("spans") or []
        text = _unmarked(str(s["text"]), _code_lines(spans, by_id))
        if parts:  # a quoted block (code, a list, a table) keeps the next sentence off its line
            parts.append("\n" if "\n" in parts[-1] else " ")
        parts.append(f"{text} {''.join(marks)}")
        for cid, s_start, s_end in spans:
            chunk = by_id.get(cid)
            base = chunk["metadata"].get("start") if chunk is not None else None
            if base is not None:
                highlights.setdefault(cid, []).append([base + int(s_start), base + int(s_end)])
    return "".join(parts), cited, highlights


@timed
def release_answer(state: State, runtime: Runtime[RunContext], *, reply: Reply) -> dict[str, Any]:
    """Return the validated answer, the cited sources and the confidence level."""
    draft = state["draft"]
    assert draft is not None and state["grounding"]["passed"]
    answer, cited, highlights = render(dict(draft), state.get("evidence") or [])
    extra: dict[str, Any] = {"generator": draft.get("generator")}
    answer_spans: dict[str, list[int]] = {}
    located = _answer_span(draft.get("answer_span"), cited)
    if located is not None:
        extra["answer_span"] = located
        answer_spans[located["chunk_id"]] = [located["start"], located["end"]]
    gate: dict[str, Any] = dict(state.get("gate") or {})
    top1 = gate.get("features", {}).get("top1")
    level = confidence_level(top1)
    if level == "insufficient":
        level = "low"
    return reply(state, runtime.context, node="release_answer", answer=answer, refusal_reason=None,
                 cited=cited, confidence=level, highlights=highlights,
                 answer_spans=answer_spans, extra=extra)


def _answer_span(span: list[Any] | None, cited: list[ChunkDict]) -> dict[str, Any] | None:
    """Place the reader's answer span ([chunk_id, start, end] in the chunk) in its source file."""
    if not span:
        return None
    cid, start, end = str(span[0]), int(span[1]), int(span[2])
    for n, chunk in enumerate(cited, start=1):
        base = chunk["metadata"].get("start")
        if chunk["chunk_id"] == cid and base is not None:
            return {"chunk_id": cid, "citation": n, "start": base + start, "end": base + end,
                    "text": chunk["text"][start:end]}
    return None
