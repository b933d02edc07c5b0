"""Measure what the features cost at run time, on collected SQuAD 2.0 records.

Prints the time to build the word lists once per collection (`make_stats`), the features per
question (cold `term_set` cache), and the cost of recomputing `draft_cos` outside the graph (two
MiniLM embeddings; inside the graph textbound.answer.compose already has the cosine).

Run from the repository root: `python -m research.answerability.timing`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from itertools import islice
from pathlib import Path

from research.answerability.features import answerability_features, make_stats
from research.answerability.fit import DEFAULT_CORPUS, DEFAULT_DATA, DEFAULT_OUT, collection_texts
from textbound.text import term_set


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and print the timings."""
    ap = argparse.ArgumentParser(prog="python -m research.answerability.timing",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder with the records")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="benchmark data")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="textbound data dir for the model cache (default OUT/data)")
    ap.add_argument("--group", default="squad2", help="question set to time on")
    ap.add_argument("-n", type=int, default=1000, help="records to time the features on")
    ap.add_argument("--embed-n", type=int, default=100, help="records to time draft_cos on")
    args = ap.parse_args(argv)

    with (args.out / f"{args.group}.jsonl").open(encoding="utf-8") as fh:
        records = [json.loads(line) for line in islice(fh, args.n)]
    saved = json.loads((args.out / f"{args.group}.df.json").read_text(encoding="utf-8"))
    texts = collection_texts(args.group, args.data, DEFAULT_CORPUS)
    t0 = time.perf_counter()
    stats = make_stats(saved["df"], saved["n_chunks"], texts)
    print(f"make_stats (word lists over {len(texts)} texts, once per collection): "
          f"{(time.perf_counter() - t0) * 1000:.0f} ms")

    for attempt in (1, 2):
        term_set.cache_clear()
        t0 = time.perf_counter()
        for r in records:
            answerability_features(r["question"], [c["text"] for c in r["chunks"][:3]], stats,
                                   draft_cosine=0.5, draft=r["draft"])
        per = (time.perf_counter() - t0) / len(records) * 1000
        print(f"answerability_features, run {attempt} (cold term_set cache): {per:.3f} ms/question")

    from textbound.providers.embeddings import LocalMiniLMEmbeddings

    emb = LocalMiniLMEmbeddings(cache_dir=(args.data_dir or args.out / "data") / "models")
    pairs = [(r["question"], (r["draft"] or ["x"])[0]) for r in records[: args.embed_n]]
    emb.embed_array(list(pairs[0]))  # warm up
    t0 = time.perf_counter()
    for q, s in pairs:
        emb.embed_array([q, s])
    per = (time.perf_counter() - t0) / len(pairs) * 1000
    print(f"draft_cos recomputed outside the graph (question + one sentence): {per:.1f} ms"
          "/question")


if __name__ == "__main__":
    main()
