"""Nothing lost: ingestion killed with SIGKILL and re-run, questions during ingestion, audit lines.

The kill test runs `python -m textbound.serving.cli ingest --jsonl` on a subset of the shared SQuAD
2.0 corpus (read in place, never copied into the repo) and kills it at seeded random moments; the
re-runs must leave exactly the chunks `chunk_document` computes: same count, same ids.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import CORPUS, SHARED_DATA, make_settings, sized
from tests.reliability.conftest import audit_lines, bounded, small_app, small_graph
from textbound.serving.server import CONTRACT_KEYS

SQUAD = SHARED_DATA / "squad2" / "corpus.jsonl"
DOCS = 200
KILLS = sized(5, 10)
"""SIGKILLs per store: 5 in `make test`, 10 under --full-size (`make test-full`)."""
MAX_ATTEMPTS = 20
SEED = 20240611


def expected_ids(jsonl: Path) -> set[str]:
    """The chunk ids ingestion must end with (a repeated doc_id keeps its last version)."""
    from textbound.documents.ingest import Document, chunk_document, iter_jsonl_documents

    by_source: dict[str, set[str]] = {}
    for doc in iter_jsonl_documents(jsonl):
        assert isinstance(doc, Document)
        by_source[doc.source] = {c.chunk_id for c in chunk_document(doc)}
    return set().union(*by_source.values())


def _env(data: Path, store: str = "edge") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEXTBOUND_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update({"TEXTBOUND_DATA_DIR": str(data), "TEXTBOUND_STORE": store,
                "LANGSMITH_TEST_TRACKING": "false", "TOKENIZERS_PARALLELISM": "false"})
    return env


def _stored(data: Path, store: str) -> int:
    """Chunks the collection holds now (0 before it exists); the store is closed again."""
    from textbound.documents.store import open_store

    s = open_store(make_settings(data, collection="squad", store=store), None)  # type: ignore[arg-type]
    try:
        return s.count()
    finally:
        s.close()


def _ingest_cmd(jsonl: Path) -> list[str]:
    return [sys.executable, "-m", "textbound.serving.cli", "ingest", "--jsonl", str(jsonl),
            "--collection", "squad", "--json"]


@pytest.mark.slow
@pytest.mark.sized
@pytest.mark.skipif(not SQUAD.is_file(), reason="the shared SQuAD 2.0 corpus is not present")
@pytest.mark.parametrize("store", ["edge", "local"])
def test_sigkilled_ingestion_resumes_to_exactly_the_corpus(tmp_path: Path, store: str,
                                                           cases: Counter[str]) -> None:
    """SIGKILLs at seeded moments, then a full run: the exact chunk ids, no dupes, no gaps
    (for the Edge store and for qdrant-client's local mode)."""
    from textbound.documents.store import open_store
    from textbound.providers.embeddings import build_embeddings

    jsonl = tmp_path / "subset.jsonl"
    with SQUAD.open(encoding="utf-8") as src:
        jsonl.write_text("".join(line for _, line in zip(range(DOCS), src, strict=False)),
                         encoding="utf-8")
    want = expected_ids(jsonl)
    data = tmp_path / "data"
    build_embeddings(make_settings(data))  # the ONNX model cache, so each run starts fast
    rng = random.Random(SEED)
    stored = []
    kills = 0
    completed = False
    for _ in range(MAX_ATTEMPTS):
        if kills == KILLS:
            break
        delay = rng.uniform(1.5, 4.5)
        proc = subprocess.Popen(_ingest_cmd(jsonl), env=_env(data, store),
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout=delay)  # finished before its kill point: fine, it is idempotent
            # a run that finished has resumed the killed ones to the end: later runs have
            # nothing left to write, so no kill could land in a write (a fast machine gets here
            # before KILLS kills; the resumes it checks have all happened)
            completed = proc.returncode == 0
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            kills += 1
            cases[f"nothing_lost/kill_points_{store}"] += 1
        stored.append(_stored(data, store))
        if completed:
            break
    assert kills >= 1 and (kills == KILLS or completed), \
        f"only {kills} runs were still going at their kill point, and none finished"
    final = subprocess.run(_ingest_cmd(jsonl), env=_env(data, store), capture_output=True,
                           text=True, timeout=300)
    assert final.returncode == 0, final.stderr[-3000:]
    summary = json.loads(final.stdout)
    assert summary["chunks_total"] == len(want)
    settings = make_settings(data, collection="squad", store=store)
    opened = open_store(settings, build_embeddings(settings))
    try:
        ids = [cid for cid, _ in opened.scroll(("source",))]
        count = opened.count()
    finally:
        opened.close()
    assert count == len(ids) == len(want)
    assert len(set(ids)) == len(ids)  # no duplicates
    assert set(ids) == want  # no gaps, nothing foreign
    # the kills landed while chunks were being written, not only before
    assert len({n for n in stored if 0 < n < len(want)}) >= 3, stored
    again = subprocess.run(_ingest_cmd(jsonl), env=_env(data, store), capture_output=True,
                           text=True, timeout=300)
    assert json.loads(again.stdout)["chunks_added"] == 0  # idempotent once complete


def test_questions_while_ingesting_never_crash(tmp_path: Path, embeddings: Any,
                                              cases: Counter[str]) -> None:
    """Threads asking questions while another thread ingests into the same store: all contracts."""
    from textbound.documents.ingest import ingest
    from textbound.documents.store import VectorStore

    settings = make_settings(tmp_path / "data")
    store = VectorStore.from_settings(settings, embeddings)
    graph = small_graph(tmp_path / "g", embeddings, store)
    errors: list[BaseException] = []
    outs: list[dict[str, Any]] = []
    done = threading.Event()

    def writer() -> None:
        try:
            ingest(store, [CORPUS / "02-ros2-fundamentals.md"], batch_size=16)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            done.set()

    def reader(n: int) -> None:
        questions = ["What is a ROS 2 topic?", "What is the capital of France?", "hello"]
        k = 0
        while not done.is_set() and k < 200:
            try:
                outs.append(graph.invoke({"question": questions[(n + k) % 3]}))
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
                return
            k += 1

    threads = [threading.Thread(target=writer)] + [
        threading.Thread(target=reader, args=(n,)) for n in range(3)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
        assert not any(t.is_alive() for t in threads), "a thread hung"
        assert not errors, errors
        assert outs and all(tuple(o) == CONTRACT_KEYS for o in outs)
        reasons = Counter(o["refusal_reason"] for o in outs)
        assert set(reasons) <= {None, "store_unavailable", "out_of_scope", "empty_retrieval",
                                "insufficient_context"}, reasons
        after = graph.invoke({"question": "What is a ROS 2 topic?"})
        assert not after["was_refusal"], after["diagnostics"]
        cases["nothing_lost/questions_during_ingest"] += len(outs)
    finally:
        store.close()


def test_concurrent_requests_write_one_audit_line_each(tmp_path: Path, embeddings: Any,
                                                       fake_store: Any,
                                                       cases: Counter[str]) -> None:
    """16 threads x 20 requests over HTTP: exactly one well-formed audit line per request."""
    questions = ["What is a topic?", "What is the capital of France?", "What\x00?", "hello",
                 "How many degrees of freedom does a rigid body have?"]
    app = small_app(tmp_path, embeddings, fake_store)
    sessions: Counter[str] = Counter()
    with TestClient(app) as client:
        def worker(n: int) -> None:
            for k in range(20):
                sid = f"s{n}-{k}"
                r = client.post("/chat/invoke", json={"input": {
                    "question": questions[(n + k) % len(questions)], "session_id": sid}})
                assert r.status_code == 200, r.text
                sessions[sid] += 1

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
        assert not any(t.is_alive() for t in threads)
    lines = audit_lines(tmp_path / "audit.jsonl")
    cases["nothing_lost/concurrent_audited_requests"] += len(sessions)
    assert len(sessions) == 320
    assert Counter(line["session_id"] for line in lines) == Counter(dict.fromkeys(sessions, 1))
    for line in lines:
        assert line["event"] in ("answer", "refusal") and line["timestamp"].endswith("Z")


def test_a_second_process_gets_the_lock_message_while_ingesting(tmp_path: Path,
                                                                cases: Counter[str]) -> None:
    """`textbound ask` in another process during an ingest: exit 2, the clear lock message."""
    data = tmp_path / "data"
    shutil.copytree(CORPUS, tmp_path / "docs", ignore=shutil.ignore_patterns("*.jsonl"))
    ingest = subprocess.Popen([sys.executable, "-m", "textbound.serving.cli", "ingest",
                               str(tmp_path / "docs")], env=_env(data),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        created = data / "qdrant" / "edge" / "textbook" / "textbound.json"  # shard open, locked
        deadline = time.monotonic() + 60
        while not created.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        assert ingest.poll() is None, "the ingest finished before the second process ran"
        r = bounded(subprocess.run, [sys.executable, "-m", "textbound.serving.cli", "ask",
                                     "What is a topic?"], env=_env(data), capture_output=True,
                    text=True, timeout=120)
        cases["nothing_lost/second_process_during_ingest"] += 1
        assert r.returncode == 2, r.stdout[-1000:] + r.stderr[-1000:]
        assert "in use by another textbound process" in " ".join(r.stderr.split())
        assert "Traceback" not in r.stderr
    finally:
        if ingest.poll() is None:
            os.killpg(ingest.pid, signal.SIGKILL)
        ingest.wait(timeout=30)
        if ingest.stderr is not None:
            ingest.stderr.close()
