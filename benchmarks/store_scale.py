"""The embedded stores at library scale: upsert time, query latency and memory, side by side.

    python -m benchmarks.store_scale                       # 10k, 50k, 100k chunks; edge and local
    python -m benchmarks.store_scale --sizes 10000         # a quick run
    python -m benchmarks.store_scale --local-max 50000     # local mode only up to 50k (it is slow)

Each (store, size) runs in a fresh subprocess into a temporary folder, so its peak RSS is its own.
Payloads are real chunk payloads: the bundled textbook's chunks (text, heading path, offsets),
cycled under new source names, each with sentence vectors for its answer sentences, exactly the
layout ingestion writes. Vectors (chunks, sentences and queries) are **random** 384-d normals, not
model embeddings: embedding 100k chunks would take hours here and does not change store timings.
Upsert time covers writing every chunk in batches of 256 and, for Edge, building its HNSW index
(`optimize`, which ingestion runs at its end), reported apart too. Queries are `Store.search` with
k = 25 (the candidates the retrieve node asks for), payloads included. Recall is the share of each
query's true top 25 (exact cosine in numpy over the same vectors, computed after the timings and
the RSS reading) that the store returned: HNSW is approximate, and random vectors, with no
clusters to follow, are its hardest case.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DIM = 384
BATCH = 256


class _Identity:
    """Stands in for the embedding model: the collection records this name."""

    model_name = "random-384"
    dimension = DIM

    def embed_query(self, text: str) -> list[float]:
        raise NotImplementedError("the benchmark passes vectors")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError("the benchmark passes vectors")


def _payload_templates() -> list[tuple[str, dict[str, Any], list[tuple[int, int]]]]:
    from textbound.documents.ingest import chunk_document, load_file
    from textbound.text.units import answer_spans

    out = []
    for path in sorted((REPO / "corpus").glob("*.md")):
        for c in chunk_document(load_file(path, f"corpus/{path.name}")):
            out.append((c.text, c.metadata, answer_spans(c.text)))
    return out


def _one(kind: str, size: int, queries: int) -> dict[str, Any]:
    import numpy as np

    from textbound.documents.store import SentenceVectors, opened_store
    from textbound.settings import Settings

    rng = np.random.default_rng(size)
    chunk_seed = [size, 1]  # the chunk vectors have their own stream, drawn again for recall
    chunk_rng = np.random.default_rng(chunk_seed)
    templates = _payload_templates()
    data = Path(tempfile.mkdtemp(prefix="tb-store-scale-"))
    settings = Settings(_env_file=None, data_dir=data, store=kind,  # type: ignore[call-arg]
                        collection="scale")
    with opened_store(settings, _Identity()) as store: # type: ignore[arg-type]
        store.ensure_collection(DIM)
        write_s = 0.0
        for start in range(0, size, BATCH):
            n = min(BATCH, size - start)
            ids, texts, metas, sents = [], [], [], []
            for i in range(start, start + n):
                text, meta, spans = templates[i % len(templates)]
                copy = i // len(templates)
                ids.append(f"00000000-0000-4000-8000-{i:012d}")
                texts.append(text)
                metas.append(meta | {"source": f"{meta['source']}#{copy}", "chunk_id": ids[-1]})
                sents.append(SentenceVectors(spans, rng.standard_normal((len(spans), DIM),
                                                                       dtype=np.float32)))
            vectors = chunk_rng.standard_normal((n, DIM), dtype=np.float32).tolist()
            t0 = time.perf_counter()
            store.upsert(ids, vectors, texts, metas, sents)
            write_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        store.optimize()
        index_s = time.perf_counter() - t0
        assert store.count() == size
        lat = []
        qs = rng.standard_normal((queries, DIM), dtype=np.float32)
        got = []
        for q in qs:
            t0 = time.perf_counter()
            hits = store.search(q.tolist(), 25)
            lat.append((time.perf_counter() - t0) * 1000)
            assert len(hits) == 25
            got.append({h.chunk_id for h in hits})
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    truth = _exact_top(qs, np.random.default_rng(chunk_seed), size, 25)
    recall = np.mean([len(g & {f"00000000-0000-4000-8000-{i:012d}" for i in t}) / 25
                      for g, t in zip(got, truth, strict=True)])
    return {"store": kind, "chunks": size, "upsert_s": round(write_s + index_s, 1),
            "index_s": round(index_s, 1), "query_p50_ms": round(float(np.percentile(lat, 50)), 2),
            "query_p95_ms": round(float(np.percentile(lat, 95)), 2),
            "recall_at_25": round(float(recall), 3), "peak_rss_mb": round(rss)}


def _exact_top(queries: Any, chunk_rng: Any, size: int, k: int) -> list[list[int]]:
    """Return each query's k nearest chunk numbers by exact cosine, drawing the chunks again."""
    import numpy as np

    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    best = np.full((len(q), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(q), k), dtype=np.int64)
    for start in range(0, size, BATCH):
        n = min(BATCH, size - start)
        c = chunk_rng.standard_normal((n, DIM), dtype=np.float32)
        scores = np.concatenate([best, q @ (c / np.linalg.norm(c, axis=1, keepdims=True)).T], 1)
        index = np.concatenate([best_i, np.broadcast_to(np.arange(start, start + n), (len(q), n))],
                               1)
        top = np.argsort(-scores, axis=1)[:, :k]
        best, best_i = np.take_along_axis(scores, top, 1), np.take_along_axis(index, top, 1)
    return best_i.tolist()


def main() -> None:
    """Run every (store, size) in a subprocess and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="10000,50000,100000",
                    help="comma-separated collection sizes in chunks (default: %(default)s)")
    ap.add_argument("--stores", default="edge,local",
                    help="comma-separated implementations: edge, local (default: %(default)s)")
    ap.add_argument("--local-max", type=int, default=None,
                    help="skip qdrant-client's local mode above this size (it scans every "
                    "vector per query and takes minutes to write 100k)")
    ap.add_argument("--queries", type=int, default=200, help="queries per run (default: 200)")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]), int(args.one[2]))))
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    sizes = [int(s) for s in args.sizes.split(",")]
    runs = [(kind, size) for size in sizes for kind in args.stores.split(",")
            if not (kind == "local" and args.local_max and size > args.local_max)]
    rows = []
    err = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
                  "{task.total} runs"), TimeElapsedColumn(), console=err) as bar:
        task = bar.add_task("store scale", total=len(runs))
        for kind, size in runs:
            bar.update(task, description=f"{kind} {size:,} chunks")
            out = subprocess.run([sys.executable, "-m", "benchmarks.store_scale", "--one", kind,
                                  str(size), str(args.queries)], cwd=REPO, capture_output=True,
                                 text=True)
            if out.returncode != 0:
                err.print(out.stderr[-2000:])
                raise SystemExit(out.returncode)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            bar.advance(task)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(f"{r[k]:,}" if isinstance(r[k], int) else str(r[k])
                                for k in keys) + " |")
    skipped = [f"local {s:,}" for s in sizes if "local" in args.stores and args.local_max
               and s > args.local_max]
    if skipped:
        print(f"\nSkipped with --local-max {args.local_max}: {', '.join(skipped)}.")


if __name__ == "__main__":
    main()
