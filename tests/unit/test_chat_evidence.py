"""What the chat model is given: the evidence that teaches, never a reading list alone."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from langgraph.runtime import Runtime

import nodes.generate as generate_node
from graph.context import resolve_tunables

from ..conftest import make_settings


def _chunk(cid: str, heading: str, text: str) -> dict[str, Any]:
    return {"chunk_id": cid, "text": text, "score": 0.6,
            "metadata": {"heading_path": ["Chapter 9: Ethics", heading], "section": heading}}


TEACHES = _chunk("t", "Confucius", "His sayings were written down by his students in the "
                 "Analects after his death.")
READING = _chunk("r", "Further Reading", "Eno, R. The Analects of Confucius: An Online Teaching "
                 "Translation. Self-published, 2015.")


def _given(evidence: list[dict[str, Any]], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
           ) -> list[str]:
    seen: list[str] = []

    def fake_chat_draft(question: str, given: list[Any], chat: Any, title: str) -> Any:
        seen.extend(c["chunk_id"] for c in given)
        return None, "model unavailable", 1

    monkeypatch.setattr(generate_node, "chat_draft", fake_chat_draft)
    tun = resolve_tunables(make_settings(tmp_path), {"generator": "chat"})
    state: Any = {"clean_question": "Where did the Analects come from?", "evidence": evidence}
    profiles: Any = SimpleNamespace(current=lambda: SimpleNamespace(course_title="Ethics"))
    none: Any = None
    out = generate_node.generate(state, Runtime(context=tun), store=none, embeddings=none,
                                 chat=None, profiles=profiles)
    assert out["draft"] is None and out["generation_error"]
    return seen


def test_a_reading_list_is_not_given_to_the_chat_model(tmp_path: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Qwen answered "Where did the Analects of Confucius come from?" with a further-reading
    entry ("came from the Self-published ... collection"): the model sees only what teaches."""
    assert _given([READING, TEACHES], tmp_path, monkeypatch) == ["t"]


def test_with_nothing_else_the_reading_list_is_the_evidence(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _given([READING], tmp_path, monkeypatch) == ["r"]
