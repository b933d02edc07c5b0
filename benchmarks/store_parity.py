"""Same corpus, same vectors, two engines: do Edge and qdrant-client's local mode agree?

    python -m benchmarks.store_parity [--squad-questions 1000]

Chunks the bundled textbook (`corpus/`) and the shared SQuAD 2.0 dev corpus as ingestion does,
embeds every chunk once with the bundled model, writes the same vectors and payloads into a Qdrant
Edge store and a qdrant-client local-mode store, then searches both with the embedded questions
(top 25, the retrieve node's candidates). Prints, per corpus, how many queries returned the same
ids in the same order and the largest score difference. The calibration was fitted on local-mode
scores, so agreement to 1e-4 means it holds for Edge unchanged.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SQUAD = REPO.parent / "shared" / "data" / "squad2"
K = 25


def _questions(path: Path, limit: int | None) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r["question"] for r in rows][:limit]


def main() -> None:
    """Compare the two engines on both corpora and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--squad-questions", type=int, default=None,
                    help="use only the first N SQuAD dev questions (default: all)")
    args = ap.parse_args()
    from textbound.documents.ingest import chunk_document, iter_jsonl_documents, load_file
    from textbound.documents.store import opened_store
    from textbound.providers.embeddings import LocalMiniLMEmbeddings
    from textbound.settings import Settings

    data = Path(tempfile.mkdtemp(prefix="tb-parity-"))
    emb = LocalMiniLMEmbeddings(cache_dir=data / "models")
    corpora = {"textbook": ([c for p in sorted((REPO / "corpus").glob("*.md"))
                             for c in chunk_document(load_file(p, f"corpus/{p.name}"))],
                            _questions(REPO / "corpus" / "questions.jsonl", None))}
    if (SQUAD / "corpus.jsonl").is_file():
        docs = [d for d in iter_jsonl_documents(SQUAD / "corpus.jsonl") if not isinstance(d, tuple)]
        corpora["SQuAD 2.0 dev"] = ([c for d in docs for c in chunk_document(d)],
                                    _questions(SQUAD / "questions.dev.jsonl",
                                               args.squad_questions))
    print("| corpus | chunks | queries | same top-25 ids and order | max abs score diff |")
    print("|---|--:|--:|--:|--:|")
    for name, (chunks, questions) in corpora.items():
        vectors = emb.embed_documents([c.embedding_text() for c in chunks])
        queries = emb.embed_documents(questions)
        results = {}
        for kind in ("local", "edge"):
            settings = Settings(_env_file=None, data_dir=data / kind, store=kind,  # type: ignore[call-arg]
                                collection=name.split()[0].lower())
            with opened_store(settings, emb) as store:
                store.ensure_collection(len(vectors[0]))
                for s in range(0, len(chunks), 256):
                    part = chunks[s:s + 256]
                    store.upsert([c.chunk_id for c in part], vectors[s:s + 256],
                                 [c.text for c in part], [c.metadata for c in part])
                store.optimize()
                results[kind] = [[(h.chunk_id, h.score) for h in store.search(q, K)]
                                 for q in queries]
        same = sum([i for i, _ in a] == [i for i, _ in b]
                   for a, b in zip(results["edge"], results["local"], strict=True))
        diff = max(abs(sa - sb) for a, b in zip(results["edge"], results["local"], strict=True)
                   for (_, sa), (_, sb) in zip(a, b, strict=True))
        print(f"| {name} | {len(chunks):,} | {len(queries):,} | {same:,} | {diff:.1e} |")


if __name__ == "__main__":
    main()
