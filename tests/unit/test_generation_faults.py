"""The chat generator under faults: scripted fake chat models drive the whole graph.

Each test scripts what the "model" returns (a structured tool call, a sleep, an exception) and
asserts the refusal reason the graph ends with. Retrieval uses a small in-memory store scored with
the real local embeddings, so the score gate sees real cosines; no socket is opened.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from graph.builder import build_graph
from graph.state import OutputState
from textbound.documents.store import TermStats
from textbound.fakes import MemoryStore
from textbound.providers.embeddings import build_embeddings
from textbound.settings import Settings

from ..conftest import ScriptedChat

pytestmark = pytest.mark.usefixtures("socket_disabled")

QUESTION = "What sensors are combined in a 6-axis IMU?"

PASSAGES = {
    "imu": (
        "An inertial measurement unit (IMU) combines a three-axis accelerometer and a three-axis "
        "gyroscope to measure linear acceleration and angular velocity; such a device is called a "
        "6-axis IMU. Adding a three-axis magnetometer, which senses the Earth's magnetic field and "
        "therefore helps estimate heading, yields what is commonly marketed as a 9-axis IMU."
    ),
    "accel": (
        "An accelerometer does not measure acceleration alone; it measures specific force, which "
        "includes the reaction to gravity. A gyroscope measures angular velocity, and integrating "
        "it over time gives orientation changes, but small biases in the measurement accumulate "
        "into drift. For this reason IMU orientation estimates are nearly always corrected using "
        "the gravity direction from the accelerometer."
    ),
    "dof": (
        "The degrees of freedom (DoF) of a system are the number of independent parameters "
        "needed to specify its configuration. A rigid body moving freely in three-dimensional "
        "space has 6 DoF, namely three translations and three rotations."
    ),
}
GROUNDED = ("An inertial measurement unit combines a three-axis accelerometer and a three-axis "
            "gyroscope; such a device is called a 6-axis IMU.")


Step = Callable[[list[BaseMessage]], AIMessage]




def short_id(messages: list[BaseMessage], passage: str) -> str:
    """Return the context id (C1, C2, ...) the prompt gives the named passage."""
    system = str(messages[0].content)
    for m in re.finditer(r"\[(C\d+)\] \([^)]*\)\n", system):
        if system[m.end():].startswith(PASSAGES[passage][:40]):
            return m.group(1)
    raise AssertionError(f"passage {passage!r} is not in the prompt")


def answer(*sentences: tuple[str, list[str]], confidence: float = 0.9) -> Step:
    """Return a step answering with sentences citing passages by name ('?C9' is sent as 'C9')."""

    def step(messages: list[BaseMessage]) -> AIMessage:
        items = [{"text": text, "chunk_ids": [c[1:] if c.startswith("?") else
                                              short_id(messages, c) for c in cites]}
                 for text, cites in sentences]
        return tool_call({"sentences": items, "confidence": confidence})

    return step


def tool_call(args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[
        {"name": "GroundedAnswer", "args": args, "id": "call_1", "type": "tool_call"}])


@pytest.fixture(scope="module")
def embeddings(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_embeddings(Settings(data_dir=tmp_path_factory.mktemp("emb")))


@pytest.fixture(scope="module")
def store(embeddings: Any) -> MemoryStore:
    """The passages in the shipped in-memory store, one section each."""
    return MemoryStore.holding(embeddings, [
        (f"doc#{name}", text, {"source": "fake.md", "section": name,
                               "heading_path": ["Sensors", name]})
        for name, text in PASSAGES.items()], collection="fake",
        stats=TermStats(0, {}))  # no statistics: every word weighs the same


@pytest.fixture
def ask(tmp_path: Any, embeddings: Any, store: MemoryStore) -> Callable[..., dict[str, Any]]:
    def run(model: ScriptedChat, question: str = QUESTION, **settings: Any) -> dict[str, Any]:
        s = Settings(data_dir=tmp_path, collection="fake", chat_model="scripted",
                     audit_log="", **settings)
        graph = build_graph(settings=s, chat_model=model, embeddings=embeddings, store=store)
        return graph.invoke({"question": question}, context={"generator": "chat"})

    return run


def test_grounded_cited_answer_is_released(ask: Callable[..., dict[str, Any]]) -> None:
    """A draft whose every sentence is cited and backed by its passage is released."""
    model = ScriptedChat(steps=[answer((GROUNDED, ["imu"]))])
    out = ask(model)
    assert out["was_refusal"] is False, out["diagnostics"]
    assert out["diagnostics"]["path"] == "release_answer"
    assert out["diagnostics"]["generator"] == "chat"
    assert out["answer"].startswith(GROUNDED) and out["answer"].endswith("[1]")
    assert [s["chunk_id"] for s in out["sources"]] == ["doc#imu"]
    rows = out["diagnostics"]["grounding"]["sentences"]
    assert len(rows) == 1 and rows[0]["supported"] and rows[0]["valid_citations"] == 1
    assert model.calls == 1


def test_uncited_sentence_is_refused_missing_citations(ask: Callable[..., dict[str, Any]]) -> None:
    """A sentence with no chunk ids refuses with missing_citations."""
    model = ScriptedChat(steps=[answer((GROUNDED, ["imu"]),
                                       ("A gyroscope measures angular velocity.", []))])
    out = ask(model)
    assert out["refusal_reason"] == "missing_citations"
    assert "citations_present" in out["diagnostics"]["failed_checks"]
    assert GROUNDED not in out["answer"]


def test_citation_to_unretrieved_chunk_is_refused(ask: Callable[..., dict[str, Any]]) -> None:
    """Citing an id that names no retrieved passage refuses with invalid_citations."""
    model = ScriptedChat(steps=[answer((GROUNDED, ["?C9"]))])
    out = ask(model)
    assert out["refusal_reason"] == "invalid_citations"
    assert out["sources"] == []


@pytest.mark.parametrize("invented", [
    "A 6-axis IMU combines a three-axis accelerometer and a gyroscope sampled 4096 times.",
    "A 6-axis IMU combines an accelerometer and a gyroscope, as shown by Honeywell.",
])
def test_invented_number_or_name_is_hallucination(ask: Callable[..., dict[str, Any]],
                                                  invented: str) -> None:
    """A number or a name absent from the cited passage refuses with hallucination_detected."""
    out = ask(ScriptedChat(steps=[answer((invented, ["imu"]))]))
    assert out["refusal_reason"] == "hallucination_detected"
    tokens = out["diagnostics"]["grounding"]["sentences"][0]["unsupported_tokens"]
    assert tokens and set(tokens) <= {"4096", "honeywell"}


def test_prohibited_phrase_is_refused(ask: Callable[..., dict[str, Any]]) -> None:
    """Seed 001's forbidden phrasing refuses even when the rest is grounded."""
    text = ("In general, a 6-axis IMU combines a three-axis accelerometer and a three-axis "
            "gyroscope.")
    out = ask(ScriptedChat(steps=[answer((text, ["imu"]))]))
    assert out["refusal_reason"] == "prohibited_phrasing"


def test_chat_self_reported_confidence_is_ignored(ask: Callable[..., dict[str, Any]]) -> None:
    """A chat model's own confidence decides nothing (issue 26: Qwen 1.5B reported 0.9-1.0 on
    every draft, invented ones included): a grounded draft rated 0.2 is released."""
    out = ask(ScriptedChat(steps=[answer((GROUNDED, ["imu"]), confidence=0.2)]))
    assert out["was_refusal"] is False, out["diagnostics"]
    assert "generation_confidence:ignored" in out["diagnostics"]["passed_checks"]
    assert "generation_confidence" not in out["diagnostics"]["failed_checks"]


def test_slow_model_times_out_to_generation_error(ask: Callable[..., dict[str, Any]]) -> None:
    """A model slower than chat_timeout_s refuses with generation_error, after every retry."""
    release = threading.Event()

    def slow(messages: list[BaseMessage]) -> AIMessage:
        release.wait(5)
        return answer((GROUNDED, ["imu"]))(messages)

    model = ScriptedChat(steps=[slow])
    t0 = time.perf_counter()
    try:
        out = ask(model, chat_timeout_s=0.3, chat_max_retries=1)
    finally:
        release.set()  # let the abandoned calls finish
    assert out["refusal_reason"] == "generation_error"
    assert out["diagnostics"]["error"] == "timeout after 1 attempt(s)"
    assert time.perf_counter() - t0 < 4


@pytest.mark.parametrize("retries", [0, 2])
def test_model_exception_retries_then_refuses(ask: Callable[..., dict[str, Any]],
                                              retries: int) -> None:
    """A failing provider is called 1 + chat_max_retries times, then refused, never raised."""
    model = ScriptedChat(steps=[ConnectionError("provider down")])
    out = ask(model, chat_max_retries=retries)
    assert out["refusal_reason"] == "generation_error"
    assert model.calls == 1 + retries
    expected = f"model error (ConnectionError) after {1 + retries} attempt(s)"
    assert out["diagnostics"]["error"] == expected
    assert "provider down" not in out["answer"]


def test_retry_recovers_after_one_failure(ask: Callable[..., dict[str, Any]]) -> None:
    """One failed call followed by a good answer is released on the retry."""
    model = ScriptedChat(steps=[RuntimeError("flaky"), answer((GROUNDED, ["imu"]))])
    out = ask(model, chat_max_retries=1)
    assert out["was_refusal"] is False
    assert model.calls == 2


@pytest.mark.parametrize("reply", [
    tool_call({"sentences": "not a list", "confidence": 0.9}),
    tool_call({"sentences": [{"text": GROUNDED}], "confidence": 0.9}),
    tool_call({"sentences": [], "confidence": 7}),
    AIMessage(content="A 6-axis IMU combines an accelerometer and a gyroscope."),
], ids=["sentences-not-list", "no-chunk-ids", "confidence-out-of-range", "no-tool-call"])
def test_malformed_structured_output_is_generation_error(ask: Callable[..., dict[str, Any]],
                                                         reply: AIMessage) -> None:
    """Output that does not parse as GroundedAnswer refuses with generation_error."""
    model = ScriptedChat(steps=[reply])
    out = ask(model, chat_max_retries=1)
    assert out["refusal_reason"] == "generation_error"
    assert out["diagnostics"]["error"].startswith("malformed output")
    assert model.calls == 2


def test_empty_answer_is_the_book_not_answering(ask: Callable[..., dict[str, Any]]) -> None:
    """A model that returns no sentences (the context is silent) abstained: the refusal says
    the passages do not answer the question, not that an answer was ungrounded."""
    out = ask(ScriptedChat(steps=[tool_call({"sentences": [], "confidence": 0.9})]))
    assert out["refusal_reason"] == "question_not_answered"
    assert "model_abstained" in out["diagnostics"]["failed_checks"]


OUTPUT_KEYS = OutputState.__required_keys__ | OutputState.__optional_keys__
DRAFT = ("A 6-axis IMU combines a three-axis accelerometer and a three-axis gyroscope built by "
         "Honeywell in 1987.")


def _graph(tmp_path: Any, embeddings: Any, store: MemoryStore, model: ScriptedChat) -> Any:
    s = Settings(data_dir=tmp_path, collection="fake", chat_model="scripted", audit_log="")
    return build_graph(settings=s, chat_model=model, embeddings=embeddings, store=store)


def test_stream_updates_show_failed_draft_only_in_generate(tmp_path: Any, embeddings: Any,
                                                           store: MemoryStore) -> None:
    """In "updates" mode a refused draft's text appears only in the internal generate update."""
    graph = _graph(tmp_path, embeddings, store,
                   ScriptedChat(steps=[answer((DRAFT, ["imu"]))]))
    events = list(graph.stream({"question": QUESTION}, context={"generator": "chat"},
                               stream_mode="updates"))
    nodes = [next(iter(e)) for e in events]
    assert nodes[-3:] == ["generate", "validate_grounding", "refuse_hallucination_detected"]
    holding = [n for n, e in zip(nodes, events, strict=True) if DRAFT in repr(e)]
    assert holding == ["generate"]
    # The caller-facing filter: only terminal updates, only response-contract keys.
    visible = [{k: v for k, v in e[n].items() if k in OUTPUT_KEYS}
               for n, e in zip(nodes, events, strict=True)]
    assert all(DRAFT not in repr(v) for v in visible)
    final = visible[-1]
    assert set(final) == OUTPUT_KEYS and final["refusal_reason"] == "hallucination_detected"
    # What a caller does see of the draft: the invented tokens, named in diagnostics.
    assert final["diagnostics"]["grounding"]["sentences"][0]["unsupported_tokens"] == [
        "1987", "honeywell"]


def test_stream_values_carry_the_draft_until_filtered(tmp_path: Any, embeddings: Any,
                                                     store: MemoryStore) -> None:
    """Raw "values" events are the whole internal state, draft included; filter to output keys."""
    graph = _graph(tmp_path, embeddings, store,
                   ScriptedChat(steps=[answer((DRAFT, ["imu"]))]))
    events = list(graph.stream({"question": QUESTION}, context={"generator": "chat"},
                               stream_mode="values"))
    # Why a server must not forward raw events: the unvalidated draft is in the state.
    assert any("draft" in e and DRAFT in repr(e) for e in events)
    visible = [{k: v for k, v in e.items() if k in OUTPUT_KEYS} for e in events]
    assert all(DRAFT not in repr(v) for v in visible)
    assert set(visible[-1]) == OUTPUT_KEYS
    assert visible[-1]["refusal_reason"] == "hallucination_detected"


def test_invoke_returns_only_the_response_contract(ask: Callable[..., dict[str, Any]]) -> None:
    """`invoke` applies the output schema: a refused draft never reaches its caller."""
    out = ask(ScriptedChat(steps=[answer((DRAFT, ["imu"]))]))
    assert set(out) == OUTPUT_KEYS
    assert DRAFT not in repr(out) and out["refusal_reason"] == "hallucination_detected"
