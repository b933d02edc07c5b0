"""The chat generator handed answer units, not passages (textbound/answer/chat_units.py)."""

from __future__ import annotations

from typing import Any

from textbound.answer.chat_draft import chat_messages
from textbound.answer.chat_units import chat_units
from textbound.fakes import HashEmbedder

HOWTO = ("Git keeps every version of every file. Branches are cheap, and most people make many "
         "of them. Rewriting history is sometimes needed before publishing.\n\n"
         "If you want to reorder or squash your last five commits, use:\n\n"
         "```\n$ git rebase -i HEAD~5\n```\n")
OTHER = "A tag names one commit for good; a branch moves as you commit. Tags are for releases."


def _chunk(text: str, cid: str, score: float) -> dict[str, Any]:
    return {"chunk_id": cid, "text": text, "score": score,
            "metadata": {"source": "git.md", "heading_path": ["Git", "History"]}}


def test_the_lead_in_comes_with_its_code_under_its_passage_id() -> None:
    evidence = [_chunk(HOWTO, "c1", 0.7), _chunk(OTHER, "c2", 0.5)]
    units = chat_units("how do I squash my last five commits?", evidence, HashEmbedder(),
                       limit=2)
    assert 1 <= len(units) <= 2
    texts = [u["text"] for u in units]
    squash = next(t for t in texts if "squash" in t)
    assert "$ git rebase -i HEAD~5" in squash  # the code verbatim, with its lead-in
    assert all(u["chunk_id"] in {"c1", "c2"} for u in units)
    # the model reads the units, not the passage's opening about cheap branches
    best = chat_units("how do I squash my last five commits?", evidence, HashEmbedder(),
                      limit=1)
    messages, ids = chat_messages("how do I squash my last five commits?", best, "Git")
    system = messages[0].content
    assert "git rebase -i HEAD~5" in system and "Branches are cheap" not in system
    assert list(ids.values()) == ["c1"]


def test_no_candidate_unit_gives_nothing() -> None:
    assert chat_units("anything?", [], HashEmbedder()) == []


def _handed(mode: str | None, store: Any, tmp_path: Any, monkeypatch: Any) -> list[str]:
    from types import SimpleNamespace

    from langgraph.runtime import Runtime

    import nodes.generate as generate_node
    from graph.context import resolve_tunables

    from ..conftest import make_settings

    seen: list[str] = []

    def fake_chat_draft(question: str, given: list[Any], chat: Any, title: str) -> Any:
        seen.extend(c["text"] for c in given)
        return None, "model unavailable", 1

    monkeypatch.setattr(generate_node, "chat_draft", fake_chat_draft)
    tun = resolve_tunables(make_settings(tmp_path), {"generator": "chat", **(
        {"chat_evidence": mode} if mode else {})})
    state: Any = {"clean_question": "how do I squash my last five commits?",
                  "evidence": [_chunk(HOWTO, "c1", 0.7)]}
    profiles: Any = SimpleNamespace(current=lambda: SimpleNamespace(course_title="Git"))
    generate_node.generate(state, Runtime(context=tun), store=store, embeddings=HashEmbedder(),
                           chat=None, profiles=profiles)
    return seen


def test_the_chat_model_is_handed_units_by_default_and_passages_on_request(tmp_path, monkeypatch):
    from textbound.fakes import MemoryStore

    store = MemoryStore(HashEmbedder(), "fake")
    units = _handed(None, store, tmp_path, monkeypatch)
    assert units and all(t != HOWTO for t in units)
    assert any("$ git rebase -i HEAD~5" in t for t in units)
    assert _handed("passages", store, tmp_path, monkeypatch) == [HOWTO]
    # no store to weigh words with: the passages whole, not a failed answer
    assert _handed(None, None, tmp_path, monkeypatch) == [HOWTO]
