"""The pool of books every answer change is decided on: five books, three formats, one table.

    python -m benchmarks.pool [--out pool-out] [--before pool-out-old/pool.json] [--book NAME ...]

Runs `textbound eval --records` (extractive generator, calibrated gate) on each book of the dev
pool, read in place from `../shared/data` (never copied into the repository):

| book | format | questions |
|---|---|---|
| `git-manual` | HTML | the Git user manual, `books/git-manual` |
| `postgres-tutorial` | HTML | the PostgreSQL tutorial and SQL chapters, `books/postgres-tutorial` |
| `gnuplot-manual` | PDF | the gnuplot 5.4 manual, `books/gnuplot-manual` |
| `openstax` | Markdown | OpenStax *Introduction to Philosophy*, `openstax` |
| `textbook` | Markdown | the bundled book, `corpus/` |

and prints, per book: answerable questions answered correctly (of all answerable), near-miss and
out-of-corpus questions answered (leaks). `--before` adds the figures of an earlier run's
`pool.json` beside each, so a change is judged on every book at once: keep it only when the pool
as a whole gains. Each book's report, plots and records go to `<out>/<book>/`; the table and the
figures to `<out>/pool.md` and `<out>/pool.json`. A book whose data is missing is reported as
such and the others still run.

Under the table, the median length of the answers released to answerable questions, per book
(`answer_chars`): the gold-phrase rule counts an answer right when it holds a gold phrase
anywhere, so a change that adds a second sentence to many answers can gain right answers without
answering better; a length that grows beside a gain says to read the answers that changed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TEXTBOUND_SHARED_DATA", REPO.parent / "shared" / "data"))

BOOKS: dict[str, tuple[str, Path, Path]] = {
    "git-manual": ("HTML", DATA / "books/git-manual/corpus",
                   DATA / "books/git-manual/questions.dev.jsonl"),
    "postgres-tutorial": ("HTML", DATA / "books/postgres-tutorial/corpus",
                          DATA / "books/postgres-tutorial/questions.dev.jsonl"),
    "gnuplot-manual": ("PDF", DATA / "books/gnuplot-manual/corpus",
                       DATA / "books/gnuplot-manual/questions.dev.jsonl"),
    "openstax": ("Markdown", DATA / "openstax/corpus", DATA / "openstax/questions.dev.jsonl"),
    "textbook": ("Markdown", REPO / "corpus", REPO / "corpus/questions.jsonl"),
}
"""Book name -> (format, corpus folder, dev questions)."""
WIKI: dict[str, tuple[str, Path, Path]] = {
    "squad2": ("JSONL", DATA / "squad2/corpus.jsonl", DATA / "squad2/questions.dev.jsonl"),
    "clapnq": ("JSONL", DATA / "clapnq/corpus.jsonl", DATA / "clapnq/questions.dev.jsonl"),
}
"""The two Wikipedia dev sets a change to the pool must not cost, in the same form."""


def figures(report: dict) -> dict[str, float | int]:
    """Return a book's headline figures from its eval report.json (calibrated policy)."""
    kinds = report["policies"]["calibrated"]["kinds"]
    out: dict[str, float | int] = {}
    if "answerable" in kinds:
        out["answerable"] = kinds["answerable"]["n"]
        out["correct_of_all"] = kinds["answerable"]["correct_of_all"]
        out["refused_answerable"] = round(1 - kinds["answerable"]["answer_rate"], 4)
    for kind in ("near_miss", "out_of_corpus", "out_of_scope"):
        if kind in kinds:
            out[kind] = kinds[kind]["n"]
            out[f"{kind}_answered"] = kinds[kind]["answer_rate"]
    return out


def answer_chars(records: Path) -> int | None:
    """Median characters of the answers released to answerable questions (calibrated policy).

    None when the file is missing or no answerable question was answered.
    """
    try:
        lines = records.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    sizes = []
    for line in lines:
        r = json.loads(line) if line.strip() else {}
        if r.get("policy", "calibrated") == "calibrated" and r.get("kind") == "answerable" \
                and not r.get("was_refusal") and r.get("answer"):
            sizes.append(len(str(r["answer"])))
    return int(statistics.median(sizes)) if sizes else None


def lengths(results: dict[str, dict], before: dict[str, dict] | None = None) -> str:
    """One line: each book's median released-answer length, with the earlier run's beside it."""
    parts = []
    for book, fig in results.items():
        now = fig.get("answer_chars")
        if now is None:
            continue
        old = (before or {}).get(book, {}).get("answer_chars")
        parts.append(f"{book} {now}" + (f" (was {old})" if old is not None else ""))
    return ("Released answers, median characters: " + ", ".join(parts) + "\n") if parts else ""


def _pct(value: float | int | None) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}%"


def table(results: dict[str, dict], before: dict[str, dict] | None = None) -> str:
    """Return the pool's figures as a Markdown table (with the earlier run's where given)."""
    cols = [("correct_of_all", "answerable answered correctly"),
            ("refused_answerable", "answerable refused"),
            ("near_miss_answered", "near-miss answered"),
            ("out_of_corpus_answered", "out of corpus answered")]
    head = "| book | format | " + " | ".join(name for _, name in cols) + " |"
    lines = [head, "|---|---|" + "--:|" * len(cols)]
    for book, fig in results.items():
        fmt = BOOKS[book][0] if book in BOOKS else "?"
        if "error" in fig:
            lines.append(f"| {book} | {fmt} | " + " | ".join(["-"] * len(cols))
                         + f" |\n\n{book}: {fig['error']}")
            continue
        cells = []
        for key, _ in cols:
            now = _pct(fig.get(key))
            old = (before or {}).get(book, {}).get(key)
            cells.append(f"{now} (was {_pct(old)})" if before is not None and old is not None
                         else now)
        lines.append(f"| {book} | {fmt} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_book(book: str, out: Path, data_dir: Path, workers: int) -> dict:
    """Run one book's dev questions through `textbound eval`; return its figures."""
    _, corpus, questions = BOOKS[book]
    if not corpus.exists() or not questions.exists():
        return {"error": f"data not found ({corpus} or {questions})"}
    cmd = [sys.executable, "-m", "textbound.serving.cli", "eval", "--corpus", str(corpus),
           "--questions", str(questions), "--records", "--out", str(out / book),
           "--data-dir", str(data_dir), "--workers", str(workers)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"textbound eval exited {done.returncode}: {tail[0]}"}
    report = json.loads((out / book / "report.json").read_text())
    fig: dict[str, float | int | None] = {**figures(report)}
    fig["answer_chars"] = answer_chars(out / book / "records.jsonl")
    fig["seconds"] = round(time.perf_counter() - t0, 1)
    return fig


def main() -> None:
    """Run the pool and print its table."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("pool-out"),
                    help="folder for each book's report and the pool table")
    ap.add_argument("--before", type=Path, help="an earlier run's pool.json to compare with")
    ap.add_argument("--book", action="append", choices=sorted(BOOKS),
                    help="run only this book (repeat for several); default: all five")
    ap.add_argument("--data-dir", type=Path,
                    help="data folder for the evaluation collections (default: <out>/data)")
    ap.add_argument("--workers", type=int, default=2, help="threads running the graph per book")
    args = ap.parse_args()
    before = json.loads(args.before.read_text()) if args.before else None
    args.out.mkdir(parents=True, exist_ok=True)
    data_dir = args.data_dir or args.out / "data"
    results: dict[str, dict] = {}
    for book in args.book or list(BOOKS):
        print(f"{book}: running ...", file=sys.stderr, flush=True)
        results[book] = run_book(book, args.out, data_dir, args.workers)
        print(f"{book}: {results[book]}", file=sys.stderr, flush=True)
    (args.out / "pool.json").write_text(json.dumps(results, indent=1) + "\n")
    text = table(results, before) + "\n" + lengths(results, before)
    (args.out / "pool.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
