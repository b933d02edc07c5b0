"""Retrieval recall@k on the dev sets: does a retrieved chunk hold the gold answer?

    python -m benchmarks.retrieval_recall                      # every dev set found
    python -m benchmarks.retrieval_recall --sets book openstax # some of them
    python -m benchmarks.retrieval_recall --limit 1000         # at most 1,000 questions a set
    python -m benchmarks.retrieval_recall --depth 25           # ... and recall at 1, 3, 5, 10, 25

For every answerable question of a set (expected "answer", with gold answers), the real retrieve
node (nodes/retrieve.py) runs with the default settings (top_k 5) and the question counts as
recalled when one of the top_k chunks holds a gold answer by the rule `textbound eval` scores
answers with (textbound.quality.evaluation.metrics.answer_matches: a short gold as a whole-word
substring after SQuAD normalisation, a long ClapNQ gold by content-word recall). Columns:

- dense: retrieval=dense, spelling off: the pipeline before this work (the 25 nearest chunks
  by cosine, re-ranked by cosine + lexical_weight x IDF-weighted coverage of the question's words);
- hybrid: retrieval=hybrid, spelling off (25 candidates by cosine and 25 by BM25, fused by
  reciprocal rank fusion in Qdrant, the whole fused union then re-ranked the same way);
- fused top n re-ranked: the same with only the fused top 25 re-ranked
  (nodes.retrieve.FUSED_POOL = 1), which can drop a chunk among the 25 nearest;
- fused order: the top_k of Qdrant's fusion as it ranks them, without the re-ranking (what the
  node would return if fusion replaced the re-ranking instead of feeding it);
- hybrid+spelling: the default settings, hybrid after correcting misspelt question words
  against the collection's vocabulary (textbound/answer/spelling.py); with how many questions it
  changed.

A second table is the spelling correction's effect on the decision: every question of the set,
of every kind (answerable, near-miss, out-of-corpus), that the corrector changes is run through
the whole graph (default settings) with the correction off and on; a near-miss or out-of-corpus
question answered only with it on would be a leak the correction caused.

With `--depth K`, the default mode's re-ranked list is also cut at 1, 3, 5, 10 and K (retrieve
run once more with top_k K): how deep the answer lies when it is not in the top five.

With `--decisions`, every question of the set also runs through the whole graph with
retrieval=dense and =hybrid (spelling off): answered and correct per kind, the leak rates the
gate's raw-cosine features give on the fused candidates.

Each corpus is ingested once into `--data-dir` (Qdrant Edge, no sentence vectors: retrieval
does not read them), so later runs only embed the questions. The sets are read in place from
../shared/data (the bundled book from corpus/); a set whose files are missing is skipped.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks.pool import BOOKS

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
SETS: dict[str, tuple[Path, Path]] = {
    "book": (REPO / "corpus", REPO / "corpus" / "questions.jsonl"),
    "openstax": (DATA / "openstax" / "corpus", DATA / "openstax" / "questions.dev.jsonl"),
    "squad2": (DATA / "squad2" / "corpus.jsonl", DATA / "squad2" / "questions.dev.jsonl"),
    "clapnq": (DATA / "clapnq" / "corpus.jsonl", DATA / "clapnq" / "questions.dev.jsonl"),
    **{name: (corpus, questions) for name, (_, corpus, questions) in BOOKS.items()
       if name not in ("openstax", "textbook")},
}
"""The four dev sets and the pool's three real books (benchmarks/pool.BOOKS)."""
DEPTHS = (1, 3, 5, 10)
"""The cut-offs `--depth` reports recall at (and the depth itself)."""
MODES = ("dense", "hybrid", "fused top n re-ranked", "fused order", "hybrid+spelling")


def _ingest(store: Any, corpus: Path, batch: int) -> None:
    from textbound.documents.ingest import ingest

    if corpus.is_file():
        ingest(store, [], jsonl=[corpus], batch_size=batch, sentence_vectors=False)
    else:
        ingest(store, [corpus], batch_size=batch, sentence_vectors=False)


def measure(name: str, corpus: Path, questions_path: Path, settings: Any, embeddings: Any,
            limit: int | None, with_decisions: bool = False, depth: int = 0
            ) -> dict[str, Any]:
    """Return recall@top_k per mode for one set (and the questions spelling changed).

    `depth` > 0: also recall@k for k in DEPTHS up to `depth`, the default mode's re-ranked list
    cut at k (retrieve run once with top_k = depth): how deep the answer lies when not in the
    top_k.
    """
    from langgraph.runtime import Runtime

    import nodes.retrieve as retrieve_module
    from graph.context import resolve_tunables
    from nodes.retrieve import retrieve
    from textbound.documents.store import opened_store
    from textbound.quality.evaluation.data import (
        corpus_fingerprint,
        load_questions,
        sample_questions,
    )
    from textbound.quality.evaluation.metrics import answer_matches
    from textbound.quality.evaluation.runner import MemoEmbeddings

    questions = [q for q in sample_questions(load_questions(questions_path), limit)
                 if q["expected"] == "answer" and q.get("answers")]
    settings = settings.model_copy(
        update={"collection": f"recall-{corpus_fingerprint(corpus)[:16]}"})
    memo = MemoEmbeddings(embeddings)
    hits = dict.fromkeys(MODES, 0)
    corrected = 0
    ms: dict[str, list[float]] = {m: [] for m in MODES}
    with opened_store(settings, embeddings) as store:
        t0 = time.perf_counter()
        _ingest(store, corpus, settings.embedding_batch_size * 4)
        ingest_s = time.perf_counter() - t0
        runtimes = {m: Runtime(context=resolve_tunables(settings.model_copy(update={
            "retrieval": "dense" if m == "dense" else "hybrid",
            "spelling": m == "hybrid+spelling"})))
            for m in MODES}
        deep = Runtime(context=resolve_tunables(settings.model_copy(
            update={"top_k": depth}))) if depth > 0 else None
        ranks: list[int | None] = []
        # every question embedded once before the clock runs, so no mode pays for it
        for q in questions:
            memo.embed_query(q["question"])
        for q in questions:
            golds = q["answers"]
            for mode in MODES:
                state: dict[str, Any] = {"clean_question": q["question"]}
                t1 = time.perf_counter()
                if mode == "fused order":
                    top_k = int(runtimes[mode].context.top_k)
                    found = store.search(memo.embed_query(q["question"]), top_k,
                                         text=q["question"], candidates=25)
                    texts = [h.text for h in found]
                else:
                    pool = retrieve_module.FUSED_POOL
                    if mode == "fused top n re-ranked":
                        retrieve_module.FUSED_POOL = 1
                    try:
                        out = retrieve(state, runtimes[mode],  # type: ignore[arg-type]
                                       store=store, embeddings=memo)
                    finally:
                        retrieve_module.FUSED_POOL = pool
                    texts = [c["text"] for c in out["chunks"]]
                    if mode == "hybrid+spelling" and out.get("corrected_question"):
                        corrected += 1
                ms[mode].append((time.perf_counter() - t1) * 1000)
                hits[mode] += any(answer_matches(t, golds) for t in texts)
            if deep is not None:
                listed = retrieve({"clean_question": q["question"]}, deep,  # type: ignore[arg-type]
                                  store=store, embeddings=memo)["chunks"]
                ranks.append(next((i for i, c in enumerate(listed)
                                   if answer_matches(c["text"], golds)), None))
        chunks = store.count()
        everything = sample_questions(load_questions(questions_path), limit)
        spelling = _spelling_effect(everything, store, memo, settings)
        decisions = _decisions(everything, store, memo, settings) if with_decisions else {}
    n = len(questions)
    return {"set": name, "questions": n, "chunks": chunks, "ingest_s": ingest_s,
            "recall": {m: hits[m] / n if n else None for m in MODES}, "corrected": corrected,
            "ms": {m: sorted(v)[len(v) // 2] if v else None for m, v in ms.items()},
            "spelling": spelling, "decisions": decisions,
            "depth": {k: sum(r is not None and r < k for r in ranks) / n
                      for k in DEPTHS + (depth,) if k <= depth} if depth > 0 and n else {}}


def _decisions(questions: list[dict[str, Any]], store: Any, embeddings: Any,
               settings: Any) -> dict[str, dict[str, dict[str, int]]]:
    """Run every question through the whole graph with retrieval=dense and =hybrid (spelling
    off, so retrieval is the only difference); per retrieval and kind: questions, answered,
    answered correctly (answerable)."""
    from graph.builder import build_graph, build_services
    from textbound.quality.evaluation.metrics import answer_matches

    graph = build_graph(services=build_services(settings=settings, embeddings=embeddings,
                                                store=store))
    out: dict[str, dict[str, dict[str, int]]] = {}
    for retrieval in ("dense", "hybrid"):
        rows = out.setdefault(retrieval, {})
        for q in questions:
            res = graph.invoke({"question": q["question"]},
                               context={"retrieval": retrieval, "spelling": False})
            row = rows.setdefault(q["kind"], {"n": 0, "answered": 0, "correct": 0})
            row["n"] += 1
            if not res["was_refusal"]:
                row["answered"] += 1
                if q["expected"] == "answer":
                    row["correct"] += answer_matches(res["answer"], q["answers"])
    return out


def _spelling_effect(questions: list[dict[str, Any]], store: Any, embeddings: Any,
                     settings: Any) -> dict[str, dict[str, int]]:
    """Run the whole graph, spelling on and off, on every question of the set (all kinds) that
    the corrector changes; the others are untouched by it. Per kind: changed, answered with
    and without correction, and (answerable) answered correctly with and without."""
    from graph.builder import build_graph, build_services
    from textbound.answer.spelling import correct_question
    from textbound.quality.evaluation.metrics import answer_matches

    stats = store.term_stats()
    changed = [q for q in questions if correct_question(q["question"], stats) is not None]
    out: dict[str, dict[str, int]] = {}
    if not changed:
        return out
    graph = build_graph(services=build_services(settings=settings, embeddings=embeddings,
                                                store=store))
    for q in changed:
        row = out.setdefault(q["kind"], {"changed": 0, "answered_off": 0, "answered_on": 0,
                                         "correct_off": 0, "correct_on": 0})
        row["changed"] += 1
        for flag, key in ((False, "off"), (True, "on")):
            res = graph.invoke({"question": q["question"]}, context={"spelling": flag})
            if not res["was_refusal"]:
                row[f"answered_{key}"] += 1
                if q["expected"] == "answer":
                    row[f"correct_{key}"] += answer_matches(res["answer"], q["answers"])
    return out


def main() -> None:
    import tempfile

    from textbound.providers.embeddings import build_embeddings
    from textbound.settings import Settings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS),
                    help="dev sets to measure (default: all)")
    ap.add_argument("--limit", type=int, default=None,
                    help="at most this many questions per set, a fixed hash sample (default: all)")
    ap.add_argument("--data-dir", type=Path,
                    default=Path(tempfile.gettempdir()) / "textbound-retrieval-recall",
                    help="where the ingested collections are kept between runs "
                         "(default: %(default)s)")
    ap.add_argument("--decisions", action="store_true",
                    help="also run every question through the whole graph with dense and with "
                         "hybrid retrieval and compare answered / correct / leaks per kind")
    ap.add_argument("--depth", type=int, default=0, metavar="K",
                    help="also report recall at 1, 3, 5, 10 and K of the default mode's "
                         "re-ranked list cut deeper (retrieve run with top_k K)")
    args = ap.parse_args()

    settings = Settings(_env_file=None, data_dir=args.data_dir)  # type: ignore[call-arg]
    embeddings = build_embeddings(settings)
    rows = []
    for name in args.sets:
        corpus, questions = SETS[name]
        if not (corpus.exists() and questions.exists()):
            print(f"skipping {name}: {corpus} or {questions} not found")
            continue
        rows.append(measure(name, corpus, questions, settings, embeddings, args.limit,
                            args.decisions, args.depth))
    k = settings.top_k
    print("| set | answerable questions | chunks | " +
          " | ".join(f"recall@{k} {m}" for m in MODES) +
          " | questions spelling changed | retrieve p50 ms (dense / hybrid / hybrid+spelling) |")
    print("|---|--:|--:|" + "--:|" * len(MODES) + "--:|--:|")
    for r in rows:
        cells = " | ".join(f"{r['recall'][m]:.1%}" if r["recall"][m] is not None else "-"
                           for m in MODES)
        print(f"| {r['set']} | {r['questions']} | {r['chunks']:,} | {cells} | {r['corrected']} | "
              f"{r['ms']['dense']:.1f} / {r['ms']['hybrid']:.1f} / "
              f"{r['ms']['hybrid+spelling']:.1f} |")
    print("\nQuestions of every kind the spelling correction changes, run through the whole "
          "graph with it off and on:\n")
    print("| set | kind | changed | answered (off / on) | answered correctly (off / on) |")
    print("|---|---|--:|--:|--:|")
    for r in rows:
        for kind, c in sorted(r["spelling"].items()):
            correct = (f"{c['correct_off']} / {c['correct_on']}" if kind == "answerable"
                       else "-")
            print(f"| {r['set']} | {kind} | {c['changed']} | {c['answered_off']} / "
                  f"{c['answered_on']} | {correct} |")
    if args.depth > 0:
        cuts = [k for k in DEPTHS + (args.depth,) if k <= args.depth]
        cuts = list(dict.fromkeys(cuts))
        print("\nThe default mode's list cut deeper (recall at k):\n")
        print("| set | " + " | ".join(f"@{k}" for k in cuts) + " |")
        print("|---|" + "--:|" * len(cuts))
        for r in rows:
            print(f"| {r['set']} | " + " | ".join(f"{r['depth'][k]:.1%}" for k in cuts) + " |")
    if args.decisions:
        print("\nEvery question through the whole graph, retrieval dense / hybrid (spelling "
              "off):\n")
        print("| set | kind | questions | answered (dense / hybrid) | answered correctly "
              "(dense / hybrid) |")
        print("|---|---|--:|--:|--:|")
        for r in rows:
            dense, hybrid = r["decisions"]["dense"], r["decisions"]["hybrid"]
            for kind in sorted(dense):
                d, h = dense[kind], hybrid[kind]
                correct = (f"{d['correct']} / {h['correct']}" if kind == "answerable" else "-")
                print(f"| {r['set']} | {kind} | {d['n']} | {d['answered']} / {h['answered']} | "
                      f"{correct} |")


if __name__ == "__main__":
    main()
