"""Replay eval records with the gate feature `known` weighed in, to choose its weight.

    python -m benchmarks.known_weight pool-out/git-manual pool-out/openstax ... \
        [--calibration calibration/all-MiniLM-L6-v2.json]

`known` (textbound/answer/evidence.known_share) is the IDF-weighted share of a question's words
that the collection uses at all. Weighed into the gate with weight w and the answer threshold raised
by
the same w, a question whose words are all known scores as before and one naming what the book
never mentions loses w * (1 - known): the gate can only get stricter. So a run recorded without
the weight (`textbound eval --records`, whose records carry each question's gate features and
reader score) tells exactly which released answers a weight would refuse: an answer stays
released when gate_score + w_reader * logit(reader) - w * (1 - known) >= answer_threshold.

Prints, per weight and per records folder, answerable questions answered correctly (of all) and
near-miss questions answered, on the fit part and on the held-out part (sha256("holdout:" + id)
in the lowest 30%, as `textbound calibrate` splits).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from textbound.answer.gate_calibration import READER, reader_logit
from textbound.quality.calibrate.fit import is_holdout

WEIGHTS = (0.0, 0.1, 0.25, 0.4, 0.5, 0.75, 1.0)


def released(record: dict, weight: float, threshold: float, reader_weight: float) -> bool:
    """Whether a recorded answer stays released with `known` weighed at `weight`."""
    if record["was_refusal"]:
        return False
    if not weight:
        return True
    features = record.get("features") or {}
    reader = record.get("answerable_score")
    final = float(features.get("gate_score", 0.0)) + (
        reader_weight * reader_logit(reader) if reader is not None else 0.0)
    return final - weight * (1.0 - float(features.get("known", 1.0))) >= threshold - 1e-9


def rates(records: list[dict], weight: float, threshold: float, reader_weight: float
          ) -> tuple[float, float]:
    """Return (correct of all answerable, near-miss answered) with `known` weighed."""
    answerable = [r for r in records if r["kind"] == "answerable"]
    near = [r for r in records if r["kind"] == "near_miss"]
    correct = sum(bool(r["correct"]) and released(r, weight, threshold, reader_weight)
                  for r in answerable)
    leaked = sum(released(r, weight, threshold, reader_weight) for r in near)
    return correct / max(len(answerable), 1), leaked / max(len(near), 1)


def main() -> None:
    """Print the replay table."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path, help="eval --out folders with records.jsonl")
    ap.add_argument("--calibration", type=Path,
                    default=Path(__file__).resolve().parent.parent / "calibration"
                    / "all-MiniLM-L6-v2.json", help="the calibration the records were run with")
    ap.add_argument("--holdout", type=float, default=0.3, help="share held out, by id")
    args = ap.parse_args()
    cal = json.loads(args.calibration.read_text())
    threshold = float(cal["answer_threshold"])
    reader_weight = float(cal.get("weights", {}).get(READER, 0.0))
    books = {f.name: [json.loads(x) for x in (f / "records.jsonl").read_text().splitlines()
                      if x.strip()] for f in args.folders}
    for part in ("fit", "holdout"):
        print(f"\n{part}: correct of all answerable / near-miss answered")
        print("| weight | " + " | ".join(books) + " |")
        print("|---|" + "---|" * len(books))
        for w in WEIGHTS:
            cells = []
            for records in books.values():
                chosen = [r for r in records
                          if is_holdout(r["id"], args.holdout) == (part == "holdout")]
                correct, leaked = rates(chosen, w, threshold, reader_weight)
                cells.append(f"{100 * correct:.1f}% / {100 * leaked:.1f}%")
            print(f"| {w} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
