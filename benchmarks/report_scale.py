"""Time `textbound report` on a synthetic audit log of 1M lines (and 100k for comparison).

Writes the logs to /tmp, runs the report in a fresh subprocess per size, and prints wall time and
the child's peak RSS (from wait4's rusage). The log mimics real traffic: 60% answers, refusals
spread over the real reasons, 50,000 distinct questions with Zipf-like popularity (so the
question table of 5,000 entries has to evict), 90 days of timestamps, and 0.1% malformed lines.

    .venv/bin/python -m benchmarks.report_scale            # 100k and 1M lines
    .venv/bin/python -m benchmarks.report_scale --lines 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REASONS = [("empty_retrieval", 30), ("insufficient_context", 30), ("out_of_scope", 20),
           ("ungrounded_answer", 8), ("invalid_question", 5), ("selected_text_insufficient", 4),
           ("store_unavailable", 2), ("generation_error", 1)]


def make_log(path: Path, lines: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    distinct = 50_000
    weights = [1 / (i + 1) ** 1.1 for i in range(distinct)]
    start = datetime(2025, 1, 1, tzinfo=UTC)
    reason_names = [r for r, _ in REASONS]
    reason_weights = [w for _, w in REASONS]
    picks = rng.choices(range(distinct), weights=weights, k=lines)
    with path.open("w", encoding="utf-8") as f:
        for i, q in enumerate(picks):
            if rng.random() < 0.001:
                f.write('{"event": "refusal", "timestamp": "2025-01-0\n' if i % 2 else "garbage\n")
                continue
            ts = start + timedelta(seconds=i * 90 * 86400 / lines)
            refused = rng.random() < 0.4
            rec = {
                "event": "refusal" if refused else "answer",
                "timestamp": ts.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                "session_id": f"s{rng.randrange(20_000)}",
                "question": f"Synthetic question number {q} about topic {q % 97}?",
                "selected_text": False,
                "refusal_reason": rng.choices(reason_names, reason_weights)[0] if refused else None,
                "chunks_retrieved": 5, "max_score": round(rng.random(), 4),
                "confidence_level": "insufficient" if refused else "high",
                "sources": [] if refused else [{"chunk_id": "c1", "score": 0.8}],
                "path": "refuse_x" if refused else "release_answer",
                "failed_checks": [], "policy": "calibrated", "generator": "extractive",
                "latency_ms": round(rng.random() * 50, 3),
            }
            f.write(json.dumps(rec) + "\n")


def run(lines: int, workdir: Path) -> dict[str, float]:
    log = Path(tempfile.gettempdir()) / f"textbound-audit-{lines}.jsonl"
    if not log.exists():
        t0 = time.perf_counter()
        make_log(log, lines)
        print(f"generated {log} ({log.stat().st_size / 1e6:.0f} MB) in "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    out = workdir / f"report-{lines}"
    # An empty data folder: no collection, so topics fall back to normalised text (the store
    # lookup for the top 50 questions costs the same at any log size).
    env = dict(os.environ, TEXTBOUND_DATA_DIR=str(workdir / "data"))
    cmd = [sys.executable, "-m", "textbound.serving.cli", "report", "--audit", str(log),
           "--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    stdout, stderr = proc.communicate()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"report failed:\n{stdout.decode()}\n{stderr.decode()}")
    summary = json.loads((out / "summary.json").read_text())
    return {"lines": lines, "bytes": log.stat().st_size, "seconds": round(seconds, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "malformed": sum(
                summary["malformed"].values()), "refusals": summary["refusals"],
            "questions_exact": summary["questions_exact"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, nargs="*", default=[100_000, 1_000_000])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run(n, Path(tmp)) for n in args.lines]
    print("| lines | log size | wall time | peak RSS | malformed skipped | exact question counts |")
    print("|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['lines']:,} | {r['bytes'] / 1e6:.0f} MB | {r['seconds']} s | "
              f"{r['peak_rss_mb']} MB | {r['malformed']:,} | {r['questions_exact']} |")


if __name__ == "__main__":
    main()
