"""Switch one answer rule off and run the pool: does the rule earn its place?

    python -m benchmarks.ablate --off textbound.answer.followers:antecedent=None --out runs/ablate
    python -m benchmarks.ablate --off textbound.answer.candidates:frames=False \\
        --book git-manual --data-dir pool-out/data --before pool-out/pool.json

Each `--off MODULE:FUNCTION=VALUE` replaces the function with one that returns VALUE (None,
False, True, an empty list, tuple or set, or "words", a set holding one word), in its module and
everywhere the graph imported it by name, for this run only; `--off MODULE:NAME=NUMBER` sets a
module's numeric constant instead (`textbound.answer.compose:BLOCK_BONUS=0`), and
`--off MODULE:PATTERN=never` replaces a compiled regular expression with one that matches nothing
(`textbound.conversation.rewrite:_WHY=never`), likewise; then the books of the pool
(benchmarks/pool.py) are run through `textbound eval --records` in this process, one after the
other, and the table is printed (beside `--before`'s figures). `--also squad2 clapnq
conversations` runs those dev sets too (SQuAD 2.0 and ClapNQ take minutes, the conversations
under one): a rule that moves no book may still move them, and a change is kept only when no
set loses. Their figures print without a before; run once with a switch that changes nothing
(`--off textbound.answer.compose:SINGLES_OUT=2`) for one. docs/pool.md ("Rules put to the
pool") lists what was switched off this way and what it cost. Reuse an ingested `--data-dir`:
then a run of the five books takes a few minutes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.pool import BOOKS, REPO, WIKI, answer_chars, figures, lengths, table

VALUES: dict[str, Callable[[], Any]] = {
    "None": lambda: None, "False": lambda: False, "True": lambda: True, "[]": list,
    "()": tuple, "set()": set, "words": lambda: {"word"},
}
"""What a switched-off function may return (a new object each call)."""
ALSO: dict[str, tuple[Path, Path]] = {
    **{name: (corpus, questions) for name, (_, corpus, questions) in WIKI.items()},
    "conversations": (REPO / "corpus", REPO / "corpus/conversations.dev.jsonl"),
}
"""The dev sets beside the pool's books that `--also` runs: corpus and questions."""
NEVER = re.compile(r"(?!)")
"""What a switched-off pattern becomes (`=never`): it matches nothing, so `sub` changes nothing
and `split` keeps the text whole."""


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _returning(make: Callable[[], Any]) -> Callable[..., Any]:
    def constant(*_args: Any, **_kwargs: Any) -> Any:
        return make()
    return constant


def switch_off(spec: str) -> int:
    """Replace MODULE:FUNCTION by a constant function (or set MODULE:CONSTANT to a number)
    wherever it is bound; return in how many modules."""
    try:
        target, value = spec.rsplit("=", 1)
        module_name, name = target.split(":", 1)
        make, number = VALUES.get(value), _number(value)
        if make is None and number is None and value != "never":
            raise ValueError(value)
    except ValueError:
        raise SystemExit(f"--off {spec!r}: write MODULE:FUNCTION=VALUE, VALUE one of "
                         f"{', '.join(VALUES)}, MODULE:CONSTANT=NUMBER or MODULE:PATTERN=never"
                         ) from None
    import graph.builder  # noqa: F401 - every module the graph uses, loaded before patching

    module = importlib.import_module(module_name)
    original = getattr(module, name, None)
    replacement: Any
    if isinstance(original, re.Pattern) and value == "never":
        replacement = NEVER
    elif isinstance(original, int | float) and not isinstance(original, bool) \
            and number is not None:
        replacement = type(original)(number) if float(number).is_integer() else number
    elif callable(original) and make is not None:
        replacement = _returning(make)
    else:
        raise SystemExit(f"--off {spec!r}: {module_name} has no function {name} (nor a numeric "
                         f"constant of that name, for a NUMBER value, nor a pattern, for never)")

    bound = 0
    for other in list(sys.modules.values()):
        if other is not None and getattr(other, name, None) is original:
            setattr(other, name, replacement)
            bound += 1
    return bound


def conversation_figures(report: dict[str, Any]) -> str:
    """One line of a conversations eval's headline figures (calibrated policy)."""
    c = report["conversations"]["calibrated"]
    f, first, rw = c["follow_ups"], c["first_turns"], c["rewrite"]
    return (f"follow-ups answered rightly {f['answerable']['correct']} of {f['answerable']['n']}, "
            f"near-miss follow-ups answered {f['near_miss']['answered']} of {f['near_miss']['n']}, "
            f"out of corpus {f['out_of_corpus']['answered']} of {f['out_of_corpus']['n']}; "
            f"first turns right {first['answerable']['correct']} of {first['answerable']['n']}; "
            f"rewrites right {rw['ok']} of {rw['n']}")


def _evaluate(app: Any, name: str, corpus: Path, questions: Path, args: argparse.Namespace
              ) -> dict[str, Any]:
    app(args=["eval", "--corpus", str(corpus), "--questions", str(questions), "--records",
              "--out", str(args.out / name), "--data-dir", str(args.data_dir or args.out / "data"),
              "--workers", str(args.workers)], standalone_mode=False)
    report = args.out / name / "report.json"
    if not report.is_file():
        raise SystemExit(f"{name}: the evaluation wrote no {report} (its error is above); "
                         "nothing compared")
    loaded: dict[str, Any] = json.loads(report.read_text())
    return loaded


def main() -> None:
    """Switch the rules off, run the books, print the table."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--off", action="append", required=True, metavar="MODULE:FUNCTION=VALUE")
    ap.add_argument("--out", type=Path, default=Path("runs/ablate"))
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="data folder for the evaluation collections (default: <out>/data)")
    ap.add_argument("--book", action="append", choices=list(BOOKS), default=None)
    ap.add_argument("--before", type=Path, default=None, help="a pool.json to compare with")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--also", nargs="+", choices=list(ALSO), default=[],
                    help="dev sets to run too, after the books")
    args = ap.parse_args()
    for spec in args.off:
        print(f"{spec}: replaced in {switch_off(spec)} module(s)", file=sys.stderr)
    from textbound.serving.cli import app

    results: dict[str, dict[str, Any]] = {}
    for book in args.book or list(BOOKS):
        _, corpus, questions = BOOKS[book]
        results[book] = {**figures(_evaluate(app, book, corpus, questions, args)),
                         "answer_chars": answer_chars(args.out / book / "records.jsonl")}
    before = json.loads(args.before.read_text()) if args.before else None
    print(table(results, before))
    print(lengths(results, before))
    for name in args.also:
        report = _evaluate(app, name, *ALSO[name], args)
        if name == "conversations":
            print(f"conversations: {conversation_figures(report)}")
        else:
            fig = figures(report)
            print(f"{name}: answerable answered correctly {100 * fig['correct_of_all']:.1f}%, "
                  f"refused {100 * fig['refused_answerable']:.1f}%, near-miss answered "
                  f"{100 * fig.get('near_miss_answered', 0):.1f}%, out of corpus answered "
                  f"{100 * fig.get('out_of_corpus_answered', 0):.1f}%")


if __name__ == "__main__":
    main()
