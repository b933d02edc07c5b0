"""The book's glossary entry ("- **Term**: definition") answers a question asking for the term.

A textbook's key-terms list is its own definition of each term: retrieve brings the entry in,
the gate keeps it as evidence, and the extractive answer leads with it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.runtime import Runtime

from graph.context import resolve_tunables
from nodes.retrieve import retrieve
from nodes.score_gate import gate_chunks
from textbound.answer.compose import extractive_draft
from textbound.answer.evidence import (
    asked_terms,
    glossary_defines,
    glossary_entries,
    glossary_names,
)
from textbound.documents.store.memory import MemoryStore
from textbound.fakes import HashEmbedder
from textbound.text import content_words

from ..conftest import make_settings

KEY_TERMS = """## Key Terms

- **Golden rule**: the maxim that one should treat others as one would wish to be treated.
- **Law of identity**: a law of logic that says every thing is the same as itself.
- **Tabula rasa**: the view that the mind starts as a blank slate written on by experience.
"""


@pytest.mark.parametrize(("question", "asked"), [
    ("Can you explain the law of identity?", ["law of identity"]),
    ("What is the golden rule when dealing with strangers?",
     ["golden rule when dealing with strangers"]),
    ("what's the difference between tabula rasa and innate ideas",
     ["tabula rasa", "innate ideas"]),
    # each side as written: a head is not borrowed from the other side
    ("What is the difference between a rigid and a soft gripper?",
     ["a rigid", "a soft gripper"]),
    ("Who was Aristotle's teacher?", []),
])
def test_the_terms_a_question_asks_to_define(question: str, asked: list[str]) -> None:
    assert asked_terms(question) == asked


@pytest.mark.parametrize(("entry", "asked", "names"), [
    ("Law of identity", "the law of identity", True),
    ("Golden rule", "golden rule when dealing with strangers", True),
    ("Capital", "capital of France", False),  # an attribute of France, not the word "capital"
    ("Athens", "population of Athens", False),  # the head is "population"
    ("ROS 2", "ROS 2 service", False),  # the head is "service"
    ("Rule", "golden rule when dealing with strangers", False),  # half the words at least
])
def test_an_entry_names_the_asked_term_by_its_head(entry: str, asked: str, names: bool) -> None:
    assert glossary_names(content_words(entry), asked) is names


def test_glossary_entries_are_bold_terms_before_a_colon() -> None:
    found = [words for _, words in glossary_entries(KEY_TERMS)]
    assert found == [content_words(t) for t in ("Golden rule", "Law of identity", "Tabula rasa")]
    assert glossary_entries("**Warning**. Do not run this as root.\n- a plain item: text") == []
    assert glossary_defines(KEY_TERMS, ["the law of identity"])
    assert not glossary_defines(KEY_TERMS, ["the law of gravity"])


def _store(texts: list[str], heads: list[list[str]]) -> MemoryStore:
    s = MemoryStore(HashEmbedder(256))
    s.ensure_collection(256)
    s.upsert([f"00000000-0000-4000-8000-{n:012d}" for n in range(len(texts))],
             s.embeddings.embed_documents(texts), texts,
             [{"source": "book.md", "heading_path": h, "section": " > ".join(h)} for h in heads])
    return s


def _retrieve(store: MemoryStore, question: str, tmp_path: Any) -> dict[str, Any]:
    settings = make_settings(tmp_path).model_copy(update={"top_k": 3})
    state: Any = {"clean_question": question}
    return retrieve(state, Runtime(context=resolve_tunables(settings)), store=store,
                    embeddings=store.embeddings)


def test_retrieve_brings_in_and_marks_the_glossary_entry(tmp_path: Any) -> None:
    """Six passages say "law of identity" more often than the key-terms list does; retrieve puts
    the list in the last top_k place, marked `glossary`; for a comparison, each side's entry
    (here two chunks of the list); a question asking for no definition is unchanged."""
    body = [f"The law of identity, like the law of identity in logic {n}, holds of identity."
            for n in range(6)]
    first = "## Key Terms\n\n- **Innate ideas**: ideas the mind has before any experience."
    texts = [*body, KEY_TERMS, first]
    heads = [["Logic", "Laws"]] * 6 + [["Logic", "Key Terms"]] * 2
    s = _store(texts, heads)
    out = _retrieve(s, "Can you explain the law of identity?", tmp_path)
    marked = [c["text"] for c in out["chunks"] if c.get("glossary")]
    assert marked == [KEY_TERMS] and out["chunks"][-1]["text"] == KEY_TERMS
    both = _retrieve(s, "What is the difference between tabula rasa and innate ideas?", tmp_path)
    assert {c["text"] for c in both["chunks"] if c.get("glossary")} == {KEY_TERMS, first}
    plain = _retrieve(s, "Who first stated the law of identity?", tmp_path)
    assert not any(c.get("glossary") for c in plain["chunks"])


def test_the_gate_keeps_a_glossary_chunk_under_its_margin_cut(tmp_path: Any) -> None:
    settings = make_settings(tmp_path).model_copy(update={"top_k": 3})
    tun = resolve_tunables(settings, {"answer_threshold": 0.0, "floor": 0.0})
    body: list[Any] = [{"chunk_id": f"c{n}", "text": "The law of identity holds of every thing.",
             "score": 0.7, "metadata": {}} for n in range(2)]
    entry: Any = {"chunk_id": "g", "text": KEY_TERMS, "score": 0.3, "metadata": {},
                  "glossary": True}
    _, found = gate_chunks("Can you explain the law of identity?", [*body, entry], tun)
    assert "g" in found["evidence_ids"]
    unmarked: Any = {k: v for k, v in entry.items() if k != "glossary"}
    _, found = gate_chunks("Can you explain the law of identity?", [*body, unmarked], tun)
    assert "g" not in found["evidence_ids"]  # the margin cut, as for any other chunk


def _chunk(text: str, cid: str, score: float, heading: str) -> Any:
    return {"chunk_id": cid, "text": text, "score": score,
            "metadata": {"heading_path": ["Logic", heading], "source": "book.md"}}


BODY = ("The law of identity states that every thing is the same as itself. Philosophers "
        "since Parmenides have leaned on the law of identity.")


def test_the_glossary_entry_leads_ahead_of_the_readers_span() -> None:
    """The reader chose the text's own sentence; the glossary entry leads, and the text's
    sentence saying the same again is not added ("says it twice")."""
    body = _chunk(BODY, "c1", 0.7, "Laws")
    terms = _chunk(KEY_TERMS, "c2", 0.4, "Key Terms")
    end = BODY.index(" Philosophers")
    anchor = (("c1", 0, end), ["c1", 30, 60])
    draft = extractive_draft("Can you explain the law of identity?", [body, terms],
                             HashEmbedder(), anchor=anchor)
    texts = [s["text"] for s in draft["sentences"]]
    assert texts[0] == ("Law of identity: a law of logic that says every thing is the same as "
                        "itself.")
    assert draft["sentences"][0]["citations"] == ["c2"]
    assert not any(t.startswith("The law of identity states") for t in texts)
    # without a glossary the text's definition answers, as before
    draft = extractive_draft("Can you explain the law of identity?", [body],
                             HashEmbedder(), anchor=anchor)
    assert draft["sentences"][0]["text"].startswith("The law of identity states")


def test_a_comparison_quotes_each_sides_glossary_entry() -> None:
    body = _chunk("Tabula rasa is a Latin phrase that Locke made famous. Innate ideas were "
                  "defended by Descartes against the empiricists.", "c1", 0.7, "Knowledge")
    first = _chunk("## Key Terms\n\n- **Innate ideas**: ideas the mind has before any "
                   "experience.", "c3", 0.4, "Key Terms")
    terms = _chunk(KEY_TERMS, "c2", 0.4, "Key Terms")
    draft = extractive_draft("What is the difference between tabula rasa and innate ideas?",
                             [body, terms, first], HashEmbedder())
    texts = sorted(s["text"] for s in draft["sentences"])
    assert texts == ["Innate ideas: ideas the mind has before any experience.",
                     "Tabula rasa: the view that the mind starts as a blank slate written on by "
                     "experience."]
