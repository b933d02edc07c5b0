"""The HTTP layer's validation: wrong input and loosening overrides are 422 with a clear message."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.context import TUNABLE_NAMES
from tests.conftest import make_settings
from textbound.errors import StoreUnavailableError
from textbound.serving.server import (
    CONTRACT_KEYS,
    OVERRIDE_RULES,
    OverrideError,
    check_overrides,
    create_app,
)

Q = "What is a topic?"


def _app(tmp_path: Path, embeddings: Any, store: Any, **kw: Any) -> Any:
    from graph.builder import build_services

    s = make_settings(tmp_path / "data", **kw)
    services = build_services(settings=s, embeddings=embeddings, store=store)
    return create_app(services)


@pytest.fixture
def client(tmp_path: Path, embeddings: Any, fake_store: Any) -> Iterator[TestClient]:
    with TestClient(_app(tmp_path, embeddings, fake_store)) as c:
        yield c


def _invoke(client: TestClient, configurable: dict[str, Any] | None = None,
            **input: Any) -> Any:
    body: dict[str, Any] = {"input": {"question": Q, **input}}
    if configurable is not None:
        body["config"] = {"configurable": configurable}
    return client.post("/chat/invoke", json=body)


def test_valid_request_returns_the_contract(client: TestClient) -> None:
    """A well-formed question gets 200 and exactly the response contract."""
    r = _invoke(client)
    assert r.status_code == 200
    out = r.json()["output"]
    assert tuple(out) == CONTRACT_KEYS and not out["was_refusal"]


def test_missing_question_is_422(client: TestClient) -> None:
    """No question field: 422 pointing at `question`."""
    r = client.post("/chat/invoke", json={"input": {"selected_text": "x"}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "question"
    assert r.json()["detail"][0]["type"] == "missing"


def test_question_of_wrong_type_is_422(client: TestClient) -> None:
    """A number instead of text: 422 saying a string is expected."""
    r = _invoke(client, question=42)
    assert r.status_code == 422
    assert "valid string" in r.json()["detail"][0]["msg"]


def test_unknown_input_field_is_422(client: TestClient) -> None:
    """A misspelt field is not silently ignored."""
    r = _invoke(client, selected_txt="passage")
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "selected_txt"


def test_invalid_json_is_422(client: TestClient) -> None:
    """A body that is not JSON: 422, not 500."""
    r = client.post("/chat/invoke", content=b"{question: ",
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 422
    assert "Invalid JSON" in json.dumps(r.json())


def test_unknown_override_is_422(client: TestClient) -> None:
    """A configurable key that is not a Context field is rejected by name."""
    r = _invoke(client, {"flor": 0.9})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["configurable", "flor"]


def test_override_of_wrong_type_is_422(client: TestClient) -> None:
    """A threshold that is not a number: 422 at configurable.floor."""
    r = _invoke(client, {"floor": "high"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["configurable", "floor"]


def test_override_out_of_bounds_is_422(client: TestClient) -> None:
    """A cosine floor above 1 is out of bounds even though it is 'stricter'."""
    r = _invoke(client, {"floor": 5.0})
    assert r.status_code == 422
    assert "floor" in r.json()["detail"] and "less than or equal to 1" in r.json()["detail"]


@pytest.mark.parametrize(("name", "value"), [
    ("floor", -0.5), ("answer_threshold", -5.0), ("grounding_threshold", 0.1),
    ("sentence_support_threshold", 0.0), ("confidence_threshold", 0.0), ("min_chunks", 1),
    ("generator", "chat"), ("top_k", 50), ("top_k", 1), ("partial_answers", True),
])
def test_loosening_override_is_422(client: TestClient, name: str, value: Any) -> None:
    """Lowering a threshold or changing the generator/policy is refused with the field named."""
    r = _invoke(client, {name: value})
    if name == "min_chunks":  # the server's value is already 1: not a loosening
        assert r.status_code == 200
        return
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert name in detail and "TEXTBOUND_ALLOW_GATE_OVERRIDE" in detail


@pytest.mark.parametrize(("name", "value"), [
    ("floor", 0.9), ("grounding_threshold", 0.95), ("min_context_chars", 400),
    ("min_chunks", 3), ("partial_answers", False), ("refusal_style", "standard"),
])
def test_tightening_override_is_applied(client: TestClient, name: str, value: Any) -> None:
    """Raising a threshold is allowed and is what the run used."""
    r = _invoke(client, {name: value})
    assert r.status_code == 200, r.text
    out = r.json()["output"]
    if name in out["diagnostics"]["thresholds"]:
        assert out["diagnostics"]["thresholds"][name] == value


def test_tightened_floor_turns_an_answer_into_a_refusal(client: TestClient) -> None:
    """The override reaches the gate: a floor of 0.99 refuses what the default answers."""
    assert not _invoke(client).json()["output"]["was_refusal"]
    out = _invoke(client, {"floor": 0.99}).json()["output"]
    assert out["was_refusal"] and out["diagnostics"]["thresholds"]["floor"] == 0.99


def test_allow_gate_override_lets_clients_loosen(tmp_path: Path, embeddings: Any,
                                                 fake_store: Any) -> None:
    """With allow_gate_override the same loosening request is accepted and applied."""
    with TestClient(_app(tmp_path, embeddings, fake_store, allow_gate_override=True)) as c:
        r = _invoke(c, {"floor": -0.5, "policy": "seed_000"})
        assert r.status_code == 200, r.text
        thresholds = r.json()["output"]["diagnostics"]["thresholds"]
        assert thresholds["floor"] == -0.5 and thresholds["policy"] == "seed_000"
        assert _invoke(c, {"floor": 7}).status_code == 422  # bounds still apply


def test_batch_with_a_loosening_config_is_422(client: TestClient) -> None:
    """Per-input configs in a batch are each checked."""
    r = client.post("/chat/batch", json={
        "inputs": [{"question": Q}, {"question": Q}],
        "config": [{"configurable": {"floor": 0.9}}, {"configurable": {"floor": -1.0}}],
    })
    assert r.status_code == 422 and "floor" in r.json()["detail"]


def test_stream_with_a_loosening_config_is_422_before_streaming(client: TestClient) -> None:
    """The check runs before the event stream starts, so the client gets a plain 422."""
    r = client.post("/chat/stream", json={"input": {"question": Q},
                                          "config": {"configurable": {"generator": "chat"}}})
    assert r.status_code == 422
    assert "generator" in r.json()["detail"]


@pytest.mark.parametrize("policy", ["seed_000", "seed_002", "seed_004"])
def test_a_stricter_preset_is_allowed(client: TestClient, policy: str) -> None:
    """A calibrated server lets a client pick any seed preset: each answers far less."""
    r = _invoke(client, {"policy": policy})
    assert r.status_code == 200, r.text
    assert r.json()["output"]["diagnostics"]["thresholds"]["policy"] == policy


@pytest.mark.parametrize(("server", "client_policy", "ok"), [
    ("seed_000", "seed_002", True), ("seed_002", "seed_000", False),
    ("seed_002", "calibrated", False), ("seed_000", "seed_004", False),
])
def test_policy_overrides_follow_strictness(tmp_path: Path, server: str, client_policy: str,
                                            ok: bool) -> None:
    """A looser or incomparable preset is refused, naming the ones allowed."""
    s = make_settings(tmp_path, policy=server)
    if ok:
        assert check_overrides(s, {"policy": client_policy}) == {"policy": client_policy}
        return
    with pytest.raises(OverrideError, match=f"allowed: '{server}'"):
        check_overrides(s, {"policy": client_policy})


def test_a_fixed_tunable_says_why(client: TestClient) -> None:
    """A smaller top_k is refused with the reason: it raises the gate's mean score."""
    detail = _invoke(client, {"top_k": 1}).json()["detail"]
    assert "neither a smaller nor a larger top_k is always stricter" in detail


def test_every_context_field_has_an_override_rule() -> None:
    """A new tunable must be classified before clients can send it (unlisted means fixed)."""
    assert set(OVERRIDE_RULES) == set(TUNABLE_NAMES)


def test_check_overrides_returns_typed_values(tmp_path: Path) -> None:
    """Values come back as the RunContext types (e.g. an int floor becomes a float)."""
    s = make_settings(tmp_path)
    assert check_overrides(s, {"floor": 1, "refusal_style": "standard", "top_k": None}) == {
        "floor": 1.0, "refusal_style": "standard"}
    with pytest.raises(OverrideError, match="unknown setting"):
        check_overrides(s, {"temperature": 0.2})


@settings(max_examples=int(os.environ.get("TB_HYP_EXAMPLES", "40")), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(
    st.sampled_from([*TUNABLE_NAMES, "bogus"]),
    st.one_of(st.none(), st.booleans(), st.integers(-100, 100), st.floats(allow_nan=True),
              st.text(max_size=8), st.lists(st.integers(), max_size=2)),
    max_size=4))
def test_arbitrary_overrides_never_cause_a_500(client: TestClient,
                                               configurable: dict[str, Any]) -> None:
    """Whatever a client puts in configurable, the answer is 200 or 422."""
    r = client.post("/chat/invoke", content=json.dumps(
        {"input": {"question": Q}, "config": {"configurable": configurable}}).encode(),
        headers={"Content-Type": "application/json"})
    assert r.status_code in (200, 422), r.text


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN"])
def test_non_finite_numbers_are_a_422_not_a_500(client: TestClient, value: str) -> None:
    """JSON's Infinity/NaN in a typed field is reported as 422 (FastAPI's echo would crash)."""
    body = '{"input": {"question": "What is a topic?"}, "config": {"configurable": {"policy": %s}}}'
    r = client.post("/chat/invoke", content=(body % value).encode(),
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "policy" in r.text


def test_healthz_reports_an_unreachable_store(tmp_path: Path, embeddings: Any,
                                              fake_store: Any) -> None:
    """A store that fails is a 503 naming the store, not a 500."""

    def down() -> bool:
        raise StoreUnavailableError("Qdrant is not answering")

    fake_store.exists = down
    with TestClient(_app(tmp_path, embeddings, fake_store)) as c:
        r = c.get("/healthz")
    assert r.status_code == 503
    assert r.json()["problems"][0].startswith("store: Qdrant is not answering")


def test_oversized_body_is_413(tmp_path: Path, embeddings: Any, fake_store: Any) -> None:
    """A body over max_request_bytes is 413 before the graph sees it."""
    with TestClient(_app(tmp_path, embeddings, fake_store, max_request_bytes=2_000)) as c:
        r = _invoke(c, selected_text="y" * 3_000)
    assert r.status_code == 413


def _guarded(tmp_path: Path, embeddings: Any, store: Any) -> Any:
    from graph.builder import build_graph
    from textbound.serving.server import GuardedGraph

    return GuardedGraph(build_graph(settings=make_settings(tmp_path / "data"),
                                    embeddings=embeddings, store=store))


def test_sync_stream_yields_progress_then_the_contract(tmp_path: Path, embeddings: Any,
                                                       fake_store: Any) -> None:
    """In-process streaming has the same shape as over HTTP and carries no draft."""
    chunks = list(_guarded(tmp_path, embeddings, fake_store).stream({"question": Q}))
    assert [c["progress"]["node"] for c in chunks[:-1]][-2:] == ["validate_grounding",
                                                                 "release_answer"]
    assert tuple(chunks[-1]) == CONTRACT_KEYS
    assert '"draft"' not in json.dumps(chunks)


def test_stream_events_never_include_node_state(tmp_path: Path, embeddings: Any,
                                                fake_store: Any) -> None:
    """astream_events sees only the wrapper's own run, never the graph's nodes."""
    import asyncio

    guarded = _guarded(tmp_path, embeddings, fake_store)

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in guarded.astream_events({"question": Q}, version="v2")]

    events = asyncio.run(collect())
    assert {e["name"] for e in events} == {"textbound"}
    assert events[-1]["event"] == "on_chain_end"
    assert tuple(events[-1]["data"]["output"]) == CONTRACT_KEYS
    assert '"draft"' not in json.dumps(events, default=str)


def test_docs_are_served_without_a_cdn(client: TestClient) -> None:
    """/docs is Swagger UI from the installed package: every asset it loads is on this server."""
    import re

    page = client.get("/docs")
    assert page.status_code == 200
    assets = re.findall(r"""(?:src|href)=['"]([^'"]+)""", page.text)
    assert assets and all(a.startswith("/docs/static/") for a in assets), assets
    assert "https://" not in page.text and "http://" not in page.text
    for asset in assets:
        assert client.get(asset).status_code == 200, asset
    assert client.get("/redoc").status_code == 404  # ReDoc would load from a CDN
