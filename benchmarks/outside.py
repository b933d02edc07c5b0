"""Manuals outside the pool: where a change that holds for any book shows, and one fitted to the
pool does not.

    python -m benchmarks.outside [--out outside-out] [--before outside-out-old/outside.json]
                                 [--book NAME ...]

The manuals are the ones Debian installs under /usr/share/doc that
`training/answerability/head_questions/outside.json` names (each with its package, format,
licence and what, if anything, its questions ever trained: four of them trained the verdict's
second head, never the composition; the others nothing). Their questions (`<name>.jsonl` beside
it) were written by the team, or by a helper given only the manual, as a student would type
them: answerable ones with the phrases that answer them, and near-misses that ask what the
manual does not say. None is a book of the pool or of a package in
`../shared/data/books/EXCLUDE`.

Each manual is copied into `<out>/corpus/<name>/` (never into the repository) and run through
`textbound eval --records` (extractive generator, calibrated gate), as `benchmarks.pool` runs a
book. The table gives counts, not shares (these sets are 20 to 30 questions): answerable
questions answered rightly, answerable refused, near-misses answered. A manual that is not
installed is reported as such (`apt-get install <package>`) and the others still run. A manual
marked `"render": "man"` is a set of manual pages, printed with `man -l` into text files; a
file Debian installs gzipped (`nettle.pdf.gz`) is copied decompressed.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.pool import book_parser, run_eval

QUESTIONS = Path(__file__).resolve().parent.parent / "training" / "answerability" / "head_questions"
MANIFEST = QUESTIONS / "outside.json"


def counts(records: Path) -> dict[str, int]:
    """The manual's counts from its eval records (calibrated policy)."""
    rows = [json.loads(line) for line in records.read_text("utf-8").splitlines() if line]
    rows = [r for r in rows if r.get("policy", "calibrated") == "calibrated"]
    answerable = [r for r in rows if r["kind"] == "answerable"]
    near = [r for r in rows if r["kind"] == "near_miss"]
    return {"answerable": len(answerable),
            "right": sum(bool(r.get("correct")) for r in answerable),
            "refused": sum(bool(r["was_refusal"]) for r in answerable),
            "near_miss": len(near),
            "near_miss_answered": sum(not r["was_refusal"] for r in near)}


def printed_page(page: Path) -> str:
    """Return a manual page as `man` prints it, 80 columns, without overstrike (as `col -b`)."""
    done = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, check=True,
                          env={**os.environ, "MANWIDTH": "80", "MANPAGER": "cat"})
    return re.sub(r".\x08", "", done.stdout)


def copy_corpus(name: str, spec: dict, out: Path) -> Path:
    """Copy (or print, for manual pages) one manual's files into `<out>/corpus/<name>/`."""
    corpus = out / "corpus" / name
    corpus.mkdir(parents=True, exist_ok=True)
    for f in map(Path, spec["corpus"]):
        if spec.get("render") == "man":  # a manual page, read as `man page > page.txt` prints it
            (corpus / f"{f.name.split('.')[0]}.txt").write_text(printed_page(f), "utf-8")
        elif f.suffix == ".gz":  # Debian gzips large manuals: the book is the file inside
            with gzip.open(f) as src, (corpus / f.stem).open("wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copyfile(f, corpus / f.name)
    return corpus


def run_manual(name: str, spec: dict, out: Path, data_dir: Path, workers: int) -> dict:
    """Copy one manual beside its questions' run and evaluate it; return its counts."""
    files = [Path(f) for f in spec["corpus"]]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        return {"error": f"{', '.join(missing)} not installed (apt-get install "
                         f"{spec['package']})"}
    try:
        corpus = copy_corpus(name, spec, out)
    except (OSError, subprocess.CalledProcessError) as exc:  # `man` missing, or it failed
        return {"error": f"could not copy or print {name}: {exc}"}
    t0 = time.perf_counter()
    error = run_eval(corpus, QUESTIONS / f"{name}.jsonl", out / name, data_dir, workers)
    if error is not None:
        return {"error": error}
    return {**counts(out / name / "records.jsonl"), "seconds": round(time.perf_counter() - t0, 1)}


def _cell(fig: dict, key: str, of: str | None, old: dict | None) -> str:
    now = f"{fig[key]}" + (f" of {fig[of]}" if of else "")
    return now if old is None or key not in old else f"{now} (was {old[key]})"


def table(results: dict[str, dict], manifest: dict, before: dict | None = None) -> str:
    """The manuals' counts as a Markdown table (with an earlier run's beside them)."""
    lines = ["| manual | format | its questions trained | answerable right | answerable "
             "refused | near-miss answered |", "|---|---|---|--:|--:|--:|"]
    for name, fig in results.items():
        spec = manifest[name]
        lead = f"| {name} | {spec['format']} | {spec['trained']} |"
        if "error" in fig:
            lines.append(lead + " - | - | - |")
            continue
        old = (before or {}).get(name)
        lines.append(lead + " " + " | ".join([
            _cell(fig, "right", "answerable", old), _cell(fig, "refused", None, old),
            _cell(fig, "near_miss_answered", "near_miss", old)]) + " |")
    notes = [f"{name}: {fig['error']}" for name, fig in results.items() if "error" in fig]
    return "\n".join(lines) + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else "")


def main(argv: list[str] | None = None) -> int:
    """Run the manuals outside the pool and print their table."""
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    args = book_parser(__doc__, "outside-out", list(manifest), "manual").parse_args(argv)
    before = json.loads(args.before.read_text("utf-8")) if args.before else None
    args.out.mkdir(parents=True, exist_ok=True)
    data_dir = args.data_dir or args.out / "data"
    results: dict[str, dict] = {}
    for name in args.book or list(manifest):
        print(f"{name}: running ...", file=sys.stderr, flush=True)
        results[name] = run_manual(name, manifest[name], args.out, data_dir, args.workers)
        print(f"{name}: {results[name]}", file=sys.stderr, flush=True)
    (args.out / "outside.json").write_text(json.dumps(results, indent=1) + "\n")
    text = table(results, manifest, before)
    (args.out / "outside.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
