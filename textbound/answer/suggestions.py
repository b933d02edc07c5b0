"""What a refusal offers and names: questions about the nearest sections, the question's topic.

The refusal terminals (nodes/refuse.py) fill their fixed messages with these: a topic for seed
000's "information on {detected_topic}", and ready-to-send questions built from the titles of the
sections retrieval came nearest to.
"""

from __future__ import annotations

import re

from textbound.shapes import ChunkDict

__all__ = ["SUGGESTION_FLOOR", "detected_topic", "section_suggestions", "suggestion_question"]

_GENERIC_SECTIONS = {"summary", "key terms", "introduction", "overview", "exercises",
                     "further reading", "selected text"}
SUGGESTION_FLOOR = 0.2
"""Raw cosine a chunk needs before its section is offered as a suggestion."""

_LEAD = re.compile(
    r"^\s*(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:tell me|explain|describe|"
    r"what(?:'s| is| are| was| were)?|how (?:do|does|did|can|could|should|to)(?: i| you| we)?|"
    r"why (?:is|are|do|does|did)|who (?:is|was|are)|when (?:is|was|did)|where (?:is|are|do|can)|"
    r"is|are|do|does|can|could|should|which)\s+(?:about\s+)?",
    re.I,
)


def detected_topic(question: str) -> str:
    """Return the question's subject for seed 000's "information on {detected_topic}"."""
    topic = _LEAD.sub("", question.strip()).strip().rstrip("?.! ")
    topic = re.sub(r"\s+", " ", topic)
    if len(topic) > 80:
        topic = topic[:77].rsplit(" ", 1)[0] + "..."
    return topic or "this topic"


_NUMBERING = re.compile(
    r"^\s*(?:(?:chapter|part|section|unit|lesson|module)\s+[\w.]+\s*[:.\-\u2013\u2014]?\s*"
    r"|\d+(?:\.\d+)*\.?\s+)", re.I)
_ASKS = re.compile(r"^(?:what|why|how|when|where|who|which|is|are|can|do|does|should)\b", re.I)


def suggestion_question(title: str) -> str:
    """Turn a section title into a question a reader can send as it is.

    "What Is ROS 2?" stays a question (not "Tell me about What Is ROS 2?"), numbering such as
    "Chapter 1:" is dropped, and a sentence-case title loses its capital inside the sentence.
    """
    topic = _NUMBERING.sub("", title).strip() or title.strip()
    if topic.endswith("?"):
        return topic
    if _ASKS.match(topic):
        return topic.rstrip(".!:") + "?"
    words = topic.split()
    sentence_case = len(words) > 1 and all(w.islower() for w in words[1:] if w.isalpha())
    if sentence_case and words[0][:1].isupper() and words[0][1:].islower():
        topic = topic[0].lower() + topic[1:]
    return f"Tell me about {topic.rstrip('.!:')}."


def section_suggestions(chunks: list[ChunkDict], limit: int = 3) -> list[str]:
    """Return up to `limit` questions about the sections of the best retrieved chunks.

    Seed 004's planned enhancement: each is a ready-to-send question built from a section title.
    """
    out: list[str] = []
    for c in sorted(chunks, key=lambda c: -c["score"]):
        if c["score"] < SUGGESTION_FLOOR:
            break
        path = c["metadata"].get("heading_path") or []
        title = str(path[-1]) if path else ""
        if not title or title.lower() in _GENERIC_SECTIONS:
            continue
        question = suggestion_question(title)
        if question in out:
            continue
        out.append(question)
        if len(out) == limit:
            break
    return out
