"""How a reader scores each mining rule's records: does it tell its negatives from positives?

    python -m training.answerability.rules MODEL [MODEL ...]
        --file runs/docmining/docmining-man.jsonl --pos option --neg neg-mention,neg-neighbour

For each model folder (model.onnx, tokenizer.json, as `OnnxReader` reads it): the mean score of
a seeded sample of the `--pos` rule's records and of each `--neg` rule's, the share of each
negative rule scored over 0.5, and the AUROC of the positives against each negative rule. A rule
whose negatives a reader scores like positives is one it has not learnt; one it separates
perfectly on pages it never saw may be one it separates by a shortcut. Positives are drawn from
the pages that the negatives come from, so both sides read the same programs. `--holdout`
keeps to the 4% of pages that training never sees (`is_holdout` on the page title).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from textbound.seams import AnswerReader

__all__ = ["main", "rule_scores"]


def _page(record: dict) -> str:
    return record["id"].split(":")[3]


def rule_scores(readers: dict[str, AnswerReader], records: list[dict], pos: str,
                negs: list[str], *, sample: int = 400, seed: int = 1) -> dict:
    """{reader: {pos: {...}, neg rule: {...}}}: mean score, share over 0.5, AUROC vs positives."""
    from training.answerability.evaluate import auroc
    from training.docmining.mine import kind_of

    rng = random.Random(seed)
    by_rule = {r: [x for x in records if kind_of(x["id"]) == r] for r in [pos, *negs]}
    pages = {_page(x) for r in negs for x in by_rule[r]}
    drawn = {r: rng.sample(xs, min(sample, len(xs))) for r, xs in by_rule.items() if r != pos}
    same_pages = [x for x in by_rule[pos] if _page(x) in pages] or by_rule[pos]
    drawn[pos] = rng.sample(same_pages, min(sample, len(same_pages)))
    out: dict = {}
    for name, reader in readers.items():
        scores = {r: np.array([reader.read(x["question"], [("p", x["context"])])[0].score
                               for x in xs]) for r, xs in drawn.items()}
        res: dict[str, dict[str, float | int | None]] = {
            pos: {"n": len(scores[pos]), "mean": round(float(scores[pos].mean()), 3)}}
        for r in negs:
            s = scores[r]
            res[r] = {"n": len(s), "mean": round(float(s.mean()), 3) if len(s) else None,
                      "over_half": round(float((s > 0.5).mean()), 3) if len(s) else None,
                      "auroc": round(auroc(scores[pos], s), 3) if len(s) else None}
        out[name] = res
    return out


def main(argv: list[str] | None = None) -> int:
    """The command line; prints one table row per model and negative rule."""
    p = argparse.ArgumentParser(prog="python -m training.answerability.rules",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", help="reader model folders")
    p.add_argument("--file", required=True, action="append",
                   help="a mined JSONL file (runs/docmining/...); repeatable")
    p.add_argument("--pos", default="option", help="the positive rule (default: option)")
    p.add_argument("--neg", default="neg-mention,neg-neighbour,neg-absent,neg-other-section",
                   help="negative rules, comma-separated")
    p.add_argument("--sample", type=int, default=400, help="records drawn per rule")
    p.add_argument("--holdout", action="store_true", help="only the held-out pages")
    p.add_argument("--out", default=None, help="write the figures here (JSON)")
    a = p.parse_args(argv)
    from training.answerability.data import is_holdout

    records = [json.loads(line) for f in a.file for line in Path(f).open(encoding="utf-8")]
    if a.holdout:
        records = [r for r in records if is_holdout(r["title"].split(" / ")[0])]
    negs = [n for n in a.neg.split(",") if n]
    from textbound.answer.answerability import OnnxReader

    readers: dict[str, AnswerReader] = {m: OnnxReader(m) for m in a.models}
    res = rule_scores(readers, records, a.pos, negs, sample=a.sample)
    print(f"| model | rule | records | mean score | over 0.5 | AUROC {a.pos} vs rule |")
    print("|---|---|--:|--:|--:|--:|")
    for model, rows in res.items():
        print(f"| {model} | {a.pos} | {rows[a.pos]['n']} | {rows[a.pos]['mean']} | | |")
        for r in negs:
            x = rows[r]
            print(f"| {model} | {r} | {x['n']} | {x['mean']} | {x['over_half']} | {x['auroc']} |")
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
