"""A definition of a sibling is no definition of the asked term.

bc's limits: "The maximum output base is currently set at 999. The maximum input base is 16."
The second sentence's subject shares two of "maximum output base"'s three words and counted as
two thirds of a definition of it (`names_term`, weighed 20), so "What's the maximum output
base?" was answered "The maximum input base is 16.". A subject that has a word the asked term
lacks and lacks one it has names something else.
"""

from __future__ import annotations

from typing import Any

from textbound.answer.compose import lead_options
from textbound.shapes import ChunkDict


def _chunk(text: str, cid: str) -> ChunkDict:
    return {"chunk_id": cid, "text": text, "score": 0.7,
            "metadata": {"heading_path": ["bc", "Limits"], "section": "bc > Limits",
                         "source": "bc.html"}}


def _names_term(question: str, evidence: list[ChunkDict], embeddings: Any) -> dict[str, float]:
    options = lead_options(question, evidence, embeddings)
    return {" ".join(s["text"] for s in draft["sentences"][:1]): signals["names_term"]
            for signals, draft in options}


def test_a_sibling_subject_does_not_name_the_asked_term(embeddings) -> None:
    evidence = [_chunk("The maximum input base is 16.", "c1"),
                _chunk("The maximum output base is currently set at 999 by bc.", "c2"),
                _chunk("The base is a number between 2 and 16.", "c3")]
    got = _names_term("What's the maximum output base?", evidence, embeddings)
    assert got["The maximum output base is currently set at 999 by bc."] == 1.0
    assert got["The maximum input base is 16."] == 0.0  # "input" for "output"
    # a subject naming part of the term and nothing else still counts for that part
    assert got["The base is a number between 2 and 16."] > 0.0
