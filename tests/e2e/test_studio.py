"""`langgraph dev` (LangGraph Studio's Agent Server) on langgraph.json, driven over HTTP."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graph.context import TUNABLE_NAMES
from tests.e2e.conftest import REPO, VENV_BIN, Running, free_port, run_server, server_env
from textbound.serving.server import CONTRACT_KEYS
from textbound.settings import Settings

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PASSAGE = ("A topic is a named bus over which nodes exchange messages. Topics implement the "
           "publish-subscribe pattern.")


def test_env_example_lists_every_setting() -> None:
    """.env.example (which langgraph.json's .env is copied from) names each TEXTBOUND_ setting."""
    text = (REPO / ".env.example").read_text()
    listed = set(re.findall(r"^# (TEXTBOUND_[A-Z_]+)=", text, flags=re.M))
    assert listed == {f"TEXTBOUND_{name.upper()}" for name in Settings.model_fields}


def _studio_config(root: Path, data_dir: Path) -> Path:
    """Copy the repo's langgraph.json with absolute paths and an .env that sets the data folder.

    The graphs entry is the repo's own; only the env file is this test's, so a developer's .env
    cannot leak in, and the data folder reaching the server proves the env file is read.
    """
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["env"] == ".env" and config["dependencies"] == ["."]
    env_file = root / "studio.env"
    env_file.write_text(f"TEXTBOUND_DATA_DIR={data_dir}\n")
    config["dependencies"] = [str(REPO)]
    config["graphs"] = {gid: str(REPO / spec.removeprefix("./"))
                        for gid, spec in config["graphs"].items()}
    config["env"] = str(env_file)
    path = root / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture(scope="module")
def studio(ingested_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """`langgraph dev --no-browser --no-reload` on a free port, analytics and version check off."""
    root = tmp_path_factory.mktemp("studio")
    data = root / "data"
    shutil.copytree(ingested_template, data)
    config = _studio_config(root, data)
    port = free_port()
    env = server_env(data)
    del env["TEXTBOUND_DATA_DIR"]  # it must come from the env file named in langgraph.json
    cmd = [str(VENV_BIN / "langgraph"), "dev", "--config", str(config), "--port", str(port),
           "--host", "127.0.0.1", "--no-browser", "--no-reload"]
    with run_server(cmd, env=env, cwd=root, port=port, ready_path="/ok", timeout_s=180,
                    log=root / "studio.log") as running:
        yield running


@pytest.fixture(scope="module")
def api(studio: Running) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=studio.url, timeout=120) as client:
        yield client


def _run(api: httpx.Client, input: dict[str, Any],
         context: dict[str, Any] | None = None) -> dict[str, Any]:
    thread = api.post("/threads", json={})
    assert thread.status_code == 200, thread.text
    body: dict[str, Any] = {"assistant_id": "textbound", "input": input}
    if context is not None:
        body["context"] = context
    r = api.post(f"/threads/{thread.json()['thread_id']}/runs/wait", json=body)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    assert "__error__" not in out, out
    return out


def test_graph_is_registered_with_the_context_schema(api: httpx.Client) -> None:
    """Studio shows every Context field, each with a description, as the graph's settings."""
    assistants = api.post("/assistants/search", json={"graph_id": "textbound"}).json()
    assert len(assistants) == 1
    schemas = api.get(f"/assistants/{assistants[0]['assistant_id']}/schemas").json()
    props = schemas["context_schema"]["properties"]
    assert set(props) == set(TUNABLE_NAMES)
    assert all(p.get("description") for p in props.values())
    assert set(schemas["input_schema"]["properties"]) == {"question", "selected_text",
                                                          "session_id"}


def test_answerable_question_is_answered_with_citations(api: httpx.Client) -> None:
    """A question the textbook answers goes through validate_grounding to release_answer."""
    out = _run(api, {"question": "What is a ROS 2 topic?"})
    assert set(out) == set(CONTRACT_KEYS)
    assert not out["was_refusal"] and out["sources"] and "[1]" in out["answer"]
    assert out["diagnostics"]["path"] == "release_answer"
    assert "draft" not in out


def test_out_of_scope_question_is_refused(api: httpx.Client) -> None:
    """A question the textbook is silent on ends at the refusal node for its reason."""
    out = _run(api, {"question": "What is the capital of France?"})
    assert out["was_refusal"] and out["sources"] == []
    assert out["diagnostics"]["path"] == f"refuse_{out['refusal_reason']}"


def test_selected_text_question_answers_from_the_selection(api: httpx.Client) -> None:
    """With selected_text the only source is the selection."""
    out = _run(api, {"question": "What pattern do topics implement?",
                     "selected_text": PASSAGE})
    assert not out["was_refusal"] and out["diagnostics"]["path"] == "release_answer"
    assert {s["source"] for s in out["sources"]} == {"selection"}


def test_run_context_tightens_the_gate(api: httpx.Client) -> None:
    """Studio's per-run context reaches the graph: a 0.99 floor refuses an answerable question."""
    out = _run(api, {"question": "What is a ROS 2 topic?"}, context={"floor": 0.99})
    assert out["was_refusal"] and out["diagnostics"]["thresholds"]["floor"] == 0.99


def test_a_studio_thread_is_a_conversation(api: httpx.Client) -> None:
    """Runs on one Studio thread keep their history in the Agent Server's own checkpointer."""
    thread = api.post("/threads", json={}).json()["thread_id"]
    outs = []
    for question in ("What is Gazebo?", "what physics engines does it support?"):
        r = api.post(f"/threads/{thread}/runs/wait",
                     json={"assistant_id": "textbound", "input": {"question": question}})
        assert r.status_code == 200, r.text
        outs.append(r.json())
    conv = outs[1]["diagnostics"]["conversation"]
    assert conv["thread_id"] == thread and conv["turn"] == 2
    assert conv["standalone"] == "What physics engines does Gazebo support?"
    state = api.get(f"/threads/{thread}/state").json()
    assert [t["question"] for t in state["values"]["history"]] == [
        "What is Gazebo?", "what physics engines does it support?"]
