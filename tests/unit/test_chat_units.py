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
