"""One end-to-end run per terminal node, with a chat model that fails the test if touched."""

import json
from pathlib import Path

import pytest

import prompts
from graph.builder import build_graph
from graph.state import RefusalReason
from textbound import course
from textbound.errors import StoreUnavailableError
from textbound.fakes import MemoryStore

from ..conftest import book_store, make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"

CONTRACT = {"answer", "was_refusal", "refusal_reason", "sources", "confidence_level",
            "suggestions", "diagnostics", "run_id"}


@pytest.fixture
def run(tmp_path, embeddings, fake_store, exploding_chat):
    settings = make_settings(tmp_path, audit_log=tmp_path / "audit.jsonl",
                             calibration_file=CALIBRATION)
    # the fake store's chunks come from the bundled textbook, so its course profile applies
    graph = build_graph(settings=settings, embeddings=embeddings, store=fake_store,
                        chat_model=exploding_chat, profile=course.load_profile())

    def _run(question, selected_text=None, **context):
        # generator=chat everywhere: a refusal that reached generation would call the model
        ctx = {"generator": "chat", **context}
        out = graph.invoke({"question": question, "selected_text": selected_text,
                            "session_id": "s-1"}, context=ctx)
        assert set(out) == CONTRACT
        assert exploding_chat.calls == 0
        return out

    _run.audit = tmp_path / "audit.jsonl"
    _run.store = fake_store
    return _run


@pytest.mark.parametrize("question", ["", "   \n\t", "\u200f\u200e", "a\x00b", "?!?"])
def test_empty_or_binary_question_is_invalid(run, question):
    """Empty, whitespace-only, invisible-only, NUL and wordless input refuse before retrieval."""
    out = run(question)
    assert out["refusal_reason"] == "invalid_question"
    assert out["diagnostics"]["chunks_retrieved"] == 0
    assert "retrieve" not in out["diagnostics"]["timings_ms"]


def test_overlong_question_is_invalid(run):
    """A question over max_question_chars is refused with the limit in the message."""
    out = run("why " * 1000)
    assert out["refusal_reason"] == "invalid_question"
    assert "limit is 2,000" in out["answer"]


def test_non_string_question_is_invalid(run):
    """A question that is not text is refused, not a crash."""
    out = run(12345)
    assert out["refusal_reason"] == "invalid_question" and "must be text" in out["answer"]


def test_bad_per_run_override_is_invalid(run):
    """An out-of-range per-run value refuses with a message naming it."""
    out = run("What is a topic?", top_k=0)
    assert out["refusal_reason"] == "invalid_question" and "top_k" in out["answer"]


@pytest.mark.parametrize("greeting", ["hello", "Hi there!", "thank you", "Thanks!"])
def test_greeting_gets_fixed_reply_without_retrieval(run, greeting):
    """Greetings and thanks get the fixed coverage reply; nothing is retrieved."""
    out = run(greeting)
    assert out["diagnostics"]["path"] == "greet" and not out["was_refusal"]
    assert "Physical AI" in out["answer"] and out["diagnostics"]["chunks_retrieved"] == 0


def test_coverage_question_is_answered_from_the_table_of_contents(run):
    """'What topics do you cover?' lists the collection's own sections, nothing invented."""
    out = run("What topics do you cover?")
    assert out["diagnostics"]["path"] == "describe_coverage"
    for section in ("Topics", "Services", "Gazebo", "Kinematics"):
        assert section in out["answer"]


def test_unrelated_question_is_empty_retrieval(run):
    """Nothing near the question: empty_retrieval with seed 000's message and topic."""
    out = run("What is the capital of France?")
    assert out["refusal_reason"] == "empty_retrieval" and out["sources"] == []
    assert "the capital of France" in out["answer"]
    assert out["confidence_level"] == "insufficient"


def test_weak_match_is_insufficient_context(run):
    """With seed 000's 0.7 policy, a related but weak match refuses insufficient_context."""
    out = run("How do publishers and subscribers find each other on a network bus?",
              policy="seed_000", floor=0.2)
    assert out["refusal_reason"] == "insufficient_context"
    assert out["diagnostics"]["gate"]["features"]["top1"] < 0.7


def test_out_of_scope_topic_is_named(run):
    """An excluded topic refuses out_of_scope and names the topic (seed 000's template)."""
    out = run("How do I tune a PID controller for a robot arm?")
    assert out["refusal_reason"] == "out_of_scope"
    assert "For advanced control theory, please refer to specialized resources." in out["answer"]


def test_selection_without_the_answer_refuses(run):
    """Selected-text mode refuses when the selection does not hold the answer."""
    out = run("Who invented the transistor?",
              selected_text="A topic is a named bus over which nodes exchange messages.")
    assert out["refusal_reason"] == "selected_text_insufficient"
    assert out["diagnostics"]["chunks_retrieved"] == 1  # the selection's one sentence


def test_selection_is_the_only_evidence(run):
    """Selected-text mode answers from the selection and never searches the store."""
    run.store.fail("search", AssertionError("the store was searched"))
    out = run("What is a topic?", generator="extractive",
              selected_text="In this course, a topic is a named bus over which nodes exchange "
                            "messages. Services are different.")
    assert not out["was_refusal"] and "named bus" in out["answer"]
    assert {s["source"] for s in out["sources"]} == {"selection"}


def test_selection_sentences_are_not_looked_up_in_the_store(run):
    """A selection's sentences were never stored: generation embeds them instead of asking the
    store (which would fail on ids like 'selection#0'); searched evidence is looked up."""
    asked: list[list[str]] = []
    run.store.sentence_vectors = lambda ids: asked.append(list(ids)) or {}
    out = run("What is a topic?", generator="extractive",
              selected_text="In this course, a topic is a named bus over which nodes exchange "
                            "messages. Services are different.")
    assert not out["was_refusal"] and asked == []
    out = run("What is a topic?", generator="extractive")
    assert not out["was_refusal"] and asked and not any("selection" in i for i in asked[0])


def test_store_down_refuses_store_unavailable(run):
    """A store failure is a refusal with a reason, not an exception."""
    run.store.fail("search", StoreUnavailableError("connection refused"))
    out = run("What is a topic?")
    assert out["refusal_reason"] == "store_unavailable"
    assert out["diagnostics"]["error"] == "connection refused"


@pytest.mark.parametrize("failing", ["exists", "table_of_contents"])
def test_coverage_question_with_the_store_down_refuses_store_unavailable(
        tmp_path, embeddings, failing):
    """'What do you cover?' with the store down is a store_unavailable refusal, not "nothing"."""
    store = book_store(embeddings)
    store.fail(failing, StoreUnavailableError("connection refused"))  # the server is gone
    graph = build_graph(settings=make_settings(tmp_path, audit_log=tmp_path / "audit.jsonl"),
                        embeddings=embeddings, store=store)
    out = graph.invoke({"question": "What topics do you cover?"})
    assert out["was_refusal"] and out["refusal_reason"] == "store_unavailable"
    assert out["confidence_level"] == "insufficient" and out["sources"] == []
    assert out["answer"] == prompts.refusal_template("store_unavailable")
    assert "ingested" not in out["answer"]
    assert out["diagnostics"]["path"] == "describe_coverage"
    assert out["diagnostics"]["error"] == "connection refused"
    audit = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])
    assert audit["event"] == "refusal" and audit["refusal_reason"] == "store_unavailable"


def test_coverage_question_with_no_collection_says_nothing_is_ingested(tmp_path, embeddings):
    """A store that answers but holds no collection gets the fixed "nothing ingested" reply."""
    store = MemoryStore(embeddings, "fake")  # nothing ingested: no collection
    graph = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=store)
    out = graph.invoke({"question": "What topics do you cover?"})
    assert not out["was_refusal"] and out["diagnostics"]["path"] == "describe_coverage"
    assert out["answer"] == prompts.reply_template("coverage_empty")


def test_chat_generator_without_a_model_is_generation_error(tmp_path, embeddings, fake_store):
    """generator=chat with no model configured fails closed to generation_error."""
    graph = build_graph(settings=make_settings(tmp_path, calibration_file=CALIBRATION),
                        embeddings=embeddings, store=fake_store)
    out = graph.invoke({"question": "What is a topic?"}, context={"generator": "chat"})
    assert out["refusal_reason"] == "generation_error"
    assert "TEXTBOUND_CHAT_MODEL" in out["diagnostics"]["error"]


def test_extractive_answer_is_released_with_citations(run):
    """An answerable question gets verbatim evidence sentences, each with a marker and source."""
    out = run("What is a topic?", generator="extractive")
    assert not out["was_refusal"] and out["refusal_reason"] is None
    assert "A topic is a named bus over which nodes exchange messages. [1]" in out["answer"]
    assert out["sources"][0]["chunk_id"] == "c-topic" and out["sources"][0]["citation"] == 1
    sentence = "A topic is a named bus over which nodes exchange messages."
    assert [0, len(sentence)] in out["sources"][0]["highlights"]
    assert out["confidence_level"] in ("high", "medium", "low")
    assert out["diagnostics"]["path"] == "release_answer"


def test_every_refusal_reason_has_a_terminal_node(tmp_path, embeddings, fake_store):
    """The compiled graph has refuse_<reason> for every reason, each wired to END."""
    graph = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)
    g = graph.get_graph()
    for reason in RefusalReason:
        node = f"refuse_{reason.value}"
        assert node in g.nodes
        assert any(e.source == node and e.target == "__end__" for e in g.edges)


def test_every_response_is_audited(run):
    """Each response appends exactly one audit line with seed 000's fields."""
    questions = ["hello", "", "What is the capital of France?", "What is a topic?"]
    for q in questions:
        run(q, generator="extractive")
    lines = [json.loads(x) for x in run.audit.read_text().splitlines()]
    assert len(lines) == len(questions)
    for rec in lines:
        for key in ("event", "timestamp", "session_id", "question", "refusal_reason",
                    "chunks_retrieved", "max_score", "latency_ms", "sources"):
            assert key in rec
        assert rec["timestamp"].endswith("Z") and rec["session_id"] == "s-1"
    assert [r["event"] for r in lines] == ["answer", "refusal", "refusal", "answer"]


def test_quoting_the_books_own_hedge_is_not_prohibited(embeddings):
    """'Typically' in a verbatim source sentence is the book's wording, not the writer's hedge."""
    from graph.context import resolve_tunables
    from nodes.validate_grounding import check_draft

    chunk = {"chunk_id": "c1", "score": 0.8, "metadata": {},
             "text": "A full-size humanoid typically has more than 30 actuated joints."}
    tun = resolve_tunables(make_settings(Path("/nonexistent"), calibration_file=CALIBRATION))
    quoted = {"sentences": [{"text": chunk["text"], "citations": ["c1"]}], "confidence": None}
    assert check_draft(quoted, [chunk], tun, embeddings)["passed"]
    hedged = {"sentences": [{"text": "Typically, a full-size humanoid has more than 30 actuated "
                                     "joints.", "citations": ["c1"]}], "confidence": None}
    hedged["sentences"][0]["text"] = "In general, " + chunk["text"][0].lower() + chunk["text"][1:]
    verdict = check_draft(hedged, [chunk], tun, embeddings)
    assert verdict["reason"] == "prohibited_phrasing"


def test_answer_that_misses_the_question_refuses_when_coverage_is_required(run):
    """With min_answer_coverage on, an answer lacking the question's key word is refused."""
    q = "What is a topic's maximum bandwidth on a wireless link?"
    loose = run(q, generator="extractive", answer_threshold=0.0)
    strict = run(q, generator="extractive", answer_threshold=0.0, min_answer_coverage=0.8)
    assert not loose["was_refusal"]
    assert strict["refusal_reason"] == "question_not_answered"
    assert strict["diagnostics"]["grounding"]["grounding_score"] == 1.0


def test_gate_refuses_unknown_names_only_when_asked():
    """A name the collection never uses refuses as empty_retrieval (check known_names), with the
    features still recorded; with the check off it is a warning and the scores decide."""
    from graph.context import resolve_tunables
    from nodes.score_gate import gate_chunks

    settings = make_settings(Path("/nonexistent"), calibration_file=CALIBRATION)
    chunk = {"chunk_id": "c1", "score": 0.9, "metadata": {},
             "text": "ROS 2 runs on many operating systems and uses DDS for transport. " * 3}
    q = "Can I use ROS 2 on Windows?"
    on, found = gate_chunks(q, [chunk], resolve_tunables(settings), unknown=["Windows"])
    assert on["reason"] == "empty_retrieval" and "known_names" in on["failed_checks"]
    assert found["unknown_names"] == ["Windows"] and on["figures"]["top1"] == 0.9
    off, found = gate_chunks(q, [chunk], resolve_tunables(
        settings, {"refuse_unknown_names": False, "answer_threshold": 0.0}), unknown=["Windows"])
    assert off["passed"] and "known_names" not in off["failed_checks"]
    assert any("never mentions Windows" in w for w in found["warnings"])


def test_near_miss_answer_without_the_asked_attribute_is_refused(embeddings):
    """"Where was X born?" answered with X's works fails asked_attribute: question_not_answered."""
    from graph.context import resolve_tunables
    from nodes.validate_grounding import check_draft

    chunk = {"chunk_id": "c1", "score": 0.8, "metadata": {},
             "text": "Ibn Sina was a Persian polymath who wrote on medicine and philosophy. His "
                     "Canon of Medicine was read for centuries. He was born in Afshana."}
    tun = resolve_tunables(make_settings(Path("/nonexistent"), calibration_file=CALIBRATION))
    first = chunk["text"].split(". ")[0] + "."
    works = {"sentences": [{"text": first, "citations": ["c1"], "spans": [["c1", 0, len(first)]]}],
             "confidence": None}
    verdict = check_draft(works, [chunk], tun, embeddings, "Where was Ibn Sina born?")
    assert verdict["reason"] == "question_not_answered"
    assert "asked_attribute" in verdict["failed_checks"]
    assert verdict["attribute"] == {"asked": ["born"], "missing": ["born"]}
    birth = {"sentences": [{"text": "He was born in Afshana.", "citations": ["c1"]}],
             "confidence": None}
    assert check_draft(birth, [chunk], tun, embeddings, "Where was Ibn Sina born?")["passed"]


def test_an_acronym_the_passages_spell_out_is_a_known_name():
    """"WWII" against a book that says "World War II" is not an unknown name; "NATO" is."""
    from types import SimpleNamespace

    from textbound.answer.evidence import spelled_out, unknown_names

    stats = SimpleNamespace(words={"world", "war", "ii", "institute"},
                            mentions=lambda w: w.lower() in {"world", "war", "ii", "institute"})
    texts = ["After the end of World War II, the Institute for Social Research returned."]
    q = "When did the Institute for Social Research return to Frankfurt after WWII?"
    assert unknown_names(q, stats, texts) == ["Social", "Research", "Frankfurt"]
    assert "WWII" in unknown_names(q, stats, [])
    assert spelled_out("ISR", texts) and not spelled_out("WWI", texts)
    assert not spelled_out("NATO", texts) and not spelled_out("Windows", texts)


def test_under_the_floor_a_passage_holding_all_the_question_words_passes_it():
    """"Who published saycan?" embeds far from its passage; the words pass the floor, the
    seeds' presets never do, and an unrelated passage still refuses as empty_retrieval."""
    from graph.context import resolve_tunables
    from nodes.score_gate import gate_chunks

    chunk = {"chunk_id": "c1", "score": 0.12, "metadata": {},
             "text": "SayCan, published by Google researchers in 2022, combined two scores."}
    q = "Who published saycan?"
    calibrated = resolve_tunables(make_settings(Path("/nonexistent"),
                                                calibration_file=CALIBRATION),
                                  {"answer_threshold": 0.0})
    assert calibrated.gate.floor_words is not None and 0.12 < calibrated.gate.floor
    passed, found = gate_chunks(q, [chunk], calibrated)
    assert "floor" in passed["passed_checks"] and found["evidence_ids"] == ["c1"]
    other = dict(chunk, text="Gazebo simulates rigid bodies with several physics engines.")
    refused, _ = gate_chunks(q, [other], calibrated)
    assert refused["reason"] == "empty_retrieval" and "floor" in refused["failed_checks"]
    seed = resolve_tunables(make_settings(Path("/nonexistent"), calibration_file=CALIBRATION,
                                          policy="seed_000"))
    assert gate_chunks(q, [chunk], seed)[0]["reason"] == "empty_retrieval"
