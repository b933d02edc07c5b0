"""The answerability reader alone on the dev pool: per book, AUROC of answerable vs near-miss.

    python -m benchmarks.reader_pool models/answerability RUN/onnx [--book NAME ...]
        [--cache runs/reader/pool-passages.json] [--data-dir runs/reader/pool-data]

For each book of the pool (`benchmarks.pool.BOOKS`: git-manual, postgres-tutorial,
gnuplot-manual, openstax, textbook) each answerable and near-miss question is run through the
graph (extractive settings, the shipped calibration) up to its evidence: the chunks `score_gate`
keeps (the retrieved chunks when it keeps none), best first. Those passages are stored once in
`--cache` (JSON, one entry per book and question), since ingesting a book takes minutes on a
small CPU; a later run with the same cache reads no book. Every model folder given (model.onnx,
tokenizer.json, config.json, as `textbound.answer.answerability.OnnxReader` loads) then reads the
top `--passages` of them (3, as `check_answerable` does) and the question's score is the best
passage's probability. Printed per book and model: AUROC answerable vs near-miss (ties half),
and for every model after the first its difference from the first with a 95% paired bootstrap
interval (the same resampled questions for both); then the same over all the books' questions
together. `--out` writes the figures (and each question's score) as JSON.

The gate and the generator are not in this figure: it measures only how well the reader ranks
a book's answerable questions above its near-misses on the passages it would read.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.pool import BOOKS

__all__ = ["collect", "score", "paired_interval", "main"]

KINDS = ("answerable", "near_miss")
KEEP = 5  # passages stored per question (the reader reads --passages of them)


def _load_questions(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if r.get("kind") in KINDS]


def _evidence(graph: Any, question: str, context: dict[str, Any]) -> tuple[list[dict], str]:
    """Run the graph up to score_gate; return (passages best first, where they came from)."""
    retrieved: list[dict] = []
    stream = graph.stream({"question": question}, context=context, stream_mode="updates")
    try:
        for update in stream:
            for node, values in (update or {}).items():
                values = values or {}
                if node == "retrieve":
                    retrieved = list(values.get("chunks") or [])
                if node in ("score_gate", "select_passage") and "evidence" in values:
                    if values["evidence"]:
                        return list(values["evidence"]), node
                    return retrieved, "retrieve"
    finally:
        stream.close()
    return retrieved, "retrieve" if retrieved else "none"


def collect(book: str, data_dir: Path) -> dict[str, Any]:
    """Ingest one book (reusing its collection in data_dir) and store each question's passages."""
    from textbound.quality.evaluation.command import eval_settings
    from textbound.quality.evaluation.runner import prepared_graph

    _fmt, corpus, questions_path = BOOKS[book]
    questions = _load_questions(questions_path)
    settings = eval_settings(data_dir, None)
    t0 = time.perf_counter()
    out: list[dict[str, Any]] = []
    with prepared_graph(corpus, settings) as (graph, _store, info):
        ingest_s = round(time.perf_counter() - t0, 1)
        for q in questions:
            chunks, source = _evidence(graph, q["question"], {"policy": "calibrated",
                                                              "generator": "extractive"})
            ranked = sorted(chunks, key=lambda c: (-float(c["score"]), c["chunk_id"]))[:KEEP]
            out.append({"id": q["id"], "kind": q["kind"], "question": q["question"],
                        "source": source,
                        "passages": [{"chunk_id": c["chunk_id"], "score": float(c["score"]),
                                      "text": c["text"]} for c in ranked]})
    return {"corpus": str(corpus), "questions_file": str(questions_path),
            "chunks": info.get("chunks"), "ingest_seconds": ingest_s,
            "seconds": round(time.perf_counter() - t0, 1), "questions": out}


def score(entry: dict[str, Any], model_dir: Path, passages: int, threads: int = 1) -> dict:
    """AUROC answerable vs near-miss of the reader's best score over each question's passages."""
    import numpy as np

    from textbound.answer.answerability import OnnxReader
    from training.answerability.evaluate import auroc

    reader = OnnxReader(model_dir, threads=threads)
    scores: dict[str, list[float]] = {k: [] for k in KINDS}
    for q in entry["questions"]:
        texts = [(p["chunk_id"], p["text"]) for p in q["passages"][:passages]]
        # the verdict check_answerable reads: a fitted head's, where the reader has one
        best = max((r.answers for r in reader.read(q["question"], texts)), default=0.0)
        scores[q["kind"]].append(best)
    pos, neg = np.array(scores["answerable"]), np.array(scores["near_miss"])
    return {"auroc": round(auroc(pos, neg), 4), "answerable": len(pos), "near_miss": len(neg),
            "mean_answerable": round(float(pos.mean()), 4) if len(pos) else None,
            "mean_near_miss": round(float(neg.mean()), 4) if len(neg) else None,
            "scores": {k: [round(x, 6) for x in v] for k, v in scores.items()}}


def paired_interval(a: dict, b: dict, rounds: int = 2000, seed: int = 13) -> tuple[float, float]:
    """95% interval of AUROC(b) - AUROC(a), resampling the same questions for both (by kind)."""
    import numpy as np

    from training.answerability.evaluate import auroc

    rng = np.random.default_rng(seed)
    pa, na = np.array(a["scores"]["answerable"]), np.array(a["scores"]["near_miss"])
    pb, nb = np.array(b["scores"]["answerable"]), np.array(b["scores"]["near_miss"])
    diffs = []
    for _ in range(rounds):
        i = rng.integers(0, len(pa), len(pa))
        j = rng.integers(0, len(na), len(na))
        diffs.append(auroc(pb[i], nb[j]) - auroc(pa[i], na[j]))
    lo, hi = np.quantile(diffs, [0.025, 0.975])
    return round(float(lo), 3), round(float(hi), 3)


def main(argv: list[str] | None = None) -> None:
    """Command line."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.reader_pool",
                                description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", help="reader model folders (model.onnx, tokenizer.json)")
    p.add_argument("--book", action="append", choices=sorted(BOOKS), default=None,
                   help="only these books (repeatable; default all five)")
    p.add_argument("--cache", default="runs/reader/pool-passages.json",
                   help="JSON of each question's passages; books missing there are ingested")
    p.add_argument("--data-dir", default="runs/reader/pool-data",
                   help="textbound data dir for the books' collections (reused between runs)")
    p.add_argument("--passages", type=int, default=3, help="passages the reader reads (<= 5)")
    p.add_argument("--threads", type=int, default=1, help="ONNX Runtime threads")
    p.add_argument("--collect-only", action="store_true", help="store passages, score nothing")
    p.add_argument("--out", default=None, help="write the figures here (JSON)")
    a = p.parse_args(argv)
    books = a.book or list(BOOKS)
    cache_path = Path(a.cache)
    cache: dict[str, Any] = (json.loads(cache_path.read_text(encoding="utf-8"))
                             if cache_path.is_file() else {})
    for book in books:
        if book not in cache:
            print(f"{book}: ingesting and retrieving ...", flush=True)
            cache[book] = collect(book, Path(a.data_dir))
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache, indent=1), encoding="utf-8")
            tmp.replace(cache_path)
            print(f"{book}: {len(cache[book]['questions'])} questions, "
                  f"{cache[book]['seconds']} s", flush=True)
    if a.collect_only:
        return
    results: dict[str, dict[str, Any]] = {}
    for model in a.models:
        results[model] = {b: score(cache[b], Path(model), a.passages, a.threads) for b in books}
    first, others = a.models[0], a.models[1:]
    head = ("| book | answerable / near-miss | " + " | ".join(f"AUROC {m}" for m in a.models)
            + "".join(f" | {m} - first (95% paired bootstrap)" for m in others) + " |")
    print(head)
    print("|---|---|" + "--:|" * (len(a.models) + len(others)))
    for b in books:
        f = results[first][b]
        cells = " | ".join(f"{results[m][b]['auroc']:.3f}" for m in a.models)
        for m in others:
            lo, hi = paired_interval(f, results[m][b])
            results[m][b]["diff_interval"] = [lo, hi]
            cells += f" | {results[m][b]['auroc'] - f['auroc']:+.3f} ({lo:+.3f} to {hi:+.3f})"
        print(f"| {b} | {f['answerable']} / {f['near_miss']} | {cells} |")
    if len(books) > 1:  # every question of these books together (one reader, one scale)
        import numpy as np

        from training.answerability.evaluate import auroc

        for m in a.models:
            merged = {k: [x for b in books for x in results[m][b]["scores"][k]] for k in KINDS}
            results[m]["all"] = {"auroc": round(auroc(np.array(merged["answerable"]),
                                                      np.array(merged["near_miss"])), 4),
                                 "answerable": len(merged["answerable"]),
                                 "near_miss": len(merged["near_miss"]), "scores": merged}
        f = results[first]["all"]
        cells = " | ".join(f"{results[m]['all']['auroc']:.3f}" for m in a.models)
        for m in others:
            lo, hi = paired_interval(f, results[m]["all"])
            results[m]["all"]["diff_interval"] = [lo, hi]
            cells += f" | {results[m]['all']['auroc'] - f['auroc']:+.3f} ({lo:+.3f} to {hi:+.3f})"
        print(f"| all of these | {f['answerable']} / {f['near_miss']} | {cells} |")
    if a.out:
        Path(a.out).write_text(json.dumps({"passages": a.passages, "cache": str(cache_path),
                                           "results": results}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
