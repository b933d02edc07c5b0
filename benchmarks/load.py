"""HTTP load on `textbound serve`: requests/s and latency for refusals and extractive answers.

    python -m benchmarks.load [--requests 200] [--clients 1,8,32]
    python -m benchmarks.load --hung-chat 8 [--chat-deadline 10] [--requests 200] [--clients 1,8]

Ingests the bundled textbook into a temporary data folder, starts `textbound serve` on a free
loopback port against it (one uvicorn process, the embedded Qdrant, the extractive generator, the
audit log on), and for each kind of request and each number of concurrent clients sends a fixed
number of `POST /chat/invoke` requests. Refusals are the out-of-scope questions of
corpus/questions.jsonl, answers its answerable ones. An error is a transport failure or a non-200
status; "unexpected" counts 200s whose outcome (answer or refusal) differs from the question's
label. Every loop is bounded by count and by time, and the server is stopped by its process id.

With `--hung-chat N` the server uses the chat generator against a loopback "chat server" that
accepts connections and never replies, with N chat-call slots; N clients keep N answerable
questions in flight (each waits on the model until `--chat-deadline`), and meanwhile the refusal
levels are measured: questions that never need the model must not wait behind the hung calls
(the goal is refusal p95 under 1 s). The chat questions' outcomes are reported too: refused with
generation_error (within the deadline, or at once when every slot is taken), or a 503 with
Retry-After.
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
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from benchmarks._procs import stop_group, wait_ready

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
        p50, p95 = _percentiles(self.latencies_ms)
        return (f"| {self.kind} | {self.clients} | {self.requests} | {self.errors} | "
                f"{self.unexpected} | {self.requests / self.seconds:.1f} | {p50:.0f} | "
                f"{p95:.0f} |")


@dataclass
class ChatLoad:
    """What the questions kept in flight against the hung chat model got."""

    outcomes: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)

    def summary(self) -> str:
        """Return one line: how many, what they got, how long they took."""
        p50, p95 = _percentiles(self.latencies_ms)
        worst = max(self.latencies_ms, default=float("nan"))
        got = ", ".join(f"{n} {what}" for what, n in self.outcomes.most_common())
        return (f"{sum(self.outcomes.values())} chat questions: {got}; latency p50 {p50:.0f} ms, "
                f"p95 {p95:.0f} ms, max {worst:.0f} ms")


def _percentiles(latencies_ms: list[float]) -> tuple[float, float]:
    lat = sorted(latencies_ms)
    if not lat:
        return float("nan"), float("nan")
    return statistics.median(lat), lat[min(len(lat) - 1, max(0, round(0.95 * len(lat)) - 1))]


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
    from textbound.documents.ingest import ingest
    from textbound.documents.store import VectorStore
    from textbound.providers.embeddings import build_embeddings
    from textbound.settings import Settings

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
                continue
            output = r.json()["output"]
            # a refusal that waited on the chat model (generation_error) is not the fast path
            if output["was_refusal"] != want_refusal or (
                    want_refusal and output["refusal_reason"] == "generation_error"):
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


@contextmanager
def _hung_model() -> Iterator[str]:
    """Yield the base URL of a loopback 'chat server' that accepts and never sends a byte."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(256)
    listener.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True, name="hung-model")
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        listener.close()


@contextmanager
def _serve(data: Path, log_path: Path, **env_extra: str) -> Iterator[str]:
    """Run `textbound serve` on the data folder; yield its base URL; stop it by its group id."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEXTBOUND_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update(TEXTBOUND_DATA_DIR=str(data), LANGSMITH_TEST_TRACKING="false",
               TOKENIZERS_PARALLELISM="false", **env_extra)
    cmd = [str(Path(sys.executable).parent / "textbound"), "serve", "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning"]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, env=env, cwd=data.parent, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_ready(proc, base, timeout_s=180)
        yield base
    finally:
        stop_group(proc, grace=20)


async def _under_hung_chat(base: str, questions: dict[str, list[str]], in_flight: int,
                           levels: list[int], requests: int,
                           deadline_s: float) -> tuple[list[Level], ChatLoad, int]:
    """Keep `in_flight` chat questions waiting on the hung model; measure refusals meanwhile.

    Returns the refusal levels, the chat questions' outcomes and /healthz's status meanwhile.
    """
    url = base + "/chat/invoke"
    chat = ChatLoad()
    stop = asyncio.Event()
    cycle = itertools.cycle(questions["answer"])

    async def chat_client(http: httpx.AsyncClient) -> None:
        while not stop.is_set():
            body = {"input": {"question": next(cycle), "session_id": "load-chat"}}
            t0 = time.perf_counter()
            try:
                r = await http.post(url, json=body)
            except httpx.HTTPError as exc:
                chat.outcomes[f"transport error ({type(exc).__name__})"] += 1
                await asyncio.sleep(0.1)
                continue
            chat.latencies_ms.append((time.perf_counter() - t0) * 1000)
            if r.status_code == 503:
                chat.outcomes[f"503, Retry-After {r.headers.get('retry-after')}"] += 1
            elif r.status_code != 200:
                chat.outcomes[f"HTTP {r.status_code}"] += 1
            else:
                out = r.json()["output"]
                error = str(out.get("diagnostics", {}).get("error", "")).split(" (")[0]
                chat.outcomes[f"{out['refusal_reason']} ({error})" if error
                              else str(out["refusal_reason"] or "answered")] += 1

    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    async with httpx.AsyncClient(timeout=deadline_s + 60, limits=limits) as http:
        clients = [asyncio.create_task(chat_client(http)) for _ in range(in_flight)]
        await asyncio.sleep(1.0)  # every chat question has reached the model by now
        results = [await _level(url, "refusal", questions["refusal"], clients_n, requests)
                   for clients_n in levels]
        async with httpx.AsyncClient(timeout=30) as probe:
            health = (await probe.get(base + "/healthz")).status_code
        stop.set()
        await asyncio.wait_for(asyncio.gather(*clients), timeout=deadline_s + 90)
    for level in results:
        level.kind = f"refusal, {in_flight} hung chat calls"
    return results, chat, health


def main() -> None:
    """Run the benchmark and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--requests", type=int, default=200, help="requests per level (max 2000)")
    ap.add_argument("--clients", default="1,8,32", help="concurrency levels, comma-separated")
    ap.add_argument("--hung-chat", type=int, default=0, metavar="N",
                    help="keep N chat questions waiting on a chat server that never replies "
                         "(N chat-call slots) and measure refusals meanwhile (max 64)")
    ap.add_argument("--chat-deadline", type=float, default=10.0,
                    help="TEXTBOUND_CHAT_DEADLINE_S for --hung-chat (default 10 s)")
    ap.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                    help="a TEXTBOUND_ setting for the server (repeatable), e.g. "
                         "TEXTBOUND_ANSWERABILITY=false; the caller's own TEXTBOUND_ are dropped")
    args = ap.parse_args()
    server_env = dict(item.split("=", 1) for item in args.server_env)
    requests = max(1, min(args.requests, 2000))
    levels = [max(1, min(int(c), 64)) for c in args.clients.split(",")]
    hung = max(0, min(args.hung_chat, 64))
    questions = _questions()

    tmp = Path(tempfile.mkdtemp(prefix="textbound-load-"))
    chat: ChatLoad | None = None
    health = 0
    try:
        t0 = time.perf_counter()
        chunks = _ingest(tmp / "data")
        print(f"ingested {chunks} chunks in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if hung:
            with _hung_model() as model_url, _serve(
                    tmp / "data", tmp / "serve.log", **server_env, TEXTBOUND_GENERATOR="chat",
                    TEXTBOUND_CHAT_MODEL="hung", TEXTBOUND_CHAT_BASE_URL=model_url,
                    TEXTBOUND_CHAT_MAX_CONCURRENCY=str(hung),
                    TEXTBOUND_CHAT_DEADLINE_S=f"{args.chat_deadline:g}") as base:
                asyncio.run(_level(base + "/chat/invoke", "refusal", questions["refusal"], 4,
                                   20))  # warm-up
                results, chat, health = asyncio.run(_under_hung_chat(
                    base, questions, hung, levels, requests, args.chat_deadline))
            for level in results:
                print(level.row(), file=sys.stderr)
        else:
            with _serve(tmp / "data", tmp / "serve.log", **server_env) as base:
                url = base + "/chat/invoke"
                asyncio.run(_level(url, "answer", questions["answer"], 4, 20))  # warm-up
                results = []
                for kind in ("refusal", "answer"):
                    for clients in levels:
                        level = asyncio.run(_level(url, kind, questions[kind], clients,
                                                   requests))
                        print(level.row(), file=sys.stderr)
                        results.append(level)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    generator = (f"chat generator against a chat server that never replies, {hung} chat-call "
                 f"slots, deadline {args.chat_deadline:g} s" if hung else "extractive generator")
    print(f"\nHTTP load: `textbound serve` (1 process, embedded store, {generator}), "
          f"{os.cpu_count()} CPUs, {requests} POST /chat/invoke per level\n")
    print("| kind | clients | requests | errors | unexpected | req/s | p50 ms | p95 ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for level in results:
        print(level.row())
    if chat is not None:
        print(f"\nMeanwhile: {chat.summary()}; /healthz answered {health}.")
    if any(level.errors for level in results):
        raise SystemExit("errors: see the table")


if __name__ == "__main__":
    main()
