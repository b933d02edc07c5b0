"""Streamed structured output as llama-cpp-python's server sends it (issue 26)."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessageChunk

from textbound.answer.chat_draft import _name_once

ARGS = json.dumps({"sentences": [{"text": "A topic is a named bus.", "chunk_ids": ["C1"]}],
                   "confidence": 0.9})


def _chunks(repeat_name: bool) -> list[AIMessageChunk]:
    pieces = [ARGS[i:i + 7] for i in range(0, len(ARGS), 7)]
    return [AIMessageChunk(content="", tool_call_chunks=[{
        "name": "GroundedAnswer" if repeat_name or n == 0 else None, "args": piece,
        "id": "call_0" if n == 0 else None, "index": 0, "type": "tool_call_chunk"}])
        for n, piece in enumerate(pieces)]


def test_a_tool_name_repeated_in_every_chunk_is_kept_once() -> None:
    """llama-cpp-python repeats the name; joined as is it names no known tool."""
    named: set[object] = set()
    full = None
    for chunk in _chunks(repeat_name=True):
        chunk = _name_once(chunk, named)
        full = chunk if full is None else full + chunk
    assert full is not None
    assert [c["name"] for c in full.tool_calls] == ["GroundedAnswer"]
    assert full.tool_calls[0]["args"] == json.loads(ARGS)


def test_a_name_sent_once_is_left_alone() -> None:
    """OpenAI sends the name in the first chunk only: nothing changes."""
    named: set[object] = set()
    chunks = _chunks(repeat_name=False)
    fixed = [_name_once(c, named) for c in chunks]
    assert [c.tool_call_chunks for c in fixed] == [c.tool_call_chunks for c in chunks]
