"""corpus/conversations.dev.jsonl, the conversation dev set: well formed, gold from the book."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from textbound.quality.evaluation.conversations import FOLLOW_UPS, load_conversations

from ..conftest import CORPUS

SET = CORPUS / "conversations.dev.jsonl"


@pytest.fixture(scope="module")
def conversations() -> list[dict]:
    return load_conversations(SET)


@pytest.fixture(scope="module")
def book() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md")))


def _follow_ups(conversations: list[dict]) -> list[dict]:
    return [t for c in conversations for t in c["turns"][1:]]


def test_every_gold_answer_is_verbatim_in_the_book(conversations, book):
    """Each gold string of an answerable turn occurs in corpus/*.md exactly as written."""
    missing = [(c["id"], a) for c in conversations for t in c["turns"] for a in t["answers"]
               if a not in book]
    assert missing == []
    assert all(t["answers"] for c in conversations for t in c["turns"]
               if t["expected"] == "answer")
    assert not any(t["answers"] for c in conversations for t in c["turns"]
                   if t["expected"] == "refuse")


def test_conversations_are_short_and_ids_unique(conversations):
    """At least 48 conversations of 2 to 4 turns, with unique tb-c-NNN ids."""
    assert len(conversations) >= 48
    assert all(2 <= len(c["turns"]) <= 4 for c in conversations)
    ids = [c["id"] for c in conversations]
    assert len(set(ids)) == len(ids) and all(i.startswith("tb-c-") for i in ids)


def test_first_turns_stand_alone(conversations):
    """A first turn has no follow-up kind and is its own standalone question."""
    for c in conversations:
        first = c["turns"][0]
        assert first["follow_up"] is None, c["id"]
        assert first["standalone"] == first["question"], c["id"]


def test_follow_ups_are_labelled(conversations):
    """Every later turn names its kind; a stand-alone switch is its own standalone question."""
    for c in conversations:
        for t in c["turns"][1:]:
            assert t["follow_up"] in FOLLOW_UPS, c["id"]
            if t["follow_up"] == "standalone":
                assert t["standalone"] == t["question"], c["id"]
            else:
                assert t["standalone"] != t["question"], c["id"]


def test_kinds_and_expectations_agree(conversations):
    """Answerable turns expect an answer; near-miss and out-of-corpus turns a refusal."""
    for c in conversations:
        for t in c["turns"]:
            want = "answer" if t["kind"] == "answerable" else "refuse"
            assert t["kind"] in ("answerable", "near_miss", "out_of_corpus"), c["id"]
            assert t["expected"] == want, c["id"]


def test_counts_per_kind():
    """The counts docs/evaluation.md reports: turns per kind and follow-ups per label."""
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines()]
    first = Counter(r["turns"][0]["kind"] for r in rows)
    later = [t for r in rows for t in r["turns"][1:]]
    assert len(rows) == 58 and sum(len(r["turns"]) for r in rows) == 194
    assert first == {"answerable": 56, "near_miss": 1, "out_of_corpus": 1}
    assert Counter(t["kind"] for t in later) == {"answerable": 105, "near_miss": 27,
                                                 "out_of_corpus": 4}
    assert Counter(t["follow_up"] for t in later) == {
        "pronoun": 67, "standalone": 20, "and_x": 18, "ellipsis": 14, "why": 9, "example": 8}
    refusals = sum(t["expected"] == "refuse" for t in later)
    assert 0.2 <= refusals / len(later) <= 0.3  # about a quarter of follow-ups are refusals
