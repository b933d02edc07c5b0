"""The validator's chat rules on drafts recorded from the real model (issue 26).

tests/fixtures/chat_drafts.json holds drafts Qwen2.5-Coder-1.5B-Instruct wrote for questions
on the bundled book, verbatim, with the evidence it was given: recorded with `textbound eval
--generator chat` against `textbound model serve`, copied by tests/fixtures/record_chat_drafts.py
(its docstring has the commands; the file's `recorded_with` the model and settings). Nothing in
a draft is edited here: a test that needs a variant builds it from the recorded draft by one
named change and says so.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from graph.context import resolve_tunables
from graph.state import RefusalReason
from nodes.validate_grounding import check_draft
from textbound.answer.chat_claims import echoes_question, entity_mismatches, prepare_chat_draft
from textbound.settings import Settings

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "chat_drafts.json"
DATA = json.loads(FIXTURE.read_text())
DRAFTS = {d["id"]: d for d in DATA["drafts"]}


@pytest.fixture(scope="module")
def tun(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return resolve_tunables(Settings(data_dir=tmp_path_factory.mktemp("tun"), audit_log=""))


def check(entry: dict[str, Any], tun: Any, embeddings: Any,
          draft: dict[str, Any] | None = None) -> dict[str, Any]:
    return dict(check_draft(copy.deepcopy(draft or entry["draft"]), entry["evidence"], tun,
                            embeddings, entry["question"]))


def test_fixture_says_how_it_was_recorded() -> None:
    rec = DATA["recorded_with"]
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" in rec["model"]
    assert "textbound eval --generator chat" in rec["command"]
    assert all(d["draft"]["generator"] == "chat" for d in DATA["drafts"])


@pytest.mark.parametrize("qid", sorted(i for i, d in DRAFTS.items()
                                      if d["outcome_when_recorded"] == "released"
                                      and not d.get("judged_by_hand", "").startswith("wrong")))
def test_released_drafts_still_pass(qid: str, tun: Any, embeddings: Any) -> None:
    """What the model got right and the validator released stays released."""
    verdict = check(DRAFTS[qid], tun, embeddings)
    assert verdict["passed"], verdict


def test_changed_name_fails_though_every_word_is_in_the_cited_text(tun: Any,
                                                                    embeddings: Any) -> None:
    """Issue 26's altered claim: Qwen wrote "RT-1 built on RT-1" where the book says "RT-2
    built on RT-1". Here the recorded draft of t-rt2 (which got it right) with that one change:
    word overlap alone gives it full support; the name check refuses it."""
    entry = DRAFTS["t-rt2"]
    right = entry["draft"]["sentences"][0]["text"]
    assert right.startswith("RT-2 built on RT-1")
    assert check(entry, tun, embeddings)["passed"]
    altered = copy.deepcopy(entry["draft"])
    altered["sentences"][0]["text"] = right.replace("RT-2", "RT-1", 1)
    verdict = check(entry, tun, embeddings, altered)
    assert verdict["reason"] == RefusalReason.HALLUCINATION_DETECTED
    row = verdict["sentences"][0]
    assert row["lexical"] == 1.0 and row["unsupported_tokens"] == ["rt-1"]
    cited = next(c["text"] for c in entry["evidence"]
                 if c["chunk_id"] in entry["draft"]["sentences"][0]["citations"])
    assert entity_mismatches(altered["sentences"][0]["text"], cited) == ["rt-1"]
    assert entity_mismatches(right, cited) == []


def test_a_number_changed_against_its_sentence_fails(tun: Any, embeddings: Any) -> None:
    """tb-b-009's recorded answer, 256 bins, passes; with 255 bins it is refused."""
    entry = DRAFTS["tb-b-009"]
    assert "256 bins" in entry["draft"]["sentences"][0]["text"]
    assert check(entry, tun, embeddings)["passed"]
    altered = copy.deepcopy(entry["draft"])
    altered["sentences"][0]["text"] = altered["sentences"][0]["text"].replace("256", "255")
    verdict = check(entry, tun, embeddings, altered)
    assert verdict["reason"] == RefusalReason.HALLUCINATION_DETECTED
    assert "255" in verdict["sentences"][0]["unsupported_tokens"]


def test_a_right_answer_citing_the_wrong_passage_is_re_cited(tun: Any, embeddings: Any) -> None:
    """tb-a-009's recorded sentence quotes its cited passage verbatim. Citing a neighbouring
    evidence passage instead (the mistake issue 26 saw refused as hallucination_detected), it
    is re-cited to the passage that says it, recorded in its row, and released."""
    entry = DRAFTS["tb-a-009"]
    sentence = entry["draft"]["sentences"][0]
    source = next(c for c in entry["evidence"] if c["chunk_id"] in sentence["citations"])
    other = next(c for c in entry["evidence"] if c["chunk_id"] not in sentence["citations"])
    miscited = copy.deepcopy(entry["draft"])
    miscited["sentences"][0]["citations"] = [other["chunk_id"]]
    verdict = check(entry, tun, embeddings, miscited)
    assert verdict["passed"], verdict
    row = verdict["sentences"][0]
    assert row["recited"] == {"from": [other["chunk_id"]], "to": [source["chunk_id"]]}
    assert "recited:1" in verdict["passed_checks"]
    assert verdict["draft"]["sentences"][0]["citations"] == [source["chunk_id"]]


def test_cosine_does_not_count_without_the_key_terms(tun: Any, embeddings: Any) -> None:
    """tb-a-001's recorded answer cited against a passage about something else (tb-a-009's
    evidence has no "rigid body" or "DoF"): cosine is not even computed, the sentence fails."""
    entry = DRAFTS["tb-a-001"]
    elsewhere = DRAFTS["tb-a-009"]["evidence"][0]
    moved = {**copy.deepcopy(entry["draft"])}
    moved["sentences"][0]["citations"] = [elsewhere["chunk_id"]]
    verdict = dict(check_draft(moved, [elsewhere], tun, embeddings, entry["question"]))
    row = verdict["sentences"][0]
    assert not verdict["passed"] and not row["supported"]
    assert row["cosine_allowed"] is False and row["cosine"] is None


def test_an_item_with_two_sentences_is_checked_sentence_by_sentence(tun: Any,
                                                                     embeddings: Any) -> None:
    """One cited item packing two recorded sentences (tb-b-009's answer, then the altered RT
    claim of issue 26, both citing tb-b-009's passages) is split: the first passes, the second
    fails on its own instead of riding on the first's support."""
    entry = DRAFTS["tb-b-009"]
    first = entry["draft"]["sentences"][0]
    packed = copy.deepcopy(entry["draft"])
    packed["sentences"] = [{"text": first["text"] + " RT-1 built on RT-1.",
                            "citations": first["citations"]}]
    prepared, note = prepare_chat_draft(packed)
    assert note["split"] == 1 and [s["text"] for s in prepared["sentences"]] == [
        first["text"], "RT-1 built on RT-1."]
    verdict = check(entry, tun, embeddings, packed)
    assert [r["supported"] for r in verdict["sentences"]] == [True, False]
    assert not verdict["passed"]


def test_self_reported_confidence_carries_no_signal_and_is_ignored(tun: Any,
                                                                   embeddings: Any) -> None:
    """Every recorded draft reports 0.9 to 1.0, the judged-wrong tb-b-024 too, so a threshold
    could not tell them apart; a recorded draft given confidence 0 is judged the same."""
    assert {d["draft"]["confidence"] for d in DATA["drafts"]} <= {0.9, 0.95, 1.0}
    entry = DRAFTS["tb-a-002"]
    low = {**copy.deepcopy(entry["draft"]), "confidence": 0.0}
    verdict = check(entry, tun, embeddings, low)
    assert verdict["passed"] and "generation_confidence:ignored" in verdict["passed_checks"]


def test_the_books_own_typically_is_not_prohibited_phrasing(tun: Any, embeddings: Any) -> None:
    """t-humanoid: Qwen quoted the book's "typically have between 25 and 40 actuated degrees of
    freedom"; hedging is prohibited in the writer's voice, not in the book's, so it is released.
    Cited against a passage without "typically" it is re-cited to the one that says it."""
    entry = DRAFTS["t-humanoid"]
    sentence = entry["draft"]["sentences"][0]
    assert "typically" in sentence["text"]
    verdict = check(entry, tun, embeddings)
    assert verdict["passed"], verdict
    assert "prohibited_phrasing" in verdict["passed_checks"]
    others = [c for c in entry["evidence"] if "typically" not in c["text"]]
    assert others, "the recorded evidence has a passage without 'typically'"
    miscited = copy.deepcopy(entry["draft"])
    miscited["sentences"][0]["citations"] = [others[0]["chunk_id"]]
    again = check(entry, tun, embeddings, miscited)
    assert again["passed"], again
    assert again["draft"]["sentences"][0]["citations"] == sentence["citations"]


OPENSTAX = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "openstax"


def test_the_asked_attribute_must_be_in_the_cited_passage_not_only_in_the_claim(
        tun: Any, embeddings: Any) -> None:
    """OpenStax near-miss os-158, "Which country was the first to legalize euthanasia?" (the book
    never says which was first). Qwen's draft, recorded verbatim, wrote the asked qualifier into
    its claim; the passage naming Switzerland (read here from ../shared/data) lists countries
    where the practice is legal and never says "first". The claim's own words do not state the
    attribute, so the draft is refused as not answering the question."""
    questions = OPENSTAX / "questions.dev.jsonl"
    chapter = OPENSTAX / "corpus" / "ch10-applied-ethics.md"
    if not questions.is_file() or not chapter.is_file():
        pytest.skip(f"OpenStax data not found in {OPENSTAX}")
    asked = next(json.loads(line) for line in questions.read_text().splitlines()
                 if line.strip() and json.loads(line)["id"] == "os-158")
    assert asked["kind"] == "near_miss"
    paragraph = next(p for p in chapter.read_text().split("\n\n")
                     if "Switzerland, the Netherlands" in p)
    evidence: Any = [{"chunk_id": "p", "text": paragraph, "score": 0.66, "metadata": {}}]
    recorded = {"sentences": [{"text": "The first country to legalize euthanasia was "
                                       "Switzerland.", "citations": ["p"]}],
                "confidence": 1.0, "generator": "chat"}
    verdict = dict(check_draft(recorded, evidence, tun, embeddings, asked["question"]))
    assert not verdict["passed"]
    assert verdict["reason"] == RefusalReason.QUESTION_NOT_ANSWERED
    assert "asked_attribute" in verdict["failed_checks"]
    assert verdict["attribute"]["missing"] == ["first"]
    # the claim itself is grounded well enough otherwise: only the attribute check fails
    assert verdict["failed_checks"] == ["asked_attribute"]


def test_a_yes_that_only_echoes_the_question_is_refused(tun: Any, embeddings: Any) -> None:
    """tb-b-024, "Can I just copy my TensorRT engines from the workstation to the robot?", was
    released when recorded: "Yes, you can just copy your TensorRT engines from the workstation
    to the robot." has every word in its cited passage (the question is about that passage),
    while the book says an engine must be rebuilt on the target. The yes is the model's own."""
    entry = DRAFTS["tb-b-024"]
    assert entry["outcome_when_recorded"] == "released"
    assert entry["judged_by_hand"].startswith("wrong")
    first = entry["draft"]["sentences"][0]["text"]
    assert first.startswith("Yes, you can just copy")
    assert echoes_question(first, entry["question"])
    verdict = check(entry, tun, embeddings)
    assert not verdict["passed"]
    assert verdict["reason"] == RefusalReason.UNGROUNDED_ANSWER
    assert "no_question_echo" in verdict["failed_checks"]
    rows = verdict["sentences"]
    assert rows[0]["echo"] and not rows[0]["supported"]
    # word overlap alone would have supported it (all but "yes" is in the passage)
    assert rows[0]["lexical"] >= tun.sentence_support_threshold
    # the same draft without the echo is judged on its other sentences only
    rest = copy.deepcopy(entry["draft"])
    rest["sentences"] = rest["sentences"][1:]
    assert "no_question_echo" in check(entry, tun, embeddings, rest)["passed_checks"]


def test_no_recorded_sentence_that_says_something_new_counts_as_an_echo() -> None:
    """Every sentence of every recorded draft adds a word of its own (a number, a name, the
    book's term) except tb-b-024's yes; a sentence naming what the question asked is no echo."""
    echoed = [d["id"] for d in DATA["drafts"] for s in d["draft"]["sentences"]
              if echoes_question(s["text"], d["question"])]
    assert echoed == ["tb-b-024"]
    assert not echoes_question("ISO/TS 15066 describes four modes of collaborative operation.",
                               "Which collaborative operation modes are described in ISO/TS "
                               "15066?")
    assert not echoes_question("No.", "Can I copy it?")  # nothing said at all: not an echo


def test_a_count_asked_must_be_answered_with_a_count(tun: Any, embeddings: Any) -> None:
    """tb-a-031, a near-miss ("How many threads does the rclpy MultiThreadedExecutor create by
    default?"; the book gives no number), was released when recorded with sentences about its
    pool of threads that state no count. Asked for a count, a chat draft must give one."""
    entry = DRAFTS["tb-a-031"]
    assert entry["kind"] == "near_miss" and entry["outcome_when_recorded"] == "released"
    verdict = check(entry, tun, embeddings)
    assert not verdict["passed"]
    assert verdict["reason"] == RefusalReason.QUESTION_NOT_ANSWERED
    assert verdict["failed_checks"] == ["answer_type"]
    assert verdict["answer_type"] == "count"
    # every recorded answerable draft asked for a count states one, and keeps passing it
    counted = [d for d in DATA["drafts"] if d["question"].lower().startswith("how many")
               and d["kind"] == "answerable"]
    assert counted
    for d in counted:
        assert "answer_type" in check(d, tun, embeddings)["passed_checks"], d["id"]
