"""Soak `textbound serve`: concurrent mixed requests, zero 5xx, no lost audit lines, flat memory.

    python -m benchmarks.soak [--requests 5000] [--clients 32] [--json PATH]

Ingests one chapter of the bundled textbook into a temporary data folder, starts `textbound
serve` on a free loopback port (the embedded Qdrant, the extractive generator, the audit log on),
warms it up, then sends `--requests` POSTs from `--clients` concurrent clients, cycling through:

- answer:   answerable questions about the ingested chapter (200, usually an answer)
- refusal:  out-of-scope and out-of-corpus questions (200, a refusal)
- invalid:  text the graph refuses as invalid_question (NUL bytes, no words, over-long) (200)
- reject:   bodies rejected before the graph: wrong JSON types, unknown fields, loosening
            overrides (422), invalid JSON (422) and bodies over the size limit (413)

Accounting: every request that reaches the graph (every 200, and a 503 store_unavailable) writes
exactly one audit line; 4xx rejections write none. After the run the audit log must hold exactly
warm-up + graph requests lines, each a well-formed JSON object. Resident memory (VmRSS from
/proc/<pid>/status) after the run is compared with memory after warm-up. Exits 1 if any request
failed (transport error, 5xx, a status its kind does not allow), a line is lost or malformed, or
memory grew more than --max-drift.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from benchmarks._procs import stop_group, wait_ready

REPO = Path(__file__).resolve().parent.parent
CHAPTER = REPO / "corpus" / "02-ros2-fundamentals.md"
DEADLINE_S = 1800.0
"""The run stops sending (and counts the rest as errors) after this long, whatever --requests."""
MAX_BYTES = 20_000

ANSWER = [
    "What is a ROS 2 topic?", "What is a ROS 2 service?", "What is a ROS 2 node?",
    "What does a launch file do in ROS 2?", "What is a quality of service profile?",
    "What is an action in ROS 2?", "What are ROS 2 parameters?",
]
REFUSAL = [
    "What is the capital of France?", "Who won the 1998 football world cup?",
    "How do I bake sourdough bread?", "What is the boiling point of mercury?",
]
INVALID = ["What\x00 is a topic?", "?!?! ...", "\u200f\u202e\u2066", "x" * 2_500]


def _bodies(kind: str, n: int) -> tuple[dict[str, Any] | bytes, set[int]]:
    """Return the n-th body of a kind and the statuses it may get."""
    if kind == "answer":
        return {"input": {"question": ANSWER[n % len(ANSWER)], "session_id": "soak"}}, {200}
    if kind == "refusal":
        return {"input": {"question": REFUSAL[n % len(REFUSAL)], "session_id": "soak"}}, {200}
    if kind == "invalid":
        return {"input": {"question": INVALID[n % len(INVALID)], "session_id": "soak"}}, {200}
    rejects: list[tuple[dict[str, Any] | bytes, set[int]]] = [
        ({"input": {"question": 42}}, {422}),
        ({"input": {"question": "What is a topic?", "selected_txt": "x"}}, {422}),
        ({"input": {"question": "What is a topic?"}, "config": {"configurable": {"floor": -1}}},
         {422}),
        (b'{"input": {"question": ', {422}),
        ({"input": {"question": "q" * (MAX_BYTES + 10)}}, {413}),
    ]
    return rejects[n % len(rejects)]


MIX = ["answer"] * 4 + ["refusal"] * 3 + ["invalid"] * 2 + ["reject"] * 2


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ingest(data_dir: Path) -> int:
    from textbound.documents.ingest import ingest
    from textbound.documents.store import VectorStore
    from textbound.providers.embeddings import build_embeddings
    from textbound.settings import Settings

    settings = Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]
    store = VectorStore.from_settings(settings, build_embeddings(settings))
    try:
        ingest(store, [CHAPTER])
        return store.count()
    finally:
        store.close()  # the server must be the only process holding the embedded store


def rss_kb(pid: int) -> int:
    """Return a process's resident memory (VmRSS) in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def _drive(url: str, requests: int, clients: int, start: int = 0) -> dict[str, Any]:
    pending = iter(range(start, start + requests))
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    failures: list[str] = []
    graph_requests = 0
    deadline = time.monotonic() + DEADLINE_S

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal graph_requests
        for n in pending:
            kind = MIX[n % len(MIX)]
            body, allowed = _bodies(kind, n // len(MIX))
            kinds[kind] += 1
            if time.monotonic() > deadline:
                failures.append(f"{kind}: deadline passed")
                continue
            content = body if isinstance(body, bytes) else json.dumps(body).encode()
            t0 = time.perf_counter()
            try:
                r = await http.post(url, content=content,
                                    headers={"Content-Type": "application/json"})
            except httpx.HTTPError as exc:
                failures.append(f"{kind}: {type(exc).__name__}")
                continue
            latencies.append((time.perf_counter() - t0) * 1000)
            statuses[str(r.status_code)] += 1
            if r.status_code in (200, 503):
                graph_requests += 1
            if r.status_code not in allowed:
                failures.append(f"{kind}: HTTP {r.status_code} {r.text[:200]}")
            elif r.status_code == 200 and "refusal_reason" not in r.json()["output"]:
                failures.append(f"{kind}: 200 without the response contract")

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        seconds = time.perf_counter() - t0
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return round(lat[min(len(lat) - 1, max(0, round(p * len(lat)) - 1))], 1) if lat else 0.0

    return {"requests": requests, "clients": clients, "seconds": round(seconds, 2),
            "requests_per_s": round(requests / seconds, 1) if seconds else 0.0,
            "p50_ms": pct(0.5), "p95_ms": pct(0.95), "p99_ms": pct(0.99),
            "max_ms": round(lat[-1], 1) if lat else 0.0,
            "statuses": dict(statuses), "kinds": dict(kinds),
            "server_errors": sum(v for k, v in statuses.items() if k.startswith("5")
                                 and k != "503"),
            "failures": len(failures), "failure_examples": failures[:10],
            "graph_requests": graph_requests}


def _audit_check(path: Path, expected: int) -> dict[str, Any]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    malformed = 0
    for line in lines:
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict) or rec.get("event") not in ("answer", "refusal"):
                malformed += 1
        except json.JSONDecodeError:
            malformed += 1
    return {"audit_lines": len(lines), "audit_expected": expected,
            "audit_lost": expected - len(lines), "audit_malformed": malformed}


def run(requests: int, clients: int, warmup: int = 100, max_drift: float = 0.10,
        work: Path | None = None) -> dict[str, Any]:
    """Run the soak and return its figures (`ok` says whether every check passed)."""
    own = work is None
    root = Path(tempfile.mkdtemp(prefix="textbound-soak-")) if work is None else work
    data = root / "data"
    chunks = _ingest(data)
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEXTBOUND_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update({"TEXTBOUND_DATA_DIR": str(data), "TEXTBOUND_MAX_REQUEST_BYTES": str(MAX_BYTES),
                "LANGSMITH_TEST_TRACKING": "false", "TOKENIZERS_PARALLELISM": "false"})
    cmd = [str(Path(sys.executable).parent / "textbound"), "serve", "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning"]
    log = root / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=root, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        problem = wait_ready(proc, base + "/healthz", 180)
        if problem:
            raise RuntimeError(f"textbound serve {problem}: {log.read_text()[-2000:]}")
        warm = asyncio.run(_drive(base + "/chat/invoke", warmup, clients))
        rss_warm = rss_kb(proc.pid)
        result = asyncio.run(_drive(base + "/chat/invoke", requests, clients, start=warmup))
        rss_after = rss_kb(proc.pid)
        time.sleep(0.5)  # let the last audit writes land (they are synchronous; belt and braces)
        audit = _audit_check(data / "audit.jsonl",
                             warm["graph_requests"] + result["graph_requests"])
        server_log = log.read_text(errors="replace")
    finally:
        stop_group(proc, grace=30)
        if own:
            shutil.rmtree(root, ignore_errors=True)
    drift = (rss_after - rss_warm) / rss_warm
    result.update(audit)
    result.update({"chunks": chunks, "warmup": warmup, "warmup_failures": warm["failures"],
                   "rss_warm_kb": rss_warm, "rss_after_kb": rss_after,
                   "rss_drift": round(drift, 4), "max_drift": max_drift,
                   "tracebacks_in_server_log": server_log.count("Traceback")})
    result["ok"] = (result["failures"] == 0 and warm["failures"] == 0
                    and result["server_errors"] == 0 and audit["audit_lost"] == 0
                    and audit["audit_malformed"] == 0 and drift <= max_drift
                    and result["tracebacks_in_server_log"] == 0)
    return result


def main() -> None:
    """Parse the arguments, run the soak, print the figures; exit 1 if a check failed."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--requests", type=int, default=5000)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--max-drift", type=float, default=0.10)
    p.add_argument("--json", type=Path, help="Also write the figures to this file.")
    args = p.parse_args()
    result = run(args.requests, args.clients, warmup=args.warmup, max_drift=args.max_drift)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
