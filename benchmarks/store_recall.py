"""How many of the true nearest chunks the embedded store returns, on real embeddings.

    python -m benchmarks.store_recall                   # 20,000 SQuAD 1.1 train paragraphs
    python -m benchmarks.store_recall --paragraphs 8000 # quicker

`benchmarks.store_scale` times the stores on random vectors, which have no clusters for an HNSW
graph to follow: its recall column is the worst case. This benchmark asks the question a user
cares about: with the bundled embedding model's vectors of real paragraphs, and real questions
about them, how much of the exact top 25 (by cosine, computed in numpy) does Qdrant Edge's
HNSW index return? It also reports how often the paragraph a question was written from is in
the store's top 5 and in the exact top 5, and the store's query latency.

Paragraphs are the first N distinct contexts of `../shared/data/train/squad11-train.jsonl` (in
file order) and the questions are one per paragraph, every k-th paragraph, so they spread over
the collection. Embedding 20,000 paragraphs takes several minutes on two cores, so the vectors are
cached under `--cache-dir` (keyed by the file, N and the model); later runs only build the store.
Payloads are the paragraph text and a source name; Edge's defaults otherwise (m 16, ef_construct
100, the index built once after the upsert, as ingestion does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TRAIN = REPO.parent / "shared" / "data" / "train" / "squad11-train.jsonl"
K = 25
BATCH = 256


def _paragraphs(path: Path, n: int) -> tuple[list[str], list[str], list[int]]:
    """Return n distinct paragraphs and one question for each, with its paragraph's index."""
    texts: list[str] = []
    seen: dict[str, int] = {}
    questions: list[str] = []
    owners: list[int] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            ctx = row["context"]
            if ctx not in seen:
                if len(texts) == n:
                    break
                seen[ctx] = len(texts)
                texts.append(ctx)
                questions.append(row["question"])
                owners.append(seen[ctx])
    return texts, questions, owners


def _embed(texts: list[str], label: str, embeddings: Any, cache: Path) -> Any:
    import numpy as np
    from rich.progress import Progress

    if cache.exists():
        return np.load(cache)
    out = []
    with Progress() as bar:
        task = bar.add_task(f"embedding {label}", total=len(texts))
        for start in range(0, len(texts), BATCH):
            out.extend(embeddings.embed_documents(texts[start:start + BATCH]))
            bar.advance(task, min(BATCH, len(texts) - start))
    vectors = np.asarray(out, dtype=np.float32)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors)
    return vectors


def main() -> None:
    import numpy as np

    from textbound.documents.store import opened_store
    from textbound.providers.embeddings import build_embeddings
    from textbound.settings import Settings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--paragraphs", type=int, default=20_000,
                    help="distinct paragraphs in the collection (default: %(default)s)")
    ap.add_argument("--queries", type=int, default=500,
                    help="questions asked, spread over the paragraphs (default: %(default)s)")
    ap.add_argument("--train", type=Path, default=TRAIN,
                    help="SQuAD-style JSONL with context and question (default: %(default)s)")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "textbound",
                    help="where embedded vectors are kept between runs (default: %(default)s)")
    ap.add_argument("--store", default="edge", choices=["edge", "local"],
                    help="embedded store to measure (default: %(default)s)")
    args = ap.parse_args()
    if not args.train.exists():
        raise SystemExit(f"{args.train} not found: pass --train with a SQuAD-style JSONL file")

    texts, questions, owners = _paragraphs(args.train, args.paragraphs)
    step = max(1, len(texts) // args.queries)
    picked = list(range(0, len(texts), step))[:args.queries]
    data = Path(tempfile.mkdtemp(prefix="tb-store-recall-"))
    settings = Settings(_env_file=None, data_dir=data, store=args.store,  # type: ignore[call-arg]
                        collection="recall")
    embeddings = build_embeddings(Settings(_env_file=None))  # type: ignore[call-arg]
    key = hashlib.sha256(f"{args.train.resolve()}:{args.train.stat().st_size}:{len(texts)}:"
                         f"{getattr(embeddings, 'model_name', '')}".encode()).hexdigest()[:16]
    chunks = _embed(texts, f"{len(texts):,} paragraphs", embeddings,
                    args.cache_dir / f"store_recall-{key}-paragraphs.npy")
    queries = _embed([questions[i] for i in picked], f"{len(picked)} questions", embeddings,
                     args.cache_dir / f"store_recall-{key}-q{len(picked)}.npy")

    with opened_store(settings, embeddings) as store:
        store.ensure_collection(chunks.shape[1])
        ids = [f"00000000-0000-4000-8000-{i:012d}" for i in range(len(texts))]
        t0 = time.perf_counter()
        for start in range(0, len(texts), BATCH):
            end = min(start + BATCH, len(texts))
            store.upsert(ids[start:end], chunks[start:end].tolist(), texts[start:end],
                         [{"source": f"squad/{i}", "chunk_id": ids[i]} for i in range(start, end)])
        store.optimize()
        upsert_s = time.perf_counter() - t0

        unit = chunks / np.linalg.norm(chunks, axis=1, keepdims=True)
        lat, recall, own_store, own_exact = [], [], 0, 0
        for q, i in zip(queries, picked, strict=True):
            t0 = time.perf_counter()
            hits = store.search(q.tolist(), K)
            lat.append((time.perf_counter() - t0) * 1000)
            exact = np.argsort(-(unit @ (q / np.linalg.norm(q))))[:K]
            got = [h.chunk_id for h in hits]
            recall.append(len(set(got) & {ids[j] for j in exact}) / K)
            own_store += ids[owners[i]] in got[:5]
            own_exact += owners[i] in exact[:5].tolist()
    r = np.asarray(recall)
    print(f"| store | paragraphs | questions | upsert + index s | recall@{K} mean | recall@{K} "
          "p5 | recall@25 min | gold paragraph in top 5 (store / exact) | query p50 ms | "
          "query p95 ms |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    print(f"| {args.store} | {len(texts):,} | {len(picked)} | {upsert_s:.1f} | {r.mean():.3f} | "
          f"{np.percentile(r, 5):.2f} | {r.min():.2f} | {own_store / len(picked):.1%} / "
          f"{own_exact / len(picked):.1%} | {np.percentile(lat, 50):.2f} | "
          f"{np.percentile(lat, 95):.2f} |")


if __name__ == "__main__":
    main()
