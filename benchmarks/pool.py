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
figures to `<out>/pool.md` and `<out>/pool.json`, and a picture of them to `<out>/pool.png` (one
panel per goal, a bar per book, green where the book meets it; with `--before`, the earlier run's
bar beside it). A last line names the books meeting every goal and what the others miss
(`GOALS`). A book whose data is missing is reported as such and the others still run.

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


GOALS: dict[str, tuple[str, str, float]] = {
    "correct_of_all": ("answerable answered correctly", ">=", 0.80),
    "refused_answerable": ("answerable refused", "<=", 0.08),
    "near_miss_answered": ("near-miss answered", "<=", 0.15),
    "out_of_corpus_answered": ("out of corpus answered", "<=", 0.0),
}
"""Each column's goal on every book (issue 40: correct >= 80%, near-miss <= 15%, out of corpus
0%; issue 38: answerable refused <= 8%)."""


def meets(key: str, value: float | int | None) -> bool | None:
    """Whether a figure meets its column's goal (None: no figure)."""
    if value is None:
        return None
    _, sense, bar = GOALS[key]
    return value >= bar if sense == ">=" else value <= bar + 1e-9


def goals_line(results: dict[str, dict]) -> str:
    """One line: the books meeting every goal, and each goal another book misses."""
    met, missed = [], []
    for book, fig in results.items():
        if "error" in fig:
            continue
        short = [f"{GOALS[k][0]} {_pct(fig.get(k))}" for k in GOALS
                 if meets(k, fig.get(k)) is False]
        if short:
            missed.append(f"{book} ({'; '.join(short)})")
        else:
            met.append(book)
    return ("Every goal met: " + (", ".join(met) or "no book") + ". Missed: "
            + (", ".join(missed) or "none") + ".\n")


def plot(results: dict[str, dict], path: Path, before: dict[str, dict] | None = None) -> bool:
    """Draw the pool as one panel per goal, a bar per book (the earlier run's beside it, paler)
    against the goal's dashed line; green where the goal is met. False without matplotlib."""
    from textbound.errors import SetupError
    from textbound.quality.plotting import pyplot

    try:
        plt = pyplot()
    except SetupError:
        return False
    from matplotlib import patches
    books = [b for b, fig in results.items() if "error" not in fig]
    fig, axes = plt.subplots(1, len(GOALS), figsize=(4 * len(GOALS), 4.2), sharey=True)
    for ax, (key, (name, sense, bar)) in zip(axes, GOALS.items(), strict=True):
        xs = range(len(books))
        now = [100 * float(results[b].get(key) or 0.0) for b in books]
        colours = ["#2e8b57" if meets(key, results[b].get(key)) else "#c0392b" for b in books]
        width = 0.4 if before else 0.7
        at = [x + width / 2 for x in xs] if before else list(xs)
        if before:
            old = [100 * float((before.get(b) or {}).get(key) or 0.0) for b in books]
            ax.bar([x - width / 2 for x in xs], old, width, color="#bbbbbb")
        ax.bar(at, now, width, color=colours)
        for x, value in zip(at, now, strict=True):
            ax.text(x, value + 1.5, f"{value:.0f}", ha="center", fontsize=7)
        ax.axhline(100 * bar, color="black", linestyle="--", linewidth=1)
        ax.set_title(f"{name}\n(goal {sense} {100 * bar:.0f}%)", fontsize=10)
        ax.set_xticks(list(xs), books, rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("% of the book's questions of that kind")
    keys = [("#2e8b57", "meets the goal"), ("#c0392b", "misses it")]
    keys += [("#bbbbbb", "before")] if before else []
    axes[-1].legend(handles=[patches.Patch(color=c, label=t) for c, t in keys], fontsize=8,
                    loc="upper right")  # the out-of-corpus panel's bars are near 0
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run_eval(corpus: Path, questions: Path, out: Path, data_dir: Path, workers: int
             ) -> str | None:
    """Run `textbound eval --records` on one book into `out`; the error, or None when it ran."""
    cmd = [sys.executable, "-m", "textbound.serving.cli", "eval", "--corpus", str(corpus),
           "--questions", str(questions), "--records", "--out", str(out),
           "--data-dir", str(data_dir), "--workers", str(workers)]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return None
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
    return f"textbound eval exited {done.returncode}: {tail[0]}"


def run_book(book: str, out: Path, data_dir: Path, workers: int) -> dict:
    """Run one book's dev questions through `textbound eval`; return its figures."""
    _, corpus, questions = BOOKS[book]
    if not corpus.exists() or not questions.exists():
        return {"error": f"data not found ({corpus} or {questions})"}
    t0 = time.perf_counter()
    error = run_eval(corpus, questions, out / book, data_dir, workers)
    if error is not None:
        return {"error": error}
    report = json.loads((out / book / "report.json").read_text())
    fig: dict[str, float | int | None] = {**figures(report)}
    fig["answer_chars"] = answer_chars(out / book / "records.jsonl")
    fig["seconds"] = round(time.perf_counter() - t0, 1)
    return fig


def book_parser(doc: str | None, out: str, names: list[str], what: str
                ) -> argparse.ArgumentParser:
    """The options a run over several books takes: --out, --before, --book, --data-dir."""
    ap = argparse.ArgumentParser(description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path(out),
                    help=f"folder for each {what}'s report and the table")
    ap.add_argument("--before", type=Path,
                    help=f"an earlier run's {out.split('-')[0]}.json to compare with")
    ap.add_argument("--book", action="append", choices=sorted(names),
                    help=f"run only this {what} (repeat for several); default: all")
    ap.add_argument("--data-dir", type=Path,
                    help="data folder for the evaluation collections (default: <out>/data)")
    ap.add_argument("--workers", type=int, default=2, help=f"threads running the graph per {what}")
    return ap


def main() -> None:
    """Run the pool and print its table."""
    args = book_parser(__doc__, "pool-out", list(BOOKS), "book").parse_args()
    before = json.loads(args.before.read_text()) if args.before else None
    args.out.mkdir(parents=True, exist_ok=True)
    data_dir = args.data_dir or args.out / "data"
    results: dict[str, dict] = {}
    for book in args.book or list(BOOKS):
        print(f"{book}: running ...", file=sys.stderr, flush=True)
        results[book] = run_book(book, args.out, data_dir, args.workers)
        print(f"{book}: {results[book]}", file=sys.stderr, flush=True)
    (args.out / "pool.json").write_text(json.dumps(results, indent=1) + "\n")
    text = table(results, before) + "\n" + lengths(results, before) + "\n" + goals_line(results)
    (args.out / "pool.md").write_text(text)
    print(text)
    if plot(results, args.out / "pool.png", before):
        print(f"The same as a picture: {args.out / 'pool.png'}")


if __name__ == "__main__":
    main()
