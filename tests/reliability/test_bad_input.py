"""Bad input through the graph, the CLI and HTTP: always a clear refusal or a 4xx, never a crash.

Property-based (hypothesis, seeded by its own derandomisation): random Unicode, control and
format characters, NUL bytes, right-to-left marks, over-long questions and selections, wrong JSON
types, missing and extra fields, and invalid per-request overrides. Every call is bounded by a
timeout, so a hang fails the test instead of stalling the run.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.context import TUNABLE_NAMES
from graph.state import RefusalReason
from tests.reliability.conftest import ThreadServer, bounded, small_app, small_graph
from textbound.serving.server import CONTRACT_KEYS
from textbound.text import clean_text

SETTINGS = dict(database=None, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.large_base_example,
                                       HealthCheck.data_too_large])
REASONS = {r.value for r in RefusalReason}
RTL = ["\u200f", "\u200e", "\u202e", "\u202b", "\u2066", "\u2067", "\u2069", "\u061c"]
WORDS = ["What", "is", "a", "topic", "?", "ROS", "gazebo", " ",
         "\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627"]
MAX_Q, MAX_SEL = 2000, 20_000  # the settings' defaults

_sizes = st.sampled_from([MAX_Q + 1, 10_000, 1_000_000])
QUESTIONS: dict[str, st.SearchStrategy[str]] = {
    "unicode": st.text(max_size=300),
    "control": st.text(st.characters(categories=["Cc", "Cf"]), min_size=1, max_size=60).flatmap(
        lambda junk: st.sampled_from([junk, "What is a topic?" + junk, junk + "topic"])),
    "nul": st.tuples(st.text(max_size=40), st.text(max_size=40)).map(
        lambda ab: ab[0] + "\x00" + ab[1]),
    "rtl": st.lists(st.sampled_from(RTL + WORDS), min_size=1, max_size=30).map("".join),
    "huge_question": _sizes.map(lambda n: ("What is a topic? " * (n // 17 + 1))[:n]),
}
KINDS = st.sampled_from(sorted(QUESTIONS)).flatmap(
    lambda kind: QUESTIONS[kind].map(lambda q: (kind, q)))


def expect_invalid(question: str, selected: str | None = None) -> bool:
    """Whether check_question must refuse this input as invalid_question."""
    for text, limit in ((question, MAX_Q), (selected, MAX_SEL)):
        if text is None or (text is selected and not text.strip()):
            continue
        cleaned = clean_text(text)
        if "\x00" in text or len(text) > limit or not re.search(r"\w", cleaned):
            return True
    return False


def assert_contract(out: dict[str, Any]) -> None:
    assert tuple(out) == CONTRACT_KEYS, sorted(out)
    if out["was_refusal"]:
        assert out["refusal_reason"] in REASONS
        assert out["answer"].strip()
    if out["refusal_reason"] == "invalid_question":
        problem = out["diagnostics"]["problem"]
        assert isinstance(problem, str) and problem, out["diagnostics"]
        assert problem in out["answer"]  # the user is told what is wrong
        assert out["sources"] == []


# --- the graph ------------------------------------------------------------------------------------
@pytest.fixture
def graph(tmp_path: Path, embeddings: Any, fake_store: Any) -> Any:
    return small_graph(tmp_path, embeddings, fake_store)


@settings(max_examples=150, **SETTINGS)
@given(case=KINDS, selected=st.one_of(st.none(), st.just(""), QUESTIONS["unicode"],
                                      st.sampled_from([MAX_SEL + 1, 2_000_000]).map(
                                          lambda n: "Topics are buses. " * (n // 18 + 1))))
def test_graph_refuses_bad_text_clearly(graph: Any, cases: Counter[str], case: tuple[str, str],
                                        selected: str | None) -> None:
    """Any text as question or selection ends in the contract; bad text in invalid_question."""
    kind, question = case
    cases[f"graph/{kind}"] += 1
    if selected is not None and len(selected) > MAX_SEL:
        cases["graph/huge_selected_text"] += 1
    out = bounded(graph.invoke, {"question": question, "selected_text": selected}, timeout=60)
    assert_contract(out)
    if expect_invalid(question, selected):
        assert out["refusal_reason"] == "invalid_question", (question[:80], out["diagnostics"])


WRONG = st.one_of(st.integers(), st.floats(allow_nan=True), st.booleans(),
                  st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3),
                                                                       st.integers(), max_size=2))


@settings(max_examples=60, **SETTINGS)
@given(field=st.sampled_from(["question", "selected_text"]), value=WRONG,
       extra=st.dictionaries(st.text(min_size=1, max_size=8), st.integers(), max_size=2))
def test_graph_refuses_wrong_types(graph: Any, cases: Counter[str], field: str, value: Any,
                                   extra: dict[str, Any]) -> None:
    """A non-text question or selection is invalid_question naming the type; extra keys ignored."""
    cases["graph/wrong_types"] += 1
    payload = {"question": "What is a topic?", **extra, field: value}
    out = bounded(graph.invoke, payload)
    assert_contract(out)
    assert out["refusal_reason"] == "invalid_question"
    assert "must be text" in out["diagnostics"]["problem"]


def test_graph_missing_question_is_invalid(graph: Any, cases: Counter[str]) -> None:
    """No question at all is invalid_question, not a KeyError."""
    cases["graph/missing_fields"] += 1
    out = bounded(graph.invoke, {"selected_text": "A topic is a bus."})
    assert out["refusal_reason"] == "invalid_question"


OVERRIDE_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                            st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=10),
                            st.lists(st.integers(), max_size=2))


@settings(max_examples=80, **SETTINGS)
@given(overrides=st.dictionaries(st.sampled_from(TUNABLE_NAMES), OVERRIDE_VALUES, min_size=1,
                                 max_size=4),
       via=st.sampled_from(["context", "configurable"]))
def test_graph_invalid_overrides_are_refused(graph: Any, cases: Counter[str],
                                             overrides: dict[str, Any], via: str) -> None:
    """Out-of-range or mistyped per-run tunables are invalid_question naming the setting."""
    cases["graph/overrides"] += 1
    kw = ({"context": overrides} if via == "context"
          else {"config": {"configurable": overrides}})
    out = bounded(graph.invoke, {"question": "What is a topic?"}, **kw)
    assert_contract(out)
    if out["refusal_reason"] == "invalid_question":
        assert "invalid setting" in out["diagnostics"]["problem"] or \
            "policy must be" in out["diagnostics"]["problem"]


def test_graph_unknown_context_key_names_it(graph: Any) -> None:
    """An unknown `context=` key is a caller's programming error: a TypeError naming it."""
    with pytest.raises(TypeError, match="bogus"):
        graph.invoke({"question": "What is a topic?"}, context={"bogus": 1})


# --- the CLI --------------------------------------------------------------------------------------
@pytest.fixture
def cli(graph: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run `textbound ask` in-process against the small graph."""
    from typer.testing import CliRunner

    import graph.app as graph_app
    from textbound.serving.cli import app

    monkeypatch.setattr(graph_app, "_graph", graph)
    runner = CliRunner()

    def run(*args: str) -> Any:
        return bounded(runner.invoke, app, list(args), timeout=60)

    return run


@settings(max_examples=60, **SETTINGS)
@given(case=KINDS.filter(lambda c: len(c[1]) <= 100_000),
       policy=st.one_of(st.none(), st.sampled_from(["seed_004", "bogus", ""])))
def test_cli_ask_refuses_bad_text_clearly(cli: Any, cases: Counter[str], case: tuple[str, str],
                                          policy: str | None) -> None:
    """`textbound ask --json` prints the contract (or a one-line error), never a traceback."""
    kind, question = case
    cases[f"cli/{kind}"] += 1
    args = ["ask", "--json"] + (["--policy", policy] if policy is not None else [])
    result = cli(*args, "--", question)
    output = result.output
    assert "Traceback" not in output and result.exception is None or \
        isinstance(result.exception, SystemExit), output[-2000:]
    if policy == "bogus":  # a usage error (issue 15): exit 2 naming the allowed policies
        assert result.exit_code == 2, output[-2000:]
        assert "seed_000" in output
        return
    assert result.exit_code == 0, output[-2000:]
    out = json.loads(output)
    assert_contract(out)
    if expect_invalid(question):
        assert out["refusal_reason"] == "invalid_question"


# --- HTTP (TestClient) ----------------------------------------------------------------------------
JSONISH = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
                       lambda inner: st.one_of(st.lists(inner, max_size=3),
                                               st.dictionaries(st.text(max_size=5), inner,
                                                               max_size=3)), max_leaves=6)


def _bodies() -> st.SearchStrategy[tuple[str, bytes]]:
    def enc(obj: Any) -> bytes:
        return json.dumps(obj).encode()

    q = "What is a topic?"
    return st.one_of(
        KINDS.map(lambda c: (c[0], enc({"input": {"question": c[1]}}))),
        QUESTIONS["unicode"].map(lambda s: ("huge_selected_text", enc(
            {"input": {"question": q, "selected_text": s + "x" * 30_000}}))),
        st.tuples(st.sampled_from(["question", "selected_text", "session_id"]), WRONG).map(
            lambda fv: ("wrong_types", enc({"input": {"question": q, fv[0]: fv[1]}}))),
        st.sampled_from([{}, {"input": {}}, {"input": None}, {"input": q}, {"input": [q]},
                         {"config": {}}, [], "x", 3]).map(lambda b: ("missing_fields", enc(b))),
        st.dictionaries(st.text(min_size=1, max_size=10), JSONISH, min_size=1, max_size=3).map(
            lambda extra: ("extra_fields", enc({"input": {"question": q, **extra}}))),
        st.dictionaries(st.text(min_size=1, max_size=10), JSONISH, min_size=1, max_size=3).map(
            lambda extra: ("extra_fields", enc({"input": {"question": q}, **extra}))),
        st.one_of(st.dictionaries(st.sampled_from([*TUNABLE_NAMES, "bogus"]), OVERRIDE_VALUES,
                                  min_size=1, max_size=4), JSONISH).map(
            lambda c: ("overrides",
                       enc({"input": {"question": q}, "config": {"configurable": c}}))),
        JSONISH.map(lambda c: ("overrides", enc({"input": {"question": q}, "config": c}))),
        st.binary(max_size=200).map(lambda b: ("raw_bytes", b)),
    )


def check_http(status: int, body: bytes, kind: str) -> None:
    assert status < 500, (kind, status, body[:500])
    data = json.loads(body)
    if status == 200:
        assert_contract(data["output"])
        if kind in ("nul", "huge_question"):
            assert data["output"]["refusal_reason"] == "invalid_question"
    else:
        assert 400 <= status < 500
        assert data["detail"], data  # a message saying what is wrong
        if kind == "huge_question" or kind == "huge_selected_text":
            assert status in (413, 200), status


@pytest.fixture
def client(tmp_path: Path, embeddings: Any, fake_store: Any) -> Iterator[TestClient]:
    with TestClient(small_app(tmp_path, embeddings, fake_store)) as c:
        yield c


@settings(max_examples=200, **SETTINGS)
@given(case=_bodies(), path=st.sampled_from(["/chat/invoke", "/chat/batch"]))
def test_http_bad_input_is_4xx_with_a_message(client: TestClient, cases: Counter[str],
                                              case: tuple[str, bytes], path: str) -> None:
    """/chat/invoke and /chat/batch answer 200 with the contract or a 4xx saying why."""
    kind, body = case
    cases[f"http/{kind}"] += 1
    if path.endswith("batch"):
        try:
            inner = json.loads(body)
            body = json.dumps({"inputs": [inner.get("input")], **{k: v for k, v in inner.items()
                                                                  if k != "input"}}).encode()
        except (ValueError, AttributeError):
            pass
    r = bounded(client.post, path, content=body, headers={"Content-Type": "application/json"})
    if path.endswith("batch") and r.status_code == 200:
        for out in r.json()["output"]:
            assert_contract(out)
        return
    check_http(r.status_code, r.content, kind)


def test_http_one_megabyte_question_is_413(client: TestClient, cases: Counter[str]) -> None:
    """A 1 MB question exceeds the body limit: 413 naming the limit and its setting."""
    cases["http/huge_question"] += 1
    r = bounded(client.post, "/chat/invoke", json={"input": {"question": "q" * 1_000_000}})
    assert r.status_code == 413
    assert "TEXTBOUND_MAX_REQUEST_BYTES" in r.json()["detail"]


# --- HTTP (real uvicorn) --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, embeddings: Any) -> Iterator[str]:
    from tests.conftest import book_store

    app = small_app(tmp_path_factory.mktemp("live"), embeddings,
                    book_store(embeddings))
    with ThreadServer(app) as srv:
        yield srv.url


@settings(max_examples=60, **SETTINGS)
@given(case=_bodies())
def test_uvicorn_bad_input_is_4xx_with_a_message(live: str, cases: Counter[str],
                                                 case: tuple[str, bytes]) -> None:
    """The same inputs over a real socket and uvicorn's HTTP parser."""
    kind, body = case
    cases[f"uvicorn/{kind}"] += 1
    r = httpx.post(live + "/chat/invoke", content=body, timeout=60,
                   headers={"Content-Type": "application/json"})
    check_http(r.status_code, r.content, kind)


_LATIN = b'{"input": {"question": "caf\xe9?"}}'
RAW_REQUESTS = {
    "bad-length": b"Content-Length: abc\r\nContent-Type: application/json\r\n\r\n{}",
    "text-plain": b"Content-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s" % (
        len(_LATIN), _LATIN),
    "latin-1": b"Content-Length: %d\r\nContent-Type: application/json; charset=latin-1\r\n"
               b"\r\n%s" % (len(_LATIN), _LATIN),
    "short-body": b"Content-Length: 500\r\nContent-Type: application/json\r\n\r\n{}",
}


@pytest.mark.parametrize("name", sorted(RAW_REQUESTS))
def test_uvicorn_odd_requests_are_4xx(live: str, cases: Counter[str], name: str) -> None:
    """Odd headers, a lying length and invalid UTF-8 over a raw socket never reach a 5xx."""
    import socket

    cases["uvicorn/raw_http"] += 1
    host, port = live.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"POST /chat/invoke HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     + RAW_REQUESTS[name])
        if name == "short-body":
            sock.shutdown(socket.SHUT_WR)  # the client gives up mid-body
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    if not reply:  # the server may close a request it cannot frame
        return
    status = int(reply.split(b" ", 2)[1])
    assert 400 <= status < 500, reply[:300]


@pytest.mark.parametrize("config", [None, [], "x", 3, [{"configurable": {}}]])
def test_http_config_of_the_wrong_type_is_422(client: TestClient, cases: Counter[str],
                                              config: Any) -> None:
    """`config` that is not an object: 422 saying so (LangServe alone answers 500)."""
    cases["http/overrides"] += 1
    r = bounded(client.post, "/chat/invoke",
                json={"input": {"question": "What is a topic?"}, "config": config})
    assert r.status_code == 422, r.text
    assert r.json()["detail"]
