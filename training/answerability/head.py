"""Fit the reader's no-answer head on questions people wrote about technical manuals.

    python -m training.answerability.head            # fit; write runs/reader-head/head.json
    python -m training.answerability.head --out DIR  # write DIR/head.json
    python -m training.answerability.head --l2 3     # one penalty, no choice
    python -m training.answerability.head --books outside.json --hold-out nettle libffi
                                                     # every outside manual but two

The questions (training/answerability/head_questions/*.jsonl, written for this by the team, as
a student would type them: answerable ones with the phrases that answer them, and near-misses
that ask what the manual does not say) are about manuals Debian installs under /usr/share/doc
(books.json names each file, its package and its licence; outside.json, the manuals of
`benchmarks.outside`, a list of files each, manual pages printed and gzipped files unpacked as
that benchmark does). None is a book of the dev pool or of a package in
../shared/data/books/EXCLUDE. `--hold-out` leaves manuals out of the fit, to measure the head on.

1. **Evidence.** Each manual is ingested into its own collection (under `--data-dir`) and each
   question runs through the graph up to `score_gate`, as `benchmarks.reader_pool` does: the
   passages the reader would read (the best three).
2. **Features.** The reader of `--model-dir` reads them in one batch, as at run time; the
   window its own head scores highest gives the question's features
   (textbound/answer/reader_head.py: pooled and last-layer states, span logits).
3. **Fit.** Logistic regression on the standardised features, each class weighing half, with an
   L2 penalty chosen by leaving one manual out at a time (the penalty with the best mean AUROC
   over the manuals left out), then fitted on all of them; an affine map puts its log-odds on
   the shipped head's scale (the same mean and spread over these windows), and the verdict is
   the mean of the two heads' log-odds (`--blend`).
4. **Write** head.json with its provenance. The reader reads it when it is beside model.onnx.

`python -m benchmarks.reader_pool models/answerability <dir without head.json>` then compares
the readers on the dev pool (which never trains it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from textbound.answer.reader_head import HEAD_FILE, ReaderHead, window_features
from training.answerability.evaluate import auroc

QUESTIONS = Path(__file__).resolve().parent / "head_questions"
OUTPUTS = {"pooled": "/Tanh_output_0", "hidden": "/layers.5/ffn_norm/LayerNormalization_output_0"}
"""The shipped graph's pooled vector and last layer (names as its export wrote them)."""
L2_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
PASSAGES = 3


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Class-balanced L2 logistic regression by Newton's method; (weights, bias)."""
    n, k = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    theta = np.zeros(k + 1)
    reg = np.eye(k + 1) * l2
    reg[-1, -1] = 0.0
    w = np.where(y == 1, 0.5 / max(y.mean(), 1e-9), 0.5 / max(1 - y.mean(), 1e-9))
    for _ in range(60):
        p = 1.0 / (1.0 + np.exp(-np.clip(a @ theta, -30, 30)))
        hess = (a * (w * p * (1 - p))[:, None]).T @ a / n + reg
        step = np.linalg.solve(hess, a.T @ (w * (p - y)) / n + reg @ theta)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    return theta[:-1], float(theta[-1])


def corpus_files(spec: dict) -> list[Path]:
    """A manual's files: books.json names one, outside.json a list."""
    files = spec["corpus"]
    return [Path(f) for f in (files if isinstance(files, list) else [files])]


def evidence(book: str, spec: dict, questions: list[dict], data_dir: Path) -> list[dict]:
    """Each question with the passages the reader would read (the graph up to score_gate).

    The manual is copied as `benchmarks.outside` copies it: manual pages printed by `man`, a
    gzipped file decompressed.
    """
    from benchmarks.outside import copy_corpus
    from benchmarks.reader_pool import _evidence
    from textbound.quality.evaluation.command import eval_settings
    from textbound.quality.evaluation.runner import prepared_graph

    files = corpus_files(spec)
    folder = data_dir / "corpora" / book
    if not folder.is_dir() or len(list(folder.iterdir())) < len(files):
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        copy_corpus(book, {**spec, "corpus": [str(f) for f in files]}, data_dir).rename(folder)
    out = []
    with prepared_graph(folder, eval_settings(data_dir, None)) as (graph, _store, _info):
        for q in questions:
            chunks, _src = _evidence(graph, q["question"], {"policy": "calibrated",
                                                             "generator": "extractive"})
            ranked = sorted(chunks, key=lambda c: (-float(c["score"]), c["chunk_id"]))
            out.append({**q, "passages": [(c["chunk_id"], c["text"]) for c in ranked][:PASSAGES]})
    return out


def features(reader: Any, items: list[dict]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Each question's best window: (features [n, 1543], shipped log-odds [n], kept indexes)."""
    names = ["answer_logit", "start_logits", "end_logits", OUTPUTS["pooled"], OUTPUTS["hidden"]]
    feats, logits, kept = [], [], []
    for k, item in enumerate(items):
        if not item["passages"]:
            continue
        rows, ctx_from, (answer, start, end, pooled, hidden) = reader.run(
            item["question"], item["passages"], names)
        i = int(np.argmax(answer))
        feats.append(window_features(pooled[i], hidden[i], start[i], end[i], ctx_from,
                                     len(rows[i][3]), reader.max_answer_tokens))
        logits.append(float(answer[i]))
        kept.append(k)
    return np.array(feats), np.array(logits), kept


def choose_l2(x: np.ndarray, y: np.ndarray, books: np.ndarray) -> tuple[float, dict[str, Any]]:
    """The penalty whose head ranks each left-out manual best on average."""
    table: dict[str, Any] = {}
    for l2 in L2_GRID:
        scores = {}
        for b in sorted(set(books)):
            tr, te = books != b, books == b
            mu, sd = x[tr].mean(0), x[tr].std(0) + 1e-6
            w, bias = fit((x[tr] - mu) / sd, y[tr], l2)
            s = (x[te] - mu) / sd @ w + bias
            scores[str(b)] = round(auroc(s[y[te] == 1], s[y[te] == 0]), 4)
        valid = [v for v in scores.values() if v == v]  # a book with one kind has no AUROC
        table[str(l2)] = {"left_out_auroc": scores,
                          "mean": round(float(np.mean(valid)), 4) if valid else -1.0}
    best = max(L2_GRID, key=lambda v: table[str(v)]["mean"])
    return best, table


def main(argv: list[str] | None = None) -> None:
    """Read the questions' evidence, fit the head, write head.json."""
    from textbound.answer.answerability import DEFAULT_MODEL_DIR, OnnxReader

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR,
                   help="the reader whose features the head reads (default: the shipped one)")
    p.add_argument("--out", type=Path, default=Path("runs/reader-head"),
                   help="folder to write head.json to; beside a model.onnx the reader reads it")
    p.add_argument("--data-dir", type=Path, default=Path("runs/reader-head/data"),
                   help="where the manuals' collections are kept between runs")
    p.add_argument("--questions", type=Path, default=QUESTIONS,
                   help="folder of the question files (<name>.jsonl)")
    p.add_argument("--books", default="books.json",
                   help="the manuals to read, a file in --questions (books-six.json: the six of "
                   "the model card's tried-and-not-shipped head)")
    p.add_argument("--hold-out", nargs="*", default=[], metavar="NAME",
                   help="manuals of --books not to fit on (kept to measure the head on)")
    p.add_argument("--l2", type=float, default=None, help="the penalty (default: chosen)")
    p.add_argument("--blend", type=float, default=0.5,
                   help="the verdict's share of this head's log-odds; the rest is the shipped "
                   "head's (default: the mean of the two)")
    args = p.parse_args(argv)

    books = json.loads((args.questions / args.books).read_text("utf-8"))
    t0 = time.perf_counter()
    items: list[dict] = []
    held_out = set(args.hold_out)
    for name, spec in books.items():
        if name in held_out:
            continue
        missing = [f for f in corpus_files(spec) if not f.is_file()]
        if missing:
            sys.exit(f"{missing[0]} is missing: install the Debian package {spec['package']} "
                     f"(apt-get install {spec['package']}) or drop {name} from {args.books}")
        rows = [json.loads(line) for line in
                (args.questions / f"{name}.jsonl").read_text("utf-8").splitlines() if line]
        got = evidence(name, spec, rows, args.data_dir)
        items += [{**r, "book": name} for r in got]
        print(f"{name}: {len(got)} questions read", flush=True)
    reader = OnnxReader(args.model_dir, outputs=list(OUTPUTS.values()))
    x, shipped, kept = features(reader, items)
    y = np.array([items[k]["kind"] == "answerable" for k in kept], float)
    book_of = np.array([items[k]["book"] for k in kept])
    l2, table = (args.l2, {}) if args.l2 is not None else choose_l2(x, y, book_of)
    mu, sd = x.mean(0), x.std(0) + 1e-6
    w, bias = fit((x - mu) / sd, y, l2)
    z = (x - mu) / sd @ w + bias
    a = float(shipped.std() / max(z.std(), 1e-9))
    head = ReaderHead(mean=mu, scale=sd, weights=w, bias=bias,
                      affine=(a, float(shipped.mean() - a * z.mean())), outputs=OUTPUTS,
                      blend=args.blend)
    provenance = {
        "trained_on": {n: dict(s) | {
            "questions": int((book_of == n).sum()),
            "answerable": int(((book_of == n) & (y == 1)).sum())} for n, s in books.items()
            if n not in held_out},
        "held_out": sorted(held_out),
        "l2": l2, "l2_choice": table, "model": str(args.model_dir.name),
        "auroc_training_questions": {"shipped_head": round(auroc(shipped[y == 1],
                                                                 shipped[y == 0]), 4),
                                     "this_head": round(auroc(z[y == 1], z[y == 0]), 4)},
        "command": "python -m training.answerability.head" + (
            f" --l2 {args.l2:g}" if args.l2 is not None else "") + (
            f" --books {args.books}" if args.books != "books.json" else "") + (
            f" --hold-out {' '.join(args.hold_out)}" if args.hold_out else ""),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / HEAD_FILE).write_text(json.dumps(head.to_json(**provenance), indent=1) + "\n",
                                      "utf-8")
    ReaderHead.load(args.out / HEAD_FILE)  # what was written reads back
    print(f"{len(y)} questions ({int(y.sum())} answerable), l2 {l2:g}; wrote "
          f"{args.out / HEAD_FILE} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
