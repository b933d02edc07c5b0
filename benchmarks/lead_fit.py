"""Fit the lead weights (textbound/answer/lead.py) on the dev pool, and report them per book.

    python -m benchmarks.lead_fit --out runs/lead            # capture, fit, report
    python -m benchmarks.lead_fit --out runs/lead --write    # ... and write calibration/lead.json
    python -m benchmarks.lead_fit --out runs/lead --sweep states_action=0,1,2.5,10
                                                 # right leads per set for each weight of one signal

1. **Capture.** Each book of the pool (benchmarks/pool.BOOKS) is run through `textbound eval
   --records` with every extractive composition's inputs saved (benchmarks/lead_capture), into
   `<out>/<book>.pkl` and `<out>/<book>/records.jsonl`. A book already captured is not run again
   (delete its files to redo it); `--data-dir` reuses ingested collections.
2. **Options.** Every captured composition of an answerable question is replayed with each of its
   candidate units as the lead (compose.lead_options): the unit's signals, and whether the answer
   it leads holds a gold phrase (the eval's own rule, metrics.answer_matches). A question where
   every lead or no lead holds one teaches nothing and is left out.
3. **Fit.** Conditional logit: the weights that make the leads holding a gold phrase likeliest,
   each book weighing the same whatever its size, with an L2 penalty; questions whose
   sha256("holdout:" + id) falls in the lowest 30% are held out of the fit (as `textbound
   calibrate` splits).
4. **Report.** Per book, on the fit part and on the held-out part: questions whose chosen lead
   gives a gold phrase, with the shipped weights and with the fitted ones. `--write` writes the
   fitted weights with this provenance to calibration/lead.json, but only when they choose more
   right leads than the shipped ones on the fit part and on the held-out part alike, and no set
   loses any (a weight that helps one book and costs another is not kept).

Comparisons (each side's unit is chosen apart) and questions refused before composition are not
affected by the weights and are not counted here; `make pool` measures the whole pipeline.
"""

from __future__ import annotations

import argparse
import difflib
import json
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pool import BOOKS, REPO, WIKI
from textbound.answer.compose import lead_options
from textbound.answer.lead import LEAD_FILE, SIGNALS, lead_weights
from textbound.providers.embeddings import build_embeddings
from textbound.quality.calibrate.fit import is_holdout
from textbound.quality.evaluation.metrics import answer_matches
from textbound.settings import Settings

HOLDOUT = 0.3
NAMES = [s.name for s in SIGNALS]
SETS: dict[str, tuple[str, Path, Path]] = {
    **BOOKS,
    "squad": WIKI["squad2"],
    "clapnq": WIKI["clapnq"],
}
"""The pool's books, and the two Wikipedia sets the weights must not cost (`--sets`)."""


@dataclass
class Question:
    """One answerable question's lead options: signals (rows), which lead right, its split."""

    book: str
    qid: str
    x: np.ndarray
    y: np.ndarray
    holdout: bool


def capture(book: str, out: Path, data_dir: Path, workers: int) -> None:
    """Run one book through the eval with its compositions captured (skipped when done)."""
    pkl = out / f"{book}.pkl"
    if pkl.exists() and (out / book / "records.jsonl").exists():
        return
    _, corpus, questions = SETS[book]
    cmd = [sys.executable, "-m", "benchmarks.lead_capture", str(pkl), "eval",
           "--corpus", str(corpus), "--questions", str(questions), "--records",
           "--out", str(out / book), "--data-dir", str(data_dir), "--workers", str(workers)]
    print(f"{book}: capturing ...", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        sys.exit(f"{book}: the eval failed ({done.returncode}): " + " | ".join(tail))


def captured(book: str, out: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each captured composition of a book with its question's eval record, first per question.

    The composed question may be the asked one with its spelling mended: it is matched to the
    closest record then.
    """
    records: dict[str, dict[str, Any]] = {}
    for line in (out / book / "records.jsonl").read_text().splitlines():
        r = json.loads(line)
        records.setdefault(r["question"], r)
    with (out / f"{book}.pkl").open("rb") as fh:
        caught = pickle.load(fh)
    found: list[tuple[dict[str, Any], dict[str, Any]]] = []
    seen: set[str] = set()
    for item in caught:
        r = records.get(item["question"])
        if r is None:
            near = difflib.get_close_matches(item["question"], list(records), n=1, cutoff=0.75)
            r = records[near[0]] if near else None
        if r is None or r["id"] in seen:
            continue
        seen.add(r["id"])
        found.append((item, r))
    return found


def composition_inputs(item: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a captured composition, as `extractive_draft` takes them."""
    weights: dict[str, float] = item["weights"]

    def weigh(term: str, w: dict[str, float] = weights) -> float:
        return w.get(term, 1.0)

    return {"weigh": weigh, "query_vector": item["query_vector"], "stored": item["stored"],
            "anchor": item["anchor"], "heads": item.get("heads") or frozenset()}


def options(book: str, out: Path, embeddings: Any) -> list[Question]:
    """Each captured answerable composition of a book, replayed with every candidate as lead."""
    found: list[Question] = []
    for item, r in captured(book, out):
        if r["kind"] != "answerable" or not r["answers"]:
            continue
        opts = lead_options(item["question"], item["evidence"], embeddings,
                            **composition_inputs(item))
        if not opts:
            continue
        x = np.array([[sig[n] for n in NAMES] for sig, _ in opts], dtype=np.float64)
        y = np.array([answer_matches(" ".join(s["text"] for s in d["sentences"]), r["answers"])
                      for _, d in opts], dtype=bool)
        found.append(Question(book, r["id"], x, y, is_holdout(r["id"], HOLDOUT)))
    return found


def chosen_right(q: Question, w: np.ndarray) -> bool:
    """Whether the lead these weights choose (ties: the earlier candidate) holds a gold phrase."""
    scores = q.x @ w
    return bool(q.y[int(np.argmax(scores))])


def fit(questions: list[Question], start: np.ndarray, l2: float = 0.01, steps: int = 3000,
        rate: float = 0.05) -> np.ndarray:
    """Conditional-logit weights: -sum log P(a right lead) per question, books weighed equally.

    Adam on the full batch from `start`; a question whose leads are all right or all wrong adds
    nothing to the likelihood and is left out.
    """
    used = [q for q in questions if q.y.any() and not q.y.all()]
    if not used:
        return start.astype(np.float64).copy()
    books = sorted({q.book for q in used})
    per_book = {b: sum(q.book == b for q in used) for b in books}
    scale = np.array([1.0 / (len(books) * per_book[q.book]) for q in used])
    width = max(len(q.y) for q in used)
    x = np.zeros((len(used), width, start.size))
    valid = np.zeros((len(used), width), dtype=bool)
    right = np.zeros((len(used), width), dtype=bool)
    for n, q in enumerate(used):
        x[n, : len(q.y)], valid[n, : len(q.y)], right[n, : len(q.y)] = q.x, True, q.y
    w = start.astype(np.float64).copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, steps + 1):
        z = np.where(valid, x @ w, -np.inf)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        pos = p * right
        pos /= pos.sum(axis=1, keepdims=True)
        # d/dw of -log(sum over right leads of p) = E_p[x] - E_{p | right}[x]
        per_q = np.einsum("qc,qck->qk", p - pos, x)
        grad = 2 * l2 * w + scale @ per_q
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        w -= rate * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return w


def report(questions: list[Question], before: np.ndarray, after: np.ndarray) -> list[dict]:
    """Per book and part: compositions, right with the shipped weights, right with the fit."""
    rows = []
    for book in dict.fromkeys(q.book for q in questions):
        for part, held in (("fit", False), ("held out", True)):
            qs = [q for q in questions if q.book == book and q.holdout == held]
            if qs:
                rows.append({"book": book, "part": part, "compositions": len(qs),
                             "before": sum(chosen_right(q, before) for q in qs),
                             "after": sum(chosen_right(q, after) for q in qs)})
    return rows


def sweep(questions: list[Question], shipped: dict[str, float], spec: str) -> list[str]:
    """Markdown rows: right leads per set (both parts) for each weight of one signal.

    `spec` is "SIGNAL=v1,v2,...": the other weights stay the shipped ones. How the weights of
    `states_action` and `row_header` were chosen (docs/pool.md).
    """
    name, _, values = spec.partition("=")
    if name not in NAMES or not values:
        sys.exit(f"--sweep wants SIGNAL=v1,v2,... with a signal of the table ({', '.join(NAMES)})")
    grid = [float(v) for v in values.split(",")]
    books = list(dict.fromkeys(q.book for q in questions))
    rows = [f"| {name} | " + " | ".join(books) + " |", "|---|" + "--:|" * len(books)]
    for value in grid:
        w = np.array([value if n == name else shipped[n] for n in NAMES])
        right = [sum(chosen_right(q, w) for q in questions if q.book == b) for b in books]
        rows.append(f"| {value:g} | " + " | ".join(str(r) for r in right) + " |")
    return rows


def main() -> None:
    """Capture, fit, report; write calibration/lead.json with --write."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "lead")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="data folder for the evaluation collections (default: <out>/data)")
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS),
                    help="the evaluation sets to capture and fit on (default: all seven)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--l2", type=float, default=0.01, help="L2 penalty on the weights")
    ap.add_argument("--write", action="store_true", help="write calibration/lead.json")
    ap.add_argument("--sweep", metavar="SIGNAL=v1,v2,...",
                    help="instead of fitting: right leads per set for each weight of one signal")
    args = ap.parse_args()
    for book in args.sets:
        capture(book, args.out, args.data_dir or args.out / "data", args.workers)
    embeddings = build_embeddings(Settings())
    questions = [q for book in args.sets for q in options(book, args.out, embeddings)]
    shipped = lead_weights()
    if args.sweep:
        print("\n".join(sweep(questions, shipped, args.sweep)))
        return
    before = np.array([shipped[n] for n in NAMES])
    after = fit([q for q in questions if not q.holdout], before, l2=args.l2)
    rows = report(questions, before, after)
    print("| book | part | compositions | right lead, shipped weights | right lead, fitted |")
    print("|---|---|--:|--:|--:|")
    for r in rows:
        print(f"| {r['book']} | {r['part']} | {r['compositions']} | {r['before']} | {r['after']} |")
    fitted = {n: round(float(x), 3) for n, x in zip(NAMES, after, strict=True)}
    print(json.dumps(fitted, indent=1))
    gained = (sum(r["after"] - r["before"] for r in rows if r["part"] == "fit"),
              sum(r["after"] - r["before"] for r in rows if r["part"] == "held out"))
    print(f"right leads gained by the fit: {gained[0]:+d} on the fit part, {gained[1]:+d} held out")
    losing = sorted({r["book"] for r in rows
                     if sum(x["after"] - x["before"] for x in rows if x["book"] == r["book"]) < 0})
    if losing:
        print("sets that lose right leads with the fit: " + ", ".join(losing))
    if args.write and (min(gained) <= 0 or losing):
        print(f"not written: the fit must beat the weights in {LEAD_FILE.name} on both parts and "
              "cost no set", file=sys.stderr)
    elif args.write:
        LEAD_FILE.write_text(json.dumps({
            "weights": fitted,
            "fitted": True,
            "command": "python -m benchmarks.lead_fit --write",
            "books": args.sets,
            "holdout_rule": f"sha256('holdout:' + id) / 2**256 < {HOLDOUT}",
            "l2": args.l2,
            "compositions": rows,
        }, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {LEAD_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()
