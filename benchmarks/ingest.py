"""Ingestion throughput against the embedding model's raw throughput, and re-run speed.

    python -m benchmarks.ingest [--squad PATH]

Each corpus runs in a fresh subprocess (so peak memory is its own) into a temporary embedded
Qdrant: raw embedding of the same texts ingestion embeds (every chunk, and every chunk's answer
sentences, which are stored so that answering needs no embedding), a first ingest, then a second
ingest over the unchanged corpus.
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

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SQUAD = REPO.parent / "shared" / "data" / "squad2" / "corpus.jsonl"


def _one(kind: str, path: str) -> dict:
    from textbound.documents.ingest import chunk_document, ingest, iter_jsonl_documents, load_file
    from textbound.documents.store import opened_store
    from textbound.providers.embeddings import LocalMiniLMEmbeddings
    from textbound.settings import Settings
    from textbound.text.units import answer_spans

    data = Path(tempfile.mkdtemp(prefix="tb-bench-"))
    t0 = time.perf_counter()
    emb = LocalMiniLMEmbeddings(cache_dir=data / "models")
    load_s = time.perf_counter() - t0
    emb = LocalMiniLMEmbeddings(cache_dir=data / "models")  # cold load from the ONNX cache
    cold_s = time.perf_counter() - t0 - load_s
    if kind == "jsonl":
        docs = [d for d in iter_jsonl_documents(Path(path)) if not isinstance(d, tuple)]
    else:
        docs = [load_file(p, p.name) for p in sorted(Path(path).glob("*.md"))]
    chunks = [c for d in docs for c in chunk_document(d)]
    texts = [c.embedding_text() for c in chunks]
    sentences = [c.text[s:e] for c in chunks for s, e in answer_spans(c.text)]
    t0 = time.perf_counter()
    emb.embed_documents(texts)
    raw_chunks_s = time.perf_counter() - t0
    emb.embed_documents(sentences)
    raw_s = time.perf_counter() - t0

    settings = Settings(_env_file=None, data_dir=data)  # type: ignore[call-arg]
    with opened_store(settings, emb) as store:
        args = {"jsonl": [Path(path)]} if kind == "jsonl" else {"paths": [Path(path)]}
        t0 = time.perf_counter()
        first = ingest(store, **args)
        first_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = ingest(store, **args)
        second_s = time.perf_counter() - t0
    q = [time.perf_counter()]
    for i in range(200):
        emb.embed_query(f"What does chapter {i} say about robots?")
        q.append(time.perf_counter())
    lat = sorted((b - a) * 1000 for a, b in zip(q, q[1:], strict=False))
    return {
        "corpus": Path(path).name, "chunks": len(texts), "sentences": len(sentences),
        "model_first_load_s": round(load_s, 3), "model_cold_load_s": round(cold_s, 3),
        "query_embed_p50_ms": round(lat[len(lat) // 2], 2),
        "raw_embed_chunks_per_s": round(len(texts) / raw_chunks_s, 1),
        "raw_embed_all_s": round(raw_s, 2),
        "ingest_s": round(first_s, 2),
        "ingest_chunks_per_s": round(first.chunks_added / first_s, 1),
        "throughput_vs_raw": round((first.chunks_added / first_s) / (len(texts) / raw_s), 3),
        "rerun_s": round(second_s, 3), "rerun_speedup": round(first_s / max(second_s, 1e-9), 1),
        "rerun_chunks_added": second.chunks_added,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    """Run both corpora in subprocesses and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--squad", default=str(DEFAULT_SQUAD), help="SQuAD corpus.jsonl")
    ap.add_argument("--one", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(*args.one)))
        return
    runs = [("dir", str(REPO / "corpus"))]
    if Path(args.squad).is_file():
        runs.append(("jsonl", args.squad))
    rows = []
    for kind, path in runs:
        out = subprocess.run([sys.executable, "-m", "benchmarks.ingest", "--one", kind, path],
                             cwd=REPO, capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
