"""Run the real graph with a permissive gate on a question set and save what each question saw.

The graph is built as `textbound calibrate` builds it for its permissive pass: the gate lets every
question through (floor -1, thresholds -10), so every question reaches generation and grounding,
and the record keeps the gate's features, the retrieved chunks, the extractive draft and whether
the rest of the graph answered (`was_refusal`). `fit.py` computes the answerability features from
these records, so a new feature needs no new graph run.

Writes OUT/GROUP.jsonl (one record per question) and OUT/GROUP.df.json (the collection's document
frequencies, `n_chunks` and `df`, from the store's TermStats).

Run from the repository root, for example:

    python -m research.answerability.collect corpus
    python -m research.answerability.collect clapnq --limit 40
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from textbound.quality.calibrate import _permissive_calibration, is_holdout
from textbound.quality.evaluation import (
    eval_settings,
    load_questions,
    prepare_graph,
    sample_questions,
)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "research" / "answerability" / "out"
DEFAULT_DATA = REPO.parent / "shared" / "data"
GATE_BASE = Path(__file__).resolve().parent / "gate_0aa89da.json"
"""The calibration whose chunk margin the permissive pass keeps (as `textbound calibrate`)."""
HOLDOUT = 0.3
"""The calibration's held-out share; the split is sha256("holdout:" + id) / 2**256 < 0.3."""


def default_paths(group: str) -> tuple[Path, Path]:
    """Return the default (questions, corpus) of a question set."""
    if group == "corpus":
        return REPO / "corpus" / "questions.jsonl", REPO / "corpus"
    return DEFAULT_DATA / group / "questions.dev.jsonl", DEFAULT_DATA / group / "corpus.jsonl"


def run_one(graph: Any, group: str, q: dict[str, Any]) -> dict[str, Any]:
    """Stream one question through the graph and return its evidence record."""
    updates: dict[str, dict[str, Any]] = {}
    final: dict[str, Any] | None = None
    for event in graph.stream({"question": q["question"]}, context={}, stream_mode="updates"):
        for node, update in event.items():
            if not update:
                continue
            updates[node] = update
            if "diagnostics" in update:
                final = update
    chunks = (updates.get("retrieve") or {}).get("chunks") or []
    gate = (updates.get("score_gate") or {}).get("gate") or {}
    draft = (updates.get("generate") or {}).get("draft") or {}
    diagnostics = final["diagnostics"] if final else {}
    return {
        "id": str(q["id"]), "group": group, "kind": q["kind"], "expected": q["expected"],
        "question": q["question"], "doc_id": q.get("doc_id"), "answers": q.get("answers"),
        "holdout": is_holdout(str(q["id"]), HOLDOUT),
        "path": diagnostics.get("path"),
        "was_refusal": final["was_refusal"] if final else None,
        "answer": final.get("answer") if final else None,
        "gate_features": gate.get("features") or {},
        "evidence_ids": gate.get("evidence_ids") or [],
        "chunks": [{"chunk_id": c["chunk_id"], "text": c["text"], "score": c["score"],
                    "lexical": c.get("lexical"),
                    "doc": (c.get("metadata") or {}).get("doc_id")
                    or (c.get("metadata") or {}).get("source")}
                   for c in chunks],
        "draft": [s["text"] for s in draft.get("sentences", [])],
        "draft_cites": [s["citations"] for s in draft.get("sentences", [])],
        "grounding": diagnostics.get("grounding"),
        "answerability": {k: v for k, v in ((updates.get("check_answerable") or {})
                                            .get("answerability") or {}).items()
                          if k in ("score", "scores", "chunk_id", "span", "span_text",
                                   "skipped")},
    }


def collect(group: str, questions_path: Path, corpus: Path, out: Path, data_dir: Path,
            limit: int | None, workers: int) -> Path:
    """Run the permissive pass on a question set; write and return OUT/GROUP.jsonl."""
    out.mkdir(parents=True, exist_ok=True)
    base = eval_settings(data_dir, None)
    with tempfile.TemporaryDirectory() as tmp:
        permissive, _ = _permissive_calibration(GATE_BASE, Path(tmp))
        # the shipped unknown-name refusal would stop questions before generation
        settings = base.model_copy(update={"calibration_file": permissive, "policy": "calibrated",
                                           "refuse_unknown_names": False})
        questions = sample_questions(load_questions(questions_path), limit)
        t0 = time.perf_counter()
        graph, store, info = prepare_graph(corpus, settings)
        print(f"ingested {info['chunks']} chunks ({info['chunks_added']} new) in "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
        try:
            stats = store.term_stats()
            (out / f"{group}.df.json").write_text(
                json.dumps({"n_chunks": stats.n_chunks, "df": stats.df}), encoding="utf-8")
            t1 = time.perf_counter()
            with ThreadPoolExecutor(workers) as pool:
                records = list(pool.map(lambda q: run_one(graph, group, q), questions))
        finally:
            store.close()
    path = out / f"{group}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    print(f"{group}: {len(records)} questions in {time.perf_counter() - t1:.1f} s -> {path}",
          file=sys.stderr)
    return path


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and collect one question set."""
    ap = argparse.ArgumentParser(prog="python -m research.answerability.collect",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("group", choices=["squad2", "clapnq", "corpus"],
                    help="question set; `corpus` is the textbook")
    ap.add_argument("--questions", type=Path, default=None,
                    help="question file (default: the set's dev questions)")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="corpus folder or JSONL (default: the set's corpus)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="textbound data dir for Qdrant and the model cache (default OUT/data)")
    ap.add_argument("--limit", type=int, default=None,
                    help="first N questions in the evaluation's deterministic sample order")
    ap.add_argument("--workers", type=int, default=2, help="questions run in parallel")
    args = ap.parse_args(argv)
    questions, corpus = default_paths(args.group)
    collect(args.group, args.questions or questions, args.corpus or corpus, args.out,
            args.data_dir or args.out / "data", args.limit, args.workers)


if __name__ == "__main__":
    main()
