"""HTTP load on `textbound serve`: requests/s and latency for refusals and extractive answers.

    python -m benchmarks.load [--requests 200] [--clients 1,8,32]

Ingests the bundled textbook into a temporary data folder, starts `textbound serve` on a free
loopback port against it (one uvicorn process, the embedded Qdrant, the extractive generator, the
audit log on), and for each kind of request and each number of concurrent clients sends a fixed
number of `POST /chat/invoke` requests. Refusals are the out-of-scope questions of
corpus/questions.jsonl, answers its answerable ones. An error is a transport failure or a non-200
status; "unexpected" counts 200s whose outcome (answer or refusal) differs from the question's
label. Every loop is bounded by count and by time, and the server is stopped by its process id.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from textbound.procs import stop_group, wait_ready

REPO = Path(__file__).resolve().parent.parent
DEADLINE_S = 900.0
"""No level may run longer than this, whatever --requests says."""


@dataclass
class Level:
    """One measured level: a kind of request at a number of concurrent clients."""

    kind: str
    clients: int
    requests: int
    errors: int
    unexpected: int
    seconds: float
    latencies_ms: list[float]

    def row(self) -> str:
        """Return the Markdown table row."""
        lat = sorted(self.latencies_ms)
        p50 = statistics.median(lat) if lat else float("nan")
        p95 = lat[min(len(lat) - 1, max(0, round(0.95 * len(lat)) - 1))] if lat else float("nan")
        return (f"| {self.kind} | {self.clients} | {self.requests} | {self.errors} | "
                f"{self.unexpected} | {self.requests / self.seconds:.1f} | {p50:.0f} | "
                f"{p95:.0f} |")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _questions() -> dict[str, list[str]]:
    rows = [json.loads(line) for line in (REPO / "corpus" / "questions.jsonl").open()]
    return {
        "refusal": [r["question"] for r in rows if r["kind"] == "out_of_scope"],
        "answer": [r["question"] for r in rows
                   if r["kind"] == "answerable" and r["expected"] == "answer"],
    }


def _ingest(data_dir: Path) -> int:
    from textbound.embeddings import build_embeddings
    from textbound.ingest import ingest
    from textbound.settings import Settings
    from textbound.store import VectorStore

    settings = Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]
    store = VectorStore.from_settings(settings, build_embeddings(settings))
    try:
        ingest(store, [settings.corpus_dir])
        return store.count()
    finally:
        store.close()  # the server process must be the only one holding the embedded store


async def _level(url: str, kind: str, questions: list[str], clients: int,
                 requests: int) -> Level:
    pending = iter(range(requests))
    cycle = itertools.cycle(questions)
    latencies: list[float] = []
    errors = unexpected = 0
    want_refusal = kind == "refusal"
    deadline = time.monotonic() + DEADLINE_S

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal errors, unexpected
        for _ in pending:
            if time.monotonic() > deadline:
                errors += 1
                continue
            body = {"input": {"question": next(cycle), "session_id": "load"}}
            t0 = time.perf_counter()
            try:
                r = await http.post(url, json=body)
            except httpx.HTTPError:
                errors += 1
                continue
            latencies.append((time.perf_counter() - t0) * 1000)
            if r.status_code != 200:
                errors += 1
            elif r.json()["output"]["was_refusal"] != want_refusal:
                unexpected += 1

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        seconds = time.perf_counter() - t0
    return Level(kind, clients, requests, errors, unexpected, seconds, latencies)


def _wait_ready(proc: subprocess.Popen[bytes], base: str, timeout_s: float) -> None:
    problem = wait_ready(proc, base + "/healthz", timeout_s)
    if problem:
        raise SystemExit(f"textbound serve {problem}")


def main() -> None:
    """Run the benchmark and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--requests", type=int, default=200, help="requests per level (max 2000)")
    ap.add_argument("--clients", default="1,8,32", help="concurrency levels, comma-separated")
    args = ap.parse_args()
    requests = max(1, min(args.requests, 2000))
    levels = [max(1, min(int(c), 64)) for c in args.clients.split(",")]
    questions = _questions()

    tmp = Path(tempfile.mkdtemp(prefix="textbound-load-"))
    try:
        t0 = time.perf_counter()
        chunks = _ingest(tmp / "data")
        print(f"ingested {chunks} chunks in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        port = _free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TEXTBOUND_", "LANGSMITH_", "LANGCHAIN_"))}
        env.update(TEXTBOUND_DATA_DIR=str(tmp / "data"), LANGSMITH_TEST_TRACKING="false",
                   TOKENIZERS_PARALLELISM="false")
        cmd = [str(Path(sys.executable).parent / "textbound"), "serve", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning"]
        with (tmp / "serve.log").open("wb") as log:
            proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_ready(proc, base, timeout_s=180)
            url = base + "/chat/invoke"
            asyncio.run(_level(url, "answer", questions["answer"], 4, 20))  # warm-up
            results = []
            for kind in ("refusal", "answer"):
                for clients in levels:
                    level = asyncio.run(_level(url, kind, questions[kind], clients, requests))
                    print(level.row(), file=sys.stderr)
                    results.append(level)
        finally:
            stop_group(proc, grace=20)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"\nHTTP load: `textbound serve` (1 process, embedded Qdrant, extractive generator), "
          f"{os.cpu_count()} CPUs, {requests} POST /chat/invoke per level\n")
    print("| kind | clients | requests | errors | unexpected | req/s | p50 ms | p95 ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for level in results:
        print(level.row())
    if any(level.errors for level in results):
        raise SystemExit("errors: see the table")


if __name__ == "__main__":
    main()
