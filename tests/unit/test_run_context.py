"""The run context: resolved once per run at the graph's entry, and once per HTTP request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import graph.context
from graph.context import RUN_CONTEXT_KEY, resolve_tunables
from tests.conftest import make_settings
from textbound.serving.server import create_app

Q = "What is a topic?"


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the run-context resolutions: each validates the per-run values exactly once."""
    calls: list[int] = []
    checked = graph.context._Checked

    def counting(**values: Any) -> Any:
        calls.append(1)
        return checked(**values)

    monkeypatch.setattr(graph.context, "_Checked", counting)
    return calls


def test_the_run_context_is_frozen(tmp_path: Path) -> None:
    """No node can change the run's values after the entry resolved them."""
    ctx = resolve_tunables(make_settings(tmp_path))
    with pytest.raises(AttributeError):
        ctx.top_k = 3  # type: ignore[misc]


def test_the_graph_resolves_once_per_run(tmp_path: Path, embeddings: Any, fake_store: Any,
                                         resolutions: list[int]) -> None:
    """invoke with per-run values resolves them once; a resolved RunContext is not resolved."""
    from graph.builder import build_graph

    g = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)
    resolutions.clear()
    out = g.invoke({"question": Q}, {"configurable": {"top_k": 3}})
    assert len(resolutions) == 1
    assert out["diagnostics"]["thresholds"]["top_k"] == 3
    ctx = resolve_tunables(make_settings(tmp_path), {"top_k": 2})
    resolutions.clear()
    out = g.invoke({"question": Q}, {"configurable": {RUN_CONTEXT_KEY: ctx}})
    assert resolutions == [] and out["diagnostics"]["thresholds"]["top_k"] == 2
    out = g.invoke({"question": Q}, context=ctx)
    assert resolutions == [] and out["diagnostics"]["thresholds"]["top_k"] == 2


def test_a_rejected_per_run_value_refuses_with_the_servers_values(
        tmp_path: Path, embeddings: Any, fake_store: Any) -> None:
    """A bad context= value is an invalid_question refusal saying why, never a traceback."""
    from graph.builder import build_graph

    g = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)
    out = g.invoke({"question": Q}, context={"top_k": 0})
    assert out["refusal_reason"] == "invalid_question"
    assert "top_k" in out["diagnostics"]["problem"]
    assert out["diagnostics"]["thresholds"]["top_k"] == 5  # the server's own value


@pytest.fixture
def client(tmp_path: Path, embeddings: Any, fake_store: Any) -> Iterator[TestClient]:
    from graph.builder import build_services

    services = build_services(settings=make_settings(tmp_path / "data"), embeddings=embeddings,
                              store=fake_store)
    with TestClient(create_app(services)) as c:
        yield c


@pytest.mark.parametrize("configurable", [None, {"answerable_threshold": 0.9},
                                          {"refusal_style": "standard"}])
def test_one_resolution_per_http_request(client: TestClient, resolutions: list[int],
                                         configurable: dict[str, Any] | None) -> None:
    """The HTTP guard resolves the request's context once and the graph uses it as it is.

    The server's own values (what an override is compared with) are resolved once per process:
    the first request pays for them, so it is not counted.
    """
    body: dict[str, Any] = {"input": {"question": Q}}
    if configurable is not None:
        body["config"] = {"configurable": configurable}
    assert client.post("/chat/invoke", json=body).status_code == 200  # warm-up
    for endpoint in ("/chat/invoke", "/chat/stream"):
        resolutions.clear()
        r = client.post(endpoint, json=body)
        assert r.status_code == 200
        assert len(resolutions) == 1, endpoint
    resolutions.clear()
    r = client.post("/chat/batch", json={"inputs": [body["input"]] * 3,
                                         "config": body.get("config", {})})
    # one config for the whole batch: one resolution, shared (it is frozen) by its three runs
    assert r.status_code == 200 and len(r.json()["output"]) == 3 and len(resolutions) == 1


def test_the_guarded_run_uses_the_requests_overrides(client: TestClient) -> None:
    """The context the guard resolved is the one the nodes read."""
    r = client.post("/chat/invoke", json={"input": {"question": Q},
                                          "config": {"configurable": {"min_chunks": 2}}})
    assert r.json()["output"]["diagnostics"]["thresholds"]["min_chunks"] == 2


def test_the_audit_line_logs_the_cleaned_question(tmp_path: Path, embeddings: Any,
                                                  fake_store: Any) -> None:
    """The audit line records the question every gate read: invisible characters dropped."""
    from dataclasses import replace

    from graph.builder import build_graph, build_services
    from textbound.fakes import MemoryAudit

    audit = MemoryAudit()
    services = replace(build_services(settings=make_settings(tmp_path), embeddings=embeddings,
                                      store=fake_store), audit=audit)
    g = build_graph(services=services)
    g.invoke({"question": "What\u200b is a\u202e topic?  "})
    g.invoke({"question": "\u200b\u200b"})  # refused as empty: still logged, cleaned
    assert [r["question"] for r in audit.records] == ["What is a topic?", ""]
    assert audit.records[1]["refusal_reason"] == "invalid_question"


def test_every_gate_appends_one_verdict_of_the_same_shape(tmp_path: Path, embeddings: Any,
                                                           fake_store: Any) -> None:
    """An answered question leaves one Verdict per gate it passed, in order, all passed."""
    from graph.builder import build_graph
    from graph.state import Verdict

    g = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)
    verdicts = [v for step in g.stream({"question": Q}, stream_mode="updates")
                for update in step.values() for v in (update or {}).get("verdicts", [])]
    assert [v["gate"] for v in verdicts] == [
        "check_question", "retrieve", "scope_classify", "score_gate", "check_answerable",
        "generate", "validate_grounding"]
    assert all(set(v) == set(Verdict.__annotations__) and v["passed"] and v["reason"] is None
               for v in verdicts)


def test_the_response_carries_the_graph_runs_id(tmp_path: Path, embeddings: Any,
                                                fake_store: Any) -> None:
    """The run id is the config's, else the traced graph run's (feedback finds the trace by it)."""
    import uuid

    from langchain_core.tracers.base import BaseTracer

    from graph.builder import build_graph

    class Runs(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.roots: list[Any] = []

        def _persist_run(self, run: Any) -> None:
            self.roots.append(run)

    g = build_graph(settings=make_settings(tmp_path), embeddings=embeddings, store=fake_store)
    given = uuid.uuid4()
    assert g.invoke({"question": Q}, {"run_id": given})["run_id"] == str(given)
    tracer = Runs()
    out = g.invoke({"question": Q}, {"callbacks": [tracer]})
    assert [r.name for r in tracer.roots] == ["textbound"]
    assert out["run_id"] == str(tracer.roots[0].id)
    untraced = g.invoke({"question": Q})["run_id"]
    assert uuid.UUID(untraced) and untraced != out["run_id"]
