"""The evaluation's peer (`textbound eval --generator peer`): a plain LangChain RAG chain over
the graph's own retrieval, no gates, no validator; a refusal only when the model abstains."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from textbound.errors import SetupError
from textbound.quality.evaluation.journal import run_journaled
from textbound.quality.evaluation.peer import abstains, peer_answer, peer_chain
from textbound.quality.evaluation.runner import evaluate, make_record

CHUNK = {"chunk_id": "c1", "text": "A service implements a request-response interaction.",
         "score": 0.71, "metadata": {"section": "Services"}}


class RetrievingGraph:
    """The graph as the peer uses it: streamed until its retrieve node has reported."""

    def __init__(self) -> None:
        self.after_retrieve = False

    def stream(self, payload: dict[str, Any], context: dict[str, Any],
               stream_mode: str) -> Iterator[dict[str, Any]]:
        assert stream_mode == "updates" and context == {"policy": "calibrated"}
        yield {"validate_input": {"question": payload["question"]}}
        yield {"retrieve": {"chunks": [CHUNK]}}
        self.after_retrieve = True  # the peer never runs the gates or the generator
        yield {"score_gate": {}}


def _model(replies: list[str], seen: list[str]) -> RunnableLambda:
    def reply(prompt: Any) -> AIMessage:
        seen.append(prompt.to_string())
        return AIMessage(content=replies.pop(0))
    return RunnableLambda(reply)


@pytest.mark.parametrize("reply", [
    "I don't know.", "I don’t know the answer to that.",
    "The context does not mention Ibn Sina's birthplace.",
    "The provided context doesn't say when the institute returned.",
    "This is not mentioned in the context.", "There is no information about his birth."])
def test_abstentions_are_refusals(reply: str) -> None:
    assert abstains(reply)


@pytest.mark.parametrize("reply", [
    "A service implements a request-response interaction between two nodes.",
    "Aristotle says bravery is the mean between cowardice and rashness.",
    "Knowledge does not require certainty, according to the fallibilist."])
def test_answers_are_not_abstentions(reply: str) -> None:
    assert not abstains(reply)


def test_peer_answers_from_the_retrieved_passages_alone() -> None:
    """The prompt holds the question and the retrieve node's chunks; the reply is released as
    written, with those chunks as its sources; a later node never runs."""
    seen: list[str] = []
    graph = RetrievingGraph()
    chain = peer_chain(_model(["It implements a request-response interaction."], seen))
    response, saw = peer_answer(graph, chain, {"question": "What does a service do?"},
                                {"policy": "calibrated"})
    assert "What does a service do?" in seen[0] and CHUNK["text"] in seen[0]
    assert not graph.after_retrieve
    assert response["answer"] == "It implements a request-response interaction."
    assert response["was_refusal"] is False and response["diagnostics"]["path"] == "peer_rag"
    assert [s["chunk_id"] for s in response["sources"]] == ["c1"]
    assert saw["evidence"][0]["text"] == CHUNK["text"] and saw["error"] is None


def test_peer_records_abstentions_and_failures_as_refusals(tmp_path: Path) -> None:
    """Journaled like the chat generator: an abstention and a failed call are refusals with a
    reason, a correct reply scores as correct."""
    questions = [{"id": f"q{n}", "question": f"What does thing {n} do?", "expected": "answer",
                  "kind": "answerable", "answers": ["request-response"]} for n in range(3)]

    def flaky(prompt: Any) -> AIMessage:
        text = prompt.to_string()
        if "thing 1" in text:
            return AIMessage(content="The context does not say what thing 1 does.")
        if "thing 2" in text:
            raise TimeoutError("read timed out")
        return AIMessage(content="It implements a request-response interaction.")

    chain = peer_chain(RunnableLambda(flaky))
    records = run_journaled(
        RetrievingGraph(), questions, {"policy": "calibrated", "generator": "peer"},
        tmp_path / "calibrated.jsonl", make_record,
        answer=lambda g, p, c: peer_answer(g, chain, p, {"policy": "calibrated"}))
    assert [r["correct"] for r in records] == [True, None, None]
    assert [r["refusal_reason"] for r in records] == [None, "abstained", "call_failed"]
    assert "TimeoutError" in records[2]["error"]


def test_peer_without_a_chat_model_fails_before_ingesting(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from textbound.settings import load_settings

    monkeypatch.delenv("TEXTBOUND_CHAT_MODEL", raising=False)
    settings = load_settings(data_dir=tmp_path, audit_log="", chat_model="")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "q", "question": "What?", "expected": "answer", '
                         '"kind": "answerable", "answers": ["x"]}\n')
    with pytest.raises(SetupError, match="TEXTBOUND_CHAT_MODEL"):
        evaluate(tmp_path / "missing", questions, settings, generator="peer",
                 journal=tmp_path / "journal")
    assert not (tmp_path / "journal").exists()
