"""Compose the captured answers again with today's code: which answers does a change move?

    python -m benchmarks.lead_fit --out runs/lead --data-dir <ingested>   # capture once
    python -m benchmarks.replay runs/lead --save runs/replay-before.json
    ... change how answers are composed ...
    python -m benchmarks.replay runs/lead --against runs/replay-before.json

`benchmarks.lead_capture` (run by `benchmarks.lead_fit`) saved the inputs of every extractive
composition of an eval: the question, its evidence, the query vector, the stored unit vectors,
the reader's anchor, the book's command heads and the IDF weights of the question's
words, beside the eval's records. This composes each of them again with the code as it is now
(`extractive_draft`, the shipped lead weights) and prints, per set, the answerable compositions
and how many of them hold a gold phrase (the eval's own rule, `metrics.answer_matches`); with
`--against` a saved replay, every answer that differs from it, and how the counts moved.

It takes seconds where a pool run takes minutes, so a change to composition (a follower, a lead
signal, a unit) can be tried on every book of the pool, and on SQuAD 2.0 and ClapNQ, at once.
It runs neither the gates, nor the reader, nor the grounding check: the change is kept only on
`make pool` (docs/pool.md), which decides.

    python -m benchmarks.replay runs/lead --reader runs/reader/new/onnx

`--reader` (a model folder, as `OnnxReader` loads) reads each captured question's passages
again (the top `answerability_passages` evidence chunks, and the chunk printing a literal, as
`check_answerable` reads them) and composes with that reader's span in place of the captured
one: how many right leads a retrained reader's spans give, per book, in a minute. Its veto, its
weight in the gate and the answer-type check are not replayed (a question answered at capture
stays answered), so a reader that gains here is still put to `make pool`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.lead_fit import captured, composition_inputs

__all__ = ["changes", "main", "reread_anchor", "replay", "summary"]


def reread_anchor(reader: Any, item: dict[str, Any], passages: int = 3) -> Any:
    """The anchor `answer_anchor` gives for this reader's reading of a captured composition.

    The reader reads the top `passages` evidence chunks (by score, ties by id) and the chunk
    printing one of the question's literals, as `check_answerable` does; None when its best
    reading is unsure or has no span.
    """
    from textbound.answer.answerability import (
        best_reading,
        read_passages,
        sentence_holding,
        top_passages,
    )
    from textbound.answer.compose import answer_anchor
    from textbound.answer.reading import analyse

    evidence = item["evidence"]
    read, texts = read_passages(reader, item["question"], top_passages(evidence, passages),
                                evidence, analyse(item["question"])["literals"])
    best = best_reading(read)
    if best is None or best.span_start is None or best.span_end is None:
        return None
    held = sentence_holding(dict(texts)[best.chunk_id], best.span_start, best.span_end)
    verdict = {"passed": True, "skipped": False, "score": best.score, "chunk_id": best.chunk_id,
               "span": [best.span_start, best.span_end],
               "sentence": list(held) if held is not None else None}
    return answer_anchor(verdict, evidence)  # type: ignore[arg-type]


def replay(out: Path, sets: list[str], embeddings: Any, reader: Any = None,
           passages: int = 3) -> dict[str, dict[str, Any]]:
    """Each set's captured compositions composed now: {set: {question id: answer}}.

    An answer is {"kind", "answers" (the gold phrases), "text" (the sentences joined),
    "right" (whether it holds a gold phrase; None when the question has none)}. With a
    `reader`, its span (`reread_anchor`) takes the captured one's place.
    """
    from textbound.answer.compose import extractive_draft
    from textbound.quality.evaluation.metrics import answer_matches

    found: dict[str, dict[str, Any]] = {}
    for name in sets:
        answers: dict[str, Any] = {}
        for item, r in captured(name, out):
            inputs = composition_inputs(item)
            if reader is not None:
                inputs["anchor"] = reread_anchor(reader, item, passages)
            draft = extractive_draft(item["question"], item["evidence"], embeddings, **inputs)
            text = " ".join(s["text"] for s in draft["sentences"])
            gold = list(r.get("answers") or [])
            answers[r["id"]] = {"kind": r["kind"], "answers": gold, "text": text,
                                "right": answer_matches(text, gold) if gold else None}
        found[name] = answers
    return found


def summary(found: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per set: answerable compositions with gold phrases, and how many hold one."""
    return {name: {"answerable": sum(1 for a in answers.values()
                                     if a["kind"] == "answerable" and a["right"] is not None),
                   "right": sum(1 for a in answers.values()
                                if a["kind"] == "answerable" and a["right"])}
            for name, answers in found.items()}


def changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    """Lines naming each answer that differs between two replays (sets and ids in both)."""
    lines: list[str] = []
    for name in after:
        for qid, a in after[name].items():
            b = before.get(name, {}).get(qid)
            if b is None or b["text"] == a["text"]:
                continue
            mark = "" if a["right"] == b["right"] else (
                "  (now holds a gold phrase)" if a["right"] else "  (no longer holds one)")
            lines += [f"{name} {qid} [{a['kind']}]{mark}",
                      "  before: " + " ".join(b["text"].split())[:200],
                      "  after:  " + " ".join(a["text"].split())[:200]]
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("captures", type=Path,
                    help="the folder benchmarks.lead_fit captured into (<set>.pkl, <set>/records)")
    ap.add_argument("--sets", nargs="+", default=None,
                    help="sets to replay (default: every <set>.pkl in the folder)")
    ap.add_argument("--save", type=Path, default=None, help="write this replay as JSON")
    ap.add_argument("--against", type=Path, default=None,
                    help="a saved replay: print every answer that differs from it")
    ap.add_argument("--reader", type=Path, default=None, metavar="MODEL_DIR",
                    help="compose with this reader's spans (a folder with model.onnx, "
                    "tokenizer.json, config.json) instead of the captured reader's")
    args = ap.parse_args(argv)
    sets = args.sets or sorted(p.stem for p in args.captures.glob("*.pkl")
                               if (args.captures / p.stem / "records.jsonl").exists())
    missing = [s for s in sets if not (args.captures / f"{s}.pkl").exists()
               or not (args.captures / s / "records.jsonl").exists()]
    if not sets or missing:
        sys.exit(f"no captured compositions for {', '.join(missing) or 'any set'} in "
                 f"{args.captures}: run python -m benchmarks.lead_fit --out {args.captures} "
                 "first (it captures each set it is given)")
    from textbound.errors import SetupError
    from textbound.providers.embeddings import build_embeddings
    from textbound.settings import Settings

    reader = None
    if args.reader is not None:
        from textbound.answer.answerability import OnnxReader

        try:
            reader = OnnxReader(args.reader)
        except SetupError as exc:
            sys.exit(f"--reader {args.reader}: {exc}")
    settings = Settings()
    found = replay(args.captures, sets, build_embeddings(settings), reader,
                   int(settings.tunable_values().answerability_passages or 3))
    now = summary(found)
    before = json.loads(args.against.read_text()) if args.against else None
    then = summary(before) if before else {}
    print("| set | answerable compositions | holding a gold phrase |\n|---|--:|--:|")
    for name, fig in now.items():
        was = then.get(name)
        moved = f" (was {was['right']})" if was is not None else ""
        print(f"| {name} | {fig['answerable']} | {fig['right']}{moved} |")
    if before is not None:
        lines = changes(before, found)
        print(f"\n{len(lines) // 3} answers differ from {args.against}")
        print("\n".join(lines))
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(found, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
