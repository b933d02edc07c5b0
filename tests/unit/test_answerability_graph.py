"""The answerability check in the graph, with FakeReader: each branch, once end to end."""

import dataclasses
import json
import math
from pathlib import Path

import pytest
from langgraph.runtime import Runtime

from graph.builder import build_graph
from graph.services import ReaderSlot
from nodes.check_answerable import check_answerable
from textbound.answer.answerability import FakeReader, Reading, sentence_holding
from textbound.answer.compose import extractive_draft

from ..conftest import make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"
TOPIC = "A topic is a named bus over which nodes exchange messages."


def _graph(tmp_path, embeddings, store, chat, reader, **settings):
    values = {"answerability": True, "audit_log": tmp_path / "audit.jsonl",
              "calibration_file": CALIBRATION, **settings}
    return build_graph(settings=make_settings(tmp_path, **values), embeddings=embeddings,
                       store=store, chat_model=chat, reader=reader)


@pytest.fixture
def make(tmp_path, embeddings, fake_store, exploding_chat):
    def _make(score=None, **settings):
        reader = FakeReader(score=(lambda q, t: score) if score is not None else None)
        graph = _graph(tmp_path, embeddings, fake_store, exploding_chat, reader, **settings)
        return graph, reader

    return _make


def _ask(graph, question, selected_text=None, **context):
    out = graph.invoke({"question": question, "selected_text": selected_text},
                       context=context)
    return out


def test_answerable_question_is_answered_with_the_check_passed(make):
    """A reader score above the threshold answers; `answerable` is a passed check."""
    graph, _ = make(score=0.9)
    out = _ask(graph, "What is a topic?")
    assert not out["was_refusal"]
    diag = out["diagnostics"]
    assert "answerable" in diag["passed_checks"] and "answerable" not in diag["failed_checks"]
    assert diag["answerability"]["passed"] and diag["answerability"]["score"] == 0.9
    assert diag["answerability"]["threshold"] == 0.5  # an old calibration file: the default
    assert diag["answerability"]["reader"] == "fake"


def test_unanswerable_question_refuses_without_a_chat_model(make, exploding_chat, tmp_path):
    """Below the threshold the graph refuses insufficient_context before any generation."""
    graph, _ = make(score=0.1)
    out = _ask(graph, "What is a topic?", generator="chat")
    assert out["refusal_reason"] == "insufficient_context"
    assert out["diagnostics"]["path"] == "refuse_insufficient_context"
    assert "answerable" in out["diagnostics"]["failed_checks"]
    assert out["diagnostics"]["answerability"]["score"] == 0.1
    assert exploding_chat.calls == 0 and "generate" not in out["diagnostics"]["timings_ms"]
    line = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])
    assert "answerable" in line["failed_checks"] and line["answerable_score"] == 0.1


def test_check_is_skipped_when_the_setting_is_off(make):
    """answerability=false: the reader is never called and the verdict says skipped."""
    graph, reader = make(score=0.0, answerability=False)
    out = _ask(graph, "What is a topic?")
    assert not out["was_refusal"] and reader.calls == []
    verdict = out["diagnostics"]["answerability"]
    assert verdict["skipped"] and verdict["score"] is None
    assert "answerable" not in out["diagnostics"]["passed_checks"] + \
        out["diagnostics"]["failed_checks"]


def test_check_is_skipped_when_a_run_turns_it_off(make):
    """A per-run answerability=False skips the check (Studio and Python callers may)."""
    graph, reader = make(score=0.0)
    out = _ask(graph, "What is a topic?", answerability=False)
    assert not out["was_refusal"] and out["diagnostics"]["answerability"]["skipped"]
    assert reader.calls == []


def test_a_run_may_raise_the_threshold(make):
    """A per-run answerable_threshold above the score refuses what the default answers."""
    graph, _ = make(score=0.6)
    assert not _ask(graph, "What is a topic?")["was_refusal"]
    out = _ask(graph, "What is a topic?", answerable_threshold=0.7)
    assert out["refusal_reason"] == "insufficient_context"
    assert out["diagnostics"]["thresholds"]["answerable_threshold"] == 0.7


def test_reader_reads_the_top_passages_by_score(make):
    """The reader gets the question and the best `answerability_passages` evidence chunks."""
    graph, reader = make(score=0.9, answerability_passages=1)
    out = _ask(graph, "What is a topic?")
    question, ids = reader.calls[-1]
    assert question == "What is a topic?" and ids == ["c-topic"]
    assert out["diagnostics"]["answerability"]["scores"] == {"c-topic": 0.9}


def test_selection_the_reader_rejects_is_refused(make, exploding_chat):
    """Selected-text mode: the whole selection is one passage; a low score refuses it."""
    graph, reader = make(score=0.05)
    out = _ask(graph, "What is a topic?", selected_text=TOPIC + " Services are different.",
               generator="chat")
    assert out["refusal_reason"] == "selected_text_insufficient"
    assert "answerable" in out["diagnostics"]["failed_checks"]
    assert reader.calls[-1][1] == ["selection"] and exploding_chat.calls == 0


def test_selection_the_reader_accepts_is_answered(make):
    """A selection the reader finds the answer in is answered from the selection only."""
    graph, _ = make(score=0.95)
    out = _ask(graph, "What is a topic?", selected_text="Services are different. " + TOPIC)
    assert not out["was_refusal"] and out["answer"].startswith(TOPIC)
    assert {s["source"] for s in out["sources"]} == {"selection"}


def test_same_input_gives_the_same_verdict(make):
    """The check is deterministic: two runs of one question give one verdict."""
    graph, _ = make()
    first = _ask(graph, "How many degrees of freedom does a rigid body have?")
    second = _ask(graph, "How many degrees of freedom does a rigid body have?")
    assert first["diagnostics"]["answerability"] == second["diagnostics"]["answerability"]
    assert first["answer"] == second["answer"]


class SpanReader:
    """A reader that finds `answer` in whichever passage holds it (score 0.9 there, else 0.1)."""

    name = "span"

    def __init__(self, answer):
        self.answer = answer

    def read(self, question, passages):
        out = []
        for cid, text in passages:
            at = text.find(self.answer)
            if at < 0:
                out.append(Reading(cid, 0.1, None, None, "", 0, len(text)))
            else:
                end = at + len(self.answer)
                out.append(Reading(cid, 0.9, at, end, self.answer, 0, len(text)))
        return out


def test_answer_leads_with_the_sentence_holding_the_span(tmp_path, embeddings, fake_store,
                                                         exploding_chat):
    """The extractive answer starts with the reader's sentence and carries the span."""
    question = "What does Gazebo simulate?"
    plain = _graph(tmp_path, embeddings, fake_store, exploding_chat, None, answerability=False)
    assert not _ask(plain, question)["answer"].startswith("Its default")
    graph = _graph(tmp_path, embeddings, fake_store, exploding_chat, SpanReader("1.0"))
    out = _ask(graph, question)
    # the reader's sentence leads; it points back ("Its"), so the sentence it points to, the
    # one before it in the paragraph, is shown first
    assert out["answer"].startswith("Gazebo simulates rigid-body physics, sensors and actuators")
    assert "hardware. [1] Its default real-time factor is 1.0. [1]" in out["answer"]
    verdict = out["diagnostics"]["answerability"]
    assert verdict["chunk_id"] == "c-gazebo" and verdict["span_text"] == "1.0"
    span = out["diagnostics"]["answer_span"]
    assert span["chunk_id"] == "c-gazebo" and span["text"] == "1.0" and span["citation"] == 1
    source = out["sources"][0]
    assert source["chunk_id"] == "c-gazebo"
    assert source["answer_span"] == [span["start"], span["end"]]


FACTOR = "Intro words here. The factor is 1.0 by default. Tail sentence here."
FACTOR_STATE = {"question": "What is the default factor?", "input_verdict": {"kind": "question"},
                "clean_question": "What is the default factor?",
                "evidence": [{"chunk_id": "c1", "text": FACTOR, "score": 0.7, "metadata": {}}]}


def _checked(state, reader):
    """check_answerable alone on a state, with the reader on: its verdict."""
    runtime = Runtime(context=_tunables(answerability=True))
    return check_answerable(state, runtime, readers=ReaderSlot(reader))["answerability"]


def test_node_writes_a_typed_verdict():
    """check_answerable alone: the verdict has every field, with the span's sentence."""
    text = FACTOR
    out = _checked(FACTOR_STATE, FakeReader(score=lambda q, t: 0.8))
    assert set(out) >= {"passed", "skipped", "score", "threshold", "chunk_id", "span",
                        "span_text", "sentence", "scores", "reader"}
    s, e = out["sentence"]
    assert text[s:e] == "The factor is 1.0 by default." and out["passed"]


class TwoHeads(FakeReader):
    """A reader with a second head: its verdict differs from the span's score."""

    def read(self, question, passages):
        return [dataclasses.replace(r, verdict=0.02) for r in super().read(question, passages)]


def test_a_second_heads_verdict_decides_but_the_span_keeps_the_shipped_score():
    """Retrieval mode: the verdict refuses, the span score stays; a selection: the score."""
    reader = TwoHeads(score=lambda q, t: 0.8)
    out = _checked(FACTOR_STATE, reader)
    assert (out["score"], out["span_score"], out["passed"]) == (0.02, 0.8, False)
    out = _checked({**FACTOR_STATE, "input_verdict": {"kind": "selected"},
                    "clean_selected_text": FACTOR}, reader)
    assert (out["score"], out["span_score"]) == (0.8, 0.8)


class Recording(SpanReader):
    """SpanReader that remembers the passage ids of each call."""

    def __init__(self, answer):
        super().__init__(answer)
        self.calls = []

    def read(self, question, passages):
        self.calls.append([cid for cid, _ in passages])
        return super().read(question, passages)


def test_a_passage_printing_the_questions_literal_is_read_when_none_read_does():
    """'What does HEAD~9 mean?': the three best passages never print HEAD~9 and the fourth
    does; the reader reads it too, in a call of its own (a passage's score never depends on
    what else is read), and may find the answer there. When a passage read prints the literal
    standing alone, nothing more is read."""
    texts = ["A head names the commit at the tip of a branch.",
             "Commits may have more than one parent.",
             "The HEAD of a repository can be named by the repository.",
             "Ancestors are named by counting back:\n\n```\n$ git show HEAD~9  # nine "
             "generations back\n```"]
    evidence = [{"chunk_id": f"c{n}", "text": t, "score": 0.7 - 0.01 * n, "metadata": {}}
                for n, t in enumerate(texts)]
    question = "What does HEAD~9 mean?"
    state = {"question": question, "input_verdict": {"kind": "question"},
             "clean_question": question, "evidence": evidence}
    reader = Recording("nine generations back")
    runtime = Runtime(context=_tunables(answerability=True))
    out = check_answerable(state, runtime, readers=ReaderSlot(reader))["answerability"]
    assert reader.calls == [["c0", "c1", "c2"], ["c3"]]
    assert out["chunk_id"] == "c3" and out["span_text"] == "nine generations back"
    assert out["scores"] == {"c0": 0.1, "c1": 0.1, "c2": 0.1, "c3": 0.9}
    reader = Recording("nine generations back")
    printed = [dict(evidence[0], text=texts[0] + " See HEAD~9."), *evidence[1:]]
    check_answerable({**state, "evidence": printed}, runtime, readers=ReaderSlot(reader))
    assert reader.calls == [["c0", "c1", "c2"]]
    # a longer token holding the literal does not print it: "HEAD~90" is not HEAD~9
    reader = Recording("nine generations back")
    longer = [dict(evidence[0], text=texts[0] + " See HEAD~90."), *evidence[1:]]
    check_answerable({**state, "evidence": longer}, runtime, readers=ReaderSlot(reader))
    assert reader.calls == [["c0", "c1", "c2"], ["c3"]]


def test_sentence_holding_finds_the_span_sentence():
    """The sentence holding a span is found by offsets; None for an empty text."""
    text = "First one here. Second sentence holds it. Third."
    start = text.index("holds")
    assert sentence_holding(text, start, start + 5) == (16, 41)
    assert sentence_holding("", 0, 0) is None


def test_skipped_verdict_keeps_the_old_selection(embeddings):
    """Without an anchor the extractive draft picks exactly as before."""
    evidence = [{"chunk_id": "c", "text": TOPIC + " Services are different things entirely.",
                 "score": 0.6, "metadata": {}}]
    plain = extractive_draft("What is a topic?", evidence, embeddings)
    assert plain["sentences"][0]["text"] == TOPIC and "answer_span" not in plain


def _tunables(**over):
    from graph.context import resolve_tunables

    settings = make_settings(Path("/nonexistent"), calibration_file=CALIBRATION)
    return resolve_tunables(settings, configurable=over)


def _weighted_calibration(tmp_path, answer_threshold: float, weight: float = 0.1) -> Path:
    data = json.loads(CALIBRATION.read_text())
    data["weights"] = {**data["weights"], "reader": weight}
    data["answer_threshold"] = answer_threshold
    data["answerable_threshold"] = 0.0
    path = tmp_path / "weighted.json"
    path.write_text(json.dumps(data))
    return path


def _retrieval_score(make, question: str) -> float:
    graph, _ = make(score=0.9)
    return _ask(graph, question)["diagnostics"]["gate"]["features"]["gate_score"]


def test_a_weighted_reader_completes_the_gate_score(make, tmp_path, exploding_chat):
    """With weights.reader the reader's log-odds join the gate score: a strong vote lifts a
    question over the threshold, a lukewarm one (above answerable_threshold) does not."""
    question = "What is a topic?"
    g = _retrieval_score(make, question)
    path = _weighted_calibration(tmp_path, answer_threshold=round(g + 0.2, 4))
    strong, _ = make(score=0.95, calibration_file=path)  # 0.1 * logit(0.95) = 0.294
    out = _ask(strong, question)
    verdict = out["diagnostics"]["answerability"]
    assert not out["was_refusal"] and verdict["gate_threshold"] == round(g + 0.2, 4)
    assert verdict["gate_score"] == pytest.approx(g + 0.1 * math.log(0.95 / 0.05), abs=1e-3)
    lukewarm, reader = make(score=0.6, calibration_file=path)  # 0.1 * logit(0.6) = 0.041
    out = _ask(lukewarm, question, generator="chat")
    assert out["refusal_reason"] == "insufficient_context"
    assert "answerable" in out["diagnostics"]["failed_checks"]
    assert reader.calls and exploding_chat.calls == 0


def test_the_gate_refuses_what_no_reader_vote_could_lift(make, tmp_path):
    """Beyond the reader's best possible vote the score gate refuses, and the reader never
    reads; with the reader off its term is 0, so the gate decides alone."""
    question = "What is a topic?"
    g = _retrieval_score(make, question)
    far = _weighted_calibration(tmp_path, answer_threshold=round(g + 0.1 * 6.0 + 0.05, 4))
    graph, reader = make(score=1.0, calibration_file=far)
    out = _ask(graph, question)
    assert out["diagnostics"]["path"] == "refuse_insufficient_context"
    assert "answer_threshold" in out["diagnostics"]["failed_checks"] and reader.calls == []
    near = _weighted_calibration(tmp_path, answer_threshold=round(g + 0.05, 4))
    off, reader = make(score=1.0, calibration_file=near, answerability=False)
    out = _ask(off, question)
    assert "answer_threshold" in out["diagnostics"]["failed_checks"] and reader.calls == []


def test_a_span_without_the_asked_kind_of_value_is_refused(tmp_path, embeddings, fake_store,
                                                            exploding_chat):
    """The reader is sure of "1.0", but an update rate needs Hz: refused, check answer_type."""
    graph = _graph(tmp_path, embeddings, fake_store, exploding_chat, SpanReader("1.0"))
    out = _ask(graph, "What is the default update rate of the real-time factor Gazebo simulates?")
    assert out["refusal_reason"] == "insufficient_context" and out["sources"] == []
    diag = out["diagnostics"]
    assert diag["answerability"]["score"] == 0.9
    assert diag["answerability"]["answer_type"] == {"expected": "rate", "found": False}
    assert {"answerable", "answer_type"} <= set(diag["failed_checks"])


def test_a_span_with_the_asked_kind_of_value_is_answered(tmp_path, embeddings, fake_store,
                                                         exploding_chat):
    """A count question whose span is a number passes both checks, in that order."""
    graph = _graph(tmp_path, embeddings, fake_store, exploding_chat, SpanReader("6"))
    out = _ask(graph, "How many degrees of freedom does a rigid body moving freely have?")
    assert not out["was_refusal"]
    diag = out["diagnostics"]
    assert diag["answerability"]["answer_type"] == {"expected": "count", "found": True}
    checks = diag["passed_checks"]
    assert checks.index("answer_type") == checks.index("answerable") + 1


def test_an_untyped_question_records_no_answer_type(make):
    """A question asking for no kind of value leaves answer_type None and adds no check."""
    graph, _ = make(score=0.9)
    out = _ask(graph, "What is a topic?")
    assert out["diagnostics"]["answerability"]["answer_type"] is None
    assert "answer_type" not in out["diagnostics"]["passed_checks"] + \
        out["diagnostics"]["failed_checks"]
