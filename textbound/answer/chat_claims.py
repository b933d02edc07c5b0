"""Reading a chat draft before its grounding is checked: abstentions, changed facts, echoes.

A chat model's draft (tuned on drafts of Qwen2.5-Coder-1.5B, recorded in
tests/fixtures/chat_drafts.json) says things an extractive one cannot: that the context does not
answer, several sentences in one item, a name or number changed against the sentence it follows,
or the question's own words back with a yes or no. textbound/answer/grounding.py reads a chat
draft through these.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from textbound.text import content_words, split_sentences

__all__ = ["echoes_question", "entity_mismatches", "is_abstention", "prepare_chat_draft"]

# The model's own "the context does not answer this" (seed 001's rule 2, and its paraphrases).
_ABSTAIN = re.compile(
    r"\b(?:i can only answer questions from the (?:textbook|book) content"
    r"|(?:context|textbook|book|passages?|text|provided information)\s+(?:does|do|did)\s+not\s+"
    r"(?:contain|provide|mention|say|state|answer|include|specify|cover|describe|give|discuss)"
    r"|(?:context|textbook|book|passages?|text)\s+(?:doesn't|don't)\s+\w+"
    r"|(?:is|are)\s+not\s+(?:mentioned|provided|covered|stated|specified|described|discussed|"
    r"given|found)\s+in\s+the\s+(?:context|textbook|book|passages?|text|provided)"
    r"|no (?:information|mention|details?) (?:about|on|of|regarding)"
    r"|(?:cannot|can't|can not) (?:be )?(?:answer|determine|find|found|answered|determined))",
    re.I)
# a name with a number ("ROS 2", "RT-2", "H100") or a number
_ENTITY = re.compile(r"\b(?:[A-Z][A-Za-z]*\s\d+(?:\.\d+)?(?![\w.])|[A-Za-z]+[-/]?\d[\w.-]*"
                     r"|\d+(?:[.,]\d+)*)\b")


def is_abstention(text: str) -> bool:
    """Return whether a draft sentence says the context does not answer (no claim of its own)."""
    return bool(_ABSTAIN.search(text))


def _entities(text: str) -> Counter[str]:
    """Count the names with digits (RT-2, ROS2, H100) and the numbers in text."""
    return Counter(m.group(0).lower().rstrip(".").replace(",", "")
                   for m in _ENTITY.finditer(text))


def _family(token: str) -> str:
    return re.sub(r"\d+(?:\.\d+)*", "#", token)


def entity_mismatches(claim: str, cited_text: str) -> list[str]:
    """Return the claim's names and numbers that its cited sentences contradict.

    Two ways: the claim repeats a token more often than any one cited sentence holds it ("RT-1
    built on RT-1" against "RT-2 built on RT-1"), or the claim's token is absent from the cited
    sentence it follows most closely while that sentence holds a token of the same shape the
    claim lacks ("7 DoF" against "6 DoF"). A token absent from every cited sentence is left to
    the hallucination markers.
    """
    said = _entities(claim)
    if not said:
        return []
    sentences = split_sentences(cited_text) or [cited_text]
    counts = [_entities(s) for s in sentences]
    words = set(content_words(claim))
    overlap = [len(words & set(content_words(s))) for s in sentences]
    aligned = counts[max(range(len(sentences)), key=lambda i: (overlap[i], -i))]
    wrong: set[str] = set()
    for token, n in said.items():
        best = max((c[token] for c in counts), default=0)
        if 0 < best < n:
            wrong.add(token)
        if token not in aligned:
            family = _family(token)
            if any(_family(t) == family and t not in said for t in aligned):
                wrong.add(token)
    return sorted(wrong)


_POLARITY = {"yes", "no"}


def echoes_question(sentence: str, question: str, terms: set[str] | None = None) -> bool:
    """Return whether a sentence says nothing but the question's own words (and a yes or no).

    "Yes, you can just copy your TensorRT engines from the workstation to the robot." for "Can I
    just copy my TensorRT engines ...?": every word is in its cited passage, because the question
    was about that passage, yet the passage never says yes (it says the engines are rebuilt on the
    robot). Such a sentence is the model's own verdict, so no passage can support it. `terms`
    are the question's content words when they were read already (the question's analysis).
    """
    said = set(content_words(sentence)) - _POLARITY
    return bool(said) and said <= (set(content_words(question)) if terms is None else terms)


def prepare_chat_draft(draft: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a chat draft's items into sentences and drop its abstaining sentences.

    Returns the prepared draft and a record of what was done (`split`: items that held several
    sentences, `abstained`: the abstaining sentences dropped, `abstention`: whether nothing but
    abstention was left).
    """
    items = list(draft.get("sentences") or [])
    out: list[dict[str, Any]] = []
    split = dropped = 0
    for item in items:
        parts = [p.strip() for p in split_sentences(str(item.get("text", ""))) if p.strip()]
        parts = parts or [str(item.get("text", "")).strip()]
        split += len(parts) > 1
        for part in parts:
            if is_abstention(part):
                dropped += 1
                continue
            out.append({**item, "text": part, "citations": list(item.get("citations") or [])})
    note = {"split": split, "abstained": dropped, "abstention": not out}
    return {**draft, "sentences": out}, note
