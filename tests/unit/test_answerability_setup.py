"""Answerability settings: precedence, the calibrated threshold, loading at start-up, HTTP rules."""

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graph.builder import build_graph, build_services
from graph.context import Context, resolve_tunables
from textbound.answer.answerability import FakeReader
from textbound.answer.gate_calibration import POLICIES, load_calibration
from textbound.errors import SetupError
from textbound.serving.server import OverrideError, check_overrides, create_app

from ..conftest import make_settings

CALIBRATION = Path(__file__).parent.parent / "fixtures" / "calibration.json"


def test_answerability_is_on_by_default(tmp_path, monkeypatch):
    """Without TEXTBOUND_ANSWERABILITY the check is on, reading the top 3 passages."""
    monkeypatch.delenv("TEXTBOUND_ANSWERABILITY")
    s = make_settings(tmp_path)
    assert s.answerability is True and s.answerability_passages == 3
    assert s.answerability_model_dir is None


def test_environment_then_per_run_values_win(tmp_path, monkeypatch):
    """defaults < environment < per-run, for the switch and the passage count."""
    monkeypatch.setenv("TEXTBOUND_ANSWERABILITY", "false")
    monkeypatch.setenv("TEXTBOUND_ANSWERABILITY_PASSAGES", "5")
    s = make_settings(tmp_path)
    t = resolve_tunables(s)
    assert (t.answerability, t.answerability_passages) == (False, 5)
    t = resolve_tunables(s, Context(answerability=True), {"answerability_passages": 2})
    assert (t.answerability, t.answerability_passages) == (True, 2)


def test_threshold_comes_from_the_calibration(tmp_path):
    """answerable_threshold is the calibration's; a per-run value replaces it."""
    s = make_settings(tmp_path)
    shipped = json.loads(Path(s.calibration_file).read_text())["answerable_threshold"]
    assert resolve_tunables(s).answerable_threshold == shipped
    assert resolve_tunables(s, {"answerable_threshold": 0.8}).answerable_threshold == 0.8
    assert resolve_tunables(s, {"answerable_threshold": 0.8}).gate.answerable_threshold == 0.8


def test_old_calibration_file_loads_with_the_default_threshold():
    """A calibration written before the reader existed still loads (threshold 0.5)."""
    assert "answerable_threshold" not in json.loads(CALIBRATION.read_text())
    assert load_calibration(CALIBRATION).answerable_threshold == 0.5


def test_seed_presets_have_a_threshold():
    """Every preset carries an answerable_threshold."""
    assert all(0 < p.answerable_threshold < 1 for p in POLICIES.values())


def test_missing_model_fails_at_build_services(tmp_path, embeddings, fake_store):
    """No model file: SetupError at start-up naming the file and the setting that turns it off."""
    s = make_settings(tmp_path, answerability=True, answerability_model_dir=tmp_path / "none")
    with pytest.raises(SetupError) as err:
        build_services(settings=s, embeddings=embeddings, store=fake_store)
    assert str(tmp_path / "none" / "model.onnx") in str(err.value)
    assert "TEXTBOUND_ANSWERABILITY=false" in str(err.value)


def test_corrupt_model_fails_at_build_services(tmp_path, embeddings, fake_store):
    """A corrupt model file: SetupError at start-up naming that file and the setting."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"max_length": 256, "cls_id": 101,
                                                    "sep_id": 102}))
    (folder / "tokenizer.json").write_text("{not a tokenizer")
    (folder / "model.onnx").write_bytes(b"\x00garbage")
    s = make_settings(tmp_path, answerability=True, answerability_model_dir=folder)
    with pytest.raises(SetupError) as err:
        build_services(settings=s, embeddings=embeddings, store=fake_store)
    assert str(folder / "tokenizer.json") in str(err.value)
    assert "TEXTBOUND_ANSWERABILITY=false" in str(err.value)


def test_setting_off_loads_no_model(tmp_path, embeddings, fake_store):
    """answerability=false needs no model folder at all."""
    s = make_settings(tmp_path, answerability=False, answerability_model_dir=tmp_path / "none")
    assert build_services(settings=s, embeddings=embeddings, store=fake_store).reader is None


def test_run_turning_the_check_on_without_a_model_fails_closed(tmp_path, embeddings,
                                                              fake_store):
    """A run that asks for the check on a server without a loadable model refuses, saying why."""
    s = make_settings(tmp_path, answerability=False, calibration_file=CALIBRATION,
                      answerability_model_dir=tmp_path / "none")
    graph = build_graph(settings=s, embeddings=embeddings, store=fake_store)
    out = graph.invoke({"question": "What is a topic?"}, context={"answerability": True})
    assert out["refusal_reason"] == "insufficient_context"
    assert "model.onnx" in out["diagnostics"]["answerability"]["error"]


# --- HTTP: clients may tighten the check, never loosen it ---------------------------------------

def test_overrides_may_tighten_but_not_loosen(tmp_path):
    """Turning the check on or raising the threshold is allowed; the opposite is refused."""
    # a calibration whose reader threshold (0.5) is above 0, so there is room to lower it
    on = make_settings(tmp_path, answerability=True, calibration_file=CALIBRATION)
    off = make_settings(tmp_path, answerability=False)
    assert check_overrides(off, {"answerability": True}) == {"answerability": True}
    assert check_overrides(on, {"answerable_threshold": 0.9}) == {"answerable_threshold": 0.9}
    lower = resolve_tunables(on).answerable_threshold / 2  # below the calibrated threshold
    for settings, over in ((on, {"answerability": False}), (on, {"answerable_threshold": lower}),
                           (on, {"answerability_passages": 10})):
        with pytest.raises(OverrideError, match=next(iter(over))):
            check_overrides(settings, over)


def test_allow_gate_override_lets_clients_turn_it_off(tmp_path):
    """With TEXTBOUND_ALLOW_GATE_OVERRIDE a client may turn the check off."""
    s = make_settings(tmp_path, answerability=True, allow_gate_override=True)
    assert check_overrides(s, {"answerability": False}) == {"answerability": False}


def _client(tmp_path: Path, embeddings: Any, store: Any, **kw: Any) -> TestClient:
    s = make_settings(tmp_path / "data", **kw)
    services = build_services(settings=s, embeddings=embeddings, store=store,
                              reader=FakeReader(score=lambda q, t: 0.6))
    return TestClient(create_app(services))


def _invoke(client: TestClient, configurable: dict[str, Any]) -> Any:
    return client.post("/chat/invoke", json={"input": {"question": "What is a topic?"},
                                             "config": {"configurable": configurable}})


def test_http_client_cannot_turn_the_check_off(tmp_path, embeddings, fake_store):
    """Over HTTP, answerability=false and a lower threshold are 422 naming the field."""
    with _client(tmp_path, embeddings, fake_store, answerability=True,
                 calibration_file=CALIBRATION) as c:
        for over in ({"answerability": False}, {"answerable_threshold": 0.0}):
            r = _invoke(c, over)
            assert r.status_code == 422 and next(iter(over)) in r.json()["detail"]


def test_http_client_raising_the_threshold_is_applied(tmp_path, embeddings, fake_store):
    """Over HTTP a raised threshold is what the run uses: 0.6 < 0.9 refuses."""
    with _client(tmp_path, embeddings, fake_store, answerability=True) as c:
        assert not _invoke(c, {}).json()["output"]["was_refusal"]
        out = _invoke(c, {"answerable_threshold": 0.9}).json()["output"]
        assert out["refusal_reason"] == "insufficient_context"
        assert "answerable" in out["diagnostics"]["failed_checks"]


def test_http_client_may_turn_the_check_on(tmp_path, embeddings, fake_store):
    """On a server with the check off, a client turning it on gets it."""
    with _client(tmp_path, embeddings, fake_store, answerability=False) as c:
        assert _invoke(c, {}).json()["output"]["diagnostics"]["answerability"]["skipped"]
        out = _invoke(c, {"answerability": True}).json()["output"]
        verdict = out["diagnostics"]["answerability"]
        assert not verdict["skipped"] and verdict["score"] == 0.6
